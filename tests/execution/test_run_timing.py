"""Where a warm run's time goes (RunResult.env["timing"], read by benchmarks/peer_bcb.py):
the worker's own view (getting ready, the run, its end) and the engine's (the job sent to
the result read), nested as they happen."""

from __future__ import annotations

from execution_support import engine_fixture, needs_bwrap, repo_job, run_one, write_repo

from curator.execution.engine import Engine

engine = engine_fixture(("strong",))

SOLUTION = "def add(a, b):\n    return a + b\n"


def test_a_runs_timing_holds_the_workers_and_the_engines_view(engine):
    result = run_one(engine, SOLUTION)
    assert result.outcome == "passed", result.reason
    timing = result.env["timing"]
    assert timing["prepare"] >= 0
    # the worker's whole turn holds getting ready and the run; the engine's round trip
    # holds the worker's turn
    assert timing["prepare"] + result.duration_s <= timing["worker"] <= timing["exchange"]
    phases = ("solution_start", "judge_fork", "collection", "tests", "judge_exit")
    assert abs(sum(timing[p] for p in phases) - result.duration_s) < 0.01
    # the cleanup's parts, and the CPU each process used (the judge's fork and exit,
    # the solution process's, the worker's turn)
    parts = ("cleanup_stop", "cleanup_tree", "cleanup_files")
    assert abs(sum(timing[p] for p in parts) - timing["cleanup"]) < 0.001
    for key in ("judge_cpu", "solution_cpu", "worker_cpu"):
        assert 0 < timing[key] < 60, (key, timing)
    # the judge said it was ending (the worker then killed the solution process, whose
    # exit overlaps the judge's): pytest's part of the judge's end is apart
    assert 0 <= timing["judge_teardown"] <= timing["judge_exit"]


def test_the_judge_says_it_is_ending_with_its_exit_status(monkeypatch):
    """`EndWhenReported` sends `ending` (the status it exits with) right before it
    exits; the worker parses when."""
    import os
    import types

    from curator.execution import verdict
    from curator.execution.harness import EndWhenReported

    said, exits = [], []
    monkeypatch.setattr(os, "_exit", exits.append)
    end = EndWhenReported(lambda event, **data: said.append((event, data)))
    end.session = types.SimpleNamespace(exitstatus=1)
    plugins = types.SimpleNamespace(getplugin=lambda name: None)
    end.pytest_unconfigure(types.SimpleNamespace(pluginmanager=plugins))
    assert exits == [1] and [e for e, _ in said] == ["ending"]
    assert said[0][1]["exitstatus"] == 1
    line = "tok " + verdict.json.dumps({"event": "ending", "t": said[0][1]["t"]})
    assert verdict.Events.parse(line.encode(), "tok").ending_at == said[0][1]["t"]
    assert verdict.Events.parse(b"other " + line[4:].encode(), "tok").ending_at is None


SLOW_END = '''import time


def pytest_unconfigure(config):
    time.sleep(60)   # what pytest does after its report decides nothing
'''
SCALE_TESTS = '''from pkg.ops import scale


def test_scale():
    assert scale(2) == 6
'''


def scale_repo(repo, conftest=""):
    return write_repo(repo, {"pkg/__init__.py": "",
                             "pkg/ops.py": "def scale(x):\n    return 3 * x\n",
                             "tests/conftest.py": conftest, "tests/test_ops.py": SCALE_TESTS})


def scale_job(repo, text, reference=False):
    return repo_job(repo, "pkg/ops.py", text, "tests/test_ops.py", "scale", reference,
                    timeout=45)


def test_a_repository_run_ends_once_pytest_has_reported(engine, tmp_path):
    repo = scale_repo(tmp_path / "repo", SLOW_END)

    right = "def scale(x):\n    return 3 * x\n"
    jobs = [scale_job(repo, right, reference=True), scale_job(repo, right.replace("3 *", "2 *"))]
    results = {r.job_id: r for r in engine.run(jobs)}
    reference, wrong = (results[j.job_id] for j in jobs)
    # the exit status and every test's outcome are kept; the 60 s of the conftest's
    # unconfigure hook never run (the limit is 45 s)
    assert reference.outcome == "passed", (reference.reason, reference.stderr[-2000:])
    assert wrong.outcome == "failed", (wrong.reason, wrong.stderr[-2000:])
    assert "assert 4 == 6" in wrong.stdout   # pytest's own report was written
    for result in (reference, wrong):
        assert result.duration_s < 30, result.env["timing"]


