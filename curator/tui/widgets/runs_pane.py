"""Runs tab: run the reference solution now (thread worker, progress, cancel), see results.

The run goes through the execution core (`curator.runs.run_problems`), the same
function `curator run` uses; what is shown afterwards is read back from the runs table.
"""

from __future__ import annotations

import importlib.util

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, DataTable, Label, Log, ProgressBar

from curator import runs
from curator.display import visible
from curator.store import problems as problem_store
from curator.tui import queries
from curator.tui.messages import AskWeakConsent, DataChanged, ShowError, TaskProgress
from curator.tui.tasks import Task, TaskContext, TaskEnded, run_task
from curator.tui.widgets.outcomes_table import OutcomesTable


def engine_available() -> bool:
    try:
        return importlib.util.find_spec("curator.runs") is not None
    except ModuleNotFoundError:
        return False


def _when(row: dict) -> str:
    for key in ("finished_at", "created_at", "started_at", "at"):
        if row.get(key):
            return str(row[key])[:19].replace("T", " ")
    return ""


def _duration(row: dict) -> str:
    value = row.get("duration_s")
    return f"{value:.2f}s" if isinstance(value, (int, float)) else ""


def _tests_summary(row: dict) -> str:
    tests = row.get("tests")
    if not isinstance(tests, list) or not tests:
        return ""
    passed = sum(1 for t in tests if isinstance(t, dict) and t.get("outcome") == "passed")
    return f"{passed}/{len(tests)}"


