"""A library module a message makes the judge import leaves the judge's process as it was.

Decoding imports a library module the judge has not imported yet (a value's class may live
there), and whatever that module does at import ran in the judge on the solution's demand:
a reply naming a class of `numpy.linalg.tests.test_linalg` reseeded the judge's numpy
generator (`np.random.seed(1234)` and draws at its module level), so the test's next
`np.random.rand()` was what that import chose, not what its own seed gave.
"""

from __future__ import annotations

import sys
import warnings

import numpy as np
from execution_support import engine_fixture, run_one

from curator.execution import boundary

engine = engine_fixture(("strong",))

TESTS = """\
import numpy as np

from solution import f


def test_the_tests_draws_are_its_own():
    np.random.seed(7)
    f()
    drawn = np.random.rand()
    np.random.seed(7)
    assert drawn == np.random.rand()
"""
PLAIN = """\
def f():
    return None
"""
IMPORTING = """\
import sys

_b = sys.modules["curator.execution.boundary"]
_honest = _b.SolutionLink.dumps_reply
# a class of numpy's linalg tests, named and dropped before the honest reply
_NAME = b"cnumpy.linalg.tests.test_linalg\\nLinalgCase\\n0"


def _dumps_reply(self, value):
    honest = _honest(self, value)
    if isinstance(value, tuple) and value[0] is None:
        return honest[:2] + _NAME + honest[2:]
    return honest


_b.SolutionLink.dumps_reply = _dumps_reply
""" + PLAIN


def test_an_import_a_message_causes_never_reseeds_the_judge(engine):
    plain = run_one(engine, PLAIN, TESTS, timeout=60)
    assert plain.outcome == "passed", (plain.outcome, plain.reason)
    importing = run_one(engine, IMPORTING, TESTS, timeout=60)
    # before: failed (the judge drew from numpy's test module's seed)
    assert importing.outcome == "passed", (importing.outcome, importing.reason)


def test_the_judges_state_is_kept_across_an_import_for_a_message():
    sys.modules.pop("numpy.linalg.tests.test_linalg", None)
    np.random.seed(7)
    filters = list(warnings.filters)
    found = boundary._resolve("numpy.linalg.tests.test_linalg", "LinalgCase")
    assert found.__name__ == "LinalgCase"
    assert warnings.filters == filters
    drawn = np.random.rand()
    np.random.seed(7)
    assert drawn == np.random.rand()
