"""Problems: every problem in one table, filtered as you type, Enter opens one."""

from __future__ import annotations

from typing import ClassVar

from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Input, Label, Static
from textual.worker import Worker, WorkerState, get_current_worker

from curator import problem_template
from curator.panel import rounds
from curator.store import problems as problem_store
from curator.tui import filtering, queries
from curator.tui.messages import DataChanged, OpenProblem, ShowError, run_guarded
from curator.tui.screens.dialogs import NewProblemModal
from curator.tui.widgets.nav_bar import NavBar
from curator.tui.widgets.problem_table import ProblemTable


def load_rows(store, actor: str | None = None) -> list[dict]:
    """All problem rows with the latest reference-run outcome merged in; the labels of
    problems `actor` is still to vote in a label round read `blind`."""
    rows = rounds.hide_in_rows(store, actor, problem_store.list_rows(store))
    outcomes = queries.last_outcomes(store)
    valid = queries.validity_states(store)
    for row in rows:
        row["outcome"] = outcomes.get(row["id"], "")
        row["valid"] = valid.get(row["id"], "")
    return rows


def ask_new_problem(app: App) -> None:
    """The "New problem" flow: ask id / entry point / kind, create it, open it."""
    def answered(answer: dict | None) -> None:
        if not answer:
            return
        problem = run_guarded(
            app, "Could not create the problem",
            lambda: problem_template.create(app.store, app.workspace.problems_dir,
                                            answer["id"], entry_point=answer["entry_point"],
                                            kind=answer["kind"]))
        if problem is None:
            return
        app.post_message(DataChanged())
        app.notify(f"Created draft problem {problem.id} ({problem.entry_point}): write the "
                   "prompt, solution and tests, then ctrl+r runs it")
        app.post_message(OpenProblem(problem.id))

    app.push_screen(NewProblemModal(), answered)


def filter_rows(store, rows: list[dict], flt: filtering.Filter) -> list[dict]:
    if flt.text:
        ids = {r["id"] for r in problem_store.list_rows(store, text=flt.text)}
        rows = [r for r in rows if r["id"] in ids]
    return filtering.apply(rows, flt)


class FilterInput(Input):
    HELP = """\
## Filter

Type words to search titles, prompts and code (full text, prefix match). Add
`key:value` terms to narrow by field:

| term | keeps |
|---|---|
| `stage:model` | stage is Model Construction (a prefix works: `stage:mod`) |
| `task:detection,segmentation` | either task |
| `data:none` | no data label yet |
| `status:draft` | drafts (`draft`, `ready`, `released`, `retired`) |
| `run:failed` | latest reference run failed (`passed`, `failed`, `error`, `timeout`, …) |
| `kind:method` | class-method problems |
| `valid:no` | `curator validate` found tests a stub passes, or a flaky test (`valid:yes`; `valid:none`: not validated) |
| `-status:retired` | everything but retired |

**Enter** or **Down** moves to the table, **Escape** too (the filter stays).
"""


