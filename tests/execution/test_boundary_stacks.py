"""A library context the solution process holds open reaches the test's function it calls
back (`curator.execution.stacks`).

pennylane's `QNode.construct` opens an `AnnotatedQueue` and calls the test's quantum
function, whose operators append themselves to the innermost open queue. Across the
boundary the function is a judge handle: it ran in the judge, whose queuing stack was
empty, and the solution's tape came out empty (`_coefficients_no_filter`,
`TorchLayer.forward`; there the operators that came back hold the test's parameters, a
second place of a tensor the call had sent, and the gradient of each place must reach
it). The repository here is a tiny library of that shape, named
pennylane (which the suite's environment does not install), with the same queuing API.
"""

from __future__ import annotations

import pytest
from execution_support import engine_fixture, repo_job, write_repo

from curator.execution import stacks

engine = engine_fixture(("strong",))

QUEUING = '''from collections import OrderedDict


class WrappedObj:
    def __init__(self, obj):
        self.obj = obj

    def __hash__(self):
        return id(self.obj)

    def __eq__(self, other):
        return isinstance(other, WrappedObj) and self.obj is other.obj


class QueuingManager:
    _active_contexts = []

    @classmethod
    def add_active_queue(cls, queue):
        cls._active_contexts.append(queue)

    @classmethod
    def remove_active_queue(cls):
        return cls._active_contexts.pop()

    @classmethod
    def recording(cls):
        return bool(cls._active_contexts)

    @classmethod
    def active_context(cls):
        return cls._active_contexts[-1] if cls.recording() else None

    @classmethod
    def append(cls, obj, **kwargs):
        if cls.recording():
            cls.active_context().append(obj, **kwargs)

    @classmethod
    def remove(cls, obj):
        if cls.recording():
            cls.active_context().remove(obj)


class AnnotatedQueue(OrderedDict):
    def __enter__(self):
        QueuingManager.add_active_queue(self)
        return self

    def __exit__(self, *exc):
        QueuingManager.remove_active_queue()

    def append(self, obj, **kwargs):
        self[WrappedObj(obj)] = kwargs

    def remove(self, obj):
        self.pop(WrappedObj(obj), None)

    def items(self):
        return tuple((key.obj, value) for key, value in super().items())
'''
OPS = '''from pennylane.queuing import QueuingManager


class Operation:
    def __init__(self, name, angle, wire):
        self.name, self.angle, self.wire = name, angle, wire
        QueuingManager.append(self)


class Measurement:
    name, angle = "expval", None

    def __init__(self, obs):
        self.obs = obs
        QueuingManager.remove(obs)
        QueuingManager.append(self, owns=obs.name)


def RX(angle, wire):
    return Operation("RX", angle, wire)


def PauliZ(wire):
    return Operation("Z", None, wire)


def expval(obs):
    return Measurement(obs)
'''
QNODE = '''from pennylane.queuing import AnnotatedQueue


class QNode:
    def __init__(self, func):
        self.func = func
        self.tape = ()

    def construct(self, args):
        with AnnotatedQueue() as queue:
            result = self.func(*args)
        self.tape = queue.items()
        return result
'''
FOURIER = '''def circuit_summary(qnode, x):
    result = qnode.construct((x,))
    ops = [(op.name, op.angle, info) for op, info in qnode.tape]
    return ops, any(op is result for op, _ in qnode.tape)


def energy(qnode, weights):
    qnode.construct((weights,))
    angles = [op.angle.sum() for op, _ in qnode.tape if op.name == "RX"]
    return sum(angles) + weights.sum()
'''
TESTS = '''import torch

from pennylane.fourier import circuit_summary, energy
from pennylane.ops import RX, PauliZ, expval
from pennylane.qnode import QNode
from pennylane.queuing import QueuingManager


def circuit(x):
    RX(x, 0)
    RX(2 * x, 1)
    return expval(PauliZ(0))


def test_the_circuit_queues_in_the_functions_queue():
    ops, measured = circuit_summary(QNode(circuit), 0.5)
    assert ops == [("RX", 0.5, {}), ("RX", 1.0, {}), ("expval", None, {"owns": "Z"})]
    assert measured   # the value is the very measurement the queue holds
    assert not QueuingManager.recording()   # the judge's queue was for the callback only


def test_a_function_of_the_test_calling_the_circuit():
    assert circuit(0.1).obs.name == "Z"
    ops, measured = circuit_summary(QNode(lambda x: circuit(x) and None), 0.25)
    assert ops == [("RX", 0.25, {}), ("RX", 0.5, {}), ("expval", None, {"owns": "Z"})]
    assert not measured


def weighted(weights):
    RX(weights, 0)
    return expval(PauliZ(0))


def test_gradients_reach_the_parameters_the_queue_gave_back():
    # the test's tensor goes with the call, and again inside the queued operator of the
    # callback's value: two places of one tensor, each its own gradient input
    weights = torch.tensor([0.5, 0.25], requires_grad=True)
    out = energy(QNode(weighted), weights)
    assert out.item() == 1.5
    out.backward()
    assert weights.grad.tolist() == [2.0, 2.0]
'''
# drops the last queued operation: the tests must see it
WRONG = FOURIER.replace("for op, info in qnode.tape]", "for op, info in qnode.tape[:-1]]")
# names an adapter the boundary does not know in its callback's request
TAMPERING = '''from curator.execution import stacks

stacks.active = lambda: {"os.system": ("true",)}
''' + FOURIER


