"""The judge and the judged are separate processes: attacks on the verdict from inside the
solution's process change nothing, and correct solutions that use threads, compilers,
subclasses and worker processes pass.

Each attack is a wrong solution with a trick; beside it runs its control, the same wrong
code without the trick. Neither may pass; the reference of the same tests passes.
"""

from __future__ import annotations

import json
import os
import textwrap

import pytest
from execution_support import engine_fixture, run_one

engine = engine_fixture()

TESTS = """\
import math

import pytest
import torch
import torch.nn.functional as F

from solution import scale


def test_equal():
    assert torch.equal(scale(torch.ones(3)), torch.full((3,), 2.0))


def test_allclose():
    assert torch.allclose(scale(torch.arange(3.0)), torch.arange(3.0) * 2)


def test_item():
    assert scale(torch.tensor(1.5)).item() == 3.0


def test_expected_from_library():
    x = torch.linspace(-1, 1, 5)
    assert torch.allclose(F.relu(scale(x)), F.relu(x * 2))


def test_float():
    assert scale(2.0) == 4.0


def test_list():
    assert scale([1, 2]) == [2, 4]
"""
REFERENCE = """\
import torch


def scale(x):
    if isinstance(x, list):
        return [v * 2 for v in x]
    return x * 2
"""
WRONG = """\
import torch


def _wrong(x):
    if isinstance(x, list):
        return [v * 3 for v in x]
    return x * 3
"""

# Each trick is added to the WRONG solution; `scale` is the entry point the tests call.
ATTACKS = {
    "tensor subclass answering torch.equal/allclose": """
class Liar(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func in (torch.equal, torch.allclose, torch.Tensor.__eq__):
            return True
        return super().__torch_function__(func, types, args, kwargs or {})

class Yes(float):
    def __eq__(self, other):
        return True
    __hash__ = float.__hash__

class Always(list):
    def __eq__(self, other):
        return True

def scale(x):
    value = _wrong(x)
    if isinstance(value, torch.Tensor):
        return value.as_subclass(Liar)
    if isinstance(value, list):
        return Always(value)
    return Yes(value)
""",
    "a value object whose comparisons and arithmetic always agree": """
class Anything:
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __sub__(self, other): return 0.0
    __rsub__ = __sub__
    def __abs__(self): return 0.0
    def __bool__(self): return True
    def item(self): return self
    def __float__(self): return 3.0

def scale(x):
    return Anything()
""",
    "a torch function mode left entered": """
from torch.overrides import TorchFunctionMode

class Agree(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func in (torch.equal, torch.allclose):
            return True
        return func(*args, **(kwargs or {}))

Agree().__enter__()

def scale(x):
    return _wrong(x)
""",
    "the library the expected side uses poisoned": """
import torch.nn.functional as F
F.relu = lambda t, *a, **k: t * 0
torch.equal = lambda a, b: True
torch.allclose = lambda *a, **k: True
import builtins
builtins.isinstance = lambda obj, cls: True

def scale(x):
    return _wrong(x)
""",
    "the torch and pytest module objects swapped for lying subclasses": """
import types, pytest

class Module(types.ModuleType):
    def __getattribute__(self, name):
        if name in ("equal", "allclose", "approx"):
            return lambda *a, **k: True
        return types.ModuleType.__getattribute__(self, name)

torch.__class__ = Module
pytest.__class__ = Module

def scale(x):
    return _wrong(x)
""",
    "a patch undone by a finalizer before any check": """
import weakref

class Token:
    pass

def scale(x):
    saved = torch.equal
    torch.equal = lambda a, b: True
    token = Token()
    weakref.finalize(token, lambda: setattr(torch, "equal", saved))
    return _wrong(x)
""",
    "frames reached through a signal handler and logging.currentframe": """
import logging, signal, sys

def _forge(frame):
    seen = 0
    while frame is not None and seen < 100:
        namespace = frame.f_globals
        for key in list(namespace):
            if key.startswith("test_"):
                namespace[key].__code__ = (lambda: None).__code__
        for name in ("torch", "pytest"):
            if name in namespace:
                namespace["isinstance"] = lambda *a: True
        frame = frame.f_back
        seen += 1

signal.signal(signal.SIGUSR1, lambda number, frame: _forge(frame))

def scale(x):
    import os
    os.kill(os.getpid(), signal.SIGUSR1)
    _forge(logging.currentframe())
    _forge(sys._getframe())
    return _wrong(x)
""",
    "the result channel written and os.write/os._exit rebound": """
import json, os

def _lines():
    ids = ["test_equal", "test_allclose", "test_item", "test_expected_from_library",
           "test_float", "test_list"]
    out = []
    for fd in range(3, 12):
        for name in ids:
            out.append((fd, ('{"event": "test", "id": "test_solution.py::%s", '
                             '"outcome": "passed"}\\n' % name).encode()))
    return out

for fd, line in _lines():
    try:
        os.write(fd, b"partial line without newline ")
        os.write(fd, line)
    except OSError:
        pass
_real_write = os.write
os.write = lambda fd, data: _real_write(fd, data.replace(b"failed", b"passed"))

def scale(x):
    for fd, line in _lines():
        try:
            _real_write(fd, line)
        except OSError:
            pass
    return _wrong(x)
""",
    "the judge process signalled, traced or read through /proc": """
import os, signal

def _judges():
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            found.append(int(entry))
    return found

def scale(x):
    for pid in _judges():
        for path in ("/proc/%d/mem" % pid, "/proc/%d/fd/3" % pid, "/proc/%d/environ" % pid):
            try:
                with open(path, "rb") as fh:
                    fh.read(16)
            except OSError:
                pass
        try:
            os.kill(pid, signal.SIGSTOP)
            os.kill(pid, signal.SIGCONT)
        except OSError:
            pass
    return _wrong(x)
""",
    "the hidden tests looked for in the solution's own memory": """
import gc, sys

def _expected():
    for obj in gc.get_objects():
        if isinstance(obj, str) and "def test_" in obj:
            return obj
    for module in list(sys.modules.values()):
        if "test_solution" in getattr(module, "__name__", ""):
            return module
    return None

_FOUND = _expected()

def scale(x):
    if _FOUND is not None:
        print("FOUND THE TESTS")
    return _wrong(x)
""",
    "an exception the tests expect raised by exiting instead": """
import os

def scale(x):
    os._exit(0)
""",
    "pytest's own outcomes raised from the solution": """
import pytest

def scale(x):
    pytest.skip("nothing to see")
""",
    "a class whose __torch_function__ and __eq__ answer for it": """
class Answer:
    def __init__(self, value):
        self.value = value

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return True

    @property
    def __eq__(self):
        return lambda other: True

    __hash__ = None

def scale(x):
    return Answer(_wrong(x))
""",
    "a class description forged to forward comparisons": """
import sys

_boundary = sys.modules.get("curator.execution.boundary")
_honest = _boundary.class_info

def _forged(cls, handle, link):
    info = _honest(cls, handle, link)
    info["methods"] = list(info["methods"]) + ["__eq__", "__float__", "__array__"]
    info["classfuncs"] = list(info["classfuncs"]) + ["__torch_function__"]
    info["data"] = dict(info["data"], __hash__=None)
    return info

_boundary.class_info = _forged

class Answer:
    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        return True

    def __float__(self):
        return 3.0

    def __array__(self, *args, **kwargs):
        import numpy
        return numpy.zeros(3)

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return True

def scale(x):
    return Answer(_wrong(x))
""",
    "a judge module rebound by the decoding of the reply": """
import functools, sys

_boundary = sys.modules["curator.execution.boundary"]
_honest = _boundary.SolutionPickler.reducer_override


class Rebind:   # pickled as the judge's own torch module, then BUILD with new attributes
    pass


def _reducer(self, obj):
    if isinstance(obj, Rebind):
        yes = functools.partial(functools.partial, slice)
        return _boundary._mod, ("torch",), {"equal": yes, "allclose": yes}
    if type(obj) is functools.partial and obj.args == (slice,):
        return functools.partial, (functools.partial, slice)
    if isinstance(obj, torch.Tensor) and self.link.unchanged_request_tensor(obj) is None:
        record = _boundary._tensor_record(obj)   # the wrong tensor, noted by a Rebind
        return _boundary._t, (*record[:6], Rebind(), self.link.request_index(obj), None)
    return _honest(self, obj)


_boundary.SolutionPickler.reducer_override = _reducer

def scale(x):
    return _wrong(x)
""",
}