@needs_bwrap
def test_a_pool_of_repository_runs_starts_no_worker_of_plain_runs(tmp_path):
    """Its plain worker (torch, pytest and a zygote, warmed per slot) starts with the first
    plain job, not before: a batch of repository runs never needs it."""
    repo = scale_repo(tmp_path / "repo")
    with Engine(workers=1, isolation="strong", eager=False) as engine:
        assert engine.pool.wait_ready()
        (result,) = engine.run([scale_job(repo, "def scale(x):\n    return 3 * x\n")])
        assert result.outcome == "passed", result.reason
        assert engine.pool.worker_pids() == []
        plain = run_one(engine, SOLUTION)   # started when it is needed
        assert plain.outcome == "passed", plain.reason
        assert len(engine.pool.worker_pids()) == 1


# A pytest plugin of the repository's environment (a pytest11 entry point) that imports a
# module late, in its terminal summary, as hypothesis's does.
# Its pytest_configure keeps state at module level that a second configuring in one
# process refuses, as pytest-retry's does (`Defaults.add("FILTERED_EXCEPTIONS", ...)`:
# every judge of roboflow inference then crashed, "no option named
# 'filtered_exceptions'", when the worker had configured pytest once).
PLUGIN = '''import os

IMPORTED_IN = os.getpid()
CONFIGURED = []


def pytest_configure(config):
    if CONFIGURED:
        raise ValueError("configured twice in one process")
    CONFIGURED.append(os.getpid())


def pytest_terminal_summary(terminalreporter):
    import tinylate  # noqa: F401
'''
PLUGIN_TESTS = '''import os
import sys

import tinyplug
from pkg.ops import scale


def test_scale():
    assert scale(2) == 6


def test_the_plugins_were_imported_before_the_run():
    assert tinyplug.IMPORTED_IN != os.getpid()
    assert "tinylate" in sys.modules
'''


def plugin_venv(folder):
    """A venv whose site-packages hold the distribution tinyplug (an entry point in group
    pytest11) beside the suite's own packages."""
    from repo_support import pytest_plugin, symlinked_venv

    python = symlinked_venv(folder)
    (site,) = folder.glob("lib/python*/site-packages")
    pytest_plugin(site, "tinyplug", PLUGIN, {"tinylate": "LATE = True\n"})
    return python


@needs_bwrap
def test_a_repository_worker_has_imported_the_environments_pytest_plugins(tmp_path):
    """A warm worker of a repository's environment imports its pytest plugins, and what
    they import late, once: each judge starts with them (before, every run imported them
    again: a second in the suite's own environment). They went through pytest's
    assertion-rewriting hook, so a repository whose ini turns warnings into errors still
    starts (pytest warns of a plugin imported too early to be rewritten)."""
    python = plugin_venv(tmp_path / "venv")
    repo = write_repo(tmp_path / "repo", {
        "pytest.ini": "[pytest]\nfilterwarnings =\n    error\n",
        "pkg/__init__.py": "", "pkg/ops.py": "def scale(x):\n    return 3 * x\n",
        "tests/test_ops.py": PLUGIN_TESTS})
    right = "def scale(x):\n    return 3 * x\n"
    jobs = [repo_job(repo, "pkg/ops.py", text, "tests/test_ops.py", "scale", reference,
                     python=str(python))
            for text, reference in ((right, True), (right, False),
                                    (right.replace("3 *", "2 *"), False))]
    with Engine(workers=1, isolation="strong", eager=False) as engine:
        results = {r.job_id: r for r in engine.run(jobs)}
    reference, again, wrong = (results[j.job_id] for j in jobs)
    for result in (reference, again):
        assert result.outcome == "passed", (result.reason, result.stdout[-2000:])
        assert len(result.tests) == 2
    assert wrong.outcome == "failed", wrong.reason
    assert {t["outcome"] for t in wrong.tests} == {"passed", "failed"}
