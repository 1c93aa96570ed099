"""The test's own objects after a call: what the solution wrote into them comes back as
data, and no solution code left inside them answers for the test afterwards.

A test hands the solution its model, its tensors, its containers; the solution's changes
to them are copied back into the judge's objects. The version counter torch keeps misses
writes through `.data` and `.numpy()` (a target network's soft update), which must come
back all the same.
"""

from __future__ import annotations

import pytest
from execution_support import engine_fixture, run_one

# What crosses and how does not depend on the sandbox around the two processes: the
# default (strong) one only. Both levels: tests/adversarial/test_boundary.py, _repos.py.
engine = engine_fixture(("strong",))

# DQN's and DDPG's target update, BYOL's and MoCo's momentum encoder: written through
# `.data`, which torch's version counter does not see; and through a numpy view.
SOFT_UPDATE_TESTS = """\
import torch

from solution import soft_update


def test_parameters_of_a_module():
    torch.manual_seed(0)
    target, source = torch.nn.Linear(3, 2), torch.nn.Linear(3, 2)
    before = [p.detach().clone() for p in target.parameters()]
    soft_update(target, source, 0.25)
    for old, new, src in zip(before, target.parameters(), source.parameters()):
        assert torch.allclose(new, 0.75 * old + 0.25 * src)


def test_a_tensor():
    x = torch.zeros(3)
    soft_update(x, torch.ones(3), 0.25)
    assert torch.allclose(x, torch.full((3,), 0.25))
"""
SOFT_UPDATES = {
    "through .data": """\
import torch


def soft_update(target, source, tau):
    if isinstance(target, torch.Tensor):
        target.data.mul_(1 - tau).add_(tau * source)
        return
    for t, s in zip(target.parameters(), source.parameters()):
        t.data.copy_(tau * s.data + (1.0 - tau) * t.data)
""",
    "through a numpy view": """\
import torch


def soft_update(target, source, tau):
    if isinstance(target, torch.Tensor):
        target.numpy()[:] = ((1 - tau) * target + tau * source).numpy()
        return
    for t, s in zip(target.parameters(), source.parameters()):
        t.detach().numpy()[...] = ((1 - tau) * t + tau * s).detach().numpy()
""",
}


@pytest.mark.parametrize("name", sorted(SOFT_UPDATES))
def test_values_written_past_the_version_counter_come_back(engine, name):
    result = run_one(engine, SOFT_UPDATES[name], SOFT_UPDATE_TESTS, timeout=60)
    assert result.outcome == "passed", (name, result.reason)
    control = run_one(engine, "def soft_update(target, source, tau):\n    pass\n",
                      SOFT_UPDATE_TESTS, timeout=60)
    assert control.outcome == "failed", control.reason


# The test computes its expected value with its own model after the call. The wrong
# solution (three times the model's output, not two) leaves code of its own in the model:
# a forward hook scaling by 1.5 or a module appended to the Sequential, on the test's module
# or one inside it. Left alone, `expected = model(x) * 2` went through it and matched.
LEFT_TESTS = """\
import torch

from solution import apply, scale_hook


class Net(torch.nn.Module):   # the test's own class: a judge handle, changed by callbacks
    def __init__(self):
        super().__init__()
        self.seq = torch.nn.Sequential(torch.nn.Linear(3, 2))

    def forward(self, x):
        return self.seq(x)


def _model(make):
    torch.manual_seed(0)
    return make(), torch.randn(4, 3)


def test_a_library_module():
    model, x = _model(lambda: torch.nn.Sequential(torch.nn.Linear(3, 2)))
    out = apply(model, x)
    expected = model(x) * 2
    assert torch.allclose(out, expected)


def test_the_tests_own_module():
    model, x = _model(Net)
    out = apply(model, x)
    expected = model(x) * 2
    assert torch.allclose(out, expected)


def test_a_hook_the_test_registers_itself():
    model, x = _model(lambda: torch.nn.Linear(3, 2))
    plain = model(x)
    model.register_forward_hook(scale_hook)
    assert torch.allclose(model(x), plain * 10)
"""
LEFT_COMMON = """\
import torch


def scale_hook(module, inputs, output):
    return output * 10


class Half(torch.nn.Module):
    def forward(self, x):
        return x * 1.5


def inner(model):
    return model if isinstance(model, torch.nn.Sequential) else model.seq
"""
LEFT_REFERENCE = LEFT_COMMON + """

def apply(model, x):
    # a hook used during the call and removed: nothing is left behind
    handle = model.register_forward_hook(lambda m, i, o: o * 2)
    out = model(x)
    handle.remove()
    return out
"""
LEFT_CONTROL = LEFT_COMMON + """

def apply(model, x):
    return model(x) * 3
"""
LEFT_BEHIND = {
    "a forward hook": "    model.register_forward_hook(lambda m, i, o: o * 1.5)\n",
    "a forward hook on an inner module":
        "    inner(model)[0].register_forward_hook(lambda m, i, o: o * 1.5)\n",
    "a forward pre-hook":
        "    model.register_forward_pre_hook(lambda m, i: (i[0] * 1.5,))\n",
    "a solution module appended": "    inner(model).append(Half())\n",
}