HOST_REACHING = {"the judge process signalled, traced or read through /proc"}


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_attack_and_its_control_do_not_pass(engine, name):
    if name in HOST_REACHING and engine.isolation == "weak" and os.geteuid() != 0:
        # Weak isolation started by an ordinary user runs the solution as that user: it
        # can then stop and read the user's processes, this test run's own workers
        # included. Started by root, runs are nobody (the solution a uid of its own).
        pytest.skip("reaches the user's other processes: the strong sandbox's promise")
    attack = run_one(engine, WRONG + ATTACKS[name], TESTS, timeout=60)
    control = run_one(engine, WRONG + "\n\ndef scale(x):\n    return _wrong(x)\n", TESTS)
    assert control.outcome == "failed", (control.outcome, control.reason)
    assert attack.outcome != "passed", (name, attack.reason, attack.stdout[-2000:])
    assert "FOUND THE TESTS" not in attack.stdout
    # every test of the attack that the wrong answer fails is reported failing, not passed
    # the control fails every test: no test of the attack passes
    assert not [t["id"] for t in attack.tests if t["outcome"] == "passed"], attack.tests


def test_the_reference_of_the_attack_tests_passes(engine):
    result = run_one(engine, REFERENCE, TESTS)
    assert result.outcome == "passed", (result.reason, result.stdout[-2000:])
    assert result.env.get("boundary")


def test_subclass_values_are_rebuilt_as_their_base_and_recorded(engine):
    result = run_one(engine, WRONG + ATTACKS["tensor subclass answering torch.equal/allclose"],
                     TESTS)
    assert result.outcome == "failed"
    rebuilt = " ".join(result.env.get("rebuilt") or [])
    assert "solution.Liar rebuilt as Tensor" in rebuilt, result.env
    assert "solution.Yes rebuilt as float" in rebuilt


# -- what the solution may ask of the judge's objects it holds ------------------------------
# A test hands the target its own function and a generator of its own. The solution holds
# handles to them: it may call them, read their plain attributes and iterate. It may not
# read the test module through them (`__globals__`, a suspended generator's frame), nor
# send the judge a request its handles never make (a patch, a setattr).

