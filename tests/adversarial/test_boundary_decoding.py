"""A message from the solution process makes values; decoding it never changes an object
the judge held before. Pickle's state and item opcodes (BUILD, SETITEM(S), APPEND(S))
apply to whatever is on the unpickler's stack: on a judge module a message named (`_mod`)
they rebound `torch.equal` for the rest of the run, on a judge handle (`_ji`) they set a
test object's method past `_check_writable`, on a class `find_class` resolved they set a
library class's `__eq__`. Each message here is what a solution that rewrites its own
pickler can send; the honest messages beside them still decode."""

from __future__ import annotations

import argparse
import collections
import fractions
import functools
import io
import pathlib
import pickle

import pytest

from curator.execution import boundary

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")



class _Always:
    def __reduce__(self):
        return functools.partial, (functools.partial, slice)


class _Stateful:
    """Pickles as `func(*args)` followed by BUILD with `state`."""

    def __init__(self, func, args, state):
        self.func, self.args, self.state = func, args, state

    def __reduce__(self):
        return self.func, self.args, self.state


class _Link:   # what the solution's pickler asks of its link for values of its own
    def note(self, text):
        pass

    def unchanged_request_tensor(self, obj):
        return None

    def unchanged_request_array(self, obj):
        return None

    def request_index(self, obj):
        return None

    def request_view(self, obj, bases):
        return None

    def gradient_output(self, obj):
        return None


def solution_dumps(value) -> bytes:
    buffer = io.BytesIO()
    boundary.SolutionPickler(_Link(), buffer).dump(value)
    return buffer.getvalue()


def test_a_judge_module_named_by_a_message_is_never_changed_by_it():
    honest = torch.equal
    message = pickle.dumps(_Stateful(boundary._mod, ("torch",), {"equal": _Always()}),
                           protocol=5)
    with pytest.raises(boundary.NotData, match="changes an object the judge holds"):
        boundary.judge_loads(message)
    assert torch.equal is honest
    # the module alone, with no state, is still the judge's own
    assert boundary.judge_loads(pickle.dumps(_Stateful(boundary._mod, ("numpy",), None),
                                             protocol=5)) is np


def _state_on(obj, state) -> bytes:
    """A message: `obj` by name (a global), then BUILD with `state` applied to it."""
    head = pickle.dumps(obj, protocol=2, fix_imports=False)[2:-1]   # no PROTO, no STOP
    body = pickle.dumps(state, protocol=2, fix_imports=False)[2:-1]
    return b"\x80\x02" + head + body + pickle.BUILD + pickle.STOP


# PurePath and Fraction have a `__new__` of their own: their messages are decoded by the
# checked decoder, which refuses state on the class before it applies (the snapshot of the
# classes a message names catches it on the fast path: argparse's Namespace)
CHANGES_A_CLASS = "changes (a class of the judge|an object the judge holds)"


def test_a_library_class_a_message_names_keeps_its_methods():
    honest = pathlib.PurePath.__eq__
    # BUILD's (state, slotstate): slotstate is setattr on the object, here the class
    with pytest.raises(boundary.NotData, match=CHANGES_A_CLASS):
        boundary.judge_loads(_state_on(pathlib.PurePath, (None, {"__eq__": _Always()})))
    equal = argparse.Namespace.__eq__
    with pytest.raises(boundary.NotData, match="changes a class of the judge"):
        boundary.judge_loads(_state_on(argparse.Namespace, (None, {"__eq__": _Always()})))
    assert argparse.Namespace.__eq__ is equal
    # the same with the class's name, its bases and a new attribute changed
    with pytest.raises(boundary.NotData, match=CHANGES_A_CLASS):
        boundary.judge_loads(_state_on(fractions.Fraction, (None, {
            "__qualname__": "Other", "limit_denominator": _Always(), "added": 1})))
    assert fractions.Fraction.__qualname__ == "Fraction" and \
        not hasattr(fractions.Fraction, "added") and \
        fractions.Fraction(1, 3).limit_denominator(2) == fractions.Fraction(1, 2)
    assert pathlib.PurePath.__eq__ is honest
    assert pathlib.PurePath("a") != pathlib.PurePath("b")