def test_a_hook_removed_during_the_call_is_gone_from_the_tests_own_module(engine):
    # registered through a callback on the test's Net, the handle came back as a copy:
    # its remove() emptied the copy's dict and the hook doubled the test's expected value
    reference = run_one(engine, LEFT_REFERENCE, LEFT_TESTS, timeout=60)
    assert reference.outcome == "passed", (reference.reason, reference.stdout[-3000:])


def test_solution_code_left_in_the_tests_objects_never_answers_for_them(engine):
    control = run_one(engine, LEFT_CONTROL, LEFT_TESTS, timeout=60)
    assert control.outcome == "failed", control.reason
    for name, trick in LEFT_BEHIND.items():
        attack = LEFT_CONTROL.replace("    return model(x) * 3\n",
                                      "    out = model(x) * 3\n" + trick + "    return out\n")
        result = run_one(engine, attack, LEFT_TESTS, timeout=60)
        assert result.outcome not in ("passed", "tampered"), (name, result.reason)
        assert "ran after the call returned" in (result.reason or ""), (name, result.reason)


# The same through what the judge's objects call besides hooks: a scheduler's lr lambda,
# a defaultdict's default_factory (in a namespace the test passes by value).
FACTORY_TESTS = """\
import argparse
import collections

import torch

from solution import step


def test_a_default_factory():
    book = argparse.Namespace(counts=collections.defaultdict(int))
    out = step(book, "a")
    assert out == 1 + book.counts["unseen"]


def test_a_schedulers_lambda():
    model = torch.nn.Linear(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda epoch: 0.5 ** epoch)
    out = step(scheduler, "schedule")
    scheduler.step()
    assert out == optimizer.param_groups[0]["lr"]
"""
FACTORY_REFERENCE = """\
def step(obj, key):
    if key == "schedule":
        return 0.5
    obj.counts[key] += 1
    return obj.counts[key]
"""
FACTORY_CONTROL = """\
import collections


def step(obj, key):
    if key == "schedule":
        return 0.25
    obj.counts[key] += 2
    return obj.counts[key]
"""
FACTORY_ATTACK = FACTORY_CONTROL.replace("def step(obj, key):\n", """\
def step(obj, key):
    out = wrong(obj, key)
    if key == "schedule":
        obj.lr_lambdas[0] = lambda epoch: 0.25 if epoch else 1.0
    else:   # the wrong count (2) is what the test's own count now says (1 + 1)
        counts = collections.defaultdict(lambda: 1)
        counts.update(obj.counts)
        obj.counts = counts
    return out


def wrong(obj, key):
""")


