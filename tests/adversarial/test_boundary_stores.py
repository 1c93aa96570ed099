"""A library store the process keeps once is one store across the boundary
(`curator.execution.stores`).

pyro keeps its parameters in one `ParamStoreDict` per process, which its conftest clears
before each test. Across the boundary the judge and the solution process each had their
own: the conftest cleared the judge's only, so the solution process kept the previous
test's parameters (pyro's GP models took them in place of their own: order-dependent
failures of pyrotrain148), and a parameter the candidate registered was not the judge's
when the test read it, nor the test's the candidate's. Each top-level call now carries the
judge's store with its arguments and the reply what the call set and removed there.

The repository here is a tiny library of pyro's shape (the suite's environment installs
no pyro): `pyro.poutine.runtime._PYRO_PARAM_STORE` with `_params`, `_param_to_name` and
`_constraints`, and `pyro.param` over it.
"""

from __future__ import annotations

import pytest
import torch
from execution_support import engine_fixture, repo_job, write_repo
from torch.distributions import constraints

from curator.execution import stores

engine = engine_fixture(eager=False)   # repository runs only

PARAM_STORE = '''import torch
from torch.distributions import constraints, transform_to


class ParamStoreDict:
    def __init__(self):
        self._params = {}
        self._param_to_name = {}
        self._constraints = {}

    def clear(self):
        self._params = {}
        self._param_to_name = {}
        self._constraints = {}

    def __contains__(self, name):
        return name in self._params

    def keys(self):
        return self._params.keys()

    def __getitem__(self, name):
        return transform_to(self._constraints[name])(self._params[name])

    def setdefault(self, name, init, constraint=constraints.real):
        if name not in self._params:
            self._constraints[name] = constraint
            if callable(init):
                init = init()
            with torch.no_grad():
                value = transform_to(constraint).inv(init).contiguous()
            value.requires_grad_(True)
            self._params[name] = value
            self._param_to_name[value] = name
        return self[name]
'''
RUNTIME = '''from pyro.params.param_store import ParamStoreDict

_PYRO_PARAM_STORE = ParamStoreDict()
'''
PRIMITIVES = '''from torch.distributions import constraints

from pyro.poutine.runtime import _PYRO_PARAM_STORE


def get_param_store():
    return _PYRO_PARAM_STORE


def clear_param_store():
    _PYRO_PARAM_STORE.clear()


def param(name, init=None, constraint=constraints.real):
    if init is None:
        return _PYRO_PARAM_STORE[name]
    return _PYRO_PARAM_STORE.setdefault(name, init, constraint)
'''
INIT = "from pyro.primitives import clear_param_store, get_param_store, param  # noqa\n"
CONFTEST = '''import pyro


def pytest_runtest_setup(item):
    pyro.clear_param_store()
'''
FIT = '''import torch
from torch.distributions import constraints

import pyro


def fit(steps, guide=None):
    """Registers loc and scale (and what the guide registers), moves loc in place `steps`
    times, as an optimizer would; the number of parameters in the store."""
    pyro.param("loc", lambda: torch.zeros(2))
    pyro.param("scale", torch.ones(2), constraint=constraints.positive)
    if guide is not None:
        guide()
    loc = pyro.get_param_store()._params["loc"]
    with torch.no_grad():
        for _ in range(steps):
            loc.add_(1.0)
    return len(pyro.get_param_store().keys())


def bump(name):
    """One more on the parameter of that name the caller registered."""
    with torch.no_grad():
        pyro.get_param_store()._params[name].add_(1.0)
    return pyro.param(name).item()


def holds(space, name):
    """Whether the object's tensor is the store's parameter of that name."""
    return space.weight is pyro.get_param_store()._params[name]


def forget(name):
    store = pyro.get_param_store()
    value = store._params.pop(name)
    store._param_to_name.pop(value)
    store._constraints.pop(name)
'''
TESTS = '''import types

import torch

import pyro
from pyro.infer.fit import bump, fit, forget, holds


def test_the_parameters_the_function_registers_are_the_tests():
    assert fit(3) == 2
    assert pyro.param("loc").tolist() == [3.0, 3.0]
    assert pyro.param("scale").tolist() == [1.0, 1.0]
    assert not pyro.get_param_store()._constraints["scale"].check(torch.tensor(-1.0))


def test_a_second_fit_starts_from_the_cleared_store():
    assert fit(2) == 2
    assert pyro.param("loc").tolist() == [2.0, 2.0]


def test_a_parameter_the_test_registers_is_the_functions():
    pyro.param("w", torch.tensor(5.0))
    assert bump("w") == 6.0
    assert pyro.param("w").item() == 6.0


def test_what_the_tests_callback_registers_meanwhile_stays():
    def guide():
        pyro.param("g", torch.tensor(7.0))

    fit(1, guide)
    assert sorted(pyro.get_param_store().keys()) == ["g", "loc", "scale"]
    assert pyro.param("g").item() == 7.0
    assert pyro.param("loc").tolist() == [1.0, 1.0]


def test_a_tensor_of_the_store_is_one_object_in_the_function_too():
    pyro.param("weight", torch.ones(2))
    space = types.SimpleNamespace(weight=pyro.get_param_store()._params["weight"])
    assert holds(space, "weight")


def test_what_the_function_removes_is_gone():
    pyro.param("w", torch.tensor(1.0))
    pyro.param("v", torch.tensor(2.0))
    forget("w")
    assert sorted(pyro.get_param_store().keys()) == ["v"]
    assert pyro.get_param_store()._param_to_name == {
        pyro.get_param_store()._params["v"]: "v"}
'''
# Wrong: registers loc at one step too many. Its tricks: a constraint of its own class on
# scale, whose `check` (or `transform_to`) the judge would run when the test reads it,
# directly or inside a library constraint; a function as a parameter.
WRONG = FIT.replace("for _ in range(steps):", "for _ in range(steps + 1):")
OWN_CONSTRAINT = WRONG + '''

class _Anything(constraints.Constraint):
    def check(self, value):
        return torch.ones_like(value, dtype=torch.bool)


_fit = fit


def fit(steps, guide=None):
    count = _fit(steps, guide)
    pyro.get_param_store()._constraints["scale"] = %s
    return count
'''
NOT_A_TENSOR = WRONG + '''

_fit = fit


def fit(steps, guide=None):
    count = _fit(steps, guide)
    pyro.get_param_store()._params["scale"] = print
    return count
'''
TEST_ID = "tests/test_fit.py"


