"""Modal dialogs: an error with details, a question with a few answers.

Each dialog names the widget it focuses when it opens with AUTO_FOCUS, which Textual applies
once the dialog is shown. A query in on_mount raised NoMatches when the app was closing as
the dialog mounted (its children were never mounted).
"""

from __future__ import annotations

import traceback
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, DirectoryTree, Input, Label, Select, Static, TextArea

from curator.errors import CuratorError


def describe(exc: BaseException) -> tuple[str, str]:
    """A one-line message and the details (traceback for bugs, nothing more for people)."""
    if isinstance(exc, CuratorError):
        return str(exc), str(exc)
    message = f"{type(exc).__name__}: {exc}"
    details = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return message, details


class ErrorModal(ModalScreen[None]):
    """A failure: what went wrong in one line, the details below (copyable)."""

    HELP = """\
## Error

The first line says what failed. The box below holds the details (for a bug, the
traceback): select text with the mouse or press **c** to copy everything.
**Escape** or **Enter** closes.
"""

    AUTO_FOCUS = "#close"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,enter", "dismiss", "Close", id="error.close"),
        Binding("c", "copy", "Copy details", id="error.copy"),
    ]

    def __init__(self, title: str, message: str, details: str = "") -> None:
        super().__init__(classes="dialog-screen")
        self.title_text = title
        self.message = message
        self.details = details

    def compose(self) -> ComposeResult:
        with Vertical(id="error-dialog", classes="dialog error-dialog") as box:
            box.border_title = self.title_text
            yield Static(self.message, id="error-message", markup=False)
            if self.details and self.details != self.message:
                yield TextArea(self.details, read_only=True, id="error-details",
                               soft_wrap=False, show_line_numbers=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Close", id="close", variant="primary")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(None)

    def action_dismiss(self, result=None) -> None:
        self.dismiss(None)

    def action_copy(self) -> None:
        self.app.copy_to_clipboard(f"{self.message}\n\n{self.details}")
        self.notify("Error details copied to the clipboard")


class ChoiceModal(ModalScreen[str]):
    """A question with a few answers (buttons); dismisses with the chosen answer's id."""

    AUTO_FOCUS = "Button"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="dialog.cancel"),
        Binding("left", "app.focus_previous", "Previous", show=False, id="dialog.previous"),
        Binding("right", "app.focus_next", "Next", show=False, id="dialog.next"),
    ]

    def __init__(self, title: str, question: str, choices: list[tuple[str, str, str]],
                 cancel: str = "cancel") -> None:
        """`choices` are (id, label, variant) with variant one of Button's variants."""
        super().__init__(classes="dialog-screen")
        self.title_text = title
        self.question = question
        self.choices = choices
        self.cancel_id = cancel

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog") as box:
            box.border_title = self.title_text
            yield Label(self.question, id="question", markup=False)
            with Horizontal(classes="dialog-buttons"):
                for choice_id, label, variant in self.choices:
                    yield Button(label, id=choice_id, variant=variant)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id)

    def action_cancel(self) -> None:
        self.dismiss(self.cancel_id)


def unsaved_modal(problem_id: str, fields: list[str], leaving: str = "leaving") -> ChoiceModal:
    return ChoiceModal(
        "Unsaved changes",
        f"{problem_id}: unsaved changes to {', '.join(fields)}. Save them before {leaving}?",
        [("save", "Save", "primary"), ("discard", "Discard", "error"),
         ("cancel", "Cancel", "default")])


class FormKeys:
    """Enter in a box or the `ok` button submits (`_submit`); any other button or Escape
    dismisses with None. Shared by the dialogs that ask for text."""

    def on_input_submitted(self, event) -> None:
        event.stop()
        self._submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "ok":
            self._submit()
        else:
            self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)


class InputModal(FormKeys, ModalScreen[str | None]):
    """Ask for one line of text; dismisses with it (stripped), or None on Escape."""

    AUTO_FOCUS = "#answer"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="input.cancel"),
    ]

    def __init__(self, title: str, question: str, value: str = "", placeholder: str = "",
                 required: bool = True) -> None:
        super().__init__(classes="dialog-screen")
        self.title_text = title
        self.question = question
        self.value = value
        self.placeholder = placeholder
        self.required = required

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog") as box:
            box.border_title = self.title_text
            yield Label(self.question, id="question", markup=False)
            yield Input(self.value, placeholder=self.placeholder, id="answer")
            with Horizontal(classes="dialog-buttons"):
                yield Button("OK", id="ok", variant="primary")
                yield Button("Cancel", id="cancel")

    def _submit(self) -> None:
        text = self.query_one("#answer", Input).value.strip()
        if self.required and not text:
            self.notify("Type something first (Escape cancels)", severity="warning")
            return
        self.dismiss(text)

