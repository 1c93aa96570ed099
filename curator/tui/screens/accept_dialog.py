"""Accepting a candidate: its problem id, and optionally a model's prompt draft."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.widgets import Input

from curator.tui.screens.dialogs import InputModal


class AcceptModal(InputModal):
    """InputModal for the problem id; Enter accepts, ctrl+d accepts and has the configured
    model ([llm] in curator.toml) draft the prompt beside the docstring draft. Dismisses
    with {"id": ..., "draft": bool}, or None."""

    HELP = """\
## Accept a candidate

Type the new problem's id. **Enter** accepts it as a draft problem with the docstring
draft as its prompt; **ctrl+d** also asks the model of curator.toml's `[llm]` table for a
prompt draft (it sees the function's code, docstring, signature and class context, never
the path or repository) and shows both drafts side by side. **Escape** cancels.
"""

    BINDINGS: ClassVar[list[BindingType]] = [   # Escape comes from InputModal
        Binding("ctrl+d", "draft", "Accept + model draft", id="accept.draft", priority=True,
                tooltip="Accept, and have the configured model draft the prompt"),
    ]

    def _submit(self, draft: bool = False) -> None:
        text = self.query_one("#answer", Input).value.strip()
        if not text:
            self.notify("Type the problem id first (Escape cancels)", severity="warning")
            return
        self.dismiss({"id": text, "draft": draft})

    def action_draft(self) -> None:
        self._submit(draft=True)
