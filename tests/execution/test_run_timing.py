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