def store_repo(root):
    return write_repo(root, {
        "pyro/__init__.py": INIT, "pyro/params/__init__.py": "",
        "pyro/params/param_store.py": PARAM_STORE, "pyro/poutine/__init__.py": "",
        "pyro/poutine/runtime.py": RUNTIME, "pyro/primitives.py": PRIMITIVES,
        "pyro/infer/__init__.py": "", "pyro/infer/fit.py": FIT,
        "tests/conftest.py": CONFTEST, "tests/test_fit.py": TESTS})


@pytest.mark.timeout(900)   # seven repository runs
def test_the_judges_param_store_is_the_solutions(engine, tmp_path):
    repo = store_repo(tmp_path / "repo")
    jobs = [repo_job(repo, "pyro/infer/fit.py", text, TEST_ID, symbol, reference)
            for text, symbol, reference in (
                (FIT, "fit", True), (FIT, "bump", True), (FIT, "holds", True),
                (FIT, "forget", True), (WRONG, "fit", False),
                (OWN_CONSTRAINT % "_Anything()", "fit", False),
                (OWN_CONSTRAINT % "constraints.independent(_Anything(), 1)", "fit", False),
                (NOT_A_TENSOR, "fit", False))]
    results = [r for job in jobs for r in engine.run([job])]
    for result in results[:4]:   # each function across the boundary, all tests passed
        assert result.outcome == "passed", (result.reason, result.stdout[-3000:])
        assert len(result.tests) == 6
    wrong, own, inside, not_a_tensor = results[4:]
    assert wrong.outcome == "failed", (wrong.reason, wrong.stdout[-3000:])
    for result in (own, inside):
        # the judge never holds the solution's constraint (its check would run there)
        assert result.outcome == "error", (result.reason, result.stdout[-3000:])
        assert "the constraint of parameter 'scale'" in result.reason
    assert not_a_tensor.outcome == "tampered", (not_a_tensor.reason,
                                                not_a_tensor.stdout[-3000:])
    assert "param store" in not_a_tensor.reason


def test_the_judge_refuses_store_changes_of_the_wrong_shape():
    def plain(value):
        return False

    for found in ([], {"os.environ": ([], [])}, {"pyro.params": ([("w",)], [])},
                  {"pyro.params": ([], [3])}, {"pyro.params": [[], []]}):
        with pytest.raises(stores.StoreError):
            stores.check(found, plain)
    # a constraint that is no constraint of the library
    with pytest.raises(stores.NotStoreData):
        stores.check({"pyro.params": ([("w", torch.ones(1), None)], [])}, plain)
    with pytest.raises(stores.NotStoreData):
        stores.check({"pyro.params": ([("w", torch.ones(1), constraints.independent(
            constraints.interval(0.0, print), 1))], [])}, plain)
    stores.check({"pyro.params": ([("w", torch.ones(1), constraints.independent(
        constraints.interval(torch.zeros(1), 1.0), 1))], ["v"])}, plain)
    # no pyro here: nothing is taken, put or changed
    assert stores.taken() == {}
    stores.put({"pyro.params": []})
    assert stores.changes() == {}
