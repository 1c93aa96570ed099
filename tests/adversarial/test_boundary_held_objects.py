"""A message never changes an object the judge held before it, also one that a class it
names hands back when called.

Pickle's state opcode (BUILD) applies to whatever object is on the stack; the decoder lets
it apply only to objects the message made, and took whatever calling a class gave for
one. A class whose own `__new__` hands back an object it keeps is no maker: numpy's
`finfo(np.float64)` is the one cached instance every `np.finfo(np.float64)` of the judge
returns, so a reply carrying `(np.finfo, (np.float64,), {"eps": 1.0})` (and dropped
before its value) set the judge's machine epsilon to 1.0, and a wrong `standardize` (never
divided by the deviation) passed tests whose tolerance is `100 * np.finfo(...).eps`.

Nor one the decoder resolves by name and hands back itself: numpy's ufuncs take any
attribute (they have a `__dict__`), and `np.all`, and so `np.allclose`, calls
`np.logical_and.reduce` found there. A reply that set it to the class `Exception` (a
truthy object made of any arguments) made every `np.allclose` of the judge true, and a
softmax that never normalized passed.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from execution_support import engine_fixture, run_one

from curator.execution import boundary

engine = engine_fixture(("strong",))

TESTS = """\
import numpy as np

from solution import standardize


def test_standardize():
    x = np.array([1.0, 2.0, 3.0, 4.0])
    expected = (x - x.mean()) / x.std()
    assert np.all(np.abs(standardize(x) - expected) <= 100 * np.finfo(np.float64).eps)


def test_standardize_another():
    x = np.array([10.0, 20.0, 40.0])
    expected = (x - x.mean()) / x.std()
    assert np.all(np.abs(standardize(x) - expected) <= 100 * np.finfo(np.float64).eps)
"""
REFERENCE = """\
def standardize(x):
    return (x - x.mean()) / x.std()
"""
CONTROL = """\
import io
import pickle
import sys

import numpy as np


def standardize(x):
    return x - x.mean()   # wrong: never divided by the deviation
"""
ATTACK = CONTROL + """

_b = sys.modules["curator.execution.boundary"]
_honest = _b.SolutionLink.dumps_reply


class _Tolerance:
    def __reduce__(self):
        # the judge's own cached finfo of float64, given an eps of one
        return (np.finfo, (np.float64,), {"eps": 1.0})


def _dumps_reply(self, value):
    honest = _honest(self, value)
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, 2)
    pickler.fast = True   # no memo: the honest reply's own indices stay right
    pickler.dump(_Tolerance())
    # made, set, dropped (POP), then the honest reply
    return honest[:2] + buffer.getvalue()[2:-1] + b"0" + honest[2:]


_b.SolutionLink.dumps_reply = _dumps_reply
"""


def _held_object_attack_is_refused(engine, tests, control, attack, reference, held):
    """The control fails, the attack is tampering naming the held object's type, the
    reference passes."""
    result = run_one(engine, control, tests, timeout=60)
    assert result.outcome == "failed", (result.outcome, result.reason)
    result = run_one(engine, attack, tests, timeout=60)
    assert result.outcome == "tampered", (result.outcome, result.reason)
    assert "changes an object the judge holds (%s)" % held in result.reason
    result = run_one(engine, reference, tests, timeout=60)
    assert result.outcome == "passed", (result.outcome, result.reason)


def test_a_message_never_sets_state_on_what_a_class_hands_back_from_its_cache(engine):
    # before: the attack passed (every tolerance of the test was 100)
    _held_object_attack_is_refused(engine, TESTS, CONTROL, ATTACK, REFERENCE, "finfo")


class _CachedEps:
    def __reduce__(self):
        return (np.finfo, (np.float64,), {"eps": 1.0})


def test_the_decoder_refuses_state_for_a_held_object_and_leaves_it_as_it_was():
    eps = np.finfo(np.float64).eps
    with pytest.raises(boundary.NotData, match="changes an object the judge holds"):
        boundary.judge_loads(pickle.dumps(_CachedEps(), protocol=2))
    assert np.finfo(np.float64).eps == eps


@pytest.mark.parametrize("value", [
    np.ma.masked_array([1.0, 2.0], mask=[False, True]),
    {"m": np.ma.masked_array([[1, 2]], mask=[[True, False]])},
    np.ma.masked_all((2,)),
], ids=["masked", "nested", "all-masked"])
def test_values_of_classes_with_their_own_new_still_decode(value):
    # made by the message (numpy.ma's reconstructor, then its state): fresh objects
    out = boundary.judge_loads(pickle.dumps(value, protocol=5))
    out = out["m"] if isinstance(out, dict) else out
    expected = value["m"] if isinstance(value, dict) else value
    assert type(out) is type(expected)
    assert out.mask.tolist() == expected.mask.tolist()


SOFTMAX_TESTS = """\
import numpy as np

from solution import softmax


def test_rows():
    x = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
    e = np.exp(x - x.max(axis=1, keepdims=True))
    assert np.allclose(softmax(x), e / e.sum(axis=1, keepdims=True))


def test_large_values():
    x = np.array([[1000.0, 1001.0]])
    assert np.allclose(softmax(x), [[0.26894142, 0.73105858]])
"""
SOFTMAX_REFERENCE = """\
import numpy as np


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)
"""
SOFTMAX_CONTROL = """\
import sys

import numpy as np


def softmax(x):
    return np.exp(x)   # wrong: never normalized
"""
# numpy's own logical_and given an attribute `reduce` that is the class Exception, then
# dropped (POP) before the honest reply
REDUCE_STATE = (b"cnumpy\nlogical_and\n" + b"}" + b"X\x06\x00\x00\x00reduce" +
                b"cbuiltins\nException\n" + b"s" + b"b" + b"0")
SOFTMAX_ATTACK = SOFTMAX_CONTROL + """

_b = sys.modules["curator.execution.boundary"]
_honest = _b.SolutionLink.dumps_reply


def _dumps_reply(self, value):
    honest = _honest(self, value)
    if not (isinstance(value, tuple) and isinstance(value[0], np.ndarray)):
        return honest   # the module's attributes: a reply naming a handle
    return honest[:2] + %r + honest[2:]


_b.SolutionLink.dumps_reply = _dumps_reply
""" % (REDUCE_STATE,)


def test_a_message_never_sets_an_attribute_of_a_ufunc_the_judge_holds(engine):
    # before: the attack passed (np.allclose was true of anything)
    _held_object_attack_is_refused(engine, SOFTMAX_TESTS, SOFTMAX_CONTROL, SOFTMAX_ATTACK,
                                   SOFTMAX_REFERENCE, "ufunc")


def test_the_decoder_leaves_a_ufunc_as_it_was_and_still_decodes_one():
    message = b"\x80\x02" + REDUCE_STATE[:-1] + b"."   # the state applied, kept as value
    with pytest.raises(boundary.NotData, match="changes an object the judge holds"):
        boundary.judge_loads(message)
    assert "reduce" not in vars(np.logical_and)
    assert not np.allclose([1.0], [2.0])
    assert boundary.judge_loads(pickle.dumps([np.sqrt, 2.0], protocol=5)) == [np.sqrt, 2.0]
