"""Library functions that pickle as their module's name for them cross as functions.

numpy's array functions (`np.mean`, `np.linalg.norm`, `np.median`) are instances of
`numpy._ArrayFunctionDispatcher`, a class of an allowed library whose pickle is the
function's name. The solution process sent them by that name, which the judge resolves
only for classes, dtypes and ufuncs: a correct function returning `np.mean` (or a
configuration holding `np.median`) was `tampered`, "the solution process sent numpy.mean",
and every later call of the run failed with it.
"""

from __future__ import annotations

from execution_support import engine_fixture, run_one

engine = engine_fixture(("strong",))

TESTS = """\
import numpy as np

from solution import config, pick, summarize


def test_returned():
    assert pick("mean")(np.array([1.0, 3.0])) == 2.0
    assert pick("norm")(np.array([3.0, 4.0])) == 5.0


def test_given():
    assert summarize([1.0, 2.0, 6.0], reduce=np.median) == 2.0
    assert summarize([1.0, 2.0, 6.0]) == 3.0


def test_held_by_a_returned_value():
    found = config()
    assert found["scale"] == 2.0
    assert found["aggregate"]([1.0, 5.0, 2.0]) == 2.0
"""
CORRECT = """\
import numpy as np


def pick(name):
    return {"mean": np.mean, "norm": np.linalg.norm}[name]


def summarize(values, reduce=np.mean):
    return float(reduce(np.asarray(values)))


def config():
    return {"aggregate": np.median, "scale": 2.0}
"""
WRONG = CORRECT.replace("return float(reduce(np.asarray(values)))",
                        "return float(np.mean(np.asarray(values)))")


def test_numpys_array_functions_cross_as_functions(engine):
    result = run_one(engine, CORRECT, TESTS, timeout=60)
    # before: tampered ("the solution process sent numpy.mean"), every test failed
    assert result.outcome == "passed", (result.outcome, result.reason)
    wrong = run_one(engine, WRONG, TESTS, timeout=60)   # the reduce it is given ignored
    assert wrong.outcome == "failed", (wrong.outcome, wrong.reason)
    failing = {t["id"].split("::")[-1] for t in wrong.tests if t["outcome"] != "passed"}
    assert failing == {"test_given"}