HANDLE_TESTS = """\
import torch

from solution import twice

EXPECTED = torch.full((3,), 4.0)


def double(t):
    return t * 2


def ones():
    yield torch.ones(3)


def test_function():
    assert torch.equal(twice(double, torch.ones(3)), EXPECTED)


def test_generator():
    assert torch.equal(twice(double, ones()), EXPECTED)


def test_again():
    assert torch.equal(twice(double, torch.ones(3)), EXPECTED)
"""
HANDLE_REFERENCE = """\
def twice(f, x):
    if not hasattr(x, "shape"):
        x = next(iter(x))
    return f(f(x))
"""
HANDLE_CONTROL = HANDLE_REFERENCE.replace("f(f(x))", "f(x)")
_CHANNEL = """\
import sys

_link = sys.modules["curator.execution.boundary"]._LINK[0]


def _yes(a, b):
    return True


def _ask(handle_of, op, name, args):
    try:
        _link.callback(object.__getattribute__(handle_of, "_handle"), op, name, args, {})
    except Exception:
        pass
"""
HANDLE_ATTACKS = {
    "the expected value read from the test's globals": """
def twice(f, x):
    return f.__globals__["EXPECTED"]
""",
    "the expected value read from a generator's frame": """
def twice(f, x):
    if hasattr(x, "shape"):
        return f(x)
    return x.gi_frame.f_globals["EXPECTED"]
""",
    "a patch of the judge's torch.equal asked through the channel": _CHANNEL + """
def twice(f, x):
    _ask(f, "patch", None, ("torch", "", "equal", _yes))
    if not hasattr(x, "shape"):
        x = next(iter(x))
    return f(x)
""",
    "a setattr of the judge's torch.equal asked through the channel": _CHANNEL + """
def twice(f, x):
    _ask(f, "setattr", "__code__", (None,))
    _ask(f, "modattr", "torch.equal", ())
    if not hasattr(x, "shape"):
        x = next(iter(x))
    return f(x)
""",
}


# A function that sets an attribute of an object the test gave it (pfrl's train_agent
# counts steps on the test's agent): the judge's object changes, as in-process. What it
# may not set: a method the test calls (`check`), a dunder, or anything of a function.
SETATTR_TESTS = """\
from solution import train


class Agent:
    steps_default = 0

    def __init__(self):
        self.t = 0
        self.verify = lambda value: value == self.t

    def check(self, value):
        return value == self.t


def test_counts_steps():
    agent = Agent()
    train(agent, 3)
    assert agent.t == 3 and agent.steps_default == 3


def test_checked_by_the_agent():
    agent = Agent()
    assert agent.check(train(agent, 2))
    assert agent.verify(agent.t)
"""
SETATTR_REFERENCE = """\
def train(agent, steps):
    for _ in range(steps):
        agent.t = agent.t + 1
    agent.steps_default = steps
    return agent.t
"""
SETATTR_CONTROL = SETATTR_REFERENCE.replace("agent.t + 1", "agent.t + 2")
SETATTR_ATTACKS = {
    "the test's check replaced by a solution function": """
def _yes(value):
    return True


def train(agent, steps):
    agent.check = _yes
    agent.t = steps + 1
    agent.steps_default = steps
    return agent.t
""",
    "the agent's class swapped": """
class Always:
    t = 3
    steps_default = 3

    def check(self, value):
        return True


def train(agent, steps):
    agent.__class__ = Always
    return 0
""",
    "the test's own function attribute replaced by one the judge rebuilds": """
import functools


def train(agent, steps):
    agent.verify = functools.partial(int, "1")   # int("1", t): 1, for any t in 2..36
    agent.t = steps + 1
    agent.steps_default = steps
    return agent.t
""",
    "an attribute of the test's method set": """
def train(agent, steps):
    agent.check.__func__.__code__ = (lambda self, value: True).__code__
    agent.t = steps + 1
    return 0
""",
}


def test_a_solution_sets_plain_attributes_of_the_tests_objects(engine):
    result = run_one(engine, SETATTR_REFERENCE, SETATTR_TESTS, timeout=60)
    assert result.outcome == "passed", (result.reason, result.stdout[-2000:])
    control = run_one(engine, SETATTR_CONTROL, SETATTR_TESTS, timeout=60)
    assert control.outcome == "failed", (control.outcome, control.reason)
    for name, attack in SETATTR_ATTACKS.items():
        run = run_one(engine, attack, SETATTR_TESTS, timeout=60)
        passed = [t["id"] for t in run.tests if t["outcome"] == "passed"]
        assert not passed and run.outcome in ("failed", "tampered"), (
            name, run.outcome, run.reason, run.stdout[-2000:])


# What `_check_writable` refuses a setattr, a reply's decoding may not do either: the
# judge's object sent back with pickle state (BUILD) set the checker's method in place.
CHECKER_TESTS = """\
from solution import solve


class Checker:
    def __init__(self):
        self.calls = 0

    def check(self, value):
        return value == 3


def test_checked_after_the_call():
    checker = Checker()
    result = solve(checker)
    assert checker.calls == 1 and checker.check(result)
"""
CHECKER_REFERENCE = "def solve(checker):\n    checker.calls = checker.calls + 1\n    return 3\n"
CHECKER_CONTROL = CHECKER_REFERENCE.replace("return 3", "return 0")
CHECKER_ATTACK = """
import functools, sys

_boundary = sys.modules["curator.execution.boundary"]
_honest = _boundary.SolutionPickler.reducer_override


def _reducer(self, obj):
    # the test's checker, sent back as the judge's own object with BUILD state that sets
    # its methods past _check_writable
    if isinstance(obj, _boundary.JudgeObject):
        yes = functools.partial(functools.partial, slice)
        return _boundary._ji, (object.__getattribute__(obj, "_handle"),), {"check": yes}
    if type(obj) is functools.partial and obj.args == (slice,):
        return functools.partial, (functools.partial, slice)
    return _honest(self, obj)


_boundary.SolutionPickler.reducer_override = _reducer


def solve(checker):
    checker.calls = checker.calls + 1
    return 0
"""


