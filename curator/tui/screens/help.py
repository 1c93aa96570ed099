"""F1: help for the focused widget, the keys in reach, and the labelling guidelines."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widget import Widget
from textual.widgets import Markdown

from curator import taxonomy
from curator.store import Store


def widget_help(screen: Screen, focused: Widget | None) -> str:
    """The HELP of the focused widget (or its nearest ancestor that has one), then the screen's."""
    parts = []
    node = focused
    while node is not None and node is not screen:
        if node.HELP:
            parts.append(node.HELP.strip())
            break
        node = node.parent
    if screen.HELP:
        parts.append(screen.HELP.strip())
    return "\n\n".join(parts) or "No help for this part of the screen."


def keys_table(screen: Screen) -> str:
    rows = []
    seen = set()
    for key, active in screen.active_bindings.items():
        binding = active.binding
        if not binding.description or binding.system or (binding.action, key) in seen:
            continue
        seen.add((binding.action, key))
        display = screen.app.get_key_display(binding)
        what = f" — {binding.tooltip}" if binding.tooltip else ""
        rows.append(f"- `{display}` **{binding.description}**{what} (`{binding.id or ''}`)")
    if not rows:
        return ""
    # a list, not a table: Textual's Markdown lays big tables out slowly (seconds for F1)
    return "## Keys here (id for [keymap] in brackets)\n\n" + "\n".join(rows)


def guidelines(store: Store) -> str:
    intro = ("Label what the function *does*, not where it came from. Pick the stage of "
             "the pipeline the code serves, the ML task it is specific to (General when it "
             "works for any task), and the kind of data it consumes. Loss functions are "
             "Model Construction. When two stages fit, pick the one a user would look under "
             "first. Mined suggestions (☆) are hints from rules, not answers.")
    lines = ["## Labelling guidelines", "", intro]
    names = {"stage": "Stage", "task": "Task", "data": "Data"}
    for axis in ("stage", "task", "data"):
        lines += ["", f"### {names[axis]}", ""]
        for number, label in enumerate(store.labels(axis), 1):
            lines.append(f"{number}. **{label['name']}** (`{label['slug']}`) — "
                         f"{label['definition']}")
    lines += ["", review_guidelines(store)]
    return "\n".join(lines)


def review_guidelines(store: Store) -> str:
    """The bug taxonomy with the key of each category: the same keys as the Review
    screen and the ids `curator review label` takes."""
    tax = taxonomy.current(store)
    lines = ["### Bug taxonomy (Review screen)", "",
             "The key is the category's id: **1**–**9**, then **0** and the last digit for "
             "10–15 (**0 0** is 10). The CLI takes the same ids "
             "(`curator review label SAMPLE --category 10/shape-dimension --reason ...`). "
             "**ctrl+t** picks the "
             "DL-specific sub-category of the pair, **r** writes its reason.", ""]
    # a list, not a table: Textual's Markdown lays tables out slowly (seconds for F1)
    for position, cat in enumerate(tax.categories, 1):
        lines.append(f"- key **{taxonomy.review_key(cat.id, position)}** — {cat.id} "
                     f"**{cat.name}**: {cat.definition}")
    lines += ["", "DL-specific sub-categories: " + "; ".join(
        f"{c.name} (`{c.id}`)" for c in tax.dl_categories) + "."]
    verdicts = {"sample-correct": "c", "benchmark-defect": "d"}
    lines += ["", "Verdicts instead of pairs: " + "; ".join(
        f"**{verdicts.get(v.id, '')}** {v.name}" for v in tax.verdicts) + "."]
    return "\n".join(lines)


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,f1,q", "close", "Close", id="help.close"),
    ]

    def __init__(self, text: str) -> None:
        super().__init__(classes="dialog-screen")
        self.text = text

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body", classes="dialog help-dialog") as box:
            box.border_title = "Help (F1 / Escape closes)"
            yield Markdown(self.text, id="help-markdown")

    def on_mount(self) -> None:
        self.query_one("#help-body").focus()

    def action_close(self) -> None:
        self.dismiss(None)


def help_text(screen: Screen, store: Store) -> str:
    focused = screen.focused
    parts = [widget_help(screen, focused), guidelines(store), keys_table(screen)]
    return "\n\n".join(p for p in parts if p)
