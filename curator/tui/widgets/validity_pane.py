"""Validity box of the Runs tab: do this problem's tests catch wrong answers?

ctrl+t runs `curator.validity.validate` on the problem (thread worker, progress, ctrl+g
cancels) and, when some of its node ids never fail a stub, `curator.validity.repair`'s
proposal; ctrl+n accepts the proposal (`repair.apply`, as `validate --apply`). What is
shown is read back from the stored validation.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import DataTable, Static

from curator.store import problems as problem_store
from curator.tui import queries
from curator.tui.messages import AskWeakConsent, DataChanged, ShowError, TaskProgress
from curator.tui.tasks import Task, TaskContext, TaskEnded, run_task
from curator.validity import repair
from curator.validity.validate import Validity, needs_consent, validate


def summary_text(found: Validity | None) -> str:
    """One or two lines about a problem's validity (no textual: tests read it too)."""
    if found is None:
        return "Validity: not validated on this solution and these tests (ctrl+t validates)"
    if found.discriminates is None:
        return f"Validity: undecided: {found.reason}"
    parts = [
        "discriminates" if found.discriminates else "DOES NOT DISCRIMINATE (a stub passes)",
        f"stub fails {found.stub_failed_share:.0%} of {found.baseline_tests} test(s)",
        "stable" if found.stable else f"FLAKY: {len(found.flaky_tests or [])} test(s)",
    ]
    if found.mutation_score is None:
        parts.append("no mutant counted")
    else:
        parts.append(f"mutation score {found.mutation_score:.2f} "
                     f"({found.killed}/{found.mutants} killed)")
    extra = [f"{n} {what}" for n, what in ((found.timeouts, "timed out"),
                                           (found.equivalent, "equivalent")) if n]
    if extra:
        parts.append("mutants " + ", ".join(extra) + " (not counted)")
    return "Validity: " + " · ".join(parts)


def finding_rows(found: Validity | None) -> list[tuple[str, str, str, str]]:
    """(what, line, reference, mutant or test) rows: survivors beside their original line,
    flaky tests, tests the stub does not fail."""
    if found is None or found.discriminates is None:
        return []
    rows = [(f"survivor: {s['operator']}", str(s["line"]), s.get("original", "").strip(),
             s.get("mutated", "").strip()) for s in found.survivors or []]
    rows += [("flaky", "", "", test) for test in found.flaky_tests or []]
    rows += [("stub passes", "", "", test) for test in found.non_exercising_tests or []]
    return rows