def test_a_reply_never_sets_what_a_setattr_may_not(engine):
    assert run_one(engine, CHECKER_REFERENCE, CHECKER_TESTS).outcome == "passed"
    control = run_one(engine, CHECKER_CONTROL, CHECKER_TESTS)
    assert control.outcome == "failed", (control.outcome, control.reason)
    attack = run_one(engine, CHECKER_ATTACK, CHECKER_TESTS, timeout=60)
    assert attack.outcome == "tampered", (attack.outcome, attack.reason, attack.stdout[-2000:])
    assert "changes an object the judge holds" in attack.reason


# `in` on a solution's object: the judge iterates it and compares what comes back; the
# object's own __contains__ (handed the test's value) never answers for it.
MEMBERSHIP_TESTS = """\
from solution import top_labels


def test_the_largest_are_in():
    labels = top_labels([3, 1, 2, 5], 2)
    assert 5 in labels and 3 in labels
"""
MEMBERSHIP = {
    "reference": "def top_labels(values, k):\n    return sorted(values)[-k:]\n",
    "a class of its own": """
class Labels:
    def __init__(self, items):
        self.items = list(items)

    def __iter__(self):
        return iter(self.items)

    def __contains__(self, value):
        return value in self.items


def top_labels(values, k):
    return Labels(sorted(values)[-k:])
""",
}
MEMBERSHIP_CONTROL = "def top_labels(values, k):\n    return sorted(values)[:k]\n"
MEMBERSHIP_ATTACK = """
class Labels:
    def __init__(self, items):
        self.items = list(items)

    def __iter__(self):
        return iter(self.items)

    def __contains__(self, value):
        return True


def top_labels(values, k):
    return Labels(sorted(values)[:k])
"""


def test_membership_in_a_solutions_object_is_decided_by_the_judge(engine):
    for name, source in MEMBERSHIP.items():
        result = run_one(engine, source, MEMBERSHIP_TESTS)
        assert result.outcome == "passed", (name, result.reason, result.stdout[-2000:])
    for source in (MEMBERSHIP_CONTROL, MEMBERSHIP_ATTACK):
        result = run_one(engine, source, MEMBERSHIP_TESTS)
        assert result.outcome == "failed", (result.outcome, result.reason)


# A judge object the test passes by value (a torch module) comes back with what the
# solution did to it; what a setattr across the boundary may not set does not land there
# either: the test's `model.parameters()` stays the module's own.
FREEZE_TESTS = """\
import torch

from solution import freeze


def test_frozen():
    model = torch.nn.Linear(2, 1)
    freeze(model)
    assert model.frozen and not any(p.requires_grad for p in model.parameters())
"""
FREEZE_REFERENCE = """
def freeze(model):
    for p in model.parameters():
        p.requires_grad_(False)
    model.frozen = True
"""
FREEZE_CONTROL = "def freeze(model):\n    model.frozen = True\n"
FREEZE_ATTACK = FREEZE_CONTROL + "    model.parameters = lambda: iter(())\n"


def test_a_judge_object_passed_by_value_keeps_its_methods(engine):
    assert run_one(engine, FREEZE_REFERENCE, FREEZE_TESTS).outcome == "passed"
    for source in (FREEZE_CONTROL, FREEZE_ATTACK):
        result = run_one(engine, source, FREEZE_TESTS)
        assert result.outcome == "failed", (result.outcome, result.reason)


def test_the_reference_holding_judge_handles_passes(engine):
    result = run_one(engine, HANDLE_REFERENCE, HANDLE_TESTS, timeout=60)
    assert result.outcome == "passed", (result.reason, result.stdout[-2000:])
    control = run_one(engine, HANDLE_CONTROL, HANDLE_TESTS, timeout=60)
    assert control.outcome == "failed", (control.outcome, control.reason)


@pytest.mark.parametrize("name", sorted(HANDLE_ATTACKS))
def test_handles_never_reach_the_tests_or_the_judges_modules(engine, name):
    attack = run_one(engine, HANDLE_ATTACKS[name], HANDLE_TESTS, timeout=60)
    passed = [t["id"] for t in attack.tests if t["outcome"] == "passed"]
    assert not passed, (name, attack.outcome, attack.reason, attack.stdout[-2000:])
    assert attack.outcome in ("failed", "tampered"), (attack.outcome, attack.reason)
    if "channel" in name:
        assert attack.outcome == "tampered", attack.reason
        assert "does not serve" in attack.reason


# -- a solution's context manager around the test's own code ----------------------------------
# Its __exit__ runs in the solution process and may swallow what the block raised (a
# ValueError here, as contextlib.suppress would), never the judge's failed assertion.

