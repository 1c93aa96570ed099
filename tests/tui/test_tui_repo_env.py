"""`repo env` from the app, for real: a repository mined from the shell, its candidate
accepted on the Candidates screen, its environment built there with **e** from a local
package index made here (uv offline), and the accepted problem's reference run from the
app (ctrl+r) in that environment, in the strong sandbox."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from repo_support import (
    needs_strong,
    offline_index,  # noqa: F401  (the fixture)
    units_repo,
)
from textual.widgets import DataTable, Input
from tui_support import *  # noqa: F403  (fixtures: app_for, no_blink, synth_workspace)
from tui_support import settle

from curator import workspace as workspace_mod
from curator.cli import main
from curator.repos import environments, uv
from curator.store import problems as problem_store
from curator.tui.screens.candidates import CandidatesScreen
from curator.tui.screens.dialogs import InputModal
from curator.tui.screens.problem import ProblemScreen


@pytest.mark.slow
@pytest.mark.timeout(1200)   # the environment build, on a shared 2-core machine
@needs_strong
@pytest.mark.usefixtures("offline_index")
async def test_build_the_environment_and_run_the_reference_from_the_app(tmp_path, app_for):
    upstream = units_repo(tmp_path / "units")
    ws = workspace_mod.init(tmp_path / "ws")
    mined = CliRunner().invoke(main, ["--workspace", str(ws.root), "mine", str(upstream),
                                      "--json"])
    assert mined.exit_code == 0, mined.output
    app = app_for(ws)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("f4")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CandidatesScreen)
        index = next(i for i, r in enumerate(screen.rows) if r["qualname"] == "inches_to_cm")
        screen.query_one("#cand-table", DataTable).move_cursor(row=index)
        await settle(pilot)

        await pilot.press("a")                     # accept under the id typed in
        await settle(pilot)
        assert isinstance(app.screen, InputModal)
        app.screen.query_one(Input).value = "inches_to_cm"
        await pilot.press("enter")
        await settle(pilot)
        problem = problem_store.get(app.store, "inches_to_cm")
        assert problem.repo_backed and problem.status == "draft"

        await pilot.press("f")                     # all: the accepted one is shown again
        await settle(pilot)
        index = next(i for i, r in enumerate(screen.rows) if r["qualname"] == "inches_to_cm")
        screen.query_one("#cand-table", DataTable).move_cursor(row=index)
        await settle(pilot)
        await pilot.press("e")                     # the environment, as `curator repo env`
        await settle(pilot)
        (env,) = environments.list_envs(app.store)
        assert env["registered"] == env["python"]
        assert env["python"].startswith(str(ws.db_dir / "envs"))
        names = {p["name"]: p["version"] for p in env["packages"]}
        assert names["tinyunits"] == "1.2.0" and names["tinycheck"] == "0.3.0"
        assert names["torch"] == uv.torch_pin().split("==")[1]
        bar = str(screen.query_one("#cand-task #task-label").render())
        assert "environment built" in bar, bar

        await pilot.press("o")                     # the problem the candidate became
        await settle(pilot)
        assert isinstance(app.screen, ProblemScreen)
        await pilot.press("ctrl+r")
        await settle(pilot)
        (run,) = app.store.query("SELECT * FROM runs WHERE problem_id = 'inches_to_cm'")
        assert run["outcome"] == "passed", run["reason"]
        assert json.loads(run["env"])["isolation"] == "strong"
        tests = json.loads(run["tests"])
        assert [t["outcome"] for t in tests] == ["passed", "passed"]
        assert str(app.screen.query_one("#run-status").render()) == "passed"
