"""Objects that belong together stay together across the boundary: an optimizer and the
model it optimizes are both handles or both copies, so the solution's `optimizer.step()`
moves the test's own model (ignite's create_supervised_trainer with the test's
DummyModel: the weight the test read never moved)."""

from __future__ import annotations

from execution_support import engine_fixture, repo_job, run_one, write_repo

engine = engine_fixture(("strong",))

TRAIN_TESTS = """\
import copy

import pytest
import torch
from torch import nn

from torch.utils.data import DataLoader, TensorDataset

from solution import jacobian_norm, make_update, train_step


class Net(nn.Module):   # the test's own class: crosses as a handle
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 1)

    def forward(self, x):
        return self.fc(x)


def build(kind, optimizer_kind):
    torch.manual_seed(0)
    model = Net() if kind == "own" else nn.Sequential(nn.Linear(2, 1))
    if optimizer_kind == "sgd":
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    else:
        optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
    return model, optimizer, scheduler


def expected_after(kind, optimizer_kind, batches, with_scheduler):
    model, optimizer, scheduler = build(kind, optimizer_kind)
    for x, y in batches:
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
        if with_scheduler:
            scheduler.step()
    return model, optimizer


BATCHES = [(torch.tensor([[1.0, 2.0], [3.0, -1.0]]), torch.tensor([[1.0], [0.0]])),
           (torch.tensor([[0.5, 1.0], [2.0, 2.0]]), torch.tensor([[0.0], [2.0]]))]


@pytest.mark.parametrize("kind", ["own", "sequential"])
@pytest.mark.parametrize("optimizer_kind", ["sgd", "adam"])
def test_a_train_step_moves_the_tests_model(kind, optimizer_kind):
    model, optimizer, scheduler = build(kind, optimizer_kind)
    for batch in BATCHES:
        train_step(model, optimizer, nn.MSELoss(), batch, scheduler)
    twin, twin_optimizer = expected_after(kind, optimizer_kind, BATCHES, True)
    for mine, theirs in zip(model.parameters(), twin.parameters()):
        assert torch.allclose(mine, theirs), (mine, theirs)
    assert optimizer.param_groups[0]["lr"] == twin_optimizer.param_groups[0]["lr"]
    if optimizer_kind == "adam":
        state = optimizer.state[next(iter(model.parameters()))]
        assert int(state["step"]) == len(BATCHES)


@pytest.mark.parametrize("optimizer_kind", ["sgd", "adam"])
def test_an_update_function_made_once_moves_the_tests_model(optimizer_kind):
    model, optimizer, _ = build("own", optimizer_kind)
    update = make_update(model, optimizer, nn.functional.mse_loss)
    for batch in BATCHES:
        update(batch)
    twin, _ = expected_after("own", optimizer_kind, BATCHES, False)
    for mine, theirs in zip(model.parameters(), twin.parameters()):
        assert torch.allclose(mine, theirs), (mine, theirs)


def test_batches_the_tests_loader_gives_are_data():
    # the batches require grad in the judge (slices of X): the solution's gradient with
    # create_graph down to its own copy of the model needs nothing of the judge's graph
    torch.manual_seed(0)
    X = torch.randn(6, 3)
    X.requires_grad = True
    loader = DataLoader(TensorDataset(X, torch.randn(6, 1)), batch_size=3)
    model = nn.Linear(3, 1)
    expected = sum((X[i:i + 3].detach().sum(0) ** 2).sum() for i in (0, 3))
    assert torch.allclose(jacobian_norm(model, loader), expected)
"""
TRAIN_REFERENCE = """\
import torch


def jacobian_norm(model, loader):
    total = 0
    for x, _ in loader:
        (g,) = torch.autograd.grad(model(x).sum(), model.weight, create_graph=True)
        total = total + (g ** 2).sum()
    return total.detach()


def train_step(model, optimizer, loss_fn, batch, scheduler=None):
    x, y = batch
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    if scheduler is not None:
        scheduler.step()
    return loss.item()


def make_update(model, optimizer, loss_fn):
    def update(batch):
        return train_step(model, optimizer, loss_fn, batch)
    return update
"""
# wrong: the scheduler never steps
TRAIN_WRONG = TRAIN_REFERENCE.replace("        scheduler.step()", "        pass")


def _reference_passes_and_wrong_fails(engine, reference, wrong, tests):
    """The reference passes and the wrong solution fails: the wrong run, for its tests."""
    result = run_one(engine, reference, tests, timeout=120)
    assert result.outcome == "passed", (result.reason, result.stdout[-3000:])
    failed = run_one(engine, wrong, tests, timeout=120)
    assert failed.outcome == "failed", failed.reason
    return failed


def test_an_optimizer_steps_the_model_it_was_made_for(engine):
    wrong = _reference_passes_and_wrong_fails(engine, TRAIN_REFERENCE, TRAIN_WRONG,
                                              TRAIN_TESTS)
    failed = {t["id"].split("::")[-1] for t in wrong.tests if t["outcome"] == "failed"}
    assert failed == {"test_a_train_step_moves_the_tests_model[%s-%s]" % (o, k)
                      for o in ("sgd", "adam") for k in ("own", "sequential")}, wrong.tests