def test_a_rebuild_function_of_the_judge_keeps_its_defaults():
    honest = boundary._a.__defaults__
    with pytest.raises(boundary.NotData):
        boundary.judge_loads(_state_on(boundary._a, (None, {"__defaults__": (1,)})))
    assert boundary._a.__defaults__ == honest


def test_values_that_carry_state_still_decode():
    module = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU())
    ordered = collections.OrderedDict(a=[1, {"b": 2}], c=fractions.Fraction(1, 3))
    generator = np.random.default_rng(5)
    back = boundary.judge_loads(solution_dumps((module, ordered, generator, {1, 2})))
    assert torch.equal(back[0][0].weight, module[0].weight)
    assert back[1] == ordered and type(back[1]) is collections.OrderedDict
    assert back[2].random() == np.random.default_rng(5).random() and back[3] == {1, 2}


class _Made:
    """Pickles as `cls(*args)`: what a message can ask the judge to construct."""

    def __init__(self, cls, *args):
        self.cls, self.args = cls, args

    def __reduce__(self):
        return self.cls, self.args


@pytest.mark.parametrize("cls, args", [
    (torch.autograd.grad_mode.set_grad_enabled, (False,)),
    (torch.autograd.anomaly_mode.set_detect_anomaly, (True,)),
    (torch._C._AutoDispatchBelowAutograd, ()),
    (torch._C._DisableTorchDispatch, ()),
])
def test_a_message_never_constructs_a_mode_or_guard_in_the_judge(cls, args):
    """Constructing these is an act on the judge process (grad mode off, anomaly checks
    on, dispatch keys excluded while the object lives), not a value."""
    with pytest.raises(boundary.NotData):
        boundary.judge_loads(pickle.dumps(_Made(cls, *args), protocol=5))
    assert torch.is_grad_enabled() and not torch.is_anomaly_enabled()
    x = torch.ones(2, requires_grad=True)
    assert (x * 2).grad_fn is not None


