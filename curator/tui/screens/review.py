"""Review: walk the failure queue and label each failing sample in the bug taxonomy.

Labels are stored through curator.review (audited, undoable): 1-2 (category, reason)
pairs, or a verdict — the sample is actually correct, or the benchmark item is defective.
"""

from __future__ import annotations

import difflib
from collections import Counter
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import (
    DataTable,
    Footer,
    Input,
    Log,
    Markdown,
    OptionList,
    Select,
    Static,
    TabbedContent,
    TabPane,
    TextArea,
)
from textual.widgets.option_list import Option

from curator import review
from curator import taxonomy as taxonomy_store
from curator.review import annotations as review_annotations
from curator.tui.widgets.nav_bar import NavBar

if TYPE_CHECKING:
    from curator.tui.app import CuratorApp



class ReviewScreen(Screen):
    HELP = """\
## Review

The failing samples you are to review (all of them when nothing was assigned). For each:
read the prompt, the sample beside the reference (**v** toggles a diff) and the failing
tests, then label it.

- **1**–**9** pick a bug category (the list shows the ones used most first); type the
  reason and press **Enter** to save. Pick a second category the same way to add a
  second (category, reason) pair — at most two. The DL-specific sub-category box applies
  to the pair being written. **x** drops the pairs so you can start over.
- **c**: the sample is actually correct; **d**: the benchmark item is defective.
- **n** / **p** next / previous item, **]** next item you have not labelled,
  **ctrl+z** undoes your last label (it jumps to that item). **Escape** leaves the reason
  box.

Your position and progress stay in the line at the top.
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        *(Binding(str(n), f"category({n})", f"Category {n}", show=False,
                  id=f"review.category{n}") for n in range(1, 10)),
        Binding("n", "move(1)", "Next", id="review.next"),
        Binding("p", "move(-1)", "Prev", id="review.previous"),
        Binding("right_square_bracket", "next_open", "Next open", id="review.next_open",
                show=False, tooltip="Next item you have not labelled"),
        Binding("c", "verdict('sample-correct')", "Correct", id="review.correct",
                tooltip="The sample is actually correct"),
        Binding("d", "verdict('benchmark-defect')", "Defect", id="review.defect",
                tooltip="The benchmark item itself is defective"),
        Binding("x", "drop_pending", "Drop pairs", id="review.drop", show=False,
                tooltip="Drop the pairs and start this label over"),
        Binding("ctrl+z", "undo", "Undo", id="review.undo",
                tooltip="Undo your last label"),
        Binding("v", "toggle_diff", "Diff", id="review.diff",
                tooltip="Sample beside the reference, or as a diff"),
        Binding("escape", "leave_reason", "Categories", show=False, id="review.leave_reason"),
    ]

    app: CuratorApp

    def __init__(self) -> None:
        super().__init__()
        self.items: list[review.ReviewItem] = []
        self.index = 0
        self.pending: list[list[str | None]] = []   # [category, dl, reason] not yet saved
        self.diff = False
        self.taxonomy = None
        self._seen_version = -1

    def compose(self) -> ComposeResult:
        yield NavBar()
        yield Static("", id="review-position", classes="status-line")
        with TabbedContent(id="review-tabs"):
            with TabPane("Code", id="review-code"), Horizontal(id="review-code-split"):
                sample = TextArea.code_editor("", language="python", read_only=True,
                                              id="review-sample", theme="css")
                sample.border_title = "Sample"
                yield sample
                reference = TextArea.code_editor("", language="python", read_only=True,
                                                 id="review-reference", theme="css")
                reference.border_title = "Reference"
                yield reference
                diff = TextArea("", read_only=True, id="review-diff")
                diff.border_title = "Reference → sample"
                yield diff
            with TabPane("Failure", id="review-failure"), Horizontal():
                tests = DataTable(id="review-tests", cursor_type="row")
                tests.border_title = "Failing tests"
                yield tests
                output = Log(id="review-output")
                output.border_title = "Test output"
                yield output
            with TabPane("Prompt", id="review-prompt"), VerticalScroll(classes="pane"):
                yield Markdown("", id="review-prompt-md")
        with Horizontal(id="review-label"):
            categories = OptionList(id="review-categories")
            categories.border_title = "Bug category"
            yield categories
            with Vertical(id="review-form"):
                yield Static("", id="review-current", markup=False)
                yield Select([], id="review-dl", prompt="DL-specific sub-category",
                             compact=True)
                yield Input(placeholder="reason for the chosen category, Enter saves",
                            id="review-reason", compact=True)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#review-tests", DataTable).add_columns("test", "outcome")
        self.query_one("#review-diff").display = False
        self.reload()
        self.query_one("#review-categories").focus()

    def on_screen_resume(self) -> None:
        if self._seen_version != self.app.data_version:
            self.reload()

    # -- data ------------------------------------------------------------------------------

    def reload(self, sample_id: int | None = None, *, reorder: bool = False) -> None:
        self._seen_version = self.app.data_version
        store = self.app.store
        taxonomy = taxonomy_store.current(store)
        # the category order (and so the number keys) stays put during a session
        reorder = reorder or self.taxonomy is None or taxonomy.version != self.taxonomy.version
        self.taxonomy = taxonomy
        keep = sample_id if sample_id is not None else (
            self.current.sample_id if self.current else None)
        self.items = review.queue(store, self.app.actor)
        self.index = next((i for i, it in enumerate(self.items) if it.sample_id == keep), 0) \
            if keep is not None else self._first_open()
        if reorder:
            self._fill_categories()
        self.query_one("#review-dl", Select).set_options(
            [(f"{c.name}", c.id) for c in self.taxonomy.dl_categories])
        self.show()

    def _first_open(self) -> int:
        return next((i for i, it in enumerate(self.items) if not it.done), 0)

    def _fill_categories(self) -> None:
        """Categories used most first, so the number keys reach the frequent ones."""
        used = Counter(pair["category"] for row in review_annotations.all_labels(self.app.store)
                       for pair in row["pairs"])
        order = {c.id: i for i, c in enumerate(self.taxonomy.categories)}
        self.categories = sorted(self.taxonomy.categories,
                                 key=lambda c: (-used.get(c.id, 0), order[c.id]))
        option_list = self.query_one("#review-categories", OptionList)
        option_list.clear_options()
        for number, cat in enumerate(self.categories, 1):
            key = str(number) if number <= 9 else " "
            option_list.add_option(Option(Text.assemble((f"{key} ", "bold"), cat.name),
                                          id=cat.id))
        option_list.highlighted = 0

    @property
    def current(self) -> review.ReviewItem | None:
        return self.items[self.index] if 0 <= self.index < len(self.items) else None

    def names(self) -> dict[str, str]:
        return {c.id: c.name for c in self.taxonomy.categories}

    # -- showing ------------------------------------------------------------------------

    def show(self) -> None:
        item = self.current
        self.pending = self._saved_pairs()
        sample = self.query_one("#review-sample", TextArea)
        reference = self.query_one("#review-reference", TextArea)
        tests = self.query_one("#review-tests", DataTable)
        output = self.query_one("#review-output", Log)
        tests.clear()
        output.clear()
        if item is None:
            sample.load_text("")
            reference.load_text("")
            self.query_one("#review-diff", TextArea).load_text("")
            self.query_one("#review-prompt-md", Markdown).update(
                "Nothing to review: no failing samples whose reference passes.")
            self._position()
            return
        code = item.code if item.code is not None else item.raw
        sample.load_text(code or "")
        sample.border_title = f"Sample ({item.model}, #{item.sample_index})"
        reference.load_text(item.reference)
        diff = difflib.unified_diff(item.reference.splitlines(), (code or "").splitlines(),
                                    "reference", "sample", lineterm="")
        self.query_one("#review-diff", TextArea).load_text("\n".join(diff))
        for test in item.failing_tests:
            tests.add_row(test.get("id") or "", test.get("outcome") or "")
        output.write_line(f"{item.outcome}: {item.reason}")
        if item.test_output:
            output.write(item.test_output)
        self.query_one("#review-prompt-md", Markdown).update(item.prompt)
        self._position()

    def _position(self) -> None:
        item = self.current
        mine = review.progress(self.app.store, self.app.actor).get(self.app.actor, {})
        progress = (f"me: {mine.get('labelled', 0)} done, {mine.get('remaining', 0)} "
                    f"left, {mine.get('labelled_today', 0)} today")
        if item is None:
            self.query_one("#review-position", Static).update(f"queue empty · {progress}")
        else:
            mark = "✓" if item.done else "○"
            self.query_one("#review-position", Static).update(
                f"{mark} {self.index + 1} of {len(self.items)} · sample {item.sample_id} · "
                f"{item.model} · {item.problem_id} · {item.outcome} · {progress}")
        self._label_text()

    def _label_text(self) -> None:
        item = self.current
        names = self.names()
        lines = [f"saved: {review_annotations.format_label(item.label if item else None, self.taxonomy)}"]
        if self.pending != self._saved_pairs():
            to_save = [f"{c} {names.get(c, '')}{f' / {d}' if d else ''}: {r or '…'}"
                       for c, d, r in self.pending]
            lines.append(f"to save: {'; '.join(to_save) or '(nothing: x dropped the pairs)'}")
        if item is not None and item.final:
            lines.append(f"adjudicated: {review_annotations.format_label(item.final, self.taxonomy)}")
        self.query_one("#review-current", Static).update("\n".join(lines))

    # -- labelling --------------------------------------------------------------------------

    def _choose(self, category_id: str) -> None:
        if self.current is None:
            return
        if len(self.pending) >= review_annotations.MAX_PAIRS:
            self.notify("Two pairs at most: x drops them, then pick again",
                        severity="warning")
            return
        self.pending.append([category_id, None, ""])
        self.query_one("#review-dl", Select).clear()
        self._label_text()
        self.query_one("#review-reason", Input).focus()

    def action_category(self, number: int) -> None:
        if 1 <= number <= len(self.categories):
            self._choose(self.categories[number - 1].id)

    @on(OptionList.OptionSelected, "#review-categories")
    def _category_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id:
            self._choose(event.option.id)

    @on(Input.Submitted, "#review-reason")
    def _reason_submitted(self, event: Input.Submitted) -> None:
        if not self.pending:
            self.notify("Pick a category first (1-9 or Enter on the list)", severity="warning")
            return
        dl = self.query_one("#review-dl", Select).value
        self.pending[-1][1] = dl if isinstance(dl, str) else None
        self.pending[-1][2] = event.value.strip()
        pairs = [(f"{c}/{d}" if d else c, reason) for c, d, reason in self.pending]
        if self._save(pairs=pairs):
            event.input.value = ""
            self.query_one("#review-categories").focus()

    def action_verdict(self, verdict: str) -> None:
        self._save(verdict=verdict)

    def _save(self, pairs=(), verdict: str | None = None) -> bool:
        item = self.current
        if item is None:
            return False
        result = self.app.run_guarded(
            f"Could not label sample {item.sample_id}",
            lambda: review.label(self.app.store, item.sample_id, self.app.actor,
                                 pairs=pairs, verdict=verdict))
        if result is None:
            return False
        self.app.changed()
        self._seen_version = self.app.data_version
        self.items[self.index] = review.item(self.app.store, item.sample_id, self.app.actor)
        self.pending = self._saved_pairs()
        self._position()
        self.notify(f"Sample {item.sample_id}: {review_annotations.format_label(result, self.taxonomy)}",
                    timeout=3)
        return True

    def _saved_pairs(self) -> list[list[str | None]]:
        """The pairs of my saved label: a category picked now adds to them (two at most)."""
        label = self.current.label if self.current else None
        if not label or label["verdict"] != "bug":
            return []
        return [[p["category"], p.get("dl"), p.get("reason") or ""] for p in label["pairs"]]

    def action_drop_pending(self) -> None:
        self.pending = []
        self._label_text()

    def action_undo(self) -> None:
        undone = self.app.run_guarded("Could not undo", lambda: review.undo(
            self.app.store, self.app.actor))
        if undone is None:
            self.notify("Nothing of yours to undo", severity="warning")
            return
        self.app.changed()
        self.reload(sample_id=undone["sample_id"])
        self.notify(f"Undid your {undone['action']} on sample {undone['sample_id']}")

    # -- moving --------------------------------------------------------------------------------

    def action_move(self, step: int) -> None:
        if self.items:
            self.index = max(0, min(self.index + step, len(self.items) - 1))
            self.show()

    def action_next_open(self) -> None:
        for offset in range(1, len(self.items) + 1):
            index = (self.index + offset) % len(self.items)
            if not self.items[index].done:
                self.index = index
                self.show()
                return
        self.notify("Everything in your queue is labelled")

    def action_toggle_diff(self) -> None:
        self.diff = not self.diff
        self.query_one("#review-diff").display = self.diff
        self.query_one("#review-sample").display = not self.diff
        self.query_one("#review-reference").display = not self.diff
        self.query_one(TabbedContent).active = "review-code"

    def action_leave_reason(self) -> None:
        self.query_one("#review-categories").focus()

    def action_reload(self) -> None:
        self.reload()
        self.notify("Review queue reloaded", timeout=2)

    def palette_commands(self):
        for cat in self.categories[9:]:
            yield (f"Category {cat.id}: {cat.name}", cat.definition,
                   lambda cid=cat.id: self._choose(cid))