def queue_repo(root):
    return write_repo(root, {
        "pennylane/__init__.py": "", "pennylane/queuing.py": QUEUING,
        "pennylane/ops.py": OPS, "pennylane/qnode.py": QNODE,
        "pennylane/fourier.py": FOURIER, "tests/test_fourier.py": TESTS})


def test_the_test_function_queues_into_the_solutions_open_queue(engine, tmp_path):
    repo = queue_repo(tmp_path / "repo")
    jobs = [repo_job(repo, "pennylane/fourier.py", text, "tests/test_fourier.py", symbol,
                     reference)
            for text, symbol, reference in (
                (FOURIER, "circuit_summary", True), (FOURIER, "energy", True),
                (WRONG, "circuit_summary", False), (TAMPERING, "circuit_summary", False))]
    results = {r.job_id: r for r in engine.run(jobs)}
    right, right_energy, wrong, tampering = (results[j.job_id] for j in jobs)
    for result in (right, right_energy):
        assert result.outcome == "passed", (result.reason, result.stdout[-3000:])
        assert len(result.tests) == 3
    assert wrong.outcome == "failed", (wrong.reason, wrong.stdout[-3000:])
    assert tampering.outcome == "tampered", (tampering.reason, tampering.stdout[-3000:])
    assert "stack contexts" in tampering.reason


def test_the_judge_refuses_unknown_adapters_and_wrong_data():
    with pytest.raises(stacks.StackError):
        stacks.installed({"os.system": ()})
    with pytest.raises(stacks.StackError):
        stacks.installed({"pennylane.queue": ("anything",)})
    with pytest.raises(stacks.StackError):
        stacks.installed([("pennylane.queue", ())])
    # pyro's stack: only messengers of the judge's own pyro (none here)
    with pytest.raises(stacks.StackError):
        stacks.installed({"pyro.stack": ([object()], [])})
    # what comes back names only the adapters the call carried, in their shape
    with pytest.raises(stacks.StackError):
        stacks.replay({"pennylane.queue": ()}, {})
    with pytest.raises(stacks.StackError):
        stacks.replay({"pennylane.queue": ((object(), {1: 2}),)}, {"pennylane.queue": ()})


def test_nothing_is_carried_when_the_library_is_not_loaded_or_not_recording():
    assert stacks.active() == {}
    with stacks.installed({}) as recorded:
        pass
    assert recorded() == {}


# -- pyro's effect handlers --------------------------------------------------------------
# pyro's inference code runs the test's model under `poutine.trace(...)` (and replay,
# condition, plates): messengers on pyro.poutine.runtime._PYRO_STACK that each
# `pyro.sample` hands its message to. A tiny library of that shape, named pyro.