def test_a_librarys_compiled_function_named_by_a_message_is_never_changed_by_it(
        tmp_path, monkeypatch):
    """`_lf` hands the judge its own numba dispatcher of a library (umap's pynndescent
    distances): a BUILD after it would set the judge's compiled function's attributes
    (its `py_func`, what its callers run)."""
    numba = pytest.importorskip("numba")
    (tmp_path / "fastlib.py").write_text(
        "import numba\n\n\n@numba.njit\ndef dist(a, b):\n    return abs(a - b)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import fastlib

    monkeypatch.setattr(boundary, "ALLOWED_ROOTS", {*boundary.ALLOWED_ROOTS, "fastlib"})
    honest = fastlib.dist.py_func
    assert isinstance(fastlib.dist, numba.core.dispatcher.Dispatcher)
    # the dispatcher alone is the judge's own
    assert boundary.judge_loads(pickle.dumps(
        _Stateful(boundary._lf, ("fastlib", "dist"), None), protocol=5)) is fastlib.dist
    message = pickle.dumps(_Stateful(boundary._lf, ("fastlib", "dist"),
                                     {"py_func": _Always()}), protocol=5)
    with pytest.raises(boundary.NotData, match="changes an object the judge holds"):
        boundary.judge_loads(message)
    assert fastlib.dist.py_func is honest and fastlib.dist(1.0, 3.0) == 2.0


def test_a_logger_or_pattern_a_message_names_is_the_judges_own_and_never_given_state():
    """A logger crosses by name as the judge's own logger of that name (`_lg`): a message
    that sets its state would change the judge's logger (disable it, stop propagation)."""
    import logging
    import re
    victim = logging.getLogger("curator-decoding-victim")
    message = pickle.dumps(_Stateful(boundary._lg, ("curator-decoding-victim",),
                                     {"disabled": True, "propagate": False}), protocol=5)
    with pytest.raises(boundary.NotData, match="changes an object the judge holds"):
        boundary.judge_loads(message)
    assert victim.disabled is False and victim.propagate is True
    with pytest.raises(boundary.NotData):   # only through the boundary's own rebuilder
        boundary.judge_loads(pickle.dumps(_Stateful(logging.getLogger, ("x",), None),
                                          protocol=5))
    assert boundary.judge_loads(solution_dumps(victim)) is victim
    assert boundary.judge_loads(solution_dumps(re.compile("a+", re.I))) == \
        re.compile("a+", re.I)


CLOSURES = '''def outer(box):
    def inner(x):
        box.append(x)
        return len(box)

    return inner


def other(box):
    def inner(x):
        return -1

    return inner
'''


class _Closure:
    """Pickles as `_sc(...)` then `_fill_closure(made, state)`: a closure named by a
    message, with the cells it chooses."""

    def __init__(self, args, state):
        self.args, self.state = args, state

    def __reduce__(self):
        return boundary._sc, self.args, self.state, None, None, boundary._fill_closure


class _FakeJudgeLink:
    def __init__(self, held=None):
        self.made_closures, self.held = {}, held

    def solution_ref(self, handle, kind, info):
        return ("handle", handle, kind)

    def own_object(self, handle):
        return self.held


def test_a_closure_named_by_a_message_is_made_from_the_judges_code_and_only_filled_once(
        tmp_path, monkeypatch):
    """A closure of a module both sides have crosses as its name and its cells: the judge
    makes it from its own code, never from the message's; a name whose code differs on
    the judge's side stays the solution's (a handle); and no message fills the cells of a
    function it did not make, a held closure of the judge's included."""
    (tmp_path / "closurelib.py").write_text(CLOSURES)
    monkeypatch.syspath_prepend(str(tmp_path))
    import closurelib

    monkeypatch.setattr(boundary, "ALLOWED_ROOTS", {*boundary.ALLOWED_ROOTS, "closurelib"})
    box = []
    honest = closurelib.outer(box)
    name = boundary.closure_name(honest)
    assert name is not None and name[:2] == ("closurelib", "outer.<locals>.inner")
    monkeypatch.setattr(boundary, "_LINK", [_FakeJudgeLink(held=honest)])
    made = boundary.judge_loads(pickle.dumps(
        _Closure((7, None) + name, (((True, [1, 2]),), None, None)), protocol=5))
    assert made is not honest and made.__code__ is honest.__code__ and made(3) == 3
    # code of another body under that name (the solution's `other`) is not the judge's
    lying = (7, None, "closurelib", "outer.<locals>.inner", name[2],
             boundary._code_print(closurelib.other([]).__code__))
    assert boundary.judge_loads(pickle.dumps(
        _Closure(lying, (((True, []),), None, None)), protocol=5)) == ("handle", 7, "function")

    class _Refill:   # `_fill_closure` applied to the judge's own closure, held by handle
        def __reduce__(self):
            return boundary._fill_closure, (_Held(), (((True, ["x"]),), None, None))

    class _Held:
        def __reduce__(self):
            return boundary._ji, (1,)

    with pytest.raises(boundary.NotData, match="a function it did not make"):
        boundary.judge_loads(pickle.dumps(_Refill(), protocol=5))
    assert honest.__closure__[0].cell_contents is box and honest(5) == 1 and box == [5]


def test_a_hook_handle_whose_dicts_are_gone_still_decodes():
    """Laplace's find_last_layer keeps the RemovableHandles a judge module's
    register_forward_hook returned; their dicts were copies nothing else held, so torch
    pickles the dead references as None and its __setstate__ cannot make a weak reference
    to None: the whole reply did not decode (the reference was `tampered`)."""
    module = torch.nn.Linear(2, 2)
    handle = module.register_forward_hook(lambda *a: None)
    del module
    assert handle.__getstate__()[0] is None
    back = boundary.judge_loads(solution_dumps({"handle": handle}))["handle"]
    assert isinstance(back, torch.utils.hooks.RemovableHandle) and back.id == handle.id
    back.remove()   # nothing left to remove, as on the solution's side


def test_an_enum_member_a_message_looks_up_is_never_given_state():
    """Calling an enum class (`Kind(value)`, what an enum pickles as) gives back a member
    the judge holds: BUILD after it set that member's name and value for the rest of the
    run. A member crosses by its class and name and is the judge's own, without state."""
    from torch.ao.quantization.quant_type import QuantType

    member = QuantType.DYNAMIC
    for message in (pickle.dumps(_Stateful(QuantType, (0,), {"_value_": 2, "_name_": "QAT"}),
                                 protocol=5),
                    pickle.dumps(_Stateful(boundary._en, (QuantType, "DYNAMIC"),
                                           {"_value_": 2}), protocol=5)):
        with pytest.raises(boundary.NotData, match="changes an object the judge holds"):
            boundary.judge_loads(message)
        assert member.value == 0 and member.name == "DYNAMIC"
    # nor state of the solution's choosing as an argument (the function that sets it is
    # the solution process's, never one the judge resolves)
    for message in (pickle.dumps(_Stateful(boundary._en, (QuantType, "DYNAMIC", (
                        {"extra": 1}, {})), None), protocol=5),
                    pickle.dumps(_Stateful(boundary._ens, (QuantType, "DYNAMIC", (
                        {"extra": 1}, {})), None), protocol=5)):
        with pytest.raises(boundary.NotData):
            boundary.judge_loads(message)
    assert "extra" not in vars(member)
    # the honest message: the member by name, the judge's own
    assert boundary.judge_loads(solution_dumps([member, QuantType.QAT])) == \
        [member, QuantType.QAT]
    assert boundary.judge_loads(solution_dumps(member)) is member


def test_a_message_never_names_a_test_module_or_conftest():
    """`_mod` gave the judge any module by name, a repository run's test module too (one
    the judge marks `judge_only`): set on a test object through a handle and read back,
    it came to the solution as a handle to the tests' own module."""
    import sys
    import types

    tests, plain = types.ModuleType("_curator_t_tests"), types.ModuleType("_curator_t_lib")
    boundary.judge_only(tests)
    sys.modules.update({tests.__name__: tests, plain.__name__: plain})
    try:
        assert boundary.judge_loads(pickle.dumps(
            _Stateful(boundary._mod, (plain.__name__,), None), protocol=5)) is plain
        with pytest.raises(boundary.CannotCross, match="_curator_t_tests"):
            boundary.judge_loads(pickle.dumps(
                _Stateful(boundary._mod, (tests.__name__,), None), protocol=5))
    finally:
        sys.modules.pop(tests.__name__)
        sys.modules.pop(plain.__name__)


def _signature():
    """`(self, x: torch.Tensor, y=2, *args, z=None, **kwargs) -> int` (this module's own
    annotations are strings)."""
    from inspect import Parameter, Signature

    kind = Parameter.POSITIONAL_OR_KEYWORD
    return Signature([Parameter("self", kind), Parameter("x", kind, annotation=torch.Tensor),
                      Parameter("y", kind, default=2),
                      Parameter("args", Parameter.VAR_POSITIONAL),
                      Parameter("z", Parameter.KEYWORD_ONLY, default=None),
                      Parameter("kwargs", Parameter.VAR_KEYWORD)], return_annotation=int)


SIGNATURE = _signature()


def test_a_functions_signature_crosses_as_the_judges_own_value():
    """nncf's NNCFNetwork keeps its model's forward signature (`inspect.signature`): every
    call returning one ended as 'a value of type inspect.Signature cannot cross'. It
    crosses as data, rebuilt from the judge's own inspect classes, with its parameters'
    kinds (an enum) and the `empty` sentinel the judge's own."""
    import inspect

    made = boundary.judge_loads(solution_dumps(SIGNATURE))
    assert type(made) is inspect.Signature and made == SIGNATURE
    assert str(made) == "(self, x: torch.Tensor, y=2, *args, z=None, **kwargs) -> int"
    x = made.parameters["x"]
    assert type(x) is inspect.Parameter and x.annotation is torch.Tensor
    assert x.default is inspect.Parameter.empty and made.parameters["self"].annotation \
        is inspect.Parameter.empty
    assert x.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    assert made.parameters["kwargs"].kind is inspect.Parameter.VAR_KEYWORD
    bound = boundary.judge_loads(solution_dumps(SIGNATURE.bind(1, 2, z=3)))
    assert type(bound) is inspect.BoundArguments and bound.arguments == \
        {"self": 1, "x": 2, "z": 3}
    assert bound.signature == SIGNATURE
    # a message cannot change the judge's classes on the way
    honest = inspect.BoundArguments.__eq__
    with pytest.raises(boundary.NotData):
        boundary.judge_loads(_state_on(inspect.BoundArguments,
                                       (None, {"__eq__": _Always()})))
    assert inspect.BoundArguments.__eq__ is honest


def _stdlib_samples():
    import argparse
    import datetime
    import random
    import types
    import uuid

    return {("types", "SimpleNamespace"): types.SimpleNamespace(a=1),
            ("argparse", "Namespace"): argparse.Namespace(lr=0.5),
            ("datetime", "date"): datetime.date(2024, 9, 20),
            ("datetime", "time"): datetime.time(7, 40),
            ("datetime", "datetime"): datetime.datetime(2024, 9, 20, 7, 40),
            ("datetime", "timedelta"): datetime.timedelta(seconds=5),
            ("datetime", "timezone"): datetime.timezone(datetime.timedelta(hours=2)),
            ("uuid", "UUID"): uuid.UUID(int=5),
            ("random", "Random"): random.Random(3),
            ("inspect", "Signature"): SIGNATURE,
            ("inspect", "Parameter"): SIGNATURE.parameters["y"],
            ("inspect", "BoundArguments"): SIGNATURE.bind(1, 2),
            ("inspect", "_ParameterKind"): SIGNATURE.parameters["z"].kind,
            ("inspect", "_empty"): SIGNATURE.parameters["y"].annotation}


def test_every_standard_library_value_class_is_a_plain_value_that_crosses_whole():
    """The rule of STDLIB_VALUE_CLASSES, what of it a test can check: each is a class of a
    standard library module with no `__del__` (it holds no resource), and a value of it
    crosses as the judge's own class and an equal value: the classes its fields are made
    of are listed with it. A class that is not such a value stays out: unittest.mock.ANY
    equals everything."""
    import sys
    import unittest.mock

    samples = _stdlib_samples()
    assert set(samples) == boundary.STDLIB_VALUE_CLASSES
    for (module, name), value in samples.items():
        cls = getattr(sys.modules[module], name)
        assert module in sys.stdlib_module_names, module
        assert all("__del__" not in vars(klass) for klass in cls.__mro__), name
        made = boundary.judge_loads(solution_dumps(value))
        if isinstance(value, type):
            assert made is value, name
            continue
        assert type(made) is cls, name
        same = made.getstate() == value.getstate() if name == "Random" else made == value
        assert same, name
    with pytest.raises(boundary.CannotCross, match="unittest.mock._ANY"):
        solution_dumps(unittest.mock.ANY)


def test_a_weak_reference_crosses_to_the_object_the_message_made():
    """nncf's NNCFNetworkInterface holds its model by a weak reference: every call that
    returned an NNCF network ended as 'a value of type weakref.ReferenceType cannot
    cross'. It crosses as a weak reference the receiver makes to its own copy of the
    object; one whose object was gone is dead there too."""
    import weakref

    model = torch.nn.Linear(2, 2)
    made = boundary.judge_loads(solution_dumps({"model": model, "ref": weakref.ref(model)}))
    assert type(made["ref"]) is weakref.ReferenceType
    assert made["ref"]() is made["model"] and made["model"] is not model
    (dead,) = boundary.judge_loads(solution_dumps([weakref.ref(torch.nn.Linear(1, 1))]))
    assert type(dead) is weakref.ReferenceType and dead() is None


def test_an_nncf_networks_library_state_crosses():
    """What nncf's NNCFNetwork holds beside its modules, each of which ended the call as
    'cannot cross' (create_compressed_model_and_algo_for_test93): its tracing context's
    threading.local (crosses as an object of its class holding the sending thread's
    attributes, which another thread here does not see), a Condition and locks (new ones,
    unlocked: their state is the sending process's), and its forward's annotations
    (typing forms, subscripted again here)."""
    import sys
    import threading
    import types
    import typing

    library = types.ModuleType("torch._curator_test_locals")

    class Locals(threading.local):
        def __init__(self):
            self.scopes = []

    Locals.__module__, Locals.__qualname__ = library.__name__, "Locals"
    library.Locals = Locals
    sys.modules[library.__name__] = library
    try:
        local = Locals()
        local.scopes = ["a"]
        held = threading.Lock()
        held.acquire()
        event = threading.Event()
        event.set()
        made = boundary.judge_loads(solution_dumps(
            [local, held, threading.RLock(), threading.Condition(), event]))
    finally:
        sys.modules.pop(library.__name__)
    assert type(made[0]) is Locals and made[0].scopes == ["a"]
    seen = []
    thread = threading.Thread(target=lambda: seen.append(made[0].scopes))
    thread.start()
    thread.join()
    assert seen == [[]]   # another thread's own, from __init__
    assert type(made[1]) is type(threading.Lock()) and not made[1].locked()
    assert type(made[2]) is type(threading.RLock())
    assert type(made[3]) is threading.Condition and made[4].is_set()
    forms = [typing.Optional[torch.Tensor], typing.Dict[str, typing.List[int]],
             typing.Callable[[int], str], typing.Tuple[int, ...], typing.Tuple]
    assert boundary.judge_loads(solution_dumps(forms)) == forms
    # a message naming anything but a typing form, or a thread-local class of no library
    for message in (pickle.dumps(_Stateful(boundary._ty, ("_GenericAlias", (int,)), None)),
                    pickle.dumps(_Stateful(boundary._ty, ("NamedTuple", (int,)), None)),
                    pickle.dumps(_Stateful(boundary._tl, (threading.local,), None)),
                    pickle.dumps(_Stateful(boundary._sy, ("semaphore",), None))):
        with pytest.raises(boundary.NotData):
            boundary.judge_loads(message)


def test_a_typing_form_a_message_names_is_never_given_state():
    """typing caches its subscripted forms: `Optional[int]` is one object the judge holds
    (and its bare forms are the typing module's own). A message that made one and set
    state on it would change the judge's."""
    import typing

    form = typing.Optional[int]
    message = pickle.dumps(_Stateful(boundary._ty, ("Optional", (int,)),
                                     (None, {"__origin__": list})), protocol=2)
    with pytest.raises(boundary.NotData):
        boundary.judge_loads(message)
    assert typing.Optional[int] is form and form.__origin__ is typing.Union
    bare = pickle.dumps(_Stateful(boundary._ty, ("Tuple", None), (None, {"_name": "x"})),
                        protocol=2)
    with pytest.raises(boundary.NotData):
        boundary.judge_loads(bare)
    assert typing.Tuple._name == "Tuple"
    # nor a lock or condition made for the message (the judge's own, never walked)
    condition = pickle.dumps(_Stateful(boundary._sy, ("condition",),
                                       (None, {"_release_save": _Always()})), protocol=2)
    with pytest.raises(boundary.NotData):
        boundary.judge_loads(condition)
