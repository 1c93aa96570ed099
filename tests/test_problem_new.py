"""`curator problems new` and the app's New problem action: four files and a draft row."""

from __future__ import annotations

import json

from click.testing import CliRunner
from textual.widgets import Input
from tui_support import *  # noqa: F403  (fixtures: app_for, no_blink)
from tui_support import settle

from curator.cli import main
from curator.problem_files import read_problem
from curator.store import Store
from curator.store import problems as problem_store

FILES = ["problem.toml", "prompt.md", "solution.py", "test_solution.py"]


def invoke(ws, *args):
    return CliRunner().invoke(main, ["--workspace", str(ws.root), *args])


def test_new_writes_four_files_and_a_draft_row(empty_workspace):
    ws = empty_workspace
    result = invoke(ws, "problems", "new", "soft_dice", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["id"] == "soft_dice" and data["entry_point"] == "soft_dice"
    assert data["kind"] == "function" and data["status"] == "draft"
    assert data["files"] == FILES
    problem, _ = read_problem(ws.problems_dir / "soft_dice")
    assert "def soft_dice(" in problem.prompt and "```python" in problem.prompt
    assert "from solution import soft_dice" in problem.tests
    with Store(ws.db_path, "tester") as store:
        stored = problem_store.get(store, "soft_dice")
        assert stored.status == "draft" and stored.solution == problem.solution
        audit = store.query("SELECT action FROM audit WHERE entity_id = 'soft_dice'")
        assert [a["action"] for a in audit] == ["create"]


def test_new_method_and_explicit_entry_point(empty_workspace):
    ws = empty_workspace
    data = json.loads(invoke(ws, "problems", "new", "dice-loss", "--kind", "method",
                             "--json").output)
    assert (data["entry_point"], data["kind"]) == ("DiceLoss.forward", "method")
    problem, _ = read_problem(ws.problems_dir / "dice-loss")
    assert "class DiceLoss" in problem.solution and "def forward(self" in problem.solution
    data = json.loads(invoke(ws, "problems", "new", "nms2", "--entry-point", "nms",
                             "--json").output)
    assert data["entry_point"] == "nms"


def test_new_refuses_bad_or_taken_ids_and_writes_nothing(empty_workspace):
    ws = empty_workspace
    bad = invoke(ws, "problems", "new", "Bad Id")
    assert bad.exit_code == 1 and bad.output.startswith("error: id 'Bad Id'")
    assert not any(ws.problems_dir.iterdir())
    assert invoke(ws, "problems", "new", "x1").exit_code == 0
    again = invoke(ws, "problems", "new", "x1")
    assert again.exit_code == 1 and "already exists" in again.output
    (ws.problems_dir / "x2").mkdir()   # a folder not loaded yet
    clash = invoke(ws, "problems", "new", "x2")
    assert clash.exit_code == 1 and "already exists" in clash.output
    bad_entry = invoke(ws, "problems", "new", "x3", "--entry-point", "not a name")
    assert bad_entry.exit_code == 1 and "entry_point" in bad_entry.output
    assert sorted(p.name for p in ws.problems_dir.iterdir()) == ["x1", "x2"]


def test_new_problem_runs_and_fails_until_written(empty_workspace):
    ws = empty_workspace
    invoke(ws, "problems", "new", "todo")
    result = invoke(ws, "run", "todo", "--json")
    runs = json.loads(result.output)["runs"]
    assert runs[0]["outcome"] in ("failed", "error")


async def test_app_n_creates_and_opens_the_problem(empty_workspace, app_for):
    from curator.tui.screens.problem import ProblemScreen

    app = app_for(empty_workspace)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        app.screen.query_one("#new-id", Input).value = "focal_x"
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ProblemScreen)
        assert app.screen.problem_id == "focal_x"
    assert (empty_workspace.problems_dir / "focal_x" / "test_solution.py").is_file()


async def test_app_palette_new_problem_reports_a_taken_id(empty_workspace, app_for):
    invoke(empty_workspace, "problems", "new", "taken")
    app = app_for(empty_workspace)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.action_new_problem()
        await settle(pilot)
        app.screen.query_one("#new-id", Input).value = "taken"
        await pilot.press("enter")
        await settle(pilot)
        assert type(app.screen).__name__ == "ErrorModal"
        assert "already exists" in app.screen.message
