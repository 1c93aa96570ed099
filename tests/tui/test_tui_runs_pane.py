"""The Runs tab's Tests pane: every test's outcome is visible at 100 columns and wider,
long test ids cut in the middle (both ends tell them apart)."""

from __future__ import annotations

import pytest
from tui_support import *  # noqa: F403  (fixtures: app_for, no_blink, synth_workspace)
from tui_support import open_problem, settle

from curator import runs
from curator.execution.job import RunResult
from curator.tui.widgets.outcomes_table import OutcomesTable

PID = "focal_loss_multiclass"
IDS = [f"tests/augmentation/test_augmentation_3d.py::TestRandomMotionBlur3D::"
       f"test_smoke[cpu-float32-batch_shape{n}]" for n in range(3)]
OUTCOMES = ["passed", "failed", "deselected"]


def shown_lines(table: OutcomesTable) -> list[str]:
    return [table.render_line(y).text for y in range(table.size.height)]


@pytest.mark.parametrize("width", [100, 110, 160])
async def test_each_outcome_is_visible_and_ids_are_cut_in_the_middle(workspace, store,
                                                                     app_for, width):
    tests = [{"id": i, "outcome": o, "duration_s": 0.1} for i, o in zip(IDS, OUTCOMES,
                                                                         strict=True)]
    runs.record(store, RunResult(job_id="j1", problem_id=PID, outcome="failed", tests=tests,
                                 duration_s=1.0, reason="1 failed",
                                 env={"isolation": "strong"}, timeout_s=60),
                "reference", runs.solution_hash("x"))
    app = app_for(workspace)
    async with app.run_test(size=(width, 30)) as pilot:
        screen = await open_problem(pilot, PID)
        await pilot.press("alt+5")
        await settle(pilot)
        table = screen.query_one("#run-tests", OutcomesTable)
        lines = shown_lines(table)
        rows = [line for line in lines if line.strip().startswith("tests/aug")]
        assert len(rows) == 3, lines
        for line, test_id, outcome in zip(rows, IDS, OUTCOMES, strict=True):
            assert outcome in line, (width, line)
            assert "…" in line and test_id[-8:] in line      # cut in the middle
        # a wider terminal shows more of each id
        assert table.id_width() >= 20


async def test_the_pane_follows_a_resize(workspace, store, app_for):
    tests = [{"id": IDS[0], "outcome": "failed", "duration_s": 0.1}]
    runs.record(store, RunResult(job_id="j2", problem_id=PID, outcome="failed", tests=tests,
                                 duration_s=1.0, env={"isolation": "strong"}, timeout_s=60),
                "reference", runs.solution_hash("x"))
    app = app_for(workspace)
    async with app.run_test(size=(320, 30)) as pilot:
        screen = await open_problem(pilot, PID)
        await pilot.press("alt+5")
        await settle(pilot)
        table = screen.query_one("#run-tests", OutcomesTable)
        wide = [line for line in shown_lines(table) if "failed" in line]
        assert wide and IDS[0] in wide[0]           # room for the whole id
        await pilot.resize_terminal(100, 30)
        await settle(pilot)
        narrow = [line for line in shown_lines(table) if "failed" in line]
        assert narrow and IDS[0] not in narrow[0] and "…" in narrow[0]
