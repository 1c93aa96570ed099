"""Autograd across the boundary: a test builds a graph in the judge (`t` requiring grad,
`u = f(t)`) and the target differentiates it (neurodiffeq's `diff`, `grad`; gradient
penalties; `loss.backward()`). The tensors cross as data, so the solution process asks
the judge to run torch's autograd on the judge's own tensors, with data arguments; the
results are judge tensors again (higher orders work) and a result returned unchanged is
the judge's own object with its graph.
"""

from __future__ import annotations

import pytest
from execution_support import engine_fixture, run_one

# What crosses and how does not depend on the sandbox around the two processes: the
# default (strong) one only. Both levels: tests/adversarial/test_boundary.py, _repos.py.
engine = engine_fixture(("strong",))

DIFF_TESTS = """\
import pytest
import torch
from torch import nn

from solution import (backprop, diff, grad_after_backward, grad_all, penalty,
                      weighted_backward)


def test_first_order():
    t = torch.rand(10, 1, requires_grad=True)
    u = t ** 3
    assert torch.allclose(diff(u, t), 3 * t ** 2)


def test_second_order_in_one_call():
    t = torch.rand(10, 1, requires_grad=True)
    u = t ** 3
    assert torch.allclose(diff(u, t, order=2), 6 * t)
    assert torch.allclose(diff(torch.exp(t), t, order=3), torch.exp(t))


def test_second_order_across_calls_and_in_the_judge():
    t = torch.rand(10, 1, requires_grad=True)
    u = torch.sin(t)
    d1 = diff(u, t)
    assert d1.grad_fn is not None
    assert torch.allclose(diff(d1, t), -torch.sin(t))
    d2, = torch.autograd.grad(d1, t, torch.ones_like(d1), create_graph=True)
    assert torch.allclose(d2, -torch.sin(t))


def test_through_a_network_and_non_leaf_inputs():
    torch.manual_seed(0)
    base = torch.rand(16, requires_grad=True)
    r, s = base.reshape(-1, 1), (base * 2).reshape(-1, 1)
    net = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1))
    u = net(torch.cat([r, s], dim=1))
    expected = torch.autograd.grad(u, (r, s), torch.ones_like(u), create_graph=True)
    got = grad_all(u, r, s)
    assert all(torch.allclose(a, b) for a, b in zip(got, expected))
    lap = sum(diff(g, x) for g, x in zip(got, (r, s)))
    expected_lap = sum(torch.autograd.grad(g, x, torch.ones_like(g), create_graph=True)[0]
                       for g, x in zip(expected, (r, s)))
    assert torch.allclose(lap, expected_lap)


def test_backward_reaches_the_judges_leaves():
    w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    backprop((w ** 2).sum())
    assert torch.allclose(w.grad, 2 * w.detach())


def test_backward_of_the_solutions_own_computation():
    w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    net = nn.Linear(3, 1)
    u = net(w ** 2)
    weighted_backward(u, torch.tensor([3.0]))
    assert torch.allclose(w.grad, 3 * net.weight.detach()[0] * 2 * w.detach())
    assert torch.allclose(net.bias.grad, torch.tensor([3.0]))


def test_grad_read_in_the_solution_after_backward():
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    seen = grad_after_backward((w ** 3).sum(), w)
    assert torch.allclose(seen, 3 * w.detach() ** 2)
    assert torch.allclose(w.grad, 3 * w.detach() ** 2)


def test_a_gradient_penalty_of_a_judge_tensor_stays_the_solutions_own():
    # the solution's non-linear step differentiated with create_graph with respect to the
    # judge's tensor itself: the solution's own autograd has the whole answer
    base = torch.rand(5, requires_grad=True)
    x = base * 2
    p = penalty(x)
    g, = torch.autograd.grad((x ** 3).sum(), x, create_graph=True)
    expected = (g.norm() - 1) ** 2
    assert torch.allclose(p, expected)
    want, = torch.autograd.grad(expected, base, retain_graph=True)
    p.backward()
    assert torch.allclose(base.grad, want)
"""