CONTEXT_TESTS = """\
from solution import guard, scale


def test_the_assertion_inside():
    with guard():
        assert scale(1) == 2


def test_what_it_suppresses():
    with guard():
        raise ValueError("suppressed")
    assert scale(2) == 4
"""
CONTEXT_REFERENCE = """\
class guard:
    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback):
        return kind is not None and issubclass(kind, ValueError)


def scale(x):
    return x * 2
"""
CONTEXT_CONTROL = CONTEXT_REFERENCE.replace("x * 2", "x * 3")
CONTEXT_ATTACK = CONTEXT_CONTROL.replace(
    "return kind is not None and issubclass(kind, ValueError)", "return True")


def test_a_solutions_context_manager_never_swallows_the_judges_assertion(engine):
    reference = run_one(engine, CONTEXT_REFERENCE, CONTEXT_TESTS, timeout=60)
    assert reference.outcome == "passed", (reference.reason, reference.stdout[-2000:])
    for wrong in (CONTEXT_CONTROL, CONTEXT_ATTACK):
        result = run_one(engine, wrong, CONTEXT_TESTS, timeout=60)
        assert {t["outcome"] for t in result.tests} == {"failed"}, result.tests


# -- correct solutions that a check inside their process took for tampering -----------------

CORRECT = {
    "threads that log, format tracebacks and import": """
import logging, threading, traceback
import torch

log = logging.getLogger("solution")

def _work(box):
    import json, decimal  # first imports inside a thread
    log.warning("working")
    try:
        raise ValueError("inside")
    except ValueError:
        box.append(traceback.format_exc())

def scale(x):
    box = []
    thread = threading.Thread(target=_work, args=(box,))
    thread.start()
    thread.join()
    assert "inside" in box[0]
    if isinstance(x, list):
        return [v * 2 for v in x]
    return x * 2
""",
    "torch.compile with inductor": """
import torch

def _double(t):
    return torch.sin(t) * 0 + t * 2

_compiled = torch.compile(_double)

def scale(x):
    if isinstance(x, list):
        return [v * 2 for v in x]
    if isinstance(x, torch.Tensor):
        return _compiled(x)
    return x * 2
""",
    "Tensor and ndarray subclasses used internally": """
import numpy as np
import torch

class Tagged(torch.Tensor):
    pass

class Grid(np.ndarray):
    pass

def scale(x):
    if isinstance(x, list):
        grid = np.asarray(x).view(Grid) * 2
        return [int(v) for v in grid]
    if isinstance(x, torch.Tensor):
        tagged = x.as_subclass(Tagged) * 2
        return tagged.as_subclass(torch.Tensor)
    return float(np.asarray([x]).view(Grid)[0] * 2)
""",
    "DataLoader workers": """
import torch
from torch.utils.data import DataLoader, TensorDataset

def scale(x):
    if isinstance(x, list):
        return [v * 2 for v in x]
    if not isinstance(x, torch.Tensor) or x.dim() == 0:
        return x * 2
    loader = DataLoader(TensorDataset(x), batch_size=2, num_workers=2)
    return torch.cat([batch * 2 for (batch,) in loader])
""",
}


@pytest.mark.parametrize("name", sorted(CORRECT))
def test_correct_solutions_pass(engine, name):
    result = run_one(engine, CORRECT[name], TESTS, timeout=300)
    assert result.outcome == "passed", (name, result.reason, result.stdout[-3000:],
                                        result.stderr[-3000:])


# -- what crosses: mutation, gradients, solution classes, what cannot cross ----------------

MODULE_TESTS = """\
import torch
from torch import nn

from solution import Doubler, step, make


def test_solution_module_trains_in_the_judge():
    torch.manual_seed(0)
    model = Doubler(3)
    assert isinstance(model, nn.Module)
    with torch.no_grad():
        model.linear.weight.copy_(torch.eye(3))
        model.linear.bias.zero_()
    out = model(torch.ones(2, 3))
    assert torch.allclose(out, torch.full((2, 3), 2.0))
    out.sum().backward()
    assert torch.allclose(model.linear.weight.grad, torch.full((3, 3), 4.0))


def test_arguments_are_mutated_in_place():
    model = nn.Linear(2, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    history = []
    before = model.weight.detach().clone()
    loss = step(model, opt, torch.ones(4, 2), history)
    assert isinstance(loss, float) and history == [loss]
    assert not torch.equal(model.weight, before)
    assert model.weight.grad is not None


def test_returned_module_is_judgeable():
    net = make()
    assert torch.equal(net(torch.ones(1, 2)), torch.full((1, 2), 3.0))
"""
MODULE_SOLUTION = """\
import torch
from torch import nn


class Doubler(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.linear = nn.Linear(dim, dim)

    def forward(self, x):
        return self.linear(x) * 2


class Plus(nn.Module):
    def forward(self, x):
        return x + 2


def step(model, optimizer, batch, history):
    optimizer.zero_grad()
    loss = model(batch).pow(2).mean()
    loss.backward()
    optimizer.step()
    history.append(loss.item())
    return loss.item()


def make():
    return nn.Sequential(Plus(), nn.Identity())
"""


def test_modules_gradients_and_mutated_arguments_cross(engine):
    result = run_one(engine, MODULE_SOLUTION, MODULE_TESTS, timeout=60)
    assert result.outcome == "passed", (result.reason, result.stdout[-3000:])


