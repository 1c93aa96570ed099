"""A run's two processes, the judge and the solution, may each add `memory_mb`: what
crosses the boundary exists in both (the test's model in the judge, its copy in the
solution), so a slot's memory cgroup allows the run twice that (`pool.run_memory_mb`).
With one share for the pair, torchgeo's swin_v2_b tests were killed by the cgroup two
runs in three and passed alone; a single process is still held to its own share."""

from __future__ import annotations

from execution_support import engine_fixture, run_one

from curator.execution.job import Limits
from curator.execution.pool import run_memory_mb

engine = engine_fixture(("strong",))

SOLUTION = """\
def add(a, b):
    block = b"\\x01" * (900 << 20)      # 900 MB, every page written
    return a + b + (len(block) > 0) - 1
"""

TESTS = """\
from solution import add


def test_both_processes_hold_900_mb():
    held = b"\\x02" * (900 << 20)       # the judge's own 900 MB, alive across the call
    assert add(2, 3) == 5
    assert len(held) == 900 << 20
"""

ALONE = """\
def add(a, b):
    block = b"\\x01" * (1700 << 20)     # more than one process's share
    return a + b
"""


def test_the_budget_is_a_share_per_process():
    assert run_memory_mb(Limits(memory_mb=1500)) == 3000


def test_judge_and_solution_each_use_most_of_their_share(engine):
    result = run_one(engine, SOLUTION, TESTS, timeout=120, memory_mb=1500)
    assert result.outcome == "passed", result.reason


def test_one_process_over_its_share_is_still_out_of_memory(engine):
    result = run_one(engine, ALONE, TESTS, timeout=120, memory_mb=1500)
    assert result.outcome == "oom", result.reason
