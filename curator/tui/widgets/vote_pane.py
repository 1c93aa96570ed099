"""Your ballot in a label round: blind votes on a problem's labels, and your assignments.

Shown in the Problem screen's Labels tab when the person using the app has an assignment
for the problem. Until they have voted, neither the problem's current labels nor the
other annotators' votes are shown (curator.panel.rounds.view decides); after, both are.
The line at the top is the queue of their assignments: position and progress; **n** /
**p** walk it, **]** goes to the next one not voted yet.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Static

from curator.labels import AXES
from curator.panel import rounds
from curator.tui.messages import DataChanged, OpenProblem, run_guarded
from curator.tui.widgets.label_picker import Choice, LabelPicker


class VotePicker(LabelPicker):
    """One axis of your vote (number keys choose, as on the label pickers)."""

    HELP = """\
## Your vote

A label round: several annotators label this problem independently and the majority
decides. **1**–**9** choose the label with that number, **0** clears it, **Left**/**Right**
move between axes, **v** saves your vote (**ctrl+z** takes back your latest act in label
rounds: this vote, or an adjudication or a resolve you ran, as `curator labels undo`).
The problem's current labels and the others' votes are hidden until your vote is saved,
here, in the History tab, the Problems table and the Stats counts.
**n** / **p**: next / previous problem assigned to you; **]**: the next one you have not
voted. The labelling guidelines below hold every label's definition.
"""


def position_line(queue: list[dict], problem_id: str) -> str:
    """`assignment 3 of 12 · 5 voted · 7 to go` for this problem in the queue."""
    done = sum(item["done"] for item in queue)
    ids = [item["problem_id"] for item in queue]
    where = f"assignment {ids.index(problem_id) + 1} of {len(ids)}" if problem_id in ids \
        else "not one of your assignments"
    return f"{where} · {done} voted · {len(ids) - done} to go"


def others_text(view: rounds.View, names: dict[tuple[str, str], str]) -> str:
    """What is shown once you have voted: current decisions and everybody's votes."""
    if view.blind:
        return "Blind until you vote: the current labels and the others' votes are hidden."
    lines = []
    for vote in view.others:
        values = " / ".join(names.get((a, vote[a]), vote[a]) if vote[a] else "–"
                            for a in AXES)
        lines.append(f"{vote['annotator']}: {values}")
    if not view.others:
        lines.append("No other votes yet.")
    decided = [f"{axis} {d['value']} ({d['method']}"
               + (f" {d['votes']}/{d['of']}" if d["method"] != "adjudicated" else "")
               + ")" for axis, d in view.decisions.items()]
    if decided:
        lines.append("decided: " + ", ".join(decided))
    return "\n".join(lines)


class VotePane(Vertical):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("v", "vote", "Save vote", id="labels.vote",
                tooltip="Save your vote on this problem's labels"),
        Binding("ctrl+z", "undo_vote", "Undo vote", id="labels.undo_vote",
                tooltip="Take back your latest act in label rounds (a vote, an "
                        "adjudication, a resolve)"),
        Binding("n", "move(1)", "Next", id="labels.next_assignment",
                tooltip="The next problem assigned to you"),
        Binding("p", "move(-1)", "Prev", id="labels.previous_assignment",
                tooltip="The previous problem assigned to you"),
        Binding("right_square_bracket", "next_open", "Next open", show=False,
                id="labels.next_open", tooltip="The next assignment you have not voted"),
    ]

    @dataclass
    class Voted(Message):
        """The annotator saved (or took back) their vote: `blind` is what to show now."""
        pane: VotePane
        blind: bool

    def __init__(self, problem_id: str, view: rounds.View, choices: dict[str, list[Choice]],
                 *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.problem_id = problem_id
        self.view = view
        self.choices = choices
        self.names = {(axis, c.slug): c.name for axis, cs in choices.items() for c in cs}

    def compose(self) -> ComposeResult:
        yield Static("", id="vote-position", markup=False)
        own = self.view.own or {}
        with Horizontal(id="vote-pickers"):
            for axis in self.view.assigned or AXES:
                yield VotePicker(axis, f"Your {axis}", self.choices[axis], own.get(axis) or "",
                                 id=f"vote-{axis}")
        yield Static("", id="vote-others", markup=False)

    def on_mount(self) -> None:
        self._show()

    @property
    def blind(self) -> bool:
        return self.view.blind

    def _queue(self) -> list[dict]:
        return rounds.my_queue(self.app.store, self.app.actor)

    def _show(self) -> None:
        queue = self._queue()
        mine = "your vote is saved" if self.view.own else "not voted yet: v saves"
        self.query_one("#vote-position", Static).update(
            f"Label round · {position_line(queue, self.problem_id)} · {mine}")
        self.query_one("#vote-others", Static).update(others_text(self.view, self.names))
        self.border_title = "Your vote" + (" (blind)" if self.view.blind else "")

    def values(self) -> dict[str, str]:
        return {p.axis: p.value for p in self.query(VotePicker) if p.value}

    def on_label_picker_changed(self, event: LabelPicker.Changed) -> None:
        event.stop()   # a vote is not an edit of the problem

    def _refresh_view(self) -> None:
        self.view = rounds.view(self.app.store, self.problem_id, self.app.actor)
        own = self.view.own or {}
        for picker in self.query(VotePicker):
            picker.set_value(own.get(picker.axis) or "", notify=False)
        self._show()
        self.post_message(self.Voted(self, self.view.blind))

    def action_vote(self) -> None:
        values = self.values()
        result = run_guarded(self, "Vote not saved", lambda: rounds.vote(
            self.app.store, self.problem_id, self.app.actor, **values))
        if result is None:
            return
        self.post_message(DataChanged())
        self._refresh_view()
        self.notify(f"Vote saved: {result['votes']} of {result['assigned']} in", timeout=3)

    def action_undo_vote(self) -> None:
        result = run_guarded(self, "Nothing undone",
                             lambda: rounds.undo(self.app.store, self.app.actor,
                                                 self.app.workspace.problems_dir))
        if result is None:
            self.notify("Nothing of yours to undo in label rounds", timeout=2)
            return
        self.post_message(DataChanged())
        if result["action"] != "vote":
            self._refresh_view()
            self.notify(f"Undid your {result['action']}: {len(result['decisions'])} "
                        "decision(s) taken back", timeout=3)
        elif result["problem_id"] == self.problem_id:
            self._refresh_view()
            self.notify("Vote taken back", timeout=2)
        else:
            self.notify(f"Undid your vote on {result['problem_id']}", timeout=3)

    def _go(self, problem_id: str | None) -> None:
        if problem_id is None or problem_id == self.problem_id:
            self.app.bell()
            return
        self.post_message(OpenProblem(problem_id, tab="labels"))

    def action_move(self, step: int) -> None:
        ids = [item["problem_id"] for item in self._queue()]
        if not ids:
            self.app.bell()
            return
        index = ids.index(self.problem_id) + step if self.problem_id in ids else 0
        self._go(ids[index] if 0 <= index < len(ids) else None)

    def action_next_open(self) -> None:
        queue = self._queue()
        ids = [item["problem_id"] for item in queue]
        start = ids.index(self.problem_id) + 1 if self.problem_id in ids else 0
        ordered = queue[start:] + queue[:start]
        self._go(next((item["problem_id"] for item in ordered if not item["done"]), None))
