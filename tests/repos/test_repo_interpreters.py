"""Any registered interpreter runs repo-backed problems in the strong sandbox."""

from __future__ import annotations

import shutil

import pytest
from click.testing import CliRunner
from repo_support import make_repo, mine_and_accept, needs_strong, run_json, symlinked_venv

from curator.cli import main
from curator.execution import sandbox

SHAPES = '''import numpy as np


def polygon_area(points):
    """Shoelace area of a polygon given as (N, 2) points."""
    pts = np.asarray(points, dtype=float)
    x, y = pts[:, 0], pts[:, 1]
    return 0.5 * abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))
'''

TESTS = '''import sys

from geom.shapes import polygon_area


def test_square():
    assert polygon_area([(0, 0), (1, 0), (1, 1), (0, 1)]) == 1.0


def test_runs_in_the_registered_env():
    assert polygon_area([(0, 0), (2, 0), (0, 2)]) == 2.0
    assert sys.prefix.endswith("repo-venv"), sys.prefix
'''


def test_two_venvs_on_one_base_python_are_two_environments(tmp_path):
    python = symlinked_venv(tmp_path / "repo-venv")
    paths = sandbox.python_paths(str(python))
    assert str(tmp_path / "repo-venv") in paths
    own = sandbox.python_paths(None)
    assert str(tmp_path / "repo-venv") not in own
    # the base interpreter's prefix and the .pth folder come along
    assert any(p in paths for p in own if p.endswith("site-packages"))


@pytest.mark.slow
@pytest.mark.timeout(900)   # a venv made and runs in the sandbox, on a shared machine
@needs_strong
def test_symlinked_venv_set_with_set_python_runs_in_the_strong_sandbox(tmp_path):
    upstream = make_repo(tmp_path / "geomlib", {
        "conftest.py": "", "geom/__init__.py": "", "geom/shapes.py": SHAPES,
        "tests/test_shapes.py": TESTS})
    ws, base = mine_and_accept(tmp_path, upstream, "polygon_area", "polygon_area")
    python = symlinked_venv(tmp_path / "repo-venv")
    runner = CliRunner()
    done = runner.invoke(main, [*base, "repo", "set-python", "geomlib", str(python)])
    assert done.exit_code == 0, done.output
    code, report = run_json(base, "polygon_area")
    (run,) = report["runs"]
    assert run["env"]["isolation"] == "strong"
    assert run["outcome"] == "passed", run["reason"]
    assert code == 0
    assert {t["outcome"] for t in run["tests"]} == {"passed"}
    assert len(run["tests"]) == 2

    # An interpreter that is gone says so, instead of an unexplained exit status.
    shutil.rmtree(tmp_path / "repo-venv")
    code, report = run_json(base, "polygon_area")
    (run,) = report["runs"]
    assert code == 1
    assert run["outcome"] in ("infra", "crashed")
    assert "repo-venv/bin/python" in run["reason"], run["reason"]
    assert "status 70" not in run["reason"]