class RunsPane(Vertical):
    HELP = """\
## Runs

**ctrl+r** runs what is on screen — the solution against the tests as they are in the
editors, saved or not — in the sandboxed engine (the same as `curator run`); **ctrl+g**
cancels a run in progress. A run of unsaved edits is marked *unsaved* in the history and
never counts as the reference's result (for *ready*, the release gates or scoring): save,
then run again. The left table lists the tests of the selected
run, the right box its output; the table below is every run of this problem, newest
first (select one to see its tests and output).
"""

    def __init__(self, problem_id: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.problem_id = problem_id
        self.history: list[dict] = []
        self._worker: Task | None = None

    def compose(self) -> ComposeResult:
        with Horizontal(id="run-bar"):
            yield Button("Run reference", id="run-start", variant="primary", compact=True)
            yield Button("Cancel", id="run-cancel", compact=True, disabled=True)
            yield ProgressBar(id="run-progress", show_eta=False)
            yield Label("", id="run-status")
        with Horizontal(id="run-detail"):
            tests = OutcomesTable(id="run-tests", zebra_stripes=True)
            tests.border_title = "Tests"
            yield tests
            log = Log(id="run-output", highlight=False)
            log.border_title = "Output"
            yield log
        history = DataTable(id="run-history", cursor_type="row")
        history.border_title = "History"
        yield history

    def on_mount(self) -> None:
        self.query_one("#run-history", DataTable).add_columns(
            "when", "outcome", "tests", "time", "kind", "reason")
        if not engine_available():
            self.query_one("#run-start", Button).disabled = True
            self.query_one("#run-status", Label).update("execution engine not installed")
        self.refresh_history()

    @property
    def running(self) -> bool:
        return self._worker is not None   # until its thread has really ended

    # -- history ------------------------------------------------------------------------

    def refresh_history(self) -> None:
        self.history = queries.run_history(self.app.store, self.problem_id)
        table = self.query_one("#run-history", DataTable)
        table.clear()
        for row in self.history:
            kind = row.get("solution_kind") or ""
            if row.get("unsaved"):
                kind = "unsaved edits"
            table.add_row(_when(row), row.get("outcome", ""), _tests_summary(row),
                          _duration(row), kind,
                          Text(visible(row.get("reason"), False)[:60]), key=str(row["id"]))
        if self.history:
            self.show_run(self.history[0])
            table.move_cursor(row=0)

    def show_run(self, row: dict) -> None:
        self.query_one("#run-tests", OutcomesTable).set_tests(row.get("tests") or [])
        log = self.query_one("#run-output", Log)
        log.clear()
        reason = visible(row.get("reason"), False)
        header = f"{row.get('outcome', '')}  {_duration(row)}  {reason}"
        if row.get("unsaved"):
            header = f"[unsaved edits] {header}"
        log.write_line(header.strip())
        for line in row.get("evidence") or []:
            log.write_line("tampering: " + visible(line, False))
        env = row.get("env")
        if isinstance(env, dict) and env:
            log.write_line("env: " + ", ".join(f"{k}={v}" for k, v in sorted(env.items())))
        for name in ("stdout", "stderr"):
            text = row.get(name) or ""
            if text:
                log.write_line(f"--- {name} ---")
                text = visible(text)
                log.write(text if text.endswith("\n") else text + "\n")

    @on(DataTable.RowHighlighted, "#run-history")
    def _history_highlighted(self, event: DataTable.RowHighlighted) -> None:
        key = event.row_key.value
        row = next((r for r in self.history if str(r["id"]) == key), None)
        if row is not None:
            self.show_run(row)

    # -- running --------------------------------------------------------------------------

    def start(self, problem=None) -> None:
        """Run `problem` as given (edits on screen), or what the screen shows."""
        if self.running:
            self.notify("A run is already in progress", severity="warning")
            return
        if not engine_available():
            self.post_message(ShowError("Cannot run", "the execution engine (curator.runs) "
                                "is not installed in this checkout"))
            return
        if problem is None:
            current = getattr(self.screen, "current", None)
            problem = current() if callable(current) else None
        saved = problem_store.get(self.app.store, self.problem_id)
        # a mined or imported problem runs upstream code: under weak isolation, ask first
        self.post_message(AskWeakConsent(runs.untrusted([saved]),
                                         lambda allow: self._launch(problem, allow)))

    def _launch(self, problem, allow_weak: bool | None) -> None:
        if self.running:
            return
        self.query_one("#run-start", Button).disabled = True
        self.query_one("#run-cancel", Button).disabled = False
        self.query_one("#run-progress", ProgressBar).update(total=None, progress=0)
        self.query_one("#run-status", Label).update("running…")
        problem_id = self.problem_id
        if problem is not None:
            def work(ctx: TaskContext):
                return runs.run_edited(ctx.store, ctx.workspace, problem,
                                       progress=ctx.progress, cancelled=ctx.cancelled,
                                       allow_weak=allow_weak)
        else:
            def work(ctx: TaskContext):
                return runs.run_problems(ctx.store, ctx.workspace, [problem_id], workers=1,
                                         timeout=None, repeat=1, progress=ctx.progress,
                                         cancelled=ctx.cancelled, allow_weak=allow_weak)
        # the thread writes runs on a connection of its own while the UI keeps reading
        self._worker = run_task(self, work, group="run-reference", label="running…",
                                progress=lambda done, total, label: self.post_message(
                                    TaskProgress(done, total, label)),
                                error_title="Run failed")

    def cancel(self) -> None:
        if self.running and self._worker is not None:
            self._worker.cancel()
            self.query_one("#run-status", Label).update("cancelling…")

    @on(Button.Pressed, "#run-start")
    def _start_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.start()

    @on(Button.Pressed, "#run-cancel")
    def _cancel_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.cancel()

    def on_task_progress(self, event: TaskProgress) -> None:
        event.stop()
        self.query_one("#run-progress", ProgressBar).update(total=event.total,
                                                             progress=event.done)
        self.query_one("#run-status", Label).update(f"{event.done}/{event.total} {event.label}")

    def on_task_ended(self, event: TaskEnded) -> None:
        if event.task is not self._worker:
            return
        event.stop()
        self._worker = None
        self._idle()
        if event.result is None:   # failed (run_task shows the error) or cancelled early
            self.query_one("#run-status", Label).update(event.status)
            return
        cancelled = event.result.cancelled or event.cancelled
        problem_id = self.problem_id
        self.post_message(DataChanged())
        self.refresh_history()
        outcome = self.history[0].get("outcome") if self.history else None
        what = "unsaved edits" if self.history and self.history[0].get("unsaved") \
            else "reference"
        if cancelled:
            self.notify("Run cancelled", severity="warning")
        elif outcome == "passed":
            self.notify(f"{problem_id}: {what} passed"
                        + (" (save, then ctrl+r, to make it count)"
                           if what == "unsaved edits" else ""))
        else:
            self.notify(f"{problem_id}: {what} {outcome or 'did not run'}",
                        severity="warning")
        self.query_one("#run-status", Label).update(outcome or "")

    def _idle(self) -> None:
        self.query_one("#run-start", Button).disabled = not engine_available()
        self.query_one("#run-cancel", Button).disabled = True
