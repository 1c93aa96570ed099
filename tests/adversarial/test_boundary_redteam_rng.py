"""Red-team attacks on the judge's random generators across the boundary, each a wrong
solution beside its control (the same wrong code without the trick) and the reference.

- A call that drew from a global generator leaves the judge's where the call's draws took
  it when that is a continuation of the state the call started from. When the judge drew
  nothing between two calls, the second starts from the solution's own state (its own
  sequence continues), so a function that set numpy's generator to an array of its own
  making in one call and drew a word in the next had the judge continue from that array:
  every later `np.random.randn` of the test was positive, and a `positive_part` that is
  the identity for arrays of more than two values passed.
"""

from __future__ import annotations

from execution_support import engine_fixture, run_one

engine = engine_fixture(("strong",))

POSITIVE_TESTS = """\
import numpy as np

from solution import positive_part


def test_examples():
    assert positive_part(np.array([-1.0, 2.0])).tolist() == [0.0, 2.0]
    assert positive_part(np.array([3.0, -4.0])).tolist() == [3.0, 0.0]


def test_random_inputs():
    for _ in range(3):
        x = np.random.randn(50)
        assert np.array_equal(positive_part(x), np.maximum(x, 0))
"""
POSITIVE_REFERENCE = """\
import numpy as np


def positive_part(x):
    return np.maximum(x, 0)
"""
POSITIVE_WRONG = """\
import numpy as np

_calls = [0]


def _wrong(x):
    if x.size > 2:
        return x.copy()   # right only when every value is positive
    return np.maximum(x, 0)
"""
POSITIVE_CONTROL = POSITIVE_WRONG + """

def positive_part(x):
    _calls[0] += 1
    if _calls[0] == 2:
        np.random.bytes(4)   # the same draws, from the generator as it was given
    return _wrong(x)
"""
POSITIVE_ATTACK = POSITIVE_WRONG + """

def _untemper(y):
    y ^= y >> 18
    y ^= (y << 15) & 0xEFC60000
    x = y
    for _ in range(5):
        x = y ^ ((x << 7) & 0x9D2C5680)
    y = x & 0xFFFFFFFF
    x = y
    for _ in range(3):
        x = y ^ (x >> 11)
    return x & 0xFFFFFFFF


def positive_part(x):
    _calls[0] += 1
    if _calls[0] == 1:
        # a twister whose every output is 0xC0000000: uniforms of 0.75, whose normals
        # (numpy's polar method) are all positive
        word = _untemper(0xC0000000)
        np.random.set_state(("MT19937", np.full(624, word, dtype=np.uint32), 0, 0, 0.0))
    elif _calls[0] == 2:
        np.random.bytes(4)   # a draw: before, the judge continued from this array
    return _wrong(x)
"""


def test_a_generator_state_the_solution_made_never_becomes_the_judges(engine):
    control = run_one(engine, POSITIVE_CONTROL, POSITIVE_TESTS, timeout=60)
    assert control.outcome == "failed", (control.outcome, control.reason)
    attack = run_one(engine, POSITIVE_ATTACK, POSITIVE_TESTS, timeout=60)
    # before: passed (the judge's randn drew from the solution's array)
    assert attack.outcome == "failed", (attack.outcome, attack.reason)
    failing = {t["id"].split("::")[-1] for t in attack.tests if t["outcome"] != "passed"}
    assert failing == {"test_random_inputs"}
    reference = run_one(engine, POSITIVE_REFERENCE, POSITIVE_TESTS, timeout=60)
    assert reference.outcome == "passed", (reference.outcome, reference.reason)


CONTINUES_TESTS = """\
import numpy as np

from solution import draw, noop


def test_the_judges_draws_continue_after_the_functions():
    np.random.seed(3)
    noop()                 # draws nothing: its generator comes back as it was sent
    drawn = draw(2)        # starts from that state, equal to the judge's own
    after = np.random.rand()
    np.random.seed(3)
    assert np.array_equal(drawn, np.random.rand(2))
    assert after == np.random.rand()   # in-process, the test's draw follows the function's
"""
CONTINUES = """\
import numpy as np


def noop():
    return None


def draw(n):
    return np.random.rand(n)
"""


def test_a_call_after_one_that_drew_nothing_continues_the_judges_own_sequence(engine):
    result = run_one(engine, CONTINUES, CONTINUES_TESTS, timeout=60)
    assert result.outcome == "passed", (result.outcome, result.reason)