# A function that binds a new object where the caller's was (cleanlab's CleanLearning
# rebinds `self.find_label_issues_kwargs`, whose old value is its __init__'s shared default)
# leaves the old object as it was; one it changes in place changes the caller's.
REBIND_TESTS = """\
from solution import configure

DEFAULTS = {}


def make_state():
    return {"kwargs": DEFAULTS, "seen": [], "log": []}


def test_first():
    state = make_state()
    seen, log = state["seen"], state["log"]
    configure(state, 3)
    assert state["kwargs"] == {"classes": 3} and DEFAULTS == {}
    assert seen == [3] and log == [] and state["log"] == ["configured"]


def test_second_sees_no_earlier_test():
    state = make_state()
    assert state["kwargs"] == {}
    configure(state, 10)
    assert state["kwargs"] == {"classes": 10} and DEFAULTS == {}
"""
REBIND_SOLUTION = """\
def configure(state, classes):
    state["kwargs"] = {**state["kwargs"], "classes": classes}
    state["seen"].append(classes)
    state["log"] = state["log"] + ["configured"]
"""


def test_a_rebound_argument_leaves_the_callers_old_object_alone(engine):
    result = run_one(engine, REBIND_SOLUTION, REBIND_TESTS, timeout=60)
    assert result.outcome == "passed", (result.reason, result.stdout[-3000:])
    wrong = REBIND_SOLUTION.replace('state["kwargs"] = {**state["kwargs"], "classes": classes}',
                                    'state["kwargs"]["classes"] = classes')
    control = run_one(engine, wrong, REBIND_TESTS, timeout=60)
    assert control.outcome == "failed", (control.outcome, control.reason)


LOADER_TESTS = """\
import torch
from torch.utils.data import DataLoader, TensorDataset

from solution import total


def test_total_of_a_loader():
    loader = DataLoader(TensorDataset(torch.arange(10.0)), batch_size=4)
    assert total(loader) == 45.0
    assert len(loader) == 3 and loader.batch_size == 4
"""
LOADER_SOLUTION = """\
def total(loader):
    assert len(loader) == 3 and len(loader.dataset) == 10
    return float(sum(float(x.sum()) for (x,) in loader))
"""


def test_a_loader_the_test_passes_is_its_own_object_iterated_across(engine):
    """The judge never rebuilds a DataLoader, so it never sends one as a copy either (the
    copy came back with the arguments and could not cross: Laplace's `fit`)."""
    result = run_one(engine, LOADER_SOLUTION, LOADER_TESTS, timeout=60)
    assert result.outcome == "passed", (result.reason, result.stdout[-3000:])
    control = run_one(engine, LOADER_SOLUTION.replace("float(x.sum())", "float(x.max())"),
                      LOADER_TESTS, timeout=60)
    assert control.outcome == "failed", (control.outcome, control.reason)


def test_a_value_with_no_data_form_is_an_error_naming_it(engine):
    result = run_one(engine, "def add(a, b):\n    return open(__file__)\n", timeout=30)
    assert result.outcome == "error", (result.outcome, result.reason)
    assert "TextIOWrapper" in result.reason


STDLIB_TESTS = """\
import argparse
import logging
import random
import re
import types

import solution


def test_dict_views():
    keys, values, items = solution.views()
    assert type(keys) is type({}.keys()) and keys == {"a", "b"} and list(keys) == ["a", "b"]
    assert list(values) == [1, 2] and dict(items) == {"a": 1, "b": 2}


def test_namespaces():
    args = argparse.Namespace(lr=0.5, steps=3)
    assert solution.use_args(args) == 1.5
    assert args.lr == 0.1 and args.seen == 3
    made = solution.make_config()
    assert type(made) is types.SimpleNamespace and made.depth == 2


def test_enum_and_cached_property():
    assert solution.color().name == "RED" and solution.color().value == 1
    assert solution.color() is solution.Color.RED
    assert solution.Box(3).area == 9 and solution.Box.UNIT.tolist() == [1.0, 1.0]


def test_a_logger_a_generator_and_a_pattern_given():
    log = logging.getLogger("curator-test")
    assert solution.count(log, random.Random(0), re.compile("a+"), "aaa") == 3
"""
STDLIB_SOLUTION = """\
import enum
import functools
import types

import torch


class Color(enum.Enum):
    RED = 1


class Box:
    UNIT = torch.ones(2)

    def __init__(self, side):
        self.side = side

    @functools.cached_property
    def area(self):
        return self.side * self.side


def views():
    d = {"a": 1, "b": 2}
    return d.keys(), d.values(), d.items()


def use_args(args):
    total = args.lr * args.steps
    args.lr, args.seen = 0.1, args.steps
    return total


def make_config():
    return types.SimpleNamespace(depth=2)


def color():
    return Color.RED


def count(log, rng, pattern, text):
    log.debug("counting %s", text)
    rng.random()
    return len(pattern.fullmatch(text).group(0))
"""


def test_standard_library_values_cross_as_themselves(engine):
    """Dict views, argparse/SimpleNamespace configurations (changed in place too), the
    properties and class attributes of a solution's enum or class (its members, a tensor),
    a cached_property, and a test's logger, random.Random
    or compiled pattern given to the function (they come back with the arguments) are
    values of correct solutions: they ended as 'cannot cross' errors or missing
    attributes."""
    result = run_one(engine, STDLIB_SOLUTION, STDLIB_TESTS, timeout=60)
    assert result.outcome == "passed", (result.outcome, result.reason)
    wrong = run_one(engine, STDLIB_SOLUTION.replace('"a": 1, "b": 2', '"a": 1, "c": 2')
                    .replace("args.lr, args.seen = 0.1", "args.lr, args.seen = 0.2")
                    .replace("RED = 1", "RED = 2").replace("depth=2", "depth=3")
                    .replace(".group(0))", ".group(0)) + 1"),
                    STDLIB_TESTS, timeout=60)
    assert wrong.outcome == "failed", (wrong.outcome, wrong.reason)
    assert [t["outcome"] for t in wrong.tests] == ["failed"] * 4, wrong.tests


