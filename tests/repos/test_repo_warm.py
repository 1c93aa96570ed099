"""Warm repository runs (forked from a worker of the repository's environment) give the
same outcomes as cold ones (a fresh `python -m pytest` per run)."""

from __future__ import annotations

import pytest
from execution_support import plain_workers_at_close
from repo_support import make_repo, mine_and_accept, needs_strong, symlinked_venv

from curator import runs
from curator.execution.engine import Engine
from curator.repos import identity
from curator.store import Store
from curator.store import problems as problem_store

CODE = '''"""Scaling."""
import inspect

from .consts import FACTOR


def scale(values, by=None):
    """Multiply each value."""
    by = FACTOR if by is None else by
    return [v * by for v in values]


def source_of_scale():
    return inspect.getsource(scale)
'''

TESTS = '''import os

import pytest

from pkg import scale as from_package
from pkg.ops import scale, source_of_scale


def test_default():
    assert scale([1, 2]) == [3, 6]


def test_by():
    assert from_package([1], by=5) == [5]


def test_source_is_what_runs():
    assert "def scale" in source_of_scale()


@pytest.mark.skip(reason="need --runslow option to run")
def test_slow():
    assert scale([1] * 10) == [3] * 10


@pytest.mark.xfail(reason="documented upstream bug")
def test_known_bug():
    assert scale(["a"]) == ["aaa", "x"]


def test_cwd_is_the_checkout():
    assert os.path.isfile("conftest.py")
'''

# Like kornia's: the session start creates a folder in the working directory.
CONFTEST = '''import os


def pytest_sessionstart(session):
    os.makedirs("weights/", exist_ok=True)
'''

WRONG = '''def scale(values, by=None):
    return [v * (by or 2) for v in values]
'''

# Makes every test body a no-op: never a pass, warm or cold.
TAMPERS = '''import _pytest.python

_pytest.python.Function.runtest = lambda self: None


def scale(values, by=None):
    return []
'''

HELPER = '''import math


def _times(v, by):
    return v * by


def scale(values, by=None):
    by = FACTOR if by is None else by
    return [_times(v, by) for v in values if not math.isnan(v)]
'''


def _outcomes(result):
    return result.outcome, sorted((t["id"], t["outcome"]) for t in result.tests)


@pytest.mark.slow
@pytest.mark.timeout(900)   # ten repository runs per level, on a shared 2-core machine
@pytest.mark.parametrize("isolation", [
    pytest.param("strong", marks=needs_strong),
    "weak"])
def test_warm_and_cold_repository_runs_agree(tmp_path, isolation):
    upstream = make_repo(tmp_path / "pkgrepo", {
        "conftest.py": CONFTEST, "pkg/__init__.py": "from .ops import scale\n",
        "pkg/consts.py": "FACTOR = 3\n", "pkg/ops.py": CODE, "tests/test_ops.py": TESTS})
    ws, _ = mine_and_accept(tmp_path, upstream, "scale", "scale", isolation=isolation)
    python = symlinked_venv(tmp_path / "repo-venv")
    with Store(ws.db_path, "tester") as store:
        identity.set_python(store, "pkgrepo", str(python))
        problem = problem_store.get(store, "scale")
        texts = [problem.solution, WRONG, HELPER, "def scale(:\n", TAMPERS]
        jobs = [runs.job_for(store, ws, problem, text, "reference") for text in texts]
    outcomes = {}
    for warm in (True, False):
        with Engine(workers=1, isolation=isolation, warm_repos=warm, eager=False) as engine:
            results = {r.job_id: r for r in engine.run(jobs)}
        outcomes[warm] = [_outcomes(results[j.job_id]) for j in jobs]
        assert {results[j.job_id].env["repo_run"] for j in jobs} == \
            {"warm" if warm else "cold"}
        assert {results[j.job_id].env["isolation"] for j in jobs} == {isolation}
    # Warm runs cross the boundary: the text's patch of pytest stays in the solution
    # process and its wrong answer fails. A cold reference run is trusted and unguarded,
    # in the pytest process: what it patches is its baseline.
    # A text that does not compile is `error` both ways: cold, collection fails; warm,
    # the judge collects the repository's own module and the candidate's import fails.
    assert outcomes[True][:3] == outcomes[False][:3]
    reference, wrong, helper, syntax, tampers = outcomes[True]
    assert outcomes[False][3][0] == "error"
    assert tampers[0] == "failed"
    assert outcomes[False][4][0] == "passed"
    assert reference[0] == "passed" and helper[0] == "passed"
    assert {o for _, o in reference[1]} == {"passed", "skipped", "xfailed"}
    assert wrong[0] == "failed"
    assert syntax[0] == "error"
    # the shared checkout is never written to
    worktree = next(p for p in (ws.repos_dir / "worktrees").iterdir()
                    if not p.name.startswith("."))   # .NAME.json lists missing blobs
    assert (worktree / "pkg" / "ops.py").read_text(encoding="utf-8") == CODE


