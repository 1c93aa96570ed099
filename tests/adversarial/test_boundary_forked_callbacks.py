"""Processes forked by the solution share its one socket to the judge, and each gets the
answer to its own request.

A DataLoader's workers (forked) calling the test's own transform each ask the judge over
the socket they inherited. The solution process held one request at a time with a lock of
its threads only, so two workers' requests interleaved and each read the other's answer:
a correct `batch_sums` got `[2.0, 16.0, 12.0, 26.0]` for `[2.0, 10.0, 18.0, 26.0]`, or hung
until the run timed out. `SolutionLink._asking` holds the channel per process too, and
lets it go while the process serves a call the judge makes before answering (the judge
then waits for it, and the workers that call forks may ask the judge).
"""

from __future__ import annotations

from execution_support import engine_fixture, run_one

engine = engine_fixture(("strong",))

TESTS = """\
import torch

from solution import batch_sums, through


def test_in_workers():
    data = torch.arange(48.0)
    expected = [float(data[i:i + 2].sum() * 2) for i in range(0, 48, 2)]
    assert batch_sums(data, lambda x: x * 2) == expected


def test_in_workers_again():
    data = torch.arange(48.0)
    expected = [float(data[i:i + 2].sum() + 2) for i in range(0, 48, 2)]
    assert batch_sums(data, lambda x: x + 1) == expected


def test_without_workers():
    data = torch.arange(8.0)
    assert batch_sums(data, lambda x: x * 2, workers=0) == [2.0, 10.0, 18.0, 26.0]


def test_workers_of_a_call_the_judge_makes_while_the_solution_asks_it():
    # the solution calls the test's function, which calls the solution again, whose
    # workers call the test's lambda: the outer request is still open meanwhile
    data = torch.arange(8.0)
    assert through(lambda d: batch_sums(d, lambda x: x * 2), data) == [2.0, 10.0, 18.0, 26.0]
"""
CORRECT = """\
from torch.utils.data import DataLoader, Dataset


class _Mapped(Dataset):
    def __init__(self, data, transform):
        self.data, self.transform = data, transform

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        return self.transform(self.data[i])   # the test's function, in a worker


def batch_sums(data, transform, workers=3):
    loader = DataLoader(_Mapped(data, transform), batch_size=2, num_workers=workers)
    return [float(b.sum()) for b in loader]


def through(function, data):
    return function(data)
"""


def test_forked_workers_calling_the_tests_function_each_get_their_own_answer(engine):
    result = run_one(engine, CORRECT, TESTS, timeout=120)
    # before: failed (crossed answers) or timed out
    assert result.outcome == "passed", (result.outcome, result.reason)
