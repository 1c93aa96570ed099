"""A tensor the function returns that is a view of an argument is that view of the test's
own tensor, as in-process.

A returned tensor crossed as its values: the judge made a new tensor, which held no memory
of the argument. A wrong `flat_copy` returning `x.view(-1)` passed a test that writes
into the result and checks that `x` stayed as it was (in-process the write reaches `x`),
and a right `flat_view` failed a test that checks the write does reach it. The solution
process now sends a view of a copy of a judge's tensor as that view (`_tv`: the index of
the tensor in the call's request, shape, stride, offset), and the judge makes it of its
own tensor (`SolutionLink.request_view`; a contiguous tensor that needs no grad).
"""

from __future__ import annotations

from execution_support import engine_fixture, job

engine = engine_fixture()

TESTS = """\
import torch

from solution import flat, flat_copy, flat_view, rows_from


def test_values():
    x = torch.arange(6.0).reshape(2, 3)
    assert torch.equal(flat_copy(x), torch.arange(6.0))
    assert torch.equal(flat_view(x), torch.arange(6.0))
    assert torch.equal(rows_from(x, 1), x[1:])


def test_a_view_of_a_transposed_argument():
    # in-process a copy (`reshape` of a non-contiguous tensor); the solution's copy of
    # `x.t()` is contiguous, its reshape a view: the judge has no such view of its own
    x = torch.arange(6.0).reshape(2, 3)
    y = flat(x.t())
    assert torch.equal(y, torch.tensor([0.0, 3.0, 1.0, 4.0, 2.0, 5.0]))
    y[0] = 100.0
    assert x[0, 0] == 0.0


def test_a_copy_is_its_own():
    x = torch.arange(6.0).reshape(2, 3)
    y = flat_copy(x)
    y[0] = 100.0
    assert x[0, 0] == 0.0


def test_a_view_writes_through():
    x = torch.arange(6.0).reshape(2, 3)
    y = flat_view(x)
    y[1] = 100.0
    assert x[0, 1] == 100.0
    rows = rows_from(x, 1)
    rows.t()[2, 0] = -1.0
    assert x[1, 2] == -1.0
    x[1, 0] = 7.0
    assert rows[0, 0] == 7.0
"""
REFERENCE = """\
def flat(x):
    return x.reshape(-1)


def flat_copy(x):
    return x.reshape(-1).clone()


def flat_view(x):
    return x.view(-1)


def rows_from(x, start):
    return x[start:]
"""
# returns the argument's memory where the tests want a copy
WRONG = REFERENCE.replace("return x.reshape(-1).clone()", "return x.view(-1)")


def test_a_view_of_an_argument_is_that_view_of_the_tests_tensor(engine):
    jobs = [job(REFERENCE, TESTS, 60), job(WRONG, TESTS, 60)]
    results = {r.job_id: r for r in engine.run(jobs)}
    reference, wrong = (results[j.job_id] for j in jobs)
    # before: the reference failed test_a_view_writes_through, the wrong one passed
    assert reference.outcome == "passed", (reference.outcome, reference.reason)
    assert wrong.outcome == "failed", (wrong.outcome, wrong.reason)
    failing = {t["id"].split("::")[-1] for t in wrong.tests if t["outcome"] != "passed"}
    assert failing == {"test_a_copy_is_its_own"}, wrong.tests
