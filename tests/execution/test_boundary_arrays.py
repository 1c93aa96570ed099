"""numpy arrays across the judge/solution boundary keep what a test sees in-process: an
array of the test's that comes back unchanged (returned, or passed to a mock the test
set) is the test's own object, and one the function changed in place is changed in the
test too."""

from __future__ import annotations

from execution_support import engine_fixture, run_one

# What crosses and how does not depend on the sandbox around the two processes: the
# default (strong) one only. Both levels: tests/adversarial/test_boundary.py, _repos.py.
engine = engine_fixture(("strong",))

SOLUTION = """\
import numpy as np


def pick(y, n=3):
    return np.sort(y)[:n]


def same(y):
    return y


def fill(y):
    y[:] = 1
    return None
"""

TESTS = """\
from unittest import mock

import numpy as np

from solution import fill, pick, same


def test_a_mock_is_called_with_the_tests_own_array():
    y = np.array([5, 3, 9, 1, 7])
    with mock.patch("numpy.sort", wraps=np.sort) as spy:
        assert list(pick(y)) == [1, 3, 5]
    # call(y) == call(y): tuple equality takes the same object as equal, as in-process;
    # a copy would compare element-wise and raise "truth value ... is ambiguous"
    spy.assert_called_with(y)


def test_an_array_returned_unchanged_is_the_tests_own():
    y = np.arange(4.0)
    assert same(y) is y
    assert same([y])[0] is y


def test_an_array_changed_in_place_is_changed_in_the_test():
    y = np.zeros(3)
    fill(y)
    assert (y == 1).all()
    box = [np.zeros(2)]
    inner = box[0]
    fill(inner)
    assert (inner == 1).all()
"""

WRONG = """\
import numpy as np


def pick(y, n=3):
    return np.sort(y.copy())[:n]


def same(y):
    return y.copy()


def fill(y):
    return np.ones_like(y)
"""


def test_arrays_keep_their_identity_and_in_place_changes(engine):
    result = run_one(engine, SOLUTION, TESTS, timeout=60)
    assert result.outcome == "passed", result.reason


def test_copies_and_changes_left_undone_are_not_taken_for_them(engine):
    result = run_one(engine, WRONG, TESTS, timeout=60)
    assert result.outcome == "failed"
    failed = {t["id"].rsplit("::", 1)[1] for t in result.tests if t["outcome"] == "failed"}
    assert failed == {"test_an_array_returned_unchanged_is_the_tests_own",
                      "test_an_array_changed_in_place_is_changed_in_the_test",
                      "test_a_mock_is_called_with_the_tests_own_array"}
