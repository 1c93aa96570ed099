"""Release: which problems fail a release gate, and building a versioned bundle.

Both run curator.release in thread workers (`gates.check`, `bundle.build`), the same
functions as `curator release check` and `curator release build`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static
from textual.worker import Worker, WorkerState, get_current_worker

from curator.release import bundle, gates
from curator.store import Store
from curator.tui.screens.dialogs import InputModal
from curator.tui.widgets.nav_bar import NavBar
from curator.tui.widgets.task_bar import TaskBar

if TYPE_CHECKING:
    from curator.tui.app import CuratorApp

VERSION = re.compile(r"^\d+\.\d+\.\d+$")


class ReleaseScreen(Screen):
    HELP = """\
## Release

The gates every ready or released problem must pass before it ships: reference passes
on this environment, enough tests, labels set, prompt present, provenance and licence
known, no near-duplicate. **c** runs the check again, **Enter** opens the problem of the
highlighted row, **b** builds a bundle (asks for the version and the output folder;
refuses while a ready problem fails a gate), **ctrl+g** cancels a check or build.
Drafts that fail a gate are listed too but do not block a release. **ctrl+l** reloads
(runs the check again).
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("c", "check", "Check", id="release.check", tooltip="Run the release gates"),
        Binding("b", "build", "Build", id="release.build",
                tooltip="Build a versioned bundle of the ready problems"),
        Binding("ctrl+g", "cancel", "Cancel", id="release.cancel",
                tooltip="Cancel the check or build in progress"),
        Binding("enter", "open", "Open problem", id="release.open", show=False),
    ]

    app: CuratorApp

    def __init__(self) -> None:
        super().__init__()
        self.report: dict | None = None
        self.failures: list[dict] = []
        self._worker: Worker | None = None
        self._seen_version = -1

    def compose(self) -> ComposeResult:
        yield NavBar()
        yield Static("checking…", id="release-summary", classes="status-line")
        gates_table = DataTable(id="release-gates", cursor_type="none")
        gates_table.border_title = "Gates"
        yield gates_table
        failing = DataTable(id="release-failing", cursor_type="row", zebra_stripes=True)
        failing.border_title = "Failing"
        yield failing
        yield TaskBar(id="release-task")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#release-gates", DataTable).add_columns("gate", "failing", "checks")
        self.query_one("#release-failing", DataTable).add_columns(
            "problem", "status", "gate", "reason")
        self.action_check()

    def on_screen_resume(self) -> None:
        if self._seen_version != self.app.data_version and not self.busy:
            self.action_check()

    @property
    def busy(self) -> bool:
        return self._worker is not None and self._worker.state in (
            WorkerState.PENDING, WorkerState.RUNNING)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel":
            return self.busy
        if action in ("check", "build"):
            return not self.busy
        return True

    # -- check ------------------------------------------------------------------------------

    def action_check(self) -> None:
        self._seen_version = self.app.data_version
        self.query_one(TaskBar).start("checking release gates…")
        self._worker = self._check()
        self.refresh_bindings()

    @work(thread=True, exclusive=True, group="release", exit_on_error=False)
    def _check(self) -> dict:
        worker = get_current_worker()
        store = Store(self.app.workspace.db_path, self.app.actor)
        try:
            report = gates.check(store, self.app.workspace,
                                 progress=self.query_one(TaskBar).progress,
                                 cancelled=lambda: worker.is_cancelled)
        finally:
            store.close()
        return {"kind": "check", "report": report.to_json()}

    def show_report(self, data: dict) -> None:
        self.report = data
        gates_table = self.query_one("#release-gates", DataTable)
        gates_table.clear()
        self.failures = []
        for gate in data["gates"]:
            gates_table.add_row(gate["gate"], str(len(gate["failing"])) or "",
                                gate["description"])
            for item in gate["failing"]:
                self.failures.append({**item, "gate": gate["gate"]})
        self.failures.sort(key=lambda f: (f["status"] not in gates.RELEASABLE,
                                          f["problem_id"], f["gate"]))
        failing = self.query_one("#release-failing", DataTable)
        failing.clear()
        for item in self.failures:
            failing.add_row(item["problem_id"], item["status"], item["gate"], item["reason"])
        blocking = data["blocking"]
        summary = (f"{data['checked']} checked · "
                   + (f"{len(blocking)} ready/released problem(s) block a release"
                      if blocking else "ready to release: every ready problem passes"))
        self.query_one("#release-summary", Static).update(summary)
        self.query_one("#release-summary").set_class(bool(blocking), "warning")

    # -- build ------------------------------------------------------------------------------

    def action_build(self) -> None:
        name = bundle.default_name(self.app.workspace)

        def got_version(version: str | None) -> None:
            if not version:
                return
            if not VERSION.match(version):
                self.app.show_error("Not built", f"version {version!r} must look like 1.2.3")
                return
            default_out = str(self.app.workspace.root / "releases" / f"{name}-{version}")
            self.app.push_screen(InputModal(
                "Build a release", "Output folder (new, empty, or an older bundle):",
                default_out), lambda out: got_out(version, out))

        def got_out(version: str, out: str | None) -> None:
            if not out:
                return
            self.query_one(TaskBar).start(f"building {name} {version}…")
            self._worker = self._build(version, out)
            self.refresh_bindings()

        self.app.push_screen(InputModal("Build a release", f"Version of {name} (X.Y.Z):",
                                        placeholder="1.0.0"), got_version)

    @work(thread=True, exclusive=True, group="release", exit_on_error=False)
    def _build(self, version: str, out: str) -> dict:
        worker = get_current_worker()
        store = Store(self.app.workspace.db_path, self.app.actor)
        try:
            report = bundle.build(store, self.app.workspace, version, out,
                                  progress=self.query_one(TaskBar).progress,
                                  cancelled=lambda: worker.is_cancelled)
        finally:
            store.close()
        return {"kind": "build", "report": report.to_json()}

    # -- results -------------------------------------------------------------------------------

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is not self._worker or event.state in (WorkerState.PENDING,
                                                               WorkerState.RUNNING):
            return
        bar = self.query_one(TaskBar)
        self.refresh_bindings()
        if event.state == WorkerState.SUCCESS:
            result = event.worker.result
            report = result["report"]
            if result["kind"] == "check":
                self.show_report(report)
                bar.finish("gates checked")
            else:
                self.app.changed()
                text = (f"{report['name']} {report['version']}: {report['problems']} "
                        f"problems → {report['archive']}")
                bar.finish(text)
                self.notify(f"Built {text} (sha256 {report['archive_sha256'][:12]}…); "
                            f"{len(report['released'])} problem(s) marked released",
                            timeout=10)
                self.action_check()
        elif event.state == WorkerState.CANCELLED or event.worker.is_cancelled:
            bar.finish("cancelled")
        elif event.state == WorkerState.ERROR:
            bar.finish("failed")
            self.app.show_error("Release check or build failed", event.worker.error)

    def action_reload(self) -> None:
        if self.busy:
            self.notify("Busy: ctrl+g cancels first", severity="warning")
        else:
            self.action_check()

    def action_cancel(self) -> None:
        if self._worker is not None:
            self._worker.cancel()

    def action_open(self) -> None:
        table = self.query_one("#release-failing", DataTable)
        if self.failures and table.cursor_row is not None and \
                table.cursor_row < len(self.failures):
            self.app.open_problem(self.failures[table.cursor_row]["problem_id"])

    @on(DataTable.RowSelected, "#release-failing")
    def _selected(self) -> None:
        self.action_open()