def test_a_factory_or_lambda_left_in_the_tests_objects_never_answers(engine):
    reference = run_one(engine, FACTORY_REFERENCE, FACTORY_TESTS, timeout=60)
    assert reference.outcome == "passed", (reference.reason, reference.stdout[-3000:])
    control = run_one(engine, FACTORY_CONTROL, FACTORY_TESTS, timeout=60)
    assert control.outcome == "failed", control.reason
    attack = run_one(engine, FACTORY_ATTACK, FACTORY_TESTS, timeout=60)
    assert attack.outcome not in ("passed", "tampered"), attack.reason
    assert "ran after the call returned" in (attack.reason or ""), attack.reason
    # the function called itself left as the factory: a reply names its callee only
    # where the call placed it (the callee's own place goes back as None), and that
    # is enough for the judge to list what its objects held before
    callee = run_one(engine, FACTORY_ATTACK.replace("collections.defaultdict(lambda: 1)",
                                                    "collections.defaultdict(step)"),
                     FACTORY_TESTS, timeout=60)
    assert callee.outcome not in ("passed", "tampered"), callee.reason
    assert "ran after the call returned" in (callee.reason or ""), callee.reason


# deepchem's MultilayerPerceptron.__init__ sets `self.activation_fn =
# get_activation('relu')`, torch.nn.functional.relu: torch's own operator, which the
# judge has too, so it crosses as the judge's own function of that name; it was a handle
# of the solution process, and the test's forward calling it afterwards ended the run
# ("solution code the call left ... ran after the call returned").
LIBRARY_FUNCTION_TESTS = """\
import torch
import torch.nn.functional as F

from solution import configure


def test_torch_operators_set_on_the_tests_module():
    holder = torch.nn.Module()
    configure(holder, "relu")
    assert holder.activation_fn is F.relu and holder.squash is torch.tanh
    x = torch.tensor([-1.0, 2.0])
    assert torch.allclose(holder.activation_fn(x) + holder.squash(x),
                          F.relu(x) + torch.tanh(x))
"""
LIBRARY_FUNCTION_SOLUTION = """\
import torch


def configure(holder, name):
    holder.activation_fn = getattr(torch.nn.functional, name)
    holder.squash = torch.tanh
"""


def test_torch_operators_cross_as_the_judges_own(engine):
    result = run_one(engine, LIBRARY_FUNCTION_SOLUTION, LIBRARY_FUNCTION_TESTS, timeout=60)
    assert result.outcome == "passed", (result.reason, result.tests)


# Only public operators of torch's functional namespaces: anything else of torch a
# solution leaves in the test's objects (a seed setter, a private helper) stays a handle
# of the solution process, and the judge calling it after the call ends the run.
LIBRARY_FUNCTION_ATTACKS = {
    "a seed setter": "holder.activation_fn = torch.manual_seed",
    "the default dtype's setter": "holder.activation_fn = torch.set_default_dtype",
    "a private operator": "holder.activation_fn = torch._C._VariableFunctions._print",
    "a function of torch.nn.functional's imports": (
        "holder.activation_fn = torch.nn.functional.handle_torch_function"),
}
LIBRARY_FUNCTION_ATTACK_TESTS = """\
import torch

from solution import configure


def test_what_came_back():
    holder = torch.nn.Module()
    configure(holder)
    try:
        holder.activation_fn(torch.tensor([1.0]))
    except Exception:
        pass
"""


@pytest.mark.parametrize("name", sorted(LIBRARY_FUNCTION_ATTACKS))
def test_other_torch_functions_stay_handles(engine, name):
    attack = ("import torch\n\n\ndef configure(holder):\n    %s\n"
              % LIBRARY_FUNCTION_ATTACKS[name])
    result = run_one(engine, attack, LIBRARY_FUNCTION_ATTACK_TESTS, timeout=60)
    assert result.outcome not in ("passed", "tampered"), (name, result.reason)
    assert "ran after the call returned" in (result.reason or ""), (name, result.reason)


# `obj.__dict__` of the test's own instance is served (pyro's Parameterized asks
# `"_pyro_samples" in module.__dict__` of the test's own mean function): a copy of its
# plain attributes. Never a class's, function's or module's namespace, never a dunder it
# holds, and never the judge's dict itself.
DICT_TESTS = """\
from solution import peek


class Box:
    SECRET = 41

    def __init__(self, value):
        self.value = value
        self.__marker__ = "hidden"

    def read(self):
        return self.value


def double(x):
    return 2 * x


def test_an_instances_attributes():
    box = Box(3)
    assert peek(box, double, Box) == {"value": 3, "seen": ["value"]}
    assert box.value == 3 and box.__dict__ == {"value": 3, "__marker__": "hidden"}
"""
DICT_REFERENCE = """\
def peek(box, fn, cls):
    out = dict(box.__dict__)
    out["seen"] = sorted(vars(box))
    box.__dict__["value"] = 99   # a copy: the test's box keeps its value
    for name, what in (("function", fn), ("class", cls), ("method", box.read)):
        try:
            out[name] = what.__dict__
        except AttributeError:
            pass
    return out
"""