ENV_TESTS = '''import envmod

from pkg.ops import value


def test_the_environment_as_built_now():
    assert envmod.VERSION == 2
    assert value() == 2
'''


@pytest.mark.parametrize("isolation", [
    pytest.param("strong", marks=needs_strong),
    "weak"])
def test_an_environment_built_again_gets_fresh_warm_workers(tmp_path, isolation):
    """An environment built again in place (same interpreter path, its lock changed:
    `repo env`, or a rebuild's pass that adds a missing module) is run by new warm
    workers. Those started before had imported the old packages (their preload), and
    judged the new environment's tests with them."""
    from execution_support import repo_job, write_repo

    python = symlinked_venv(tmp_path / "venv")
    (site,) = (tmp_path / "venv").glob("lib/python*/site-packages")
    (site / "envmod.py").write_text("VERSION = 1\n", encoding="utf-8")
    root = write_repo(tmp_path / "repo", {
        "pkg/__init__.py": "", "tests/test_ops.py": ENV_TESTS,
        "pkg/ops.py": "import envmod\n\n\ndef value():\n    return envmod.VERSION\n"})
    text = (root / "pkg" / "ops.py").read_text(encoding="utf-8")

    def job(lock: str):
        made = repo_job(root, "pkg/ops.py", text, "tests/test_ops.py", "value",
                        reference=True, python=str(python))
        made.env_preload = ["envmod"]
        made.repo = {"url": "https://example.com/pkg", "commit": "c0", "lock": lock,
                     "python_version": None}
        return made

    with Engine(workers=1, isolation=isolation, eager=False) as engine:
        (before,) = engine.run([job("envmod==1\n")])
        assert before.outcome == "failed"          # the environment's tests want version 2
        (site / "envmod.py").write_text("VERSION = 2\n", encoding="utf-8")
        (after,) = engine.run([job("envmod==2\n")])
        assert after.outcome == "passed", after.reason


def test_a_repository_problem_run_as_edited_starts_no_worker_of_plain_runs(tmp_path,
                                                                             monkeypatch):
    """The app's run of a problem as edited on screen (runs.run_edited, ctrl+r) made an
    engine whose slot warmed a worker of plain runs (torch, pytest and a zygote) before
    it took the job: a repository problem's run waited for an interpreter it never used.
    Its engine now starts one only for a plain problem, as run_problems's does."""
    upstream = make_repo(tmp_path / "scales", {
        "pkg/__init__.py": "", "pkg/ops.py": "def scale(x):\n    return 3 * x\n",
        "tests/test_ops.py": "from pkg.ops import scale\n\n\ndef test_scale():\n"
                             "    assert scale(2) == 6\n"})
    ws, _ = mine_and_accept(tmp_path, upstream, "scale", "scale", isolation="weak")
    left_running = plain_workers_at_close(monkeypatch, runs)
    with Store(ws.db_path, "tester") as store:
        problem = problem_store.get(store, "scale")
        problem.solution = problem.solution.replace("3 * x", "x * 3")   # unsaved
        report = runs.run_edited(store, ws, problem)
    assert [(r["outcome"], r["unsaved"]) for r in report.runs] == [("passed", True)], \
        report.runs
    assert left_running == [0]