DIFF_REFERENCE = """\
import torch
from torch import autograd

# neurodiffeq does this at import: a TorchFunctionMode under which torch calls
# torch.autograd.grad by its public name again
torch.set_default_device("cpu")


def diff(u, t, order=1):
    der = u
    for _ in range(order):
        der, = autograd.grad(der, t, grad_outputs=torch.ones_like(der), create_graph=True,
                             allow_unused=True)
    return der


def grad_all(u, *xs):
    return [g.requires_grad_(True) for g in
            autograd.grad(u, xs, grad_outputs=torch.ones_like(u), create_graph=True)]


def backprop(loss):
    loss.backward()


def weighted_backward(u, weight):
    (u * weight).sum().backward()


def grad_after_backward(loss, w):
    loss.backward()
    return w.grad.clone()


def penalty(x):
    g, = autograd.grad((x ** 3).sum(), x, create_graph=True)
    return (g.norm() - 1) ** 2
"""

# Each wrong in one function: the derivative scaled, the gradient penalty's weight
# dropped, and a stub.
WRONG = {
    "scaled": DIFF_REFERENCE.replace("grad_outputs=torch.ones_like(der)",
                                     "grad_outputs=1.5 * torch.ones_like(der)"),
    "unweighted": DIFF_REFERENCE.replace("(u * weight).sum()", "u.sum()"),
    "stub": DIFF_REFERENCE.replace("    der = u\n", "    return torch.zeros_like(t)\n"),
}


def test_a_reference_that_differentiates_the_judges_graph_passes(engine):
    result = run_one(engine, DIFF_REFERENCE, DIFF_TESTS, timeout=60)
    assert result.outcome == "passed", (result.reason, result.stdout[-4000:],
                                        result.stderr[-2000:])
    assert not result.evidence


@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_wrong_derivative_fails(engine, name):
    result = run_one(engine, WRONG[name], DIFF_TESTS, timeout=60)
    assert result.outcome == "failed", (name, result.outcome, result.reason)


LIMIT_TESTS = """\
import torch

from solution import square_then_diff


def test_mixed_higher_order():
    t = torch.rand(4, 1, requires_grad=True)
    u = t ** 2
    assert torch.allclose(square_then_diff(u, t), 4 * t ** 3)
"""
LIMIT_SOLUTION = """\
import torch


def square_then_diff(u, t):
    # d(u**2)/dt with create_graph: the solution's own non-linear step on the judge's
    # tensor cannot be differentiated again honestly, so the run ends with that reason
    v = u ** 2
    return torch.autograd.grad(v, t, torch.ones_like(v), create_graph=True)[0]
"""


def test_mixing_that_cannot_be_forwarded_honestly_ends_with_a_reason(engine):
    result = run_one(engine, LIMIT_SOLUTION, LIMIT_TESTS, timeout=60)
    assert result.outcome == "error", (result.outcome, result.reason)
    assert "create_graph" in (result.reason or ""), result.reason