def test_a_class_the_tests_derive_from_a_solution_class_is_a_named_crossing_error(engine):
    """Its methods would live in both processes: it ended in a RecursionError between
    them, read as the solution's failure; now the run is this tool's limit, named."""
    tests = ("import torch\nimport solution\n\n\ndef test_derived():\n"
             "    class Mine(solution.Net):\n        pass\n\n"
             "    assert Mine()(torch.ones(2)).shape == (2,)\n")
    solution = ("import torch\n\n\nclass Net(torch.nn.Module):\n"
                "    def forward(self, x):\n        return x\n")
    result = run_one(engine, solution, tests, timeout=60)
    assert result.outcome == "error", (result.outcome, result.reason)
    assert "Mine, a class the tests derive from the solution's Net" in result.reason
    assert "cannot cross from the judge" in result.reason


ERROR_TESTS = """\
import pytest

import solution


def test_its_own_error():
    with pytest.raises(solution.ShapeError, match="negative") as caught:
        solution.check(-1)
    assert caught.value.code == 7 and isinstance(caught.value, ValueError)


def test_its_own_warning():
    with pytest.warns(solution.ShapeWarning):
        assert solution.check(0) == 0
"""
ERROR_SOLUTION = """\
import warnings


class ShapeError(ValueError):
    def __init__(self, message, code=7):
        super().__init__(message)
        self.code = code


class OtherError(ValueError):
    pass


class ShapeWarning(UserWarning):
    pass


def check(x):
    if x < 0:
        raise ShapeError("negative input")
    if x == 0:
        warnings.warn("an empty shape", ShapeWarning)
    return x
"""


def test_a_solutions_own_error_and_warning_classes_are_what_the_tests_catch(engine):
    """`pytest.raises(solution.ShapeError)` and `pytest.warns(solution.ShapeWarning)`: the
    judge's standins of the solution's classes, subclasses of their library base, made
    and raised in the judge from data. They arrived as a plain ValueError/UserWarning (or
    the warning's category was constructed in the solution process and could not cross)."""
    result = run_one(engine, ERROR_SOLUTION, ERROR_TESTS, timeout=60)
    assert result.outcome == "passed", (result.outcome, result.reason)
    wrong = run_one(engine, ERROR_SOLUTION.replace('raise ShapeError("negative input")',
                                                   'raise OtherError("negative input")')
                    .replace("an empty shape\", ShapeWarning", "an empty shape\", UserWarning"),
                    ERROR_TESTS, timeout=60)
    assert wrong.outcome == "failed", (wrong.outcome, wrong.reason)
    assert [t["outcome"] for t in wrong.tests] == ["failed"] * 2, wrong.tests


# -- nothing stops a batch ----------------------------------------------------------------------

SURROGATE_ROWS = [
    {"task_id": "add_one", "solution": "def add_one(x):\n    raise ValueError('\\udcff\\x00')\n"},
    {"task_id": "add_one", "solution": "def add_one(x):\n    print('\\udcff\\x00')\n"
                                       "    return x + 1\n"},
    {"task_id": "add_one", "solution": "def add_one(x):\n    return x + 1\n"},
]


