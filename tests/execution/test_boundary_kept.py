"""A large tensor of the test's that does not require grad (a memory bank, a data set)
crosses to the solution process once while it stays as it was, not on every call: the
solution process keeps its copy from one top-level call to the next. What the test or
the function changes in it, by any route, is what the next call sees."""

from __future__ import annotations

from execution_support import engine_fixture, run_one

engine = engine_fixture(("strong",))

SOLUTION = """\
import torch


def score(bank, x):
    return float((bank @ x).sum())


def push(bank, column, values):
    bank[:, column] = values
    return float(bank.sum())


def push_quietly(bank, column, values):
    bank.data[:, column] = values     # torch does not count this write
    return None


def total(bank):
    return float(bank.sum())
"""

TESTS = """\
import torch

from solution import push, push_quietly, score, total

ROWS, COLS = 64, 512   # 128 KB of float32


def test_the_tests_changes_between_calls_are_seen():
    bank, x = torch.ones(ROWS, COLS), torch.ones(COLS)
    assert score(bank, x) == ROWS * COLS
    assert score(bank, x) == ROWS * COLS
    bank.mul_(2)                        # in place: the version counts it
    assert score(bank, x) == 2 * ROWS * COLS
    bank.data[0].fill_(0)               # through .data: the version does not
    assert score(bank, x) == 2 * (ROWS - 1) * COLS
    bank.numpy()[1] = 0                 # through numpy: nor here
    assert score(bank, x) == 2 * (ROWS - 2) * COLS
    other = torch.ones(ROWS, COLS)      # another tensor of the same values
    assert score(other, x) == ROWS * COLS
    assert score(bank, x) == 2 * (ROWS - 2) * COLS


def test_the_functions_writes_come_back_and_stay():
    bank = torch.zeros(ROWS, COLS)
    for step in range(1, 4):
        assert push(bank, step, torch.full((ROWS,), float(step))) == \\
            ROWS * sum(range(1, step + 1))
        assert bank[:, step].eq(step).all()
        assert total(bank) == ROWS * sum(range(1, step + 1))
    push_quietly(bank, 0, torch.full((ROWS,), 10.0))
    assert bank[:, 0].eq(10).all()
    assert total(bank) == ROWS * (10 + 6)


def test_an_inference_tensor():   # it has no version counter: sent as it always was
    with torch.inference_mode():
        bank = torch.ones(ROWS, COLS)
    assert total(bank) == ROWS * COLS
    assert total(bank) == ROWS * COLS


def test_a_view_and_its_base():
    base = torch.zeros(2 * ROWS, COLS)
    view = base[:ROWS]
    assert total(view) == 0
    base[0, 0] = 5                      # through the base: the view's values change
    assert total(view) == 5
    assert total(base) == 5
"""

WRONG = SOLUTION.replace("bank[:, column] = values", "bank = bank.clone()")


def test_large_tensors_are_kept_and_every_change_is_seen(engine):
    result = run_one(engine, SOLUTION, TESTS)
    assert result.outcome == "passed", [(t["id"], t.get("message", "")[:300])
                                        for t in result.tests]
    # the same bank sent again unchanged is not sent again
    assert result.env["timing"]["boundary_kept"] >= 3, result.env["timing"]


def test_a_function_that_does_not_write_fails_as_before(engine):
    result = run_one(engine, WRONG, TESTS)
    assert result.outcome == "failed"
    outcomes = {t["id"].rpartition("::")[2]: t["outcome"] for t in result.tests}
    assert outcomes == {"test_the_tests_changes_between_calls_are_seen": "passed",
                        "test_the_functions_writes_come_back_and_stay": "failed",
                        "test_an_inference_tensor": "passed",
                        "test_a_view_and_its_base": "passed"}