# Attacks: the solution process speaks the autograd frame itself, naming tensors the judge
# never sent, or sending something that is not data where a gradient goes.
ATTACK_TESTS = """\
import torch

from solution import diff


def test_first_order():
    t = torch.rand(6, 1, requires_grad=True)
    u = t ** 3
    assert torch.allclose(diff(u, t), 3 * t ** 2)
"""
ATTACK_HEAD = """\
import torch
from curator.execution import boundary


def _forged(outputs, grads, inputs, op="grad"):
    link = boundary._LINK[0]
    return link.ask_autograd(op, outputs, grads, inputs,
                             {"retain_graph": True, "create_graph": False})

"""
ATTACKS = {
    "forged_index": ATTACK_HEAD + """\
def diff(u, t):
    try:
        _forged([10 ** 6], [torch.ones(6, 1)], [0])
    except Exception:
        pass
    return torch.zeros_like(t)
""",
    "not_a_tensor": ATTACK_HEAD + """\
def diff(u, t):
    try:
        _forged([0], ["print('x')"], [1])
    except Exception:
        pass
    return torch.zeros_like(t)
""",
    "unknown_op": ATTACK_HEAD + """\
def diff(u, t):
    try:
        _forged([0], [torch.ones(6, 1)], [1], op="eval")
    except Exception:
        pass
    return torch.zeros_like(t)
""",
}
ATTACK_CONTROL = """\
import torch


def diff(u, t):
    return torch.zeros_like(t)
"""


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_forged_autograd_frames_cannot_pass(engine, name):
    control = run_one(engine, ATTACK_CONTROL, ATTACK_TESTS, timeout=60)
    assert control.outcome == "failed", (control.outcome, control.reason)
    result = run_one(engine, ATTACKS[name], ATTACK_TESTS, timeout=60)
    assert result.outcome == "tampered", (name, result.outcome, result.reason)


# backpack's R_op (under Laplace's fit, curvlinops' GGN): the Jacobian of a model's output
# with respect to its parameters times v, as a double backward: g = grad(out, params, ws,
# create_graph=True) for zeros ws of its own, then grad(g, ws, v). The model is the
# test's own class (a handle in the solution process), its parameters come from iterating
# it, and the first grad answered None for them (they were data of their own request, not
# names in the call's), so the second failed ("Expected output to be a torch.Tensor");
# with them named, `ws` requiring grad under create_graph was the limit.
R_OP_TESTS = """\
import torch
from torch import nn

from solution import r_op


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.fc2 = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


def jvp(out, params, vs):
    ws = torch.zeros_like(out).requires_grad_(True)
    gs = torch.autograd.grad(out, params, grad_outputs=ws, create_graph=True)
    return torch.autograd.grad(gs, ws, grad_outputs=vs)[0]


def test_r_op_through_the_tests_own_model():
    torch.manual_seed(0)
    net = Net()
    x = torch.randn(5, 3)
    params = list(net.parameters())
    vs = [torch.randn_like(p) for p in params]
    expected = jvp(net(x), params, vs)
    assert torch.allclose(r_op(net, x, vs), expected, atol=1e-6)
    last = list(net.fc2.parameters())
    assert torch.allclose(r_op(net, x, vs[2:], net.fc2), jvp(net(x), last, vs[2:]),
                          atol=1e-6)
"""
R_OP = """\
import torch


def r_op(model, x, vs, layer=None):
    out = model(x)
    params = list((layer or model).parameters())
    ws = torch.zeros_like(out).requires_grad_(True)
    gs = torch.autograd.grad(out, params, grad_outputs=ws, create_graph=True,
                             retain_graph=True, allow_unused=True)
    re = torch.autograd.grad(gs, ws, grad_outputs=vs, create_graph=True,
                             retain_graph=True, allow_unused=True)
    return re[0].detach()
"""


def test_a_double_backward_through_the_tests_model_parameters(engine):
    result = run_one(engine, R_OP, R_OP_TESTS, timeout=60)
    assert result.outcome == "passed", (result.reason, result.stdout[-4000:])
    doubled = R_OP.replace("grad_outputs=vs", "grad_outputs=[2 * v for v in vs]")
    wrong = run_one(engine, doubled, R_OP_TESTS, timeout=60)
    assert wrong.outcome == "failed", (wrong.outcome, wrong.reason)