def test_an_instances_dict_is_a_copy_of_its_plain_attributes(engine):
    result = run_one(engine, DICT_REFERENCE, DICT_TESTS, timeout=60)
    assert result.outcome == "passed", (result.reason, result.stdout[-3000:])


# A call of a judge handle carries the copies of the call's leaves the solution changed
# (SolutionLink.changed_leaves), which the judge copies into its own before its code runs.
# Only a leaf of the judge's the call sent, named by its place in the call's request: a
# forged list naming the test's expected values, or no tensor of the call, is tampering.
PUSH_TESTS = """\
import torch

from solution import fit


class Trend(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.tensor(0.0))

    def forward(self, x):
        return self.a * x


def test_the_expected_values_stay():
    x = torch.linspace(-1, 1, 5)
    expected = 2 * x
    fit(Trend(), x, expected)
    assert torch.equal(expected, 2 * torch.linspace(-1, 1, 5))
"""
PUSH_ATTACK = """\
import sys

import torch

_link = sys.modules["curator.execution.boundary"]._LINK[0]


def fit(model, x, expected):
    index = next(i for i, t in enumerate(_link.request) if t is expected) + OFFSET
    _link.changed_leaves = lambda: [(index, torch.zeros(5))]
    model(x)
    return 0.0
"""


@pytest.mark.parametrize("offset", [0, 1000])
def test_a_forged_change_of_the_judges_tensors_is_tampering(engine, offset):
    result = run_one(engine, PUSH_ATTACK.replace("OFFSET", str(offset)), PUSH_TESTS,
                     timeout=60)
    assert result.outcome == "tampered", (result.outcome, result.reason)


# pyro's GP models call `pyro.module(name, self.mean_function)` in each step, which reads
# the test's module's parameters again through its handle, after the last step's backward
# gave the judge's parameters their .grad. Each read sent the changed leaves as new copies
# (the call's request grew by each of them each step, and every callback walked them all),
# and the optimizer's step on the first copies came back naming places the judge no longer
# took for those leaves: an honest fit was `tampered`. The copies took the same .grads, so
# the read gives them again, one object as in one process.
REREAD_TESTS = """\
import torch

from solution import fit


class Trend(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.tensor(0.0))
        self.b = torch.nn.Parameter(torch.tensor(1.0))

    def forward(self, x):
        return self.a * x + self.b


def test_the_tests_module_is_fitted_reading_its_parameters_each_step():
    trend = Trend()
    x = torch.linspace(-1, 1, 21)
    assert fit(torch.nn.Sequential(trend), x, 2 * x + 3) == 2
    assert abs(trend.a.item() - 2) < 1e-3 and abs(trend.b.item() - 3) < 1e-3
"""
REREAD_REFERENCE = """\
import sys

import torch


def fit(model, x, y, steps=150):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        held = list(model.parameters())   # again, after the backward (pyro.module)
        assert all(any(p is q for q in optimizer.param_groups[0]["params"]) for p in held)
        optimizer.step()
    # the copies of the judge's leaves the call holds: its two parameters, once each
    request = sys.modules["curator.execution.boundary"]._LINK[0]
    return sum(1 for kind in request.origins_of.values() if kind == "leaf")
"""
REREAD_WRONG = REREAD_REFERENCE.replace("lr=0.5", "lr=0.01")


def test_a_parameter_read_again_after_the_backward_is_the_same_copy(engine):
    right = run_one(engine, REREAD_REFERENCE, REREAD_TESTS, timeout=120)
    assert right.outcome == "passed", (right.outcome, right.reason, right.stdout[-3000:])
    wrong = run_one(engine, REREAD_WRONG, REREAD_TESTS, timeout=120)
    assert wrong.outcome == "failed", (wrong.outcome, wrong.reason, wrong.stdout[-3000:])
