"""Release: which problems fail a release gate; build, verify and compare bundles.

Every action runs curator.release in a thread worker (`gates.check`, `bundle.build`,
`verify.verify`, `diff.diff`), the same functions as `curator release check / build /
verify / diff`; this screen only asks and shows.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static, TabbedContent, TabPane

from curator.errors import ReleaseError
from curator.release import bundle, diff, gates, verify
from curator.tui.messages import AskWeakConsent, DataChanged, OpenProblem, ShowError
from curator.tui.screens.dialogs import ChoiceModal, InputModal
from curator.tui.tasks import Task, TaskContext, TaskEnded, run_task
from curator.tui.widgets.nav_bar import NavBar
from curator.tui.widgets.task_bar import TaskBar
from curator.validity import validate as validity


def build_text(report: dict) -> str:
    """Where a build went and what it holds (the Bundles tab keeps it in view)."""
    lines = [f"Built {report['name']} {report['version']}: {report['problems']} problem(s)",
             "",
             f"  folder   {report['out']}",
             f"  archive  {report['archive']}",
             f"  sha256   {report['archive_sha256']}",
             f"  files    {', '.join(report['files'])}"]
    if report["released"]:
        lines.append(f"  {len(report['released'])} problem(s) now marked released")
    if report["failing"]:
        lines.append(f"  built despite {len(report['failing'])} gate failure(s), listed in "
                     "the manifest")
    if not report["recorded"]:
        lines.append("  identical to the release already recorded under this version")
    lines += ["", "v verifies it, f compares it with an older bundle."]
    return "\n".join(lines)


def verify_text(report) -> str:
    lines = [f"Verified {report.bundle}", "", f"  {report.summary()}"]
    lines += [f"  error: {issue}" for issue in report.issues]
    return "\n".join(lines)


class ReleaseScreen(Screen):
    HELP = """\
## Release

**Gates** (alt+1): what every ready or released problem must pass before it ships:
reference passes on this environment, tests that fail a stub of the entry point, a
stable reference, enough tests, labels set, prompt present with a
parsable signature of the entry point, provenance and licence known, no near-duplicate.
**c** runs the check again (**ctrl+l** too), **Enter** opens the problem of the
highlighted row. Drafts that fail a gate are listed too but do not block a release.

