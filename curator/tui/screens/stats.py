"""Stats: how problems spread over stage / task / data, and pass@k per model by category."""

from __future__ import annotations

import importlib.util
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Label, Select, Static, TabbedContent, TabPane
from textual.worker import Worker, WorkerState
from textual_plotext import PlotextPlot

from curator.evaluation import evaluate, report
from curator.evaluation import samples as sample_files
from curator.labels import AXES
from curator.panel import rounds
from curator.store import samples as sample_store
from curator.tui.messages import (
    AskWeakConsent,
    DataChanged,
    OpenProblem,
    ShowError,
    run_guarded,
)
from curator.tui.screens.dialogs import ImportSamplesModal, LabelEditModal
from curator.tui.tasks import Task, TaskContext, TaskEnded, run_task
from curator.tui.widgets.nav_bar import NavBar
from curator.tui.widgets.task_bar import TaskBar

KS = (1, 5, 10)


def report_available() -> bool:
    try:
        return importlib.util.find_spec("curator.evaluation.report") is not None
    except ModuleNotFoundError:
        return False


def exclusion_fix(reason: str) -> str:
    """What brings an excluded problem into the scores, in keys of the app."""
    if reason == "reference never run":
        return "Enter opens it, ctrl+r runs the reference (or e evaluates)"
    return "Enter opens it: fix the reference or tests, then ctrl+r"


def samples_summary(store) -> str:
    row = sample_store.counts(store)
    if not row or not row["n"]:
        return "no samples yet: i imports a file"
    waiting = len(evaluate.pending(store))
    text = f"{row['n']} sample(s) of {row['models']} model(s)"
    return text + (f", {waiting} not evaluated: e evaluates" if waiting else ", all evaluated")


def distribution(store, actor: str | None = None) -> dict[str, list[tuple[str, str, int]]]:
    """axis -> [(slug, display name, count)] in vocabulary order, unset last; the problems
    `actor` is still to vote blind in a label round count as `(blind)`, not by label."""
    counts = rounds.label_counts_for(store, actor)
    result = {}
    for axis in AXES:
        names = {r["slug"]: r["name"] for r in store.labels(axis)}
        axis_counts = counts.get(axis, {})
        rows = [(slug, name, axis_counts.get(slug, 0)) for slug, name in names.items()]
        if axis_counts.get(""):
            rows.append(("", "(unset)", axis_counts[""]))
        if axis_counts.get(rounds.BLIND):
            rows.append((rounds.BLIND, "(blind: yours to vote)", axis_counts[rounds.BLIND]))
        result[axis] = rows
    return result


