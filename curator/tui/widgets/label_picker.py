"""A picker for one label axis: number keys choose, the highlighted label is explained."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option


@dataclass
class Choice:
    slug: str
    name: str
    definition: str


class LabelPicker(OptionList):
    """One axis (stage, task, data or status). Posts Changed when the value changes."""

    HELP = """\
## Label picker

**1**–**9** choose the label with that number on this axis, **Enter**/**Space** choose the
highlighted one, **0** clears it. **a** accepts the mined suggestion (marked ☆).
**ctrl+z** undoes the last label change. **Left**/**Right** move between axes.
The box below explains the highlighted label. Nothing is stored until **ctrl+s**.
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        *(Binding(str(n), f"choose({n})", f"Choose {n}", show=False, id=f"labels.choose{n}")
          for n in range(1, 10)),
        Binding("0", "clear", "Clear", show=False, id="labels.clear"),
        Binding("space", "select", "Choose", show=False, id="labels.select"),
        Binding("a", "accept_suggestion", "Accept ☆", id="labels.accept",
                tooltip="Accept the mined suggestion for this axis"),
        Binding("left", "app.focus_previous", "Previous axis", show=False,
                id="labels.previous_axis"),
        Binding("right", "app.focus_next", "Next axis", show=False, id="labels.next_axis"),
    ]

    @dataclass
    class Changed(Message):
        picker: LabelPicker
        axis: str
        before: str
        after: str

    @dataclass
    class Explain(Message):
        """The highlighted label changed: show its definition."""
        picker: LabelPicker
        choice: Choice | None

    def __init__(self, axis: str, title: str, choices: list[Choice], value: str = "",
                 suggestions: dict[str, str] | None = None, *, clearable: bool = True,
                 id: str | None = None) -> None:
        super().__init__(id=id, classes="label-picker")
        self.axis = axis
        self.choices = choices
        self.value = value
        self.suggestions = suggestions or {}   # slug -> why
        self.clearable = clearable
        self.border_title = title

    def on_mount(self) -> None:
        self._rebuild()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "accept_suggestion":
            return bool(self.suggestions)
        return True

    def _prompt(self, number: int, choice: Choice) -> Text:
        chosen = choice.slug == self.value
        text = Text()
        text.append(f"{number} ", style="dim")
        text.append("● " if chosen else "○ ", style="bold" if chosen else "dim")
        text.append(choice.name, style="bold" if chosen else "")
        if choice.slug in self.suggestions:
            text.append(" ☆", style="italic")
        return text

    def _rebuild(self) -> None:
        highlighted = self.highlighted
        self.clear_options()
        self.add_options([Option(self._prompt(n, c), id=c.slug)
                          for n, c in enumerate(self.choices, 1)])
        if highlighted is None:
            slugs = [c.slug for c in self.choices]
            highlighted = slugs.index(self.value) if self.value in slugs else 0
        self.highlighted = highlighted
        self.border_subtitle = self.name_of(self.value) or "unset"

    def name_of(self, slug: str) -> str:
        return next((c.name for c in self.choices if c.slug == slug), "")

    def set_value(self, slug: str, *, notify: bool = True) -> None:
        if slug == self.value:
            return
        before, self.value = self.value, slug
        slugs = [c.slug for c in self.choices]
        self._rebuild()
        if slug in slugs:
            self.highlighted = slugs.index(slug)
        if notify:
            self.post_message(self.Changed(self, self.axis, before, slug))

    # -- actions -------------------------------------------------------------------------

    def action_choose(self, number: int) -> None:
        if 1 <= number <= len(self.choices):
            self.set_value(self.choices[number - 1].slug)
        else:
            self.app.bell()

    def action_clear(self) -> None:
        if self.clearable:
            self.set_value("")
        else:
            self.app.bell()

    def action_accept_suggestion(self) -> None:
        if not self.suggestions:
            self.notify(f"No suggestion for {self.axis}", severity="warning", timeout=2)
            return
        self.set_value(next(iter(self.suggestions)))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None:
            self.set_value(event.option.id)

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        self._explain()

    def on_focus(self) -> None:
        self._explain()

    def _explain(self) -> None:
        index = self.highlighted
        choice = self.choices[index] if index is not None and index < len(self.choices) \
            else None
        self.post_message(self.Explain(self, choice))
