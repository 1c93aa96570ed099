"""The global random generators across the judge/solution boundary: a test that seeds
a generator before each call of a function drawing from it gets the same draws each
time, as in-process, even though the judge's state after seeding is the very state it
sent before; two calls in a row, with nothing seeded between, still differ; what the test
draws after a call that drew is what it draws in-process (the judge's generators moved
forward by the call's draws), and a function that seeds does not choose it."""

from __future__ import annotations

import random
import time

import numpy as np
import pytest
import torch
from execution_support import engine_fixture, run_one

from curator.execution import boundary

# What crosses and how does not depend on the sandbox around the two processes: the
# default (strong) one only. Both levels: tests/adversarial/test_boundary.py, _repos.py.
engine = engine_fixture(("strong",))

SOLUTION = """\
import random

import numpy as np
import torch


def noisy():
    return (list(np.random.uniform(size=2)), torch.rand(2).tolist(), random.random())


def build(n):
    # a model's weights drawn by the function: past several twists of each generator
    torch.nn.Linear(n, n)
    np.random.uniform(size=n * n)
    [random.random() for _ in range(n * 10)]
    return n


def build_seeded(n):
    torch.manual_seed(123)
    np.random.seed(123)
    random.seed(123)
    return build(n)
"""

TESTS = """\
import random

import numpy as np
import torch

from solution import build, build_seeded, noisy


def seed():
    np.random.seed(0)
    torch.manual_seed(0)
    random.seed(0)


def test_seeding_again_draws_the_same():
    seed()
    first = noisy()
    seed()
    assert noisy() == first


def test_the_draws_are_those_of_the_seed():
    seed()
    expected = (list(np.random.uniform(size=2)), torch.rand(2).tolist(), random.random())
    seed()
    assert noisy() == expected


def test_calls_in_a_row_continue_the_sequence():
    seed()
    first, second = noisy(), noisy()
    assert second[0] != first[0] and second[1] != first[1] and second[2] != first[2]


def after(function, n):
    function(n)
    return (list(np.random.uniform(size=2)), torch.rand(2).tolist(), random.random())


def test_what_the_test_draws_after_the_call_is_what_it_draws_in_process():
    for n in (3, 40):
        seed()
        expected = after(_in_process, n)
        seed()
        assert after(build, n) == expected


def _in_process(n):
    torch.nn.Linear(n, n)
    np.random.uniform(size=n * n)
    [random.random() for _ in range(n * 10)]


def test_a_function_that_seeds_does_not_choose_the_tests_draws():
    seed()
    got = after(build_seeded, 40)
    torch.manual_seed(123)
    np.random.seed(123)
    random.seed(123)
    chosen = after(_in_process, 40)
    assert got[0] != chosen[0] and got[1] != chosen[1] and got[2] != chosen[2]
"""


def test_a_test_that_seeds_again_draws_again_what_it_drew(engine):
    result = run_one(engine, SOLUTION, TESTS, timeout=60)
    assert result.outcome == "passed", result.reason


def _states(draw):
    before = boundary.rng_state()
    draw()
    return before, boundary.rng_state()


@pytest.mark.parametrize("key", ["random", "numpy", "torch"])
def test_a_state_reached_by_draws_is_the_judges_own_moved_forward(key):
    torch.manual_seed(5)
    np.random.seed(5)
    random.seed(5)
    given, drawn = _states(lambda: (torch.rand(100_000), np.random.uniform(size=50_000),
                                    [random.random() for _ in range(20_000)]))
    deadline = time.monotonic() + 10
    assert boundary.rng_continuation(key, given[key], drawn[key], deadline) == drawn[key]
    # out of time: not walked past 64 twists
    assert boundary.rng_continuation(key, given[key], drawn[key], 0.0) is None
    # a few draws, within the same array
    given, drawn = _states(lambda: (torch.rand(3), np.random.uniform(size=3), random.random()))
    assert boundary.rng_continuation(key, given[key], drawn[key], deadline) == drawn[key]
    # backwards, or a state of another seed: not reached by drawing
    assert boundary.rng_continuation(key, drawn[key], given[key], deadline) is None
    torch.manual_seed(6)
    np.random.seed(6)
    random.seed(6)
    other = boundary.rng_state()
    assert boundary.rng_continuation(key, given[key], other[key], deadline) is None


def test_a_cached_normal_sample_the_call_changed_is_not_taken():
    torch.manual_seed(5)
    given, drawn = _states(lambda: torch.randn(1))   # caches its pair's second sample
    state = boundary.rng_continuation("torch", given["torch"], drawn["torch"],
                                      time.monotonic() + 10)
    assert state is not None and state != drawn["torch"]
    torch.set_rng_state(torch.frombuffer(bytearray(state), dtype=torch.uint8))
    fresh = torch.randn(1)
    torch.set_rng_state(torch.frombuffer(bytearray(drawn["torch"]), dtype=torch.uint8))
    assert not torch.equal(fresh, torch.randn(1))   # the cached sample was not used