class StatsScreen(Screen):
    HELP = """\
## Stats

**Labels**: problems per stage, task and data type (retired problems left out), as bars
with the counts and shares beside them; **Enter** on a label edits its name and
definition (the ones shown when labelling and in the guidelines). **pass@k**: per model, pass@1/5/10 by the chosen
label axis (unbiased estimator; only problems whose reference passes are scored, and a
figure appears only where some problem has n ≥ k). **b** switches the axis.

**i** imports a sample file (pick it in the folder tree); **e** evaluates every sample
without an outcome — it first runs each reference that has no run of its current
solution, since only problems whose reference passes are scored — with progress;
**ctrl+g** cancels. Problems still excluded are listed below the figures with the reason
and the key that fixes it (**Enter** on one opens it). **ctrl+l** reloads.
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("i", "import_samples", "Import", id="stats.import",
                tooltip="Import a sample file (JSONL or DL-Bench JSON)"),
        Binding("e", "evaluate", "Evaluate", id="stats.evaluate",
                tooltip="Run every sample without an outcome (references first)"),
        Binding("ctrl+g", "cancel", "Cancel", id="stats.cancel",
                tooltip="Cancel the import or evaluation in progress"),
        Binding("b", "next_axis", "Axis", id="stats.axis",
                tooltip="pass@k by stage, task or data"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.axis = "stage"
        self.report: dict | None = None
        self._seen_version = -1
        self._job: Task | None = None

    def compose(self) -> ComposeResult:
        yield NavBar()
        with TabbedContent(id="stats-tabs"):
            with TabPane("Labels", id="stats-labels"), VerticalScroll(id="dist-scroll"):
                for axis in AXES:
                    with Horizontal(classes="dist-row", id=f"dist-{axis}") as row:
                        row.border_title = axis.capitalize()
                        yield PlotextPlot(id=f"plot-{axis}", classes="dist-plot")
                        table = DataTable(id=f"numbers-{axis}", classes="dist-numbers",
                                          cursor_type="row")
                        yield table
            if report_available():
                with TabPane("pass@k", id="stats-passk"):
                    with Horizontal(id="passk-bar"):
                        yield Label("model ", id="passk-model-label")
                        yield Select([], id="passk-model", prompt="(no samples yet)",
                                     compact=True)
                        yield Static("", id="passk-axis")
                        yield Static("", id="passk-samples")
                    with Horizontal(id="passk-body"):
                        yield PlotextPlot(id="passk-plot")
                        yield DataTable(id="passk-table", cursor_type="row")
                    excluded = DataTable(id="passk-excluded", cursor_type="row")
                    excluded.border_title = "Excluded: not scored until the reference passes"
                    yield excluded
        yield TaskBar(id="stats-task")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        for axis in AXES:
            self.query_one(f"#numbers-{axis}", DataTable).add_columns("label", "n", "%")
        if self.query("#passk-table"):
            self.query_one("#passk-table", DataTable).add_columns(
                "label", "problems", "samples", *(f"pass@{k}" for k in KS))
            self.query_one("#passk-excluded", DataTable).add_columns("problem", "why", "fix")
            self.query_one("#passk-excluded").display = False
        self.query_one(TaskBar).display = False
        self.reload()

    def on_screen_resume(self) -> None:
        if self._seen_version != self.app.data_version:
            self.reload()

    def reload(self) -> None:
        self._seen_version = self.app.data_version
        self.show_distribution(distribution(self.app.store, self.app.actor))
        if report_available():
            self._load_report()
            self.query_one("#passk-samples", Static).update(
                "  " + samples_summary(self.app.store))

    # -- label distribution ------------------------------------------------------------

    def show_distribution(self, dist: dict[str, list[tuple[str, str, int]]]) -> None:
        for axis, rows in dist.items():
            total = sum(n for _, _, n in rows) or 1
            plot = self.query_one(f"#plot-{axis}", PlotextPlot)
            plt = plot.plt
            plt.clear_data()
            plt.clear_figure()
            # plotext draws the first bar at the bottom: reverse, so the order reads like
            # the table beside it; one line per bar, slugs as the (short) bar labels
            slugs = [slug or "unset" for slug, _, _ in rows][::-1]
            counts = [n for _, _, n in rows][::-1]
            # width 0.5: wider bars get sampled into their neighbour's line by plotext
            plt.bar(slugs, counts, orientation="horizontal", width=0.5)
            plt.frame(False)
            plt.xticks([])
            plt.xaxes(False)
            plt.yaxes(False)
            plot.refresh()
            # exactly one line per bar, level with the table rows (below its header)
            plot.styles.height = len(rows)
            self.query_one(f"#dist-{axis}").styles.height = len(rows) + 4
            table = self.query_one(f"#numbers-{axis}", DataTable)
            table.clear()
            for slug, name, n in rows:
                table.add_row(name, str(n), f"{100 * n / total:.0f}", key=slug or None)
            table.add_row("total", str(sum(n for _, _, n in rows)), "100")

    # -- pass@k --------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="stats-report", exit_on_error=False)
    def _load_report(self) -> dict:
        return report.build(self.app.store)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "stats-report":
            return
        if event.state == WorkerState.SUCCESS:
            self.report = event.worker.result
            self._fill_models()
        elif event.state == WorkerState.ERROR:
            self.post_message(ShowError("Could not build the pass@k report", event.worker.error))

    def _fill_excluded(self) -> None:
        table = self.query_one("#passk-excluded", DataTable)
        table.clear()
        reasons = (self.report or {}).get("excluded_reasons", {})
        for pid, reason in reasons.items():
            table.add_row(pid, reason, exclusion_fix(reason), key=pid)
        table.display = bool(reasons)

    @on(DataTable.RowSelected, "#passk-excluded")
    def _excluded_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value:
            self.post_message(OpenProblem(event.row_key.value))

    def _fill_models(self) -> None:
        self._fill_excluded()
        models = sorted((self.report or {}).get("models", {}))
        select = self.query_one("#passk-model", Select)
        current = select.value
        select.set_options([(m, m) for m in models])
        if models:
            select.value = current if current in models else models[0]
        self.show_passk()

    @on(DataTable.RowSelected, ".dist-numbers")
    def _label_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a label: edit its name and definition."""
        slug = event.row_key.value
        axis = (event.data_table.id or "").removeprefix("numbers-")
        row = self.app.store.label(axis, slug) if slug else None
        if row is None:
            return

        def answered(answer: dict | None) -> None:
            if answer and run_guarded(
                    self, "Could not save the label", lambda: self.app.store.set_label_text(
                        axis, slug, name=answer["name"], definition=answer["definition"])
                    or True):
                self.post_message(DataChanged())
                self.notify(f"{axis}/{slug} saved")
                self.reload()
                self._seen_version = DataChanged.seen_after(self.app.data_version)

        self.app.push_screen(LabelEditModal(axis, slug, row["name"], row["definition"]),
                             answered)

    @on(Select.Changed, "#passk-model")
    def _model_changed(self) -> None:
        self.show_passk()

    def show_passk(self) -> None:
        if not self.query("#passk-table"):
            return
        table = self.query_one("#passk-table", DataTable)
        plot = self.query_one("#passk-plot", PlotextPlot)
        self.query_one("#passk-axis", Static).update(f"  by {self.axis} (b switches)")
        table.clear()
        plt = plot.plt
        plt.clear_data()
        plt.clear_figure()
        select = self.query_one("#passk-model", Select)
        entry = (self.report or {}).get("models", {}).get(select.value) \
            if isinstance(select.value, str) else None
        if not entry:
            plot.refresh()
            return

        def cells(label: str, m: dict) -> list[str]:
            return [label, str(m.get("problems", "")), str(m.get("samples", ""))] + [
                f"{m[f'pass@{k}']:.3f}" if f"pass@{k}" in m else "–" for k in KS]

        table.add_row(*cells("overall", entry["overall"]))
        breakdown = entry.get(self.axis, {})
        for label, m in breakdown.items():
            table.add_row(*cells(label, m))
        labels = list(breakdown)
        series = [(k, [breakdown[lbl].get(f"pass@{k}", 0) for lbl in labels]) for k in KS
                  if any(f"pass@{k}" in breakdown[lbl] for lbl in labels)]
        if labels and series:
            plt.multiple_bar(labels, [values for _, values in series],
                             labels=[f"pass@{k}" for k, _ in series],
                             orientation="horizontal")
            plt.xlim(0, 1)
        plot.refresh()

    # -- actions -------------------------------------------------------------------------

    def action_reload(self) -> None:
        self.reload()
        self.notify("Stats reloaded", timeout=2)

    # -- samples: import and evaluate ---------------------------------------------------

    @property
    def busy(self) -> bool:
        return self._job is not None   # until its thread has really ended

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("import_samples", "evaluate"):
            return report_available() and not self.busy
        if action == "cancel":
            return self.busy
        return True

    def action_import_samples(self) -> None:
        def answered(answer: dict | None) -> None:
            if answer:
                self._start("importing samples…", lambda ctx: self._import(ctx, answer))

        self.app.push_screen(ImportSamplesModal(str(self.app.workspace.root)), answered)

    def action_evaluate(self) -> None:
        # samples (and mined references) are untrusted: under weak isolation, ask first
        untrusted = evaluate.needs_consent(self.app.store, self.app.workspace)
        self.post_message(AskWeakConsent(untrusted, lambda allow: self._start(
            "evaluating samples…", lambda ctx: self._evaluate(ctx, allow))))

    def action_cancel(self) -> None:
        if self.busy and self._job is not None:
            self._job.cancel()
            self.query_one(TaskBar).start("cancelling…")

    def _start(self, label: str, func) -> None:
        self.query_one(TabbedContent).active = "stats-passk"
        self._job = run_task(self, func, group="stats-task", label=label,
                             bar=self.query_one(TaskBar),
                             error_title="Could not import or evaluate samples")
        self.refresh_bindings()

    @staticmethod
    def _import(ctx: TaskContext, answer: dict) -> dict:
        report = sample_files.import_files(
            ctx.store, [answer["path"]], model=answer["model"], technique=answer["technique"],
            progress=ctx.progress, cancelled=ctx.cancelled,
            limit=ctx.workspace.limits.file_bytes)
        return {"kind": "import", **report.to_json()}

    @staticmethod
    def _evaluate(ctx: TaskContext, allow_weak: bool | None = None) -> dict:
        report = evaluate.evaluate(ctx.store, ctx.workspace, progress=ctx.progress,
                                   cancelled=ctx.cancelled, allow_weak=allow_weak)
        return {"kind": "eval", **report.to_json()}

    def on_task_ended(self, event: TaskEnded) -> None:
        if event.task is not self._job:
            return
        self._job = None
        bar = self.query_one(TaskBar)
        self.refresh_bindings()
        if event.error is not None or event.cancelled:
            bar.finish(event.status)
            return
        result = event.result
        self.post_message(DataChanged())
        if result["kind"] == "import":
            text = (f"{result['imported']} imported, {result['duplicates']} duplicate(s), "
                    f"{result['no_code']} without code, {len(result['errors'])} error(s)")
            bar.finish(text)
            if result["errors"]:
                first = result["errors"][0]
                where = first["file"] + (f":{first['line']}" if first.get("line") else "")
                details = "\n".join(f"{e['file']}:{e.get('line') or ''}: {e['message']}"
                                    for e in result["errors"])
                self.post_message(ShowError("Some rows were not imported",
                                            f"{text}; first: {where}: {first['message']}",
                                            details))
            else:
                self.notify(f"Samples: {text}. e evaluates them")
        else:
            refs = result["references"]
            mix = ", ".join(f"{o} {n}" for o, n in result["outcomes"].items()) or "nothing new"
            text = f"{result['evaluated']} evaluated ({mix})"
            if refs:
                failing = [r["problem_id"] for r in refs if r["outcome"] != "passed"]
                text = (f"ran {len(refs)} reference(s) first ({len(failing)} not passing); "
                        + text)
            if result["cancelled"]:
                text += "; cancelled (e picks up the rest)"
            bar.finish(text)
            self.notify(text, timeout=8)
        self.reload()
        self._seen_version = DataChanged.seen_after(self.app.data_version)

    def action_next_axis(self) -> None:
        self.axis = AXES[(AXES.index(self.axis) + 1) % len(AXES)]
        self.show_passk()
