"""End to end: mine a repository, accept a candidate, run it through `curator run`."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from mining_support import commit, git, write

from curator import runs
from curator import workspace as workspace_mod
from curator.cli import main
from curator.store import Store
from curator.store import candidates as candidate_store
from curator.store import problems as problem_store

# numpy only, so each run's fresh interpreter starts fast.
SHAPES = '''"""Shapes."""
import numpy as np


def polygon_area(points):
    """Shoelace area of a polygon given as (N, 2) points."""
    pts = np.asarray(points, dtype=float)
    x, y = pts[:, 0], pts[:, 1]
    return 0.5 * abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))
'''

TEST_SHAPES = '''from geom.shapes import polygon_area


def test_unit_square():
    assert polygon_area([(0, 0), (1, 0), (1, 1), (0, 1)]) == 1.0


def test_triangle():
    assert polygon_area([(0, 0), (4, 0), (0, 3)]) == 6.0
'''

WRONG = '''import numpy as np


def polygon_area(points):
    pts = np.asarray(points, dtype=float)
    return float(np.ptp(pts[:, 0]) * np.ptp(pts[:, 1]))  # bounding box, not the area
'''


@pytest.fixture
def ws_with_problem(tmp_path):
    upstream = tmp_path / "geomlib"
    upstream.mkdir()
    git(upstream, "init", "-q", "-b", "main")
    write(upstream, {"conftest.py": "", "geom/__init__.py": "", "geom/shapes.py": SHAPES,
                     "tests/test_shapes.py": TEST_SHAPES})
    commit(upstream, "geometry")
    ws = workspace_mod.init(tmp_path / "ws")
    runner = CliRunner()
    base = ["--workspace", str(ws.root)]
    mined = runner.invoke(main, [*base, "mine", str(upstream), "--json"])
    assert mined.exit_code == 0, mined.output
    with Store(ws.db_path, "tester") as store:
        (row,) = candidate_store.list_rows(store)
    accepted = runner.invoke(main, [*base, "candidates", "accept", str(row["id"]),
                                    "--id", "polygon_area"])
    assert accepted.exit_code == 0, accepted.output
    return ws, base


@pytest.mark.slow
def test_repo_backed_problem_passes_with_reference_and_fails_with_wrong_solution(
        ws_with_problem):
    ws, base = ws_with_problem
    runner = CliRunner()
    passed = runner.invoke(main, [*base, "run", "polygon_area", "--json"])
    assert passed.exit_code == 0, passed.output
    (run,) = json.loads(passed.stdout)["runs"]
    assert run["outcome"] == "passed"
    assert sorted(t["id"] for t in run["tests"]) == ["tests/test_shapes.py::test_triangle",
                                                     "tests/test_shapes.py::test_unit_square"]
    (ws.problems_dir / "polygon_area" / "solution.py").write_text(WRONG, encoding="utf-8")
    assert runner.invoke(main, [*base, "load"]).exit_code == 0
    failed = runner.invoke(main, [*base, "run", "polygon_area", "--json"])
    assert failed.exit_code == 1, failed.output
    (run,) = json.loads(failed.stdout)["runs"]
    assert run["outcome"] == "failed"
    outcomes = {t["id"]: t["outcome"] for t in run["tests"]}
    assert outcomes["tests/test_shapes.py::test_triangle"] == "failed"
    assert outcomes["tests/test_shapes.py::test_unit_square"] == "passed"
    # the cached worktree is untouched by either run
    with Store(ws.db_path, "tester") as store:
        problem = problem_store.get(store, "polygon_area")
        job = runs.job_for(store, ws, problem, "def other():\n    return 1\n")
    assert job.solution == "" and job.repo_dir is None  # nothing to run -> no_code
    worktrees = [p for p in (ws.repos_dir / "worktrees").iterdir()
                 if not p.name.startswith(".")]   # .NAME.json lists a checkout's missing blobs
    assert len(worktrees) == 1
    assert (worktrees[0] / "geom" / "shapes.py").read_text(encoding="utf-8") == SHAPES