def test_surrogates_and_nuls_are_stored_and_the_batch_goes_on(empty_workspace, tmp_path):
    from click.testing import CliRunner
    from samples_support import make_problems, write_jsonl

    from curator.cli import main
    from curator.store import Store

    with Store(empty_workspace.db_path, "tester") as store:
        make_problems(store)
    path = write_jsonl(tmp_path / "s.jsonl", SURROGATE_ROWS)
    base = ["--workspace", str(empty_workspace.root)]
    runner = CliRunner()
    assert runner.invoke(main, base + ["samples", "import", str(path), "--model", "m"]
                         ).exit_code == 0
    out = runner.invoke(main, base + ["samples", "eval", "--workers", "1", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["evaluated"] == 3
    with Store(empty_workspace.db_path) as store:
        rows = store.query("SELECT r.outcome, r.reason, r.stdout FROM runs r "
                           "WHERE r.sample_id IS NOT NULL ORDER BY r.sample_id")
    assert [r["outcome"] for r in rows] == ["failed", "passed", "passed"], rows
    assert "\\udcff" in rows[0]["reason"] and "\\x00" in rows[0]["reason"]
    # printed through a UTF-8 stream the surrogate became an invalid byte: read back as
    # U+FFFD; the NUL is spelled out
    assert "\ufffd\\x00" in rows[1]["stdout"], rows[1]["stdout"]
    again = runner.invoke(main, base + ["samples", "eval", "--workers", "1", "--json"])
    assert again.exit_code == 0 and json.loads(again.stdout)["evaluated"] == 0


def test_safe_text_keeps_every_character_readable():
    from curator.execution.job import safe_text

    text = safe_text("a\udcffb\x00c")
    text.encode("utf-8")
    assert text == "a\\udcffb\\x00c"
    assert safe_text("plain ünïcode") == "plain ünïcode"
    assert textwrap.dedent(safe_text("  x")) == "x"


# -- a repository's own code is trusted ------------------------------------------------------


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_a_conftest_that_patches_torch_and_mock_keeps_its_reference_passed(engine, tmp_path,
                                                                          warm):
    from curator.execution.engine import Engine
    from curator.execution.job import Job, Limits

    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "conftest.py").write_text(textwrap.dedent("""\
        import unittest.mock

        import torch

        import pkg.mod  # noqa: F401

        torch.Storage = type("Storage", (), {})
        unittest.mock.NonCallableMock.assert_not_called = lambda self: None
        """))
    (repo / "tests").mkdir()
    (repo / "tests" / "test_mod.py").write_text(
        "import torch\nfrom pkg.mod import f\n\n\ndef test_f():\n"
        "    assert torch.equal(f(), torch.ones(2))\n")
    reference = "import torch\n\n\ndef f():\n    return torch.ones(2)\n"
    wrong = "import torch\n\n\ndef f():\n    return torch.zeros(2)\n"

    def repo_job(text, is_reference):
        return Job(problem_id="r", solution=text, repo_dir=str(repo), reference=is_reference,
                   node_ids=["tests/test_mod.py"], overlay={"pkg/mod.py": text},
                   limits=Limits(timeout_s=120))

    with Engine(workers=1, isolation=engine.isolation, warm_repos=warm, eager=False) as runs:
        ref = list(runs.run([repo_job(reference, True)]))[0]
        bad = list(runs.run([repo_job(wrong, False)]))[0]
    assert ref.outcome == "passed", (ref.reason, ref.evidence, ref.stderr[-2000:])
    assert not ref.evidence
    assert bad.outcome != "passed"


def test_a_result_computed_with_autograd_crosses_without_a_warning(engine):
    # Encoding a non-leaf tensor read its .grad, and torch warned into every such run's
    # stderr: failure logs (and the review suggestions read from them) carried it.
    tests = """\
import torch

from solution import scale


def test_gradient_flows_back():
    x = torch.ones(3, requires_grad=True)
    y = scale(x)
    assert not y.is_leaf
    y.sum().backward()
    assert torch.equal(x.grad, torch.full((3,), 2.0))
"""
    result = run_one(engine, REFERENCE, tests)
    assert result.outcome == "passed", (result.reason, result.stderr[-2000:])
    assert "UserWarning" not in result.stderr, result.stderr[-2000:]


FORM_SOLUTION = """
import torch


def sparse(x):
    return x.to_sparse()


def channels_last(x):
    return x.contiguous(memory_format=torch.channels_last)


def quantized(x):
    return torch.quantize_per_tensor(x, 0.1, 2, torch.qint8)


def describe(x):
    return (x.layout == torch.sparse_coo, x.is_quantized,
            x.is_contiguous(memory_format=torch.channels_last), x)
"""
FORM_TESTS = """
import torch

from solution import channels_last, describe, quantized, sparse


def test_made_in_the_solution():
    assert sparse(torch.eye(3)).is_sparse
    assert torch.equal(sparse(torch.eye(3)).to_dense(), torch.eye(3))
    assert channels_last(torch.ones(1, 3, 4, 4)).is_contiguous(
        memory_format=torch.channels_last)
    q = quantized(torch.ones(3))
    assert q.is_quantized and q.q_scale() == 0.1 and q.q_zero_point() == 2
    assert torch.equal(q.int_repr(), torch.full((3,), 12, dtype=torch.int8))


def test_passed_to_it():
    assert describe(torch.eye(2).to_sparse())[0]
    assert describe(torch.quantize_per_tensor(torch.ones(2), 0.5, 0, torch.quint8))[1]
    x = torch.ones(1, 2, 3, 3).contiguous(memory_format=torch.channels_last)
    assert describe(x)[2] and describe(x)[3] is x
"""


def test_tensors_keep_their_layout_quantization_and_memory_format(engine):
    """Values as bytes left out a tensor's sparse layout, its quantization and its
    channels-last format: a correct `to_sparse()` failed `assert result.is_sparse`."""
    result = run_one(engine, FORM_SOLUTION, FORM_TESTS, timeout=60)
    assert result.outcome == "passed", (result.reason, result.stdout[-3000:])


# torch cannot pickle finfo and iinfo: a correct solution returning one (or given one by
# the test) was an error "cannot pickle 'torch.finfo' object"; they cross as their dtype.
TYPE_INFO_TESTS = """\
import torch

from solution import eps_of, info


def test_returned():
    assert info(torch.float32).eps == torch.finfo(torch.float32).eps
    assert info(torch.int8).min == -128


def test_given():
    assert eps_of(torch.finfo(torch.float64)) == torch.finfo(torch.float64).eps
"""
TYPE_INFO_SOLUTION = """\
import torch


def info(dtype):
    return torch.finfo(dtype) if dtype.is_floating_point else torch.iinfo(dtype)


def eps_of(finfo):
    return finfo.eps
"""


def test_torchs_finfo_and_iinfo_cross_as_their_dtype(engine):
    result = run_one(engine, TYPE_INFO_SOLUTION, TYPE_INFO_TESTS, timeout=60)
    assert result.outcome == "passed", (result.reason, result.stdout[-3000:])
    wrong = TYPE_INFO_SOLUTION.replace("finfo(dtype) if", "finfo(torch.bfloat16) if")
    assert run_one(engine, wrong, TYPE_INFO_TESTS, timeout=60).outcome == "failed"