RUNTIME = '''_PYRO_STACK = []


class _DimAllocator:
    def __init__(self):
        self._stack = []

    def allocate(self, name):
        for place, held in enumerate(self._stack):
            if held is None:
                self._stack[place] = name
                return -1 - place
        self._stack.append(name)
        return -len(self._stack)

    def free(self, name, dim):
        self._stack[-1 - dim] = None
        while self._stack and self._stack[-1] is None:
            self._stack.pop()


_DIM_ALLOCATOR = _DimAllocator()


def apply_stack(msg):
    for frame in reversed(_PYRO_STACK):
        frame._process_message(msg)
    if msg["value"] is None:
        msg["value"] = msg["fn"]()
    for frame in _PYRO_STACK:
        frame._postprocess_message(msg)
'''
MESSENGER = '''from pyro.poutine.runtime import _PYRO_STACK


class Messenger:
    def __enter__(self):
        _PYRO_STACK.append(self)
        return self

    def __exit__(self, *exc):
        _PYRO_STACK.pop()

    def __call__(self, fn):
        def _fn(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return _fn

    def _process_message(self, msg):
        getattr(self, "_pyro_" + msg["type"], lambda msg: None)(msg)

    def _postprocess_message(self, msg):
        getattr(self, "_pyro_post_" + msg["type"], lambda msg: None)(msg)
'''
HANDLERS = '''from pyro.poutine.messenger import Messenger
from pyro.poutine.runtime import _DIM_ALLOCATOR


class TraceMessenger(Messenger):
    def __init__(self):
        self.trace = {}

    def _pyro_post_sample(self, msg):
        self.trace[msg["name"]] = {"value": msg["value"], "dims": list(msg["dims"])}


class TraceHandler:
    def __init__(self, msngr, fn):
        self.msngr, self.fn = msngr, fn

    def get_trace(self, *args):
        with self.msngr:
            self.fn(*args)
        return self.msngr.trace


def trace(fn):
    return TraceHandler(TraceMessenger(), fn)


class ConditionMessenger(Messenger):
    def __init__(self, data):
        self.data = data

    def _pyro_sample(self, msg):
        if msg["name"] in self.data:
            msg["value"] = self.data[msg["name"]]


def condition(fn, data):
    return ConditionMessenger(data)(fn)


class PlateMessenger(Messenger):
    def __init__(self, name):
        self.name, self.dim = name, None

    def __enter__(self):
        self.dim = _DIM_ALLOCATOR.allocate(self.name)
        return super().__enter__()

    def __exit__(self, *exc):
        _DIM_ALLOCATOR.free(self.name, self.dim)
        return super().__exit__(*exc)

    def _pyro_sample(self, msg):
        msg["dims"].append((self.name, self.dim))


def plate(name):
    return PlateMessenger(name)
'''
PRIMITIVES = '''from pyro.poutine.runtime import _PYRO_STACK, apply_stack


def sample(name, fn):
    if not _PYRO_STACK:
        return fn()
    msg = {"type": "sample", "name": name, "fn": fn, "value": None, "dims": []}
    apply_stack(msg)
    return msg["value"]
'''
IMPORTANCE = '''from pyro.poutine.handlers import condition, plate, trace


def traced(model, data):
    with plate("particles"):
        tr = trace(condition(model, data)).get_trace()
    return {name: (site["value"], site["dims"]) for name, site in tr.items()}
'''
PYRO_TESTS = '''from pyro.infer.importance import traced
from pyro.poutine.handlers import plate
from pyro.poutine.runtime import _DIM_ALLOCATOR, _PYRO_STACK
from pyro.primitives import sample


def model():
    a = sample("a", lambda: 1.0)
    with plate("inner"):
        b = sample("b", lambda: a + 1.0)
    return b


def test_the_model_runs_under_the_functions_handlers():
    assert traced(model, {"a": 5.0}) == {
        "a": (5.0, [("particles", -1)]),
        "b": (6.0, [("inner", -2), ("particles", -1)])}
    # the judge's stack and dimensions were the solution's for the callback only
    assert _PYRO_STACK == [] and _DIM_ALLOCATOR._stack == []
'''


def pyro_repo(root, name, text, tests):
    """The tiny pyro with pyro/infer/NAME.py (text) and tests/test_NAME.py (tests)."""
    return write_repo(root, {
        "pyro/__init__.py": "", "pyro/poutine/__init__.py": "",
        "pyro/poutine/runtime.py": RUNTIME, "pyro/poutine/messenger.py": MESSENGER,
        "pyro/poutine/handlers.py": HANDLERS, "pyro/primitives.py": PRIMITIVES,
        "pyro/infer/__init__.py": "", f"pyro/infer/{name}.py": text,
        f"tests/test_{name}.py": tests})