def side_by_side(original: str, mutated: str, room: int) -> tuple[str, str]:
    """Both lines cut to `room` characters around where they first differ, so the change
    stays on screen beside the original however long the line is."""
    if len(original) <= room and len(mutated) <= room:
        return original, mutated
    at = next((i for i, (a, b) in enumerate(zip(original, mutated)) if a != b),
              min(len(original), len(mutated)))
    start = max(0, min(at - room // 3, max(len(original), len(mutated)) - room + 1))

    def cut(text: str) -> str:
        piece = text[start:start + room]
        if start:
            piece = "…" + piece[1:]
        if start + room < len(text):
            piece = piece[:-1] + "…"
        return piece

    return cut(original), cut(mutated)


def proposal_text(proposal: repair.Proposal | None) -> str:
    if proposal is None:
        return ""
    if not proposal.fixes:
        return f"Repair: none ({proposal.reason})"
    via = f" via {' -> '.join(proposal.via)}" if proposal.via else ""
    state = "applied" if proposal.applied else "ctrl+n accepts"
    return (f"Repair ({proposal.link} link{via}): {len(proposal.proposed)} node id(s), "
            f"+{len(proposal.added)} -{len(proposal.dropped)} · {state}")


class ValidityPane(Vertical):
    HELP = """\
## Validity (Runs tab)

**ctrl+t** validates the saved problem as `curator validate` does: the reference runs 3
times (flaky tests), a stub of the entry point must fail a test, and 20 mutants of the
reference show how strong the tests are (survivors are listed with the mutated line
beside the original). When some node ids never fail the stub, the tests the mining index
links to the symbol are tried and proposed; **ctrl+n** accepts them as the problem's node
ids. **ctrl+g** cancels.
"""

    class Finished(Message):
        """Validation ended (the screen refreshes its key bindings)."""

    def __init__(self, problem_id: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.problem_id = problem_id
        self.proposal: repair.Proposal | None = None
        self._worker: Task | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="validity-summary", markup=False)
        yield Static("", id="validity-repair", markup=False)
        table = DataTable(id="validity-findings", cursor_type="row", zebra_stripes=True)
        table.border_title = "Validity findings"
        yield table

    def on_mount(self) -> None:
        self.query_one("#validity-findings", DataTable).add_columns(
            "what", "line", "reference", "mutant / test")
        self.refresh_validity()

    @property
    def running(self) -> bool:
        return self._worker is not None

    @property
    def can_accept(self) -> bool:
        return bool(self.proposal and self.proposal.fixes and self.proposal.changes
                    and not self.proposal.applied)

    def refresh_validity(self) -> None:
        found = queries.validity_of(self.app.store, self.problem_id)
        self.query_one("#validity-summary", Static).update(summary_text(found))
        self.query_one("#validity-repair", Static).update(proposal_text(self.proposal))
        table = self.query_one("#validity-findings", DataTable)
        table.clear()
        room = max(16, (self.app.size.width - 46) // 2)
        for what, line, original, other in finding_rows(found):
            if original:
                original, other = side_by_side(original, other, room)
            table.add_row(what, line, Text(original), Text(other))

    def start(self) -> None:
        if self.running:
            self.notify("Validation is already running", severity="warning")
            return
        # a mined or imported problem runs upstream code: under weak isolation, ask first
        self.post_message(AskWeakConsent(needs_consent(self.app.store, [self.problem_id]),
                                         self._launch))

    def _launch(self, allow_weak: bool | None) -> None:
        if self.running:
            return
        problem_id = self.problem_id

        def work(ctx: TaskContext):
            report = validate(ctx.store, ctx.workspace, [problem_id],
                              progress=ctx.progress, cancelled=ctx.cancelled,
                              allow_weak=allow_weak)
            found = report.problems[0] if report.problems else None
            proposal = None
            problem = problem_store.get(ctx.store, problem_id)
            if found is not None and found.non_exercising_tests and \
                    problem.test_node_ids is not None and not report.cancelled:
                proposal = repair.propose(ctx.store, ctx.workspace, [problem],
                                          progress=ctx.progress,
                                          cancelled=ctx.cancelled,
                                          allow_weak=allow_weak)[0]
            return report, proposal

        self.query_one("#validity-summary", Static).update("Validity: validating…")
        self._worker = run_task(self, work, group="validate", label="validating…",
                                progress=lambda done, total, label: self.post_message(
                                    TaskProgress(done, total, label)),
                                error_title="Validation failed")

    def cancel(self) -> None:
        if self._worker is not None:
            self._worker.cancel()
            self.query_one("#validity-summary", Static).update("Validity: cancelling…")

    def accept(self) -> None:
        if not self.can_accept:
            self.notify("No repair to accept: ctrl+t validates first", severity="warning")
            return
        try:
            repair.apply(self.app.store, self.app.workspace, self.proposal)
        except Exception as exc:  # noqa: BLE001 - shown in the error modal
            self.post_message(ShowError("Could not apply the repair", exc))
            return
        self.post_message(DataChanged())
        self.notify(f"{self.problem_id}: node ids replaced ({len(self.proposal.proposed)}); "
                    "ctrl+t validates again")
        self.refresh_validity()

    def on_task_progress(self, event: TaskProgress) -> None:
        event.stop()
        self.query_one("#validity-summary", Static).update(
            f"Validity: {event.done}/{event.total} {event.label}")

    def on_task_ended(self, event: TaskEnded) -> None:
        if event.task is not self._worker:
            return
        event.stop()
        self._worker = None
        if event.status == "done" and event.result is not None:
            report, self.proposal = event.result
            self.post_message(DataChanged())
            if report.cancelled:
                self.notify("Validation cancelled", severity="warning")
            else:
                found = report.problems[0] if report.problems else None
                bad = found is not None and found.valid is False
                self.notify(f"{self.problem_id}: " + summary_text(found)[len("Validity: "):],
                            severity="warning" if bad else "information", timeout=6)
        elif event.status == "cancelled":
            self.notify("Validation cancelled", severity="warning")
        self.refresh_validity()
        self.post_message(self.Finished())