# An enum member of the repository's own class crosses as its class and name (torchgeo's
# weights: the test patches the member's value, `monkeypatch.setattr(weights.value,
# 'url', tmp)`, and calls the model builder with the member). Sent as `Kind(value)`, a
# lookup by value, the patched value (or one holding a module, equal only to itself) was
# no member of the solution process's class: "could not read the call's arguments".
ENUM_API = """\
import dataclasses
import enum

import torch


@dataclasses.dataclass
class Weights:
    url: str
    transforms: torch.nn.Module


class Kind(enum.Enum):
    A = Weights("https://example.invalid/a", torch.nn.Identity())
    B = Weights("https://example.invalid/b", torch.nn.Identity())
"""
ENUM_MODELS = """\
from pkg.api import Kind


def load_url(weights):
    if isinstance(weights, str):
        return Kind[weights]
    if weights.value.url.startswith("/"):
        with open(weights.value.url) as f:
            return f.read()
    return weights
"""
ENUM_TESTS = """\
import pytest

from pkg.api import Kind
from pkg.models import load_url


@pytest.fixture
def patched(tmp_path, monkeypatch):
    path = tmp_path / "a.pth"
    path.write_text("weights of A")
    monkeypatch.setattr(Kind.A.value, "url", str(path))
    return Kind.A


def test_a_member_whose_value_the_test_patched(patched):
    assert load_url(patched) == "weights of A"


def test_members_come_back_as_the_tests_own():
    assert load_url("B") is Kind.B
    assert load_url(Kind.B) is Kind.B
    assert Kind.B.value.url == "https://example.invalid/b"
"""


def enum_job(root, text, reference=False):
    return repo_job(root, "pkg/models.py", text, "tests/test_enum.py", "load_url",
                    reference, problem_id="enum")


def test_an_enum_member_crosses_as_the_member_the_test_patched(engine, tmp_path):
    root = write_repo(tmp_path / "repo", {
        "pkg/__init__.py": "", "pkg/api.py": ENUM_API, "pkg/models.py": ENUM_MODELS,
        "tests/test_enum.py": ENUM_TESTS})
    wrong = ENUM_MODELS.replace("f.read()", "f.read().upper()")
    jobs = [enum_job(root, ENUM_MODELS, True), enum_job(root, wrong)]
    results = {r.job_id: r for r in engine.run(jobs)}
    reference, candidate = (results[j.job_id] for j in jobs)
    assert reference.outcome == "passed", (reference.reason, reference.stdout[-3000:])
    assert candidate.outcome == "failed", (candidate.reason, candidate.stdout[-3000:])
    outcomes = {t["id"].split("::")[-1]: t["outcome"] for t in candidate.tests}
    assert outcomes == {"test_a_member_whose_value_the_test_patched": "failed",
                        "test_members_come_back_as_the_tests_own": "passed"}, outcomes


# A layer the solution reads from the test's own model (a handle) is that model's layer:
# a forward hook registered on it fires in the model's forward (Grad-CAM's hook on
# `model.layer4`; Laplace's FeatureExtractor hooks every module of `named_modules()`). As
# a copy it took the hook where the judge's forward never ran it. The handle answers
# `isinstance` with the layer's class (Laplace: "Use model with a linear last layer").
HOOK_TESTS = """\
import torch
from torch import nn

from solution import activation, leaf_inputs


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer4 = nn.Sequential(nn.Linear(3, 4), nn.ReLU())
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.layer4(x))


def test_a_hook_on_a_layer_of_the_tests_model():
    torch.manual_seed(0)
    model, x = Net(), torch.randn(2, 3)
    assert torch.allclose(activation(model, x), model.layer4(x))
    assert not model.layer4._forward_hooks


def test_hooks_on_the_modules_the_model_names():
    torch.manual_seed(0)
    model, x = Net(), torch.randn(2, 3)
    assert leaf_inputs(model, x) == {"layer4.0": [2, 3], "head": [2, 4]}
    assert not any(m._forward_hooks for m in model.modules())
"""
HOOK_REFERENCE = """\
import torch


def activation(model, x):
    store = {}
    handle = model.layer4.register_forward_hook(
        lambda module, inputs, output: store.update(act=output.detach()))
    try:
        model(x)
    finally:
        handle.remove()
    return store["act"]


def leaf_inputs(model, x):
    shapes, handles = {}, []
    assert isinstance(model, torch.nn.Module)
    for name, module in model.named_modules():
        if isinstance(module, torch.nn.Linear):   # Laplace asks its last layer this
            def hook(module, inputs, output, name=name):
                shapes[name] = list(inputs[0].shape)
            handles.append(module.register_forward_hook(hook))
    model(x)
    for handle in handles:
        handle.remove()
    return shapes
"""
HOOK_WRONG = HOOK_REFERENCE.replace("model.layer4.register", "model.head.register")