# curvlinops' KFAC (under Laplace's KronLLLaplace.fit) maps the parameters it was given to
# the layers of the model by `data_ptr()`, from `named_modules()` and each layer's
# `named_parameters()`. With the test's own model a handle, each read of a parameter was a
# copy of its own (and a (name, parameter) pair was data of a request of its own), so no
# layer held any: "Found parameters in un-supported layers".
SAME_TESTS = """\
import torch
from torch import nn

from solution import placed, read_twice


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.fc2 = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))

    def bump(self):
        self.fc1.weight.data.add_(1.0)


def test_a_parameter_read_again_is_the_same():
    net = Net()
    assert placed(net) == {"fc1": {"weight": 0, "bias": 1}, "fc2": {"weight": 2, "bias": 3}}


def test_the_parameters_the_test_gives_are_those_the_model_holds():
    net = Net()
    assert placed(net, list(net.fc2.parameters())) == {"fc2": {"weight": 0, "bias": 1}}


def test_a_parameter_the_judge_changed_since_is_read_anew():
    net = Net()
    assert read_twice(net) == 12.0
"""
SAME = """\
def placed(model, given=None):
    params = list(model.parameters()) if given is None else given
    ids = [p.data_ptr() for p in params]
    positions = {}
    for name, module in model.named_modules():
        found = {key: ids.index(p.data_ptr())
                 for key, p in module.named_parameters(recurse=False) if p.data_ptr() in ids}
        if found:
            positions[name] = found
    return positions


def read_twice(model):
    before = model.fc1.weight
    model.bump()
    after = model.fc1.weight
    return float((after - before).sum())
"""


def test_a_judge_parameter_read_twice_in_a_call_is_one_copy(engine):
    result = run_one(engine, SAME, SAME_TESTS, timeout=60)
    assert result.outcome == "passed", (result.reason, result.stdout[-4000:])
    wrong = run_one(engine, SAME.replace("p.data_ptr() in ids}", "p.data_ptr() in ids[1:]}"),
                    SAME_TESTS, timeout=60)
    assert wrong.outcome == "failed", (wrong.outcome, wrong.reason)


# A library the environment preloads that binds torch.autograd.grad at import (curvlinops'
# `from torch.autograd import grad`, imported by Laplace's warm workers) held torch's own
# function: its grad of the test's model output with respect to the model's parameters
# (handle, copies) failed in the solution process, "The differentiated Tensor at index 0
# appears to not have been used in the graph" (KronLLLaplace.fit).
BOUND_LIBRARY = """\
from torch.autograd import grad


def output_grads(model, x, params):
    return grad(model(x).sum(), params)
"""
BOUND_TARGET = """\
import boundlib


def grads(model, x):
    return boundlib.output_grads(model, x, list(model.parameters()))
"""
BOUND_TESTS = """\
import torch
from torch import nn

from pkg.target import grads


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.fc2 = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


def test_grads_of_the_tests_own_model():
    net = Net()
    x = torch.randn(5, 3)
    expected = torch.autograd.grad(net(x).sum(), list(net.parameters()))
    got = grads(net, x)
    assert len(got) == 4
    for a, b in zip(got, expected):
        assert torch.allclose(a, b, atol=1e-6)
"""


def test_a_preloaded_library_that_bound_grad_reaches_the_judge(engine, tmp_path):
    """The library is installed in the environment (a venv that sees this interpreter's
    packages), so the warm worker preloads it, as Laplace's imports curvlinops."""
    import subprocess
    import sys
    import sysconfig

    from execution_support import repo_job, write_repo

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    purelib = subprocess.run([python, "-c", "import sysconfig; "
                              "print(sysconfig.get_paths()['purelib'])"], check=True,
                             capture_output=True, text=True).stdout.strip()
    assert purelib != sysconfig.get_paths()["purelib"]
    inside = purelib[len(str(tmp_path)) + 1:]
    write_repo(tmp_path, {inside + "/boundlib/__init__.py": BOUND_LIBRARY,
                          inside + "/suite.pth": sysconfig.get_paths()["purelib"] + "\n"})
    root = write_repo(tmp_path / "repo", {
        "pkg/__init__.py": "", "pkg/target.py": BOUND_TARGET,
        "tests/test_target.py": BOUND_TESTS})
    wrong_target = BOUND_TARGET.replace("list(model.parameters())",
                                        "list(model.parameters())[::-1]")
    made, wrong = (repo_job(root, "pkg/target.py", text, "tests/test_target.py", "grads",
                            reference=text == BOUND_TARGET, timeout=120, python=python)
                   for text in (BOUND_TARGET, wrong_target))
    made.env_preload = wrong.env_preload = ["boundlib"]
    results = {r.job_id: r for r in engine.run([made, wrong])}
    right, bad = results[made.job_id], results[wrong.job_id]
    assert right.outcome == "passed", (right.outcome, right.reason, right.stdout[-4000:])
    assert bad.outcome == "failed", (bad.outcome, bad.reason)