def test_the_test_model_runs_under_the_solutions_open_handlers(engine, tmp_path):
    repo = pyro_repo(tmp_path / "repo", "importance", IMPORTANCE, PYRO_TESTS)
    [result] = engine.run([repo_job(repo, "pyro/infer/importance.py", IMPORTANCE,
                                    "tests/test_importance.py", "traced", True)])
    assert result.outcome == "passed", (result.reason, result.stdout[-3000:])


# A messenger the solution holds open whose state cannot cross (here an open file it
# keeps): every callback inside it failed, the test's plain function too. It goes
# withheld: a callee that does not use pyro runs, one whose `sample` would have reached
# the solution's handlers fails with the reason.
LOGGED = '''import io

from pyro.poutine.handlers import TraceMessenger


def with_log(fn, *args):
    tracer = TraceMessenger()
    tracer.log = io.BytesIO()
    with tracer:
        return fn(*args)
'''
LOGGED_TESTS = '''import pytest

from pyro.infer.logged import with_log
from pyro.poutine.runtime import _PYRO_STACK
from pyro.primitives import sample


def plain(x):
    return x + 1


def model():
    return sample("a", lambda: 1.0)


def test_a_plain_function_runs_under_handlers_that_cannot_cross():
    assert with_log(plain, 1) == 2
    assert _PYRO_STACK == []


def test_a_model_under_them_fails_with_the_reason():
    with pytest.raises(Exception, match="could not cross"):
        with_log(model)
    assert _PYRO_STACK == []
'''


def test_handlers_that_cannot_cross_fail_only_a_callee_that_uses_them(engine, tmp_path):
    repo = pyro_repo(tmp_path / "repo", "logged", LOGGED, LOGGED_TESTS)
    [result] = engine.run([repo_job(repo, "pyro/infer/logged.py", LOGGED,
                                    "tests/test_logged.py", "with_log", True)])
    assert result.outcome == "passed", (result.reason, result.stdout[-3000:])
    assert len(result.tests) == 2


def test_a_withheld_context_records_nothing_and_refuses_records_back():
    with stacks.installed({"pennylane.queue": stacks.withheld("an open file")}) as recorded:
        pass
    assert recorded() == {"pennylane.queue": None}
    sent = {"pennylane.queue": stacks.withheld("an open file")}
    stacks.replay({"pennylane.queue": None}, sent)
    with pytest.raises(stacks.StackError):
        stacks.replay({"pennylane.queue": ()}, sent)


def test_only_what_the_callee_changed_in_a_messengers_state_goes_back():
    """A trace's sites the solution sent stay its own objects: what goes back is what the
    callee added or replaced (pyro's GP `train` got each of its parameters' constrained
    values back as new copies of judge leaves, three more in every step)."""
    class Trace:
        def __init__(self):
            self.nodes = {"a": {"value": 1.0}}

    trace = Trace()
    state = {"trace": trace, "counter": 1, "held": [1]}
    taken = stacks._taken(state, stacks.STATE_DEPTH)
    assert stacks._diff(taken, state) is None
    trace.nodes["b"] = {"value": 2.0}
    state["counter"] = 2
    change = stacks._diff(taken, state)
    assert change == ({"counter": 2}, [], {"trace": ("vars", (
        {}, [], {"nodes": ({"b": {"value": 2.0}}, [], {})}))})
    original = {"trace": Trace(), "counter": 1, "held": [1]}
    kept = original["trace"].nodes["a"]
    stacks._apply(original, change)
    assert original["counter"] == 2 and list(original["trace"].nodes) == ["a", "b"]
    assert original["trace"].nodes["a"] is kept
    # a change naming state the original lacks, or of the wrong shape, is refused
    with pytest.raises(stacks.StackError):
        stacks._apply({"trace": 3}, change)
    adapter = stacks.CONTEXTS["pyro.stack"]
    for recorded in ([("x",)], [({1: 2}, [], {})], [({}, [], {"t": ({}, [], {"u": (
            {}, [], {"v": ({}, [], {})})})})]):
        with pytest.raises(stacks.StackError):
            adapter.replay(recorded, ([object()], []))