class NewProblemModal(FormKeys, ModalScreen[dict | None]):
    """Ask for a new problem's id, entry point and kind; dismisses with them, or None."""

    HELP = """\
## New problem

**Id**: lower-case letters, digits, `_` and `-` (it names the folder under problems/).
**Entry point**: the function the tests import, or `Class.method`; empty takes one from
the id. **Kind**: function or class method. **Enter** creates the problem and opens it,
**Escape** cancels.
"""

    AUTO_FOCUS = "#new-id"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="new_problem.cancel"),
    ]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="new-problem-dialog") as box:
            box.border_title = "New problem"
            yield Label("Id of the new problem (its folder name):", markup=False)
            yield Input(placeholder="soft_dice_loss", id="new-id")
            yield Label("Entry point (empty: from the id):", markup=False)
            yield Input(placeholder="soft_dice_loss  or  DiceLoss.forward", id="new-entry")
            yield Select([("function", "function"), ("class method", "method")],
                         value="function", allow_blank=False, id="new-kind")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Create", id="ok", variant="primary")
                yield Button("Cancel", id="cancel")

    def _submit(self) -> None:
        problem_id = self.query_one("#new-id", Input).value.strip()
        if not problem_id:
            self.notify("Type the id first (Escape cancels)", severity="warning")
            self.query_one("#new-id").focus()
            return
        entry = self.query_one("#new-entry", Input).value.strip() or None
        kind = self.query_one("#new-kind", Select).value
        if entry and "." in entry:
            kind = "method"
        self.dismiss({"id": problem_id, "entry_point": entry,
                      "kind": kind if isinstance(kind, str) else "function"})

class ImportSamplesModal(FormKeys, ModalScreen[dict | None]):
    """Pick a sample file (JSONL, or DL-Bench JSON) from a folder tree, name the model."""

    HELP = """\
## Import samples

Pick a file in the tree (**Enter** on a file fills the path) or type its path. JSONL rows
carry `task_id` and one of `solution`, `completion` or `response`; DL-Bench's
per-problem JSON files work too. **Model** and **technique** apply to rows that do not
name their own. **Import** (or **Enter** in a box) imports; **Escape** cancels.
"""

    AUTO_FOCUS = "#import-tree"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="import.cancel"),
    ]

    def __init__(self, root: str) -> None:
        super().__init__(classes="dialog-screen")
        self.root = root

    def compose(self) -> ComposeResult:
        class SampleFiles(DirectoryTree):
            def filter_paths(self, paths):
                return [p for p in paths if not p.name.startswith(".") and (
                    p.is_dir() or p.suffix in (".jsonl", ".json"))]

        with Vertical(classes="dialog", id="import-dialog") as box:
            box.border_title = "Import samples"
            yield Label("Sample file (JSONL or DL-Bench JSON):", markup=False)
            yield Input(placeholder="path of the file", id="import-path")
            yield SampleFiles(self.root, id="import-tree")
            with Horizontal(id="import-names"):
                yield Input(placeholder="model (if rows name none)", id="import-model")
                yield Input(placeholder="technique (optional)", id="import-technique")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Import", id="ok", variant="primary")
                yield Button("Cancel", id="cancel")

    def on_directory_tree_file_selected(self, event) -> None:
        event.stop()
        self.query_one("#import-path", Input).value = str(event.path)
        self.query_one("#import-model").focus()

    def _submit(self) -> None:
        path = self.query_one("#import-path", Input).value.strip()
        if not path:
            self.notify("Pick a file in the tree first (Enter on it)", severity="warning")
            return
        self.dismiss({"path": path,
                      "model": self.query_one("#import-model", Input).value.strip() or None,
                      "technique": self.query_one("#import-technique", Input).value.strip()
                      or None})

class LabelEditModal(FormKeys, ModalScreen[dict | None]):
    """Edit a label's display name and definition (its slug stays)."""

    AUTO_FOCUS = "#label-definition"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="label_edit.cancel"),
    ]

    def __init__(self, axis: str, slug: str, name: str, definition: str) -> None:
        super().__init__(classes="dialog-screen")
        self.axis, self.slug, self.name_text, self.definition = axis, slug, name, definition

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog") as box:
            box.border_title = f"Label {self.axis}/{self.slug}"
            yield Label("Display name:", markup=False)
            yield Input(self.name_text, id="label-name")
            yield Label("Definition (shown when labelling and in the guidelines):",
                        markup=False)
            yield Input(self.definition, id="label-definition")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Save", id="ok", variant="primary")
                yield Button("Cancel", id="cancel")

    def _submit(self) -> None:
        name = self.query_one("#label-name", Input).value.strip()
        if not name:
            self.notify("The name cannot be empty", severity="warning")
            return
        self.dismiss({"name": name,
                      "definition": self.query_one("#label-definition", Input).value.strip()})

