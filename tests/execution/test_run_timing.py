"""Where a warm run's time goes (RunResult.env["timing"], read by benchmarks/peer_bcb.py):
the worker's own view (getting ready, the run, its end) and the engine's (the job sent to
the result read), nested as they happen."""

from __future__ import annotations

from execution_support import engine_fixture, run_one

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
