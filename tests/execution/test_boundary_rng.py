"""The global random generators across the judge/solution boundary: a test that seeds
a generator before each call of a function drawing from it gets the same draws each
time, as in-process, even though the judge's state after seeding is the very state it
sent before; two calls in a row, with nothing seeded between, still differ."""

from __future__ import annotations

from execution_support import engine_fixture, run_one

# What crosses and how does not depend on the sandbox around the two processes: the
# default (strong) one only. Both levels: tests/adversarial/test_boundary.py, _repos.py.
engine = engine_fixture(("strong",))

SOLUTION = """\
import random

import numpy as np
import torch


def noisy():
    return (list(np.random.uniform(size=2)), torch.rand(2).tolist(), random.random())
"""

TESTS = """\
import random

import numpy as np
import torch

from solution import noisy


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
"""


def test_a_test_that_seeds_again_draws_again_what_it_drew(engine):
    result = run_one(engine, SOLUTION, TESTS, timeout=60)
    assert result.outcome == "passed", result.reason
