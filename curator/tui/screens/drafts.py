"""A problem's prompt drafts side by side: the docstring draft and a model's draft.

The annotator reads both, edits either, and makes the one in focus the prompt (ctrl+s);
the choice goes through `prompt_drafts.use_text`, the same save the CLI's
`problems drafts ID --use SOURCE` makes (database and prompt.md, audited).
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Static, TextArea

from curator.mining import prompt_drafts
from curator.tui.messages import DataChanged, run_guarded
from curator.tui.widgets.nav_bar import NavBar


class DraftsScreen(Screen):
    HELP = """\
## Prompt drafts

The docstring draft (left) and the latest model draft (right), side by side. Both are
editable. **ctrl+s** makes the draft in focus (with your edits) the problem's prompt;
**tab** moves between them; **Escape** goes back. A model draft that copied the
reference was refused and is not shown (the problem's history says why).
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "use", "Use this draft", id="drafts.use", priority=True,
                tooltip="Make the draft in focus the problem's prompt"),
        Binding("escape", "back", "Back", id="drafts.back"),
    ]

    def __init__(self, problem_id: str) -> None:
        super().__init__()
        self.problem_id = problem_id
        self.drafts: list[dict] = []

    def compose(self) -> ComposeResult:
        yield NavBar()
        yield Static("", id="drafts-status", classes="status-line", markup=False)
        with Horizontal(id="drafts-split"):
            left = TextArea("", id="draft-left", soft_wrap=True)
            left.border_title = "docstring draft"
            yield left
            right = TextArea("", id="draft-right", soft_wrap=True)
            right.border_title = "model draft"
            yield right
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.reload()
        self.query_one("#draft-right").focus()

    def reload(self) -> None:
        rows = run_guarded(self, f"Could not read the drafts of {self.problem_id}",
                           lambda: prompt_drafts.drafts_of(self.app.store, self.problem_id))
        self.drafts = rows or []
        docstring = next((r for r in self.drafts if r["source"] == prompt_drafts.DOCSTRING),
                         None)
        models = [r for r in self.drafts if r["source"] != prompt_drafts.DOCSTRING]
        model = models[-1] if models else None
        left = self.query_one("#draft-left", TextArea)
        right = self.query_one("#draft-right", TextArea)
        left.load_text(docstring["text"] if docstring else "")
        right.load_text(model["text"] if model else "")
        self.sources = {"draft-left": docstring["source"] if docstring else None,
                        "draft-right": model["source"] if model else None}
        if model:
            right.border_title = (f"{model['source']} · template "
                                  f"{(model['template_sha256'] or '')[:12]}")
        status = f"{self.problem_id} · {len(self.drafts)} draft(s)"
        if not model:
            status += " · no model draft yet (ctrl+d when accepting, or `curator problems " \
                      "draft-prompt`)"
        self.query_one("#drafts-status", Static).update(status + " · ctrl+s uses the one "
                                                        "in focus")

    def action_use(self) -> None:
        focused = self.focused
        if not isinstance(focused, TextArea) or not focused.text.strip():
            self.notify("Focus a draft with text first", severity="warning")
            return
        source = self.sources.get(focused.id) or "edited"
        changed = run_guarded(self, f"Could not set the prompt of {self.problem_id}",
                              lambda: prompt_drafts.use_text(
                                  self.app.store, self.app.workspace.problems_dir,
                                  self.problem_id, focused.text))
        if changed is None:
            return
        self.post_message(DataChanged())
        self.notify(f"{self.problem_id}: the prompt is now the {source} draft"
                    + ("" if changed else " (unchanged)"))

    def action_back(self) -> None:
        self.app.pop_screen()