# A tensor hook on a layer's output, registered from a forward hook on a layer of the
# test's own model (curvlinops' KFAC in Laplace's `fit`, Grad-CAM): the layer runs in the
# judge, so the output the hook is given is a copy, and a hook on the copy never fired
# (Laplace: KeyError 'model.fc2'). It is registered on the judge's own tensor instead.
HOOK_TESTS = """\
import torch
from torch import nn

from solution import output_grad, silence_first_layer


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc = nn.Linear(3, 4)
        self.out = nn.Linear(4, 1)

    def forward(self, x):
        return self.out(torch.tanh(self.fc(x)))


def in_process(model, x):
    grads = []

    def on_forward(module, inputs, output):
        output.register_hook(grads.append)

    handle = model.fc.register_forward_hook(on_forward)
    for batch in x.split(2):   # batch after batch, as KFAC's loop over the data
        (model(batch) ** 2).sum().backward()
    handle.remove()
    return torch.cat(grads), model.fc.weight.grad


def test_the_hook_sees_the_layers_output_gradient():
    x = torch.randn(5, 3)
    got, want = output_grad(Net(), x), in_process(Net(), x)
    assert torch.allclose(got[0], want[0]) and torch.allclose(got[1], want[1])


def test_the_gradient_the_hook_returns_is_the_one_backward_uses():
    model, x = Net(), torch.randn(5, 3)
    silence_first_layer(model, x)
    assert torch.count_nonzero(model.fc.weight.grad) == 0
    assert torch.count_nonzero(model.out.weight.grad) > 0
    model.zero_grad()
    model(x).sum().backward()   # the hook went with the call
    assert torch.count_nonzero(model.fc.weight.grad) > 0
"""
HOOKED = """\
import torch


def output_grad(model, x):
    grads = []

    def on_forward(module, inputs, output):
        output.register_hook(lambda g: grads.append(g.clone()))

    weight = model.fc.weight   # its copy, whose .grad the judge's backward fills
    handle = model.fc.register_forward_hook(on_forward)
    for batch in x.split(2):
        (model(batch) ** 2).sum().backward()
    handle.remove()
    return torch.cat(grads), weight.grad


def silence_first_layer(model, x):
    handles = []

    def on_forward(module, inputs, output):
        handles.append(output.register_hook(lambda g: g * 0))

    handle = model.fc.register_forward_hook(on_forward)
    model(x).sum().backward()
    handle.remove()
    for h in handles:
        h.remove()
"""
HOOKED_WRONG = """\
import torch


def output_grad(model, x):
    (model(x) ** 2).sum().backward()
    return torch.zeros(5, 4), model.fc.weight.grad


def silence_first_layer(model, x):
    model(x).sum().backward()
"""


def test_a_tensor_hook_on_a_layers_output_in_the_judge_fires_there(engine):
    control = run_one(engine, HOOKED_WRONG, HOOK_TESTS, timeout=60)
    assert [t["outcome"] for t in control.tests] == ["failed", "failed"], control.tests
    result = run_one(engine, HOOKED, HOOK_TESTS, timeout=60)
    assert result.outcome == "passed", (result.outcome, result.reason)
