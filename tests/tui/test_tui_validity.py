"""The app's validity flow: ctrl+t on a problem, the Runs tab's findings, `valid:no` in
the Problems filter, and t on the Release screen (real engine runs, stored results)."""

from __future__ import annotations

from textual.widgets import DataTable, Input
from tui_support import *  # noqa: F403  (fixtures: app_for, no_blink, synth_workspace)
from tui_support import open_problem, settle
from validity_runs_support import NEVER_CALLED, STRONG, workspace_with

from curator.store import Store
from curator.tui.widgets.validity_pane import (
    ValidityPane,
    finding_rows,
    side_by_side,
    summary_text,
)

WEAK = '''from solution import scale


def test_gives_an_int():
    assert isinstance(scale(2, 3), int)
'''


def _workspace(empty_workspace):
    return workspace_with(empty_workspace, never_called=NEVER_CALLED, weak=WEAK,
                          strong=STRONG)


async def test_validate_a_problem_then_filter_and_gate_from_the_app(empty_workspace, app_for):
    ws = _workspace(empty_workspace)
    app = app_for(ws)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_problem(pilot, "weak")
        await pilot.press("ctrl+t")
        await settle(pilot)
        await settle(pilot)
        pane = screen.query_one(ValidityPane)
        assert not pane.running
        summary = str(screen.query_one("#validity-summary").render())
        assert summary.startswith("Validity: discriminates") and "mutation score" in summary
        findings = screen.query_one("#validity-findings", DataTable)
        rows = [findings.get_row_at(i) for i in range(findings.row_count)]
        survivors = [r for r in rows if str(r[0]).startswith("survivor")]
        assert survivors, rows
        # the mutated line beside the original
        assert any(str(r[2]) == "return y + 1" and str(r[3]) != "return y + 1"
                   for r in survivors)
        assert not pane.can_accept          # a self-contained problem: nothing to propose
        with Store(ws.db_path, "tester") as store:
            stored = store.query("SELECT problem_id, discriminates FROM validations")
        assert stored == [{"problem_id": "weak", "discriminates": 1}]
        await pilot.press("escape")
        await settle(pilot)

        # the Release screen validates the rest (t), then checks the gates again
        await pilot.press("f6")
        await settle(pilot)
        await pilot.press("t")
        await settle(pilot)
        await settle(pilot)
        release = app.screen
        failing = {(f["gate"], f["problem_id"]) for f in release.failures
                   if f["gate"] in ("tests_discriminate", "reference_stable")}
        assert failing == {("tests_discriminate", "never_called")}

        # Problems: valid:no keeps the problem whose tests never call the function
        await pilot.press("f2")
        await settle(pilot)
        await pilot.press("slash")
        app.screen.query_one("#filter", Input).value = "valid:no"
        await settle(pilot)
        shown = [r["id"] for r in app.screen.query_one("ProblemTable").rows]
        assert shown == ["never_called"]


def test_the_summary_and_findings_say_what_was_found():
    from curator.validity.validate import Validity

    assert "not validated" in summary_text(None)
    found = Validity("p", discriminates=False, stub_failed_share=0.0,
                     non_exercising_tests=["t.py::a"], stable=False, flaky_tests=["t.py::b"],
                     mutation_score=0.5, mutants=2, killed=1, baseline_tests=2, timeouts=1,
                     survivors=[{"operator": "constant", "line": 3, "original": "  x = 1",
                                 "mutated": "  x = 2"}])
    text = summary_text(found)
    assert "DOES NOT DISCRIMINATE" in text and "FLAKY: 1 test(s)" in text
    assert "mutation score 0.50 (1/2 killed)" in text and "1 timed out" in text
    assert finding_rows(found) == [("survivor: constant", "3", "x = 1", "x = 2"),
                                   ("flaky", "", "", "t.py::b"),
                                   ("stub passes", "", "", "t.py::a")]


def test_a_long_survivor_line_is_cut_around_the_change():
    original = "top_left = torch.maximum(boxes1[:, None, :2], boxes2[None, :, :2])"
    mutated = "top_left = torch.maximum(boxes2[None, :, :2], boxes1[:, None, :2])"
    left, right = side_by_side(original, mutated, 28)
    assert len(left) <= 28 and len(right) <= 28
    assert "boxes1" in left and "boxes2" in right   # the change itself is on screen
    assert side_by_side("x = 1", "x = 2", 28) == ("x = 1", "x = 2")
    tail_left, tail_right = side_by_side("y" * 100 + "a + b", "y" * 100 + "a - b", 20)
    assert tail_left.endswith("a + b") and tail_right.endswith("a - b")