class ProblemsScreen(Screen):
    HELP = """\
## Problems screen

All problems of the workspace. **/** filters, **Enter** opens the highlighted problem,
**n** creates a new problem from a template and opens it, **v** opens the next problem
a label round gave you to vote (its Labels tab, blind),
**s** / clicking a header sorts, **ctrl+l** reloads from the database, **ctrl+p** lists
every action (and *go to problem …*).
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "focus_filter", "Filter", id="problems.filter",
                tooltip="Filter by text and stage:/task:/data:/status:/run: terms"),
        Binding("escape", "clear_filter", "Clear filter", id="problems.clear_filter",
                tooltip="Clear the filter (from the table)"),
        Binding("n", "new_problem", "New", id="problems.new",
                tooltip="Create a problem from a template and open it"),
        Binding("v", "my_votes", "My votes", id="problems.my_votes",
                tooltip="Your label-round assignments: the next one to vote, blind"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.all_rows: list[dict] = []
        self.filter = filtering.Filter()
        # Filtering is coalesced rather than debounced by a fixed delay: a keystroke starts
        # a query at once when none is running; keystrokes that arrive meanwhile are
        # folded into one query that starts when the running one ends (latest wins).
        self._filter_busy = False
        self._pending_query: str | None = None
        self._seen_version = -1
        self.ready = False   # first rows shown (the benchmark waits for this)
        self.shown_query = ""   # the filter text the table currently reflects

    def compose(self) -> ComposeResult:
        yield NavBar()
        with Horizontal(id="filter-bar"):
            yield Label("/", id="filter-label")
            yield FilterInput(placeholder="filter: words  stage:model  status:draft  run:failed",
                              id="filter", compact=True)
        yield ProblemTable(id="problems-table")
        with Horizontal(id="problems-status", classes="status-line"):
            yield Static("loading…", id="problems-count")
            yield Static("", id="problems-hint")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one(ProblemTable).focus()
        self.reload()

    def on_screen_resume(self) -> None:
        if self.ready and self._seen_version != self.app.data_version:
            self.reload()

    # -- loading ---------------------------------------------------------------------

    def reload(self) -> None:
        self._seen_version = self.app.data_version
        self._load()

    @work(thread=True, exclusive=True, group="problems-load", exit_on_error=False)
    def _load(self) -> None:
        rows = load_rows(self.app.store, self.app.actor)
        shown = filter_rows(self.app.store, rows, self.filter) if not self.filter.empty \
            else rows
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._loaded, rows, shown)

    def _loaded(self, rows: list[dict], shown: list[dict]) -> None:
        self.all_rows = rows
        self._show(shown)
        if not self.ready:
            self.ready = True
            self.app.settle_memory()

    # -- filtering -------------------------------------------------------------------

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        was_empty = not self.shown_query and self._pending_query is None
        self._pending_query = event.value
        if not self._filter_busy:
            self._start_filter()
        if was_empty != (not event.value):
            self.refresh_bindings()   # "Clear filter" comes or goes (Footer redraws: not per key)

    def _start_filter(self) -> None:
        query, self._pending_query = self._pending_query or "", None
        self._filter_busy = True
        self.filter = filtering.parse(query)
        self._run_filter(self.filter, query)

    @work(thread=True, group="problems-filter", exit_on_error=False)
    def _run_filter(self, flt: filtering.Filter, query: str) -> None:
        shown = filter_rows(self.app.store, self.all_rows, flt)
        self.app.call_from_thread(self._filtered, shown, query)

    def _filtered(self, rows: list[dict], query: str) -> None:
        self._filter_busy = False
        if self._pending_query is not None:   # typed on meanwhile: skip straight to it
            self._start_filter()
            return
        self._show(rows, query)

    def _show(self, rows: list[dict], query: str | None = None) -> None:
        table = self.query_one(ProblemTable)
        table.set_rows(rows)
        if query is not None:
            self.shown_query = query
        self._update_status()

    def _update_status(self) -> None:
        table = self.query_one(ProblemTable)
        total = len(self.all_rows)
        shown = table.row_count
        count = f"{shown} of {total}" if not self.filter.empty else f"{total} problems"
        if shown:
            count = f"row {table.cursor + 1} · {count}"
        self.query_one("#problems-count", Static).update(count)
        warning = "; ".join(self.filter.warnings)
        hint = "; ".join(self.filter.hints) or (
            f"sorted by {table.sort_key}{' (reversed)' if table.sort_reverse else ''}")
        hint_widget = self.query_one("#problems-hint", Static)
        hint_widget.update(warning or hint)
        hint_widget.set_class(bool(warning), "warning")

    def on_problem_table_sorted(self, event: ProblemTable.Sorted) -> None:
        self._update_status()

    def on_problem_table_cursor_moved(self) -> None:
        self._update_status()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR and event.worker.group.startswith("problems-"):
            self._filter_busy = False
            self.post_message(ShowError("Could not read problems", event.worker.error))

    # -- actions -----------------------------------------------------------------------

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self) -> None:
        self.query_one(ProblemTable).focus()

    def on_problem_table_selected(self, event: ProblemTable.Selected) -> None:
        self.post_message(OpenProblem(event.problem_id))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "clear_filter":
            return bool(self.query_one("#filter", Input).value) or self.query_one(
                "#filter", Input).has_focus
        return True

    def action_focus_filter(self) -> None:
        self.query_one("#filter", Input).focus()

    def action_clear_filter(self) -> None:
        filter_input = self.query_one("#filter", Input)
        if filter_input.has_focus:
            self.query_one(ProblemTable).focus()
        elif filter_input.value:
            filter_input.value = ""

    def action_new_problem(self) -> None:
        ask_new_problem(self.app)

    def action_my_votes(self) -> None:
        queue = rounds.my_queue(self.app.store, self.app.actor)
        if not queue:
            self.notify(f"No label assignments for {self.app.actor} (curator labels assign)",
                        timeout=4)
            return
        todo = next((item for item in queue if not item["done"]), queue[0])
        self.post_message(OpenProblem(todo["problem_id"], tab="labels"))

    def action_reload(self) -> None:
        self.reload()
        self.notify("Reloaded from the database", timeout=2)

    def palette_commands(self):
        table = self.query_one(ProblemTable)
        if table.current:
            pid = table.current["id"]
            yield (f"Open {pid}", "Open the highlighted problem",
                   lambda: self.post_message(OpenProblem(pid)))
        yield ("My votes", "The next problem a label round gave you to vote",
               self.action_my_votes)
        for column in table.COLUMNS:
            yield (f"Sort by {column.label}", "Sort the problems table",
                   lambda key=column.key: table.sort_by(key, reverse=False))