**Bundles** (alt+2): **b** builds a bundle — the version box proposes the next version
(Enter accepts it), then the output folder; when a ready problem fails a gate you can
cancel or build anyway (the failures are written into the manifest). Where the bundle
went stays shown here. **v** verifies a bundle (files, schema, and optionally re-runs
every canonical solution), **f** compares two bundles (added, removed, changed
problems). **t** validates the tests of every problem not validated on its current
solution and tests yet (a stub must fail them, the reference must be stable, mutants
show their strength: `curator validate --all`), then checks again. **ctrl+g** cancels
what is running.
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("c", "check", "Check", id="release.check", tooltip="Run the release gates"),
        Binding("b", "build", "Build", id="release.build",
                tooltip="Build a versioned bundle of the ready problems"),
        Binding("v", "verify", "Verify", id="release.verify",
                tooltip="Verify a bundle: files, schema, optionally re-run solutions"),
        Binding("f", "diff", "Diff", id="release.diff",
                tooltip="Compare two bundles: added, removed, changed problems"),
        Binding("t", "validate", "Validate", id="release.validate",
                tooltip="Validate the tests of every problem not validated yet (stub, "
                        "repeats, mutants), then check again"),
        Binding("ctrl+g", "cancel", "Cancel", id="release.cancel",
                tooltip="Cancel the check, build, validation or verification in progress"),
        Binding("enter", "open", "Open problem", id="release.open", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.report: dict | None = None
        self.failures: list[dict] = []
        self.last_build: dict | None = None
        self._worker: Task | None = None
        self._seen_version = -1

    def compose(self) -> ComposeResult:
        yield NavBar()
        yield Static("checking…", id="release-summary", classes="status-line")
        with TabbedContent(id="release-tabs"):
            with TabPane("Gates", id="release-gates-tab"):
                gates_table = DataTable(id="release-gates", cursor_type="none")
                gates_table.border_title = "Gates"
                yield gates_table
                failing = DataTable(id="release-failing", cursor_type="row",
                                    zebra_stripes=True)
                failing.border_title = "Failing"
                yield failing
            with TabPane("Bundles", id="release-bundles-tab"):
                with VerticalScroll(id="release-output-box", classes="pane") as box:
                    box.border_title = "Last build, verification or comparison"
                    yield Static("No bundle built in this session yet: b builds one, v "
                                 "verifies one, f compares two.", id="release-output",
                                 markup=False)
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
        return self._worker is not None   # until its thread has really ended

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel":
            return self.busy
        if action in ("check", "build", "verify", "diff", "validate"):
            return not self.busy
        return True

    def _start(self, label: str, func) -> None:
        self._worker = run_task(self, func, group="release", label=label,
                                bar=self.query_one(TaskBar),
                                error_title="Release action failed")
        self.refresh_bindings()

    def _show_output(self, text: str) -> None:
        self.query_one("#release-output", Static).update(text)
        self.query_one(TabbedContent).active = "release-bundles-tab"

    # -- check ------------------------------------------------------------------------------

    def action_check(self) -> None:
        self._seen_version = self.app.data_version
        self._start("checking release gates…", self._check)

    @staticmethod
    def _check(ctx: TaskContext) -> dict:
        report = gates.check(ctx.store, ctx.workspace, progress=ctx.progress,
                             cancelled=ctx.cancelled)
        return {"kind": "check", "report": report.to_json()}

    def show_report(self, data: dict) -> None:
        self.report = data
        gates_table = self.query_one("#release-gates", DataTable)
        gates_table.clear()
        self.failures = []
        for gate in data["gates"]:
            # plain text: descriptions and reasons hold [release], node ids with [...]
            gates_table.add_row(gate["gate"], str(len(gate["failing"])) or "",
                                Text(gate["description"]))
            for item in gate["failing"]:
                self.failures.append({**item, "gate": gate["gate"]})
        self.failures.sort(key=lambda f: (f["status"] not in gates.RELEASABLE,
                                          f["problem_id"], f["gate"]))
        failing = self.query_one("#release-failing", DataTable)
        failing.clear()
        for item in self.failures:
            failing.add_row(item["problem_id"], item["status"], item["gate"],
                            Text(item["reason"]))
        blocking = data["blocking"]
        summary = (f"{data['checked']} checked · "
                   + (f"{len(blocking)} ready/released problem(s) block a release"
                      if blocking else "ready to release: every ready problem passes"))
        self.query_one("#release-summary", Static).update(summary)
        self.query_one("#release-summary").set_class(bool(blocking), "warning")

    # -- validate ---------------------------------------------------------------------------

    def action_validate(self) -> None:
        mined = validity.needs_consent(self.app.store)
        # mined or imported problems run upstream code: under weak isolation, ask first
        self.post_message(AskWeakConsent(mined, lambda allow: self._start(
            "validating tests (stub, repeats, mutants)…",
            lambda ctx: self._validate(ctx, allow))))

    @staticmethod
    def _validate(ctx: TaskContext, allow_weak: bool | None = None) -> dict:
        report = validity.validate(ctx.store, ctx.workspace, progress=ctx.progress,
                                   cancelled=ctx.cancelled, allow_weak=allow_weak)
        checked = gates.check(ctx.store, ctx.workspace, cancelled=ctx.cancelled)
        return {"kind": "validate", "summary": report.summary(), "report": checked.to_json()}

    # -- build ------------------------------------------------------------------------------

    def action_build(self) -> None:
        name = bundle.default_name(self.app.workspace)
        proposed = bundle.next_version(self.app.store, name)

        def got_version(version: str | None) -> None:
            if not version:
                return
            if not bundle.VERSION_PATTERN.match(version):
                self.post_message(ShowError("Not built",
                                            f"version {version!r} must look like 1.2.3"))
                return
            default_out = str(self.app.workspace.root / "releases" / f"{name}-{version}")
            self.app.push_screen(InputModal(
                "Build a release", "Output folder (new, empty, or an older bundle):",
                default_out), lambda out: got_out(version, out))

        def got_out(version: str, out: str | None) -> None:
            if out:
                self._start(f"building {name} {version}…",
                            lambda ctx: self._build(ctx, version, out, False))

        self.app.push_screen(InputModal(
            "Build a release", f"Version of {name} (Enter accepts the proposed next "
            "version):", proposed), got_version)

    @staticmethod
    def _build(ctx: TaskContext, version: str, out: str, allow_failing: bool) -> dict:
        try:
            report = bundle.build(ctx.store, ctx.workspace, version, out,
                                  allow_failing=allow_failing, progress=ctx.progress,
                                  cancelled=ctx.cancelled)
        except ReleaseError as exc:
            if allow_failing or not str(exc).startswith("release blocked"):
                raise
            return {"kind": "blocked", "version": version, "out": out,
                    "blocking": gates.check(ctx.store, ctx.workspace).blocking}
        return {"kind": "build", "report": report.to_json()}

    def _ask_build_anyway(self, result: dict) -> None:
        blocking = result["blocking"]
        shown = ", ".join(blocking[:6]) + (" …" if len(blocking) > 6 else "")

        def answered(choice: str | None) -> None:
            if choice == "anyway":
                self._start(f"building {result['version']} despite failing gates…",
                            lambda ctx: self._build(ctx, result["version"], result["out"],
                                                    True))

        self.app.push_screen(ChoiceModal(
            "Release blocked",
            f"{len(blocking)} ready problem(s) fail a gate: {shown}. The Gates tab lists "
            "why (Enter opens a problem). Build anyway, recording the failures in the "
            "manifest?",
            [("cancel", "Cancel", "primary"), ("anyway", "Build anyway", "warning")]),
            answered)

    # -- verify and diff ------------------------------------------------------------------------

    def _recent(self) -> list[dict]:
        return [r for r in bundle.built_releases(self.app.store) if r["archive"]]

    def action_verify(self) -> None:
        recent = self._recent()
        proposed = (self.last_build or {}).get("archive") or (
            recent[0]["archive"] if recent else "")

        def got_path(path: str | None) -> None:
            if not path:
                return
            self.app.push_screen(ChoiceModal(
                "Verify a bundle", f"{path}: check files and schema only, or also re-run "
                "every canonical solution against its tests (slower)?",
                [("files", "Check files", "primary"), ("rerun", "Check and re-run", "default"),
                 ("cancel", "Cancel", "default")]),
                lambda choice: choice in ("files", "rerun") and self._start(
                    f"verifying {Path(path).name}…",
                    lambda ctx: self._verify(ctx, path, choice == "rerun")))

        self.app.push_screen(InputModal("Verify a bundle",
                                        "Bundle folder or .tar.gz archive:", proposed),
                             got_path)

    @staticmethod
    def _verify(ctx: TaskContext, path: str, rerun: bool) -> dict:
        if not Path(path).exists():
            raise ReleaseError(f"{path}: no such bundle")
        report = verify.verify(path, rerun=rerun, progress=ctx.progress,
                               cancelled=ctx.cancelled, store=ctx.store,
                               workspace=ctx.workspace)
        return {"kind": "verify", "report": report}

    def action_diff(self) -> None:
        recent = self._recent()
        new = recent[0]["archive"] if recent else ""
        old = recent[1]["archive"] if len(recent) > 1 else ""

        def got_old(old_path: str | None) -> None:
            if old_path:
                self.app.push_screen(InputModal("Compare bundles", "Newer bundle:", new),
                                     lambda new_path: new_path and self._start(
                                         "comparing bundles…",
                                         lambda ctx: self._diff(old_path, new_path)))

        self.app.push_screen(InputModal("Compare bundles", "Older bundle (folder or "
                                        ".tar.gz):", old), got_old)

    @staticmethod
    def _diff(old: str, new: str) -> dict:
        for path in (old, new):
            if not Path(path).exists():
                raise ReleaseError(f"{path}: no such bundle")
        return {"kind": "diff", "text": diff.diff(old, new).markdown()}

    # -- results -------------------------------------------------------------------------------

    def on_task_ended(self, event: TaskEnded) -> None:
        if event.task is not self._worker:
            return
        self._worker = None
        bar = self.query_one(TaskBar)
        self.refresh_bindings()
        if event.status == "done":
            result = event.result
            kind = result["kind"]
            if kind == "check":
                self.show_report(result["report"])
                bar.finish("gates checked")
            elif kind == "validate":
                summary = result["summary"]
                self.post_message(DataChanged())
                bar.finish(("validation cancelled; " if summary["cancelled"] else "")
                           + f"validated {summary['problems'] - summary['reused']} "
                           f"problem(s) ({summary['reused']} unchanged): "
                           f"{summary['not_discriminating']} do not discriminate, "
                           f"{summary['unstable']} unstable")
                self.show_report(result["report"])
                self._seen_version = DataChanged.seen_after(self.app.data_version)
            elif kind == "blocked":
                bar.finish("not built: ready problems fail a gate")
                self._ask_build_anyway(result)
            elif kind == "build":
                report = result["report"]
                self.last_build = report
                self.post_message(DataChanged())
                bar.finish(f"built {report['name']} {report['version']} → {report['archive']}")
                self._show_output(build_text(report))
                self.notify(f"Built {report['name']} {report['version']}; the Bundles tab "
                            "shows where it went", timeout=6)
                self.action_check()
                self._seen_version = DataChanged.seen_after(self.app.data_version)
            elif kind == "verify":
                report = result["report"]
                bar.finish(report.summary())
                self._show_output(verify_text(report))
            else:
                bar.finish("compared")
                self._show_output(result["text"])
        else:
            bar.finish(event.status)

    def action_cancel(self) -> None:
        if self._worker is not None:
            self._worker.cancel()

    def action_reload(self) -> None:
        if self.busy:
            self.notify("Busy: ctrl+g cancels first", severity="warning")
        else:
            self.action_check()

    def action_open(self) -> None:
        table = self.query_one("#release-failing", DataTable)
        if self.failures and table.cursor_row is not None and \
                table.cursor_row < len(self.failures):
            self.post_message(OpenProblem(self.failures[table.cursor_row]["problem_id"]))

    @on(DataTable.RowSelected, "#release-failing")
    def _selected(self) -> None:
        self.action_open()
