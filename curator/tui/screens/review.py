"""Review: walk the failure queue and label each failing sample in the bug taxonomy.

Labels are stored through curator.review (audited, undoable): 1-2 (category, reason)
pairs, or a verdict — the sample is actually correct, or the benchmark item is defective.
"""

from __future__ import annotations

import difflib
from typing import ClassVar

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

from curator import llm, review
from curator import taxonomy as taxonomies
from curator.display import visible
from curator.review import annotations as review_annotations
from curator.review import suggest as review_suggest
from curator.tui.messages import DataChanged, ShowError, run_guarded
from curator.tui.screens.dialogs import ChoiceModal, InputModal
from curator.tui.tasks import Task, TaskEnded, run_task
from curator.tui.widgets.nav_bar import NavBar
from curator.tui.widgets.panel_agreement import PanelAgreement


class ReviewScreen(Screen):
    HELP = """\
## Review

The failing samples you are to review (all of them when nothing was assigned). For each:
read the prompt, the sample beside the reference (**v** toggles a diff) and the failing
tests, then label it.

- The key of a bug category is its taxonomy id, the id `curator taxonomy` prints and
  `curator review label --category` takes: **1**–**9**, then **0** and the last digit
  for 10–15 (**0 0** is 10, **0 5** is 15). The list shows each key; the order never
  changes. After the key, type the reason and press **Enter** to save. Pick a second
  category the same way to add a second (category, reason) pair — at most two.
- **ctrl+t** picks the DL-specific sub-category of the pair being written; **r** goes to
  its reason box. **x** drops the pairs so you can start over.
- Tabs: **alt+1** Code, **alt+2** Failure (failing tests and output), **alt+3** Prompt,
  **alt+4** Team; **alt+←/→** step through them.
- **Team**: everyone's progress, agreement (Krippendorff's α over items labelled twice,
  Cohen's κ per pair of annotators) and the items where annotators disagree, their labels
  side by side; **Enter** on one adjudicates it (take one annotator's label as final).
  **a** assigns the unassigned items to annotators, a share of them to two. Below
  failure review's figures, the same agreement for the other panels: problem label
  rounds (α and κ per dimension, votes done) and candidate relevance votes.
- **Suggested** categories are listed under your label with the evidence that fired:
  the rules' (on the failure log and the code) at once, and, when curator.toml's `[llm]`
  names an endpoint (`base_url` and `model`, the settings `curator review suggest` uses),
  the model's beside them: it is asked in the background the first time an item is
  shown ("asking…" until it answers, or the error: **ctrl+l** reloads and asks again),
  and its answer is kept, so an item costs one request at most. They are never labels: **s** takes the first as your
  label, anything else overrides it (both are counted for `review stats`).
- **c**: the sample is actually correct; **d**: the benchmark item is defective.
- **n** / **p** next / previous item, **]** next item you have not labelled,
  **ctrl+z** undoes your last label (it jumps to that item). **Escape** leaves the reason
  box.

Your position and progress stay in the line at the top.
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        *(Binding(str(n), f"category({n})", f"Category {n}", show=False,
                  id=f"review.category{n}") for n in range(1, 10)),
        Binding("0", "category(0)", "Category 10-15", show=False, id="review.category_tens",
                tooltip="0, then the last digit of the id: 0 0 is 10, 0 5 is 15"),
        Binding("ctrl+t", "pick_dl", "Sub-category", id="review.dl",
                tooltip="The DL-specific sub-category of the pair being written"),
        Binding("r", "focus_reason", "Reason", id="review.reason", show=False,
                tooltip="Write the reason of the pair"),
        Binding("n", "move(1)", "Next", id="review.next"),
        Binding("p", "move(-1)", "Prev", id="review.previous"),
        Binding("right_square_bracket", "next_open", "Next open", id="review.next_open",
                show=False, tooltip="Next item you have not labelled"),
        Binding("c", "verdict('sample-correct')", "Correct", id="review.correct",
                tooltip="The sample is actually correct"),
        Binding("d", "verdict('benchmark-defect')", "Defect", id="review.defect",
                tooltip="The benchmark item itself is defective"),
        Binding("s", "accept_suggestion", "Take suggestion", id="review.accept_suggestion",
                tooltip="Label the sample with the first suggested category"),
        Binding("x", "drop_pending", "Drop pairs", id="review.drop", show=False,
                tooltip="Drop the pairs and start this label over"),
        Binding("a", "assign", "Assign", id="review.assign", show=False,
                tooltip="Assign unassigned items to annotators (a share to two)"),
        Binding("ctrl+z", "undo", "Undo", id="review.undo",
                tooltip="Undo your last label"),
        Binding("v", "toggle_diff", "Diff", id="review.diff",
                tooltip="Sample beside the reference, or as a diff"),
        Binding("escape", "leave_reason", "Categories", show=False, id="review.leave_reason"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.items: list[review.ReviewItem] = []
        self.index = 0
        self.pending: list[list[str | None]] = []   # [category, dl, reason] not yet saved
        self.diff = False
        self.taxonomy = None
        self._seen_version = -1
        self._tens = False   # `0` pressed: the next digit picks 10-19
        self.categories: list = []
        self.suggested: list = []
        self.endpoint: llm.EndpointSettings | None = None   # the model to ask, if any
        self._asking: dict[int, Task] = {}      # sample id -> the model request running
        self._model_errors: dict[int, str] = {}

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
            with TabPane("Team", id="review-team"):
                yield Static("", id="team-summary", markup=False)
                yield PanelAgreement("", id="team-panels", markup=False)
                with Horizontal(id="team-split"):
                    table = DataTable(id="team-disagreements", cursor_type="row")
                    table.border_title = "Disagreements (Enter adjudicates)"
                    yield table
                    yield Horizontal(id="team-side")
        with Horizontal(id="review-label"):
            categories = OptionList(id="review-categories")
            categories.border_title = "Bug category"
            yield categories
            with Vertical(id="review-form"):
                yield Static("", id="review-current", markup=False)
                yield Static("", id="review-evidence", markup=False)
                yield Select([], id="review-dl", prompt="DL-specific sub-category",
                             compact=True)
                yield Input(placeholder="reason for the chosen category, Enter saves",
                            id="review-reason", compact=True)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        settings = llm.EndpointSettings.from_config(self.app.workspace.config)
        if settings.model and settings.base_url:
            self.endpoint = settings
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
        taxonomy = taxonomies.current(store)
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
        """Categories in taxonomy order, each with its key (its id): keys never move."""
        self.categories = list(self.taxonomy.categories)
        self.keys = {taxonomies.review_key(c.id, n): c.id
                     for n, c in enumerate(self.categories, 1)}
        option_list = self.query_one("#review-categories", OptionList)
        option_list.clear_options()
        for number, cat in enumerate(self.categories, 1):
            key = taxonomies.review_key(cat.id, number)
            option_list.add_option(Option(Text.assemble((f"{key:>3} ", "bold"), cat.name),
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
        self._tens = False
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
            tests.add_row(Text(visible(test.get("id"), False)),
                          Text(visible(test.get("outcome"), False)))
        output.write_line(f"{item.outcome}: {visible(item.reason, False)}")
        for line in item.evidence:
            output.write_line("tampering: " + visible(line, False))
        if item.test_output:
            output.write(visible(item.test_output))
        self.query_one("#review-prompt-md", Markdown).update(item.prompt)
        self.suggested = self._suggestions(item)
        self._ask_model(item)
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

    def _suggestions(self, item: review.ReviewItem) -> list:
        """Stored suggestions (a model's, from `review suggest`), else the rules' now."""
        store = self.app.store
        shown = review_suggest.stored(store, item.sample_id)
        if shown:
            return shown
        found = run_guarded(self, f"Could not suggest categories for sample {item.sample_id}",
                            lambda: review_suggest.for_item(store, item))
        return found.categories if found else []

    def _ask_model(self, item: review.ReviewItem) -> None:
        """Ask the configured model about this item in a worker, once (the answer is kept)."""
        settings = self.endpoint
        if settings is None or item.sample_id in self._asking \
                or item.sample_id in self._model_errors \
                or review_suggest.asked_model(self.app.store, item.sample_id, settings.model):
            return
        model = settings.model

        def ask(ctx) -> review_suggest.SampleSuggestions:
            client = settings.client()
            try:
                return review_suggest.for_item(ctx.store, item, client, model,
                                               raise_errors=True)
            finally:
                client.close()

        self._asking[item.sample_id] = run_task(
            self, ask, group="review-suggest", label=f"asking {model} about sample "
            f"{item.sample_id}")

    @on(TaskEnded)
    def _model_answered(self, event: TaskEnded) -> None:
        sample_id = next((sid for sid, task in self._asking.items() if task is event.task),
                         None)
        if sample_id is None:
            return
        del self._asking[sample_id]
        if event.error is not None:
            self._model_errors[sample_id] = " ".join(str(event.error).split())
        current = self.current
        if current is not None and current.sample_id == sample_id:
            if event.error is None and event.result is not None:
                self.suggested = event.result.categories
            self._label_text()

    def _model_line(self, item: review.ReviewItem, from_model: list) -> str | None:
        """`model NAME: 10 · 1` (category ids, as the keys on the left), or its state."""
        if self.endpoint is None:
            return None
        head = f"model {self.endpoint.model}: "
        if item.sample_id in self._asking:
            return head + "asking…"
        if item.sample_id in self._model_errors:
            return head + "no answer: " + self._model_errors[item.sample_id]
        if not review_suggest.asked_model(self.app.store, item.sample_id,
                                          self.endpoint.model):
            return head + "not asked"
        return head + (" · ".join(h.category for h in from_model) or "nothing it could name")

    def action_accept_suggestion(self) -> None:
        item = self.current
        if item is None:
            return
        result = run_guarded(
            self, f"Could not label sample {item.sample_id}",
            lambda: review_annotations.accept_suggestion(self.app.store, item.sample_id,
                                                         self.app.actor))
        if result is not None:
            self._after_save(item, result)

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
        hints = self.suggested if item else []
        if hints:
            first = hints[0]
            sub = review_suggest.sub_name(self.taxonomy, first.dl)
            lines.append(f"suggested (s takes it): {first.category} "
                         f"{names.get(first.category, '')} / {sub}")
        # one line per source, each cut to the pane's width (never wrapped out of sight)
        rules, from_model = review_suggest.by_source(hints)
        if self.endpoint is None:
            if len(hints) > 1:
                lines.append("  or: " + ", ".join(f"{h.category} {names.get(h.category, '')}"
                                                  for h in hints[1:]))
        elif item is not None:
            lines.append("rules: " + (" · ".join(h.category for h in rules) or "none fired"))
            lines.append(self._model_line(item, from_model))
        self.query_one("#review-current", Static).update("\n".join(lines))
        # the first suggestion's evidence below, wrapped into the rows left
        self.query_one("#review-evidence", Static).update(
            f"because: {visible(hints[0].evidence, False)[:300]}" if hints else "")

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

    def action_category(self, digit: int) -> None:
        if self._tens:
            self._tens = False
            key = f"0 {digit}"
        elif digit == 0:
            self._tens = True
            self.query_one("#review-current", Static).update(
                "0 … then the last digit of the id: 0 0 is 10, 0 5 is 15")
            return
        else:
            key = str(digit)
        category = self.keys.get(key)
        if category is None:
            self.notify(f"No category has the key {key}", severity="warning", timeout=3)
            self._label_text()
            return
        self._choose(category)

    def action_pick_dl(self) -> None:
        if not self.pending:
            self.notify("Pick a category first (its id key)", severity="warning", timeout=3)
            return
        select = self.query_one("#review-dl", Select)
        self._picking_dl = True
        select.focus()
        select.action_show_overlay()

    def action_focus_reason(self) -> None:
        self.query_one("#review-reason", Input).focus()

    @on(Select.Changed, "#review-dl")
    def _dl_changed(self) -> None:
        if self.pending and getattr(self, "_picking_dl", False):
            self._picking_dl = False
            self.call_after_refresh(self.query_one("#review-reason", Input).focus)

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
        result = run_guarded(
            self, f"Could not label sample {item.sample_id}",
            lambda: review.label(self.app.store, item.sample_id, self.app.actor,
                                 pairs=pairs, verdict=verdict))
        if result is None:
            return False
        self._after_save(item, result)
        return True

    def _after_save(self, item: review.ReviewItem, result: dict) -> None:
        self.post_message(DataChanged())
        self._seen_version = DataChanged.seen_after(self.app.data_version)
        self.items[self.index] = review.item(self.app.store, item.sample_id, self.app.actor)
        self.pending = self._saved_pairs()
        self._position()
        self.notify(f"Sample {item.sample_id}: {review_annotations.format_label(result, self.taxonomy)}",
                    timeout=3)

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
        undone = run_guarded(self, "Could not undo", lambda: review.undo(
            self.app.store, self.app.actor))
        if undone is None:
            self.notify("Nothing of yours to undo", severity="warning")
            return
        self.post_message(DataChanged())
        self.reload(sample_id=undone["sample_id"])
        self._seen_version = DataChanged.seen_after(self.app.data_version)
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
        self._model_errors.clear()   # a model that failed is asked again
        self.reload()
        if self.query_one(TabbedContent).active == "review-team":
            self.show_team()
        self.notify("Review queue reloaded", timeout=2)

    # -- team: assignment, agreement, adjudication ---------------------------------------

    def show_team(self) -> None:
        data = review.stats(self.app.store)
        self.team = data
        agreement = data["agreement"]
        alpha = agreement["krippendorff_alpha"]
        lines = [f"{data['items']} item(s) in the queue, {data['labelled']} labelled, "
                 f"{data['adjudicated']} adjudicated · agreement on {agreement['items']} "
                 f"item(s) labelled twice: α {'n/a' if alpha is None else f'{alpha:.3f}'}"]
        kappas = [f"κ {' / '.join(p['annotators'])} "
                  f"{'n/a' if p['kappa'] is None else format(p['kappa'], '.3f')} "
                  f"({p['items']})" for p in agreement["cohen_kappa"]]
        if kappas:
            lines.append(" · ".join(kappas))
        progress = [f"{name}: {p['labelled']}/{p['assigned']} done, {p['remaining']} left"
                    for name, p in data["progress"].items()]
        lines.append(" · ".join(progress) or "nobody has labelled or been assigned yet "
                     "(a assigns)")
        self.query_one("#team-summary", Static).update("\n".join(lines))
        self.query_one(PanelAgreement).show(self.app.store, self.app.workspace)
        table = self.query_one("#team-disagreements", DataTable)
        if not table.columns:
            table.add_columns("sample", "problem", "final")
        table.clear()
        for item in data["disagreements"]:
            table.add_row(str(item["sample_id"]), item["problem_id"],
                          "yes" if item["adjudicated"] else "", key=str(item["sample_id"]))
        self._show_side(data["disagreements"][0] if data["disagreements"] else None)

    def _disagreement(self, sample_id: int) -> dict | None:
        return next((d for d in (getattr(self, "team", None) or {}).get("disagreements", [])
                     if d["sample_id"] == sample_id), None)

    def _show_side(self, item: dict | None) -> None:
        side = self.query_one("#team-side", Horizontal)
        side.remove_children()
        if item is None:
            side.mount(Static("No disagreements.", classes="team-label", markup=False))
            return
        final = review_annotations.get_final(self.app.store, item["sample_id"])
        panels = []
        for name, value in item["labels"].items():
            panel = Static(review_annotations.format_label(value, self.taxonomy),
                           classes="team-label", markup=False)
            panel.border_title = name
            panels.append(panel)
        if final:
            panel = Static(review_annotations.format_label(final, self.taxonomy),
                           classes="team-label", markup=False)
            panel.border_title = "final"
            panels.append(panel)
        side.mount_all(panels)

    @on(DataTable.RowHighlighted, "#team-disagreements")
    def _team_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value:
            self._show_side(self._disagreement(int(event.row_key.value)))

    @on(DataTable.RowSelected, "#team-disagreements")
    def _team_selected(self, event: DataTable.RowSelected) -> None:
        item = self._disagreement(int(event.row_key.value or 0))
        if item is None:
            return
        names = list(item["labels"])

        def answered(choice: str | None) -> None:
            if not choice or not choice.startswith("take-"):
                return
            name = names[int(choice.removeprefix("take-"))]
            if run_guarded(self, f"Could not adjudicate sample {item['sample_id']}",
                                    lambda: review.adjudicate(self.app.store,
                                                              item["sample_id"],
                                                              accept=name)):
                self.post_message(DataChanged())
                self.notify(f"Sample {item['sample_id']}: {name}'s label is final")
                self.show_team()

        self.app.push_screen(ChoiceModal(
            f"Adjudicate sample {item['sample_id']}",
            " | ".join(f"{name}: {review_annotations.format_label(value, self.taxonomy)}"
                       for name, value in item["labels"].items())
            + " — whose label is final?",
            [*((f"take-{i}", f"Take {name}'s", "primary" if i == 0 else "default")
               for i, name in enumerate(names)), ("cancel", "Cancel", "default")]),
            answered)

    @on(TabbedContent.TabActivated, "#review-tabs")
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == "review-team":
            self.show_team()

    def action_assign(self) -> None:
        def got_names(text: str | None) -> None:
            if not text:
                return
            names = [n.strip() for n in text.replace(" ", ",").split(",") if n.strip()]
            self.app.push_screen(InputModal(
                "Assign items", "Share of items given to two annotators, for agreement "
                "(0 to 1):", "0.2" if len(names) > 1 else "0"),
                lambda share: share is not None and assign(names, share))

        def assign(names: list[str], share: str) -> None:
            try:
                overlap = float(share or 0)
            except ValueError:
                self.post_message(ShowError("Not assigned",
                                            f"{share!r} is not a number from 0 to 1"))
                return
            result = run_guarded(self, "Could not assign", lambda: review.assign(
                self.app.store, names, overlap=overlap))
            if result:
                self.post_message(DataChanged())
                self.notify(f"{result['assigned']} item(s) assigned ({result['double']} to "
                            "two annotators): " + ", ".join(
                                f"{a} {n}" for a, n in result["annotators"].items()))
                self.reload()
                self._seen_version = DataChanged.seen_after(self.app.data_version)
                self.query_one(TabbedContent).active = "review-team"
                self.show_team()

        self.app.push_screen(InputModal(
            "Assign items", "Annotators (names separated by commas):",
            placeholder="ana, ben, chloe"), got_names)

    def palette_commands(self):
        for number, cat in enumerate(self.categories, 1):
            yield (f"Category {cat.id}: {cat.name}",
                   f"key {taxonomies.review_key(cat.id, number)} · {cat.definition}",
                   lambda cid=cat.id: self._choose(cid))
