"""Text editors for prompts (soft-wrapped prose) and code (Python, unwrapped)."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.widgets import Tabs, TextArea

from curator.tui.keymap import ALT_DIGIT_KEYS


class Editor(TextArea):
    """A TextArea where Escape leaves the editor (to the tab bar) instead of the screen."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "leave", "Leave editor", show=False, id="editor.leave"),
    ]

    def check_consume_key(self, key: str, character: str | None) -> bool:
        # alt+digit as most terminals send it switches tabs; it is not text to type
        if key in ALT_DIGIT_KEYS:
            return False
        return super().check_consume_key(key, character)

    async def _on_key(self, event) -> None:
        if event.key == "escape":
            event.stop()
            event.prevent_default()
            self.action_leave()
            return
        await super()._on_key(event)

    def action_leave(self) -> None:
        tabs = self.screen.query(Tabs)
        if tabs:
            tabs.first().focus()
        else:
            self.screen.focus_next()

    def replace_all(self, text: str) -> None:
        """Replace the whole text as one undoable edit, keeping the cursor row."""
        row, column = self.cursor_location
        self.replace(text, (0, 0), self.document.end)
        last = self.document.line_count - 1
        self.cursor_location = (min(row, last), column)


class PromptEditor(Editor):
    HELP = """\
## Prompt editor

The instruction a model sees, in Markdown; the preview on the right follows as you type.
Lines wrap softly. **ctrl+s** saves, **ctrl+z**/**ctrl+y** undo/redo, **Escape** leaves
the editor. Say what the function takes (shapes, dtypes), what it returns, and the edge
cases the tests check — nothing the tests check should be missing from the prompt.
"""


class CodeEditor(Editor):
    HELP = """\
## Code editor

Python with highlighting; lines do not wrap. **ctrl+b** formats with black, **ctrl+s**
saves after a syntax check (a syntax error stops the save and puts the cursor on it),
**ctrl+z**/**ctrl+y** undo/redo, **Tab** indents, **Escape** leaves the editor.
"""