def test_a_hook_on_a_layer_of_the_tests_own_model_fires(engine):
    wrong = _reference_passes_and_wrong_fails(engine, HOOK_REFERENCE, HOOK_WRONG, HOOK_TESTS)
    outcomes = {t["id"].split("::")[-1]: t["outcome"] for t in wrong.tests}
    assert outcomes == {"test_a_hook_on_a_layer_of_the_tests_model": "failed",
                        "test_hooks_on_the_modules_the_model_names": "passed"}, outcomes


# The hook the repository's own code registers on a layer of the test's model through a
# handle (Laplace's FeatureExtractor.set_last_layer: a closure over the extractor) stays
# there after the call, as in-process: the test's own forward afterwards runs it. It is
# made in the judge from the repository's code of that name, its cell the extractor the
# test holds, as when the model crossed by value.
FEATURES = """\
class FeatureExtractor:
    def __init__(self, model):
        self.model = model
        self.features = {}
        self.last_layer = None

    def hook_for(self, name):
        def hook(module, inputs, output):
            self.features[name] = inputs[0].detach()
        return hook

    def set_last_layer(self, name):
        self.last_layer = dict(self.model.named_modules())[name]
        self.last_layer.register_forward_hook(self.hook_for(name))
"""
FIT = """\
def fit(extractor, x):
    last = [name for name, module in extractor.model.named_modules()
            if not list(module.children())][-1]
    extractor.set_last_layer(last)
    extractor.model(x)
    return last
"""
FIT_TESTS = """\
import torch
from torch import nn

from pkg.features import FeatureExtractor
from pkg.fit import fit


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.fc2 = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def test_the_last_layers_hook_stays_with_the_test():
    torch.manual_seed(0)
    model = Model()
    extractor = FeatureExtractor(model)
    x = torch.randn(5, 3)
    assert fit(extractor, x) == "fc2"
    assert extractor.last_layer is model.fc2
    assert torch.allclose(extractor.features["fc2"], torch.relu(model.fc1(x)))
    y = torch.randn(2, 3)
    model(y)   # the hook fills the extractor the test holds
    assert torch.allclose(extractor.features["fc2"], torch.relu(model.fc1(y)))
"""


def test_a_repository_hook_on_the_tests_own_model_stays_after_the_call(engine, tmp_path):
    root = write_repo(tmp_path / "repo", {
        "pkg/__init__.py": "", "pkg/features.py": FEATURES, "pkg/fit.py": FIT,
        "tests/test_fit.py": FIT_TESTS})
    wrong = FIT.replace("[-1]", "[0]")

    def fit_job(text, reference=False):
        return repo_job(root, "pkg/fit.py", text, "tests/test_fit.py", "fit", reference)

    jobs = [fit_job(FIT, True), fit_job(wrong)]
    results = {r.job_id: r for r in engine.run(jobs)}
    reference, candidate = (results[j.job_id] for j in jobs)
    assert reference.outcome == "passed", (reference.reason, reference.stdout[-3000:])
    assert candidate.outcome == "failed", (candidate.reason, candidate.stdout[-3000:])


# The solution's own optimizer over the parameters of the test's own module, read through
# its handle (pyro's `train(gpmodule)`: Adam over `gpmodule.parameters()`, which holds the
# test's mean function, whose forward runs in the judge each step). The optimizer stepped
# the solution's copies while the judge's forward kept the first values, so the gradient
# never moved and the test's trend stayed where it started ("0.0 vs 2"). A call of a judge
# handle now carries the copies of its leaves the call changed, and the judge's own take
# their values before its code runs; a module's `_parameters`, read by `named_parameters`
# of a library module holding the test's, joins the call as `named_parameters()` does.
OPTIMIZE_TESTS = """\
import torch

from solution import fit


class Trend(torch.nn.Module):   # the test's own class: a handle in the solution process
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.tensor(0.0))
        self.b = torch.nn.Parameter(torch.tensor(1.0))

    def forward(self, x):
        return self.a * x + self.b


def test_the_tests_module_inside_a_library_module_is_fitted():
    trend = Trend()
    x = torch.linspace(-1, 1, 21)
    loss = fit(torch.nn.Sequential(trend), x, 2 * x + 3)
    assert loss < 1e-6
    assert abs(trend.a.item() - 2) < 1e-3 and abs(trend.b.item() - 3) < 1e-3


def test_the_tests_module_itself_is_fitted():
    trend = Trend()
    x = torch.linspace(-1, 1, 21)
    assert fit(trend, x, 2 * x + 3) < 1e-6
    assert abs(trend.a.item() - 2) < 1e-3 and abs(trend.b.item() - 3) < 1e-3
"""
OPTIMIZE_REFERENCE = """\
import torch


def fit(model, x, y, steps=100):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        optimizer.step()
    return loss.item()
"""
# wrong: a learning rate too small to get there in 100 steps
OPTIMIZE_WRONG = OPTIMIZE_REFERENCE.replace("lr=0.5", "lr=0.01")


def test_the_solutions_optimizer_moves_the_tests_module_between_its_calls(engine):
    _reference_passes_and_wrong_fails(engine, OPTIMIZE_REFERENCE, OPTIMIZE_WRONG, OPTIMIZE_TESTS)
