"""A library object its library pickles by a name (pickle's way for an object held once,
such as jax's pytree registries, which every PyTreeDef's state names) and jax's arrays.

pennylane's `_generate_tapes_and_coeffs` (its tests run with jax) came back `tampered`:
"the solution process sent jax._src.tree_util.dispatch_registry". The solution process
sent the name, the judge's decoder refused it as what is not data: an honest reply was
taken for tampering. Now both processes apply the same rule (`boundary._resolve`): a
library's object that pickles as its own name, no class, module or callable, is the
judge's own object of that name; any other such name is refused in the solution process,
as a value that cannot cross, named in the error. A jax array crosses as its values.

The libraries here are stand-ins made in tmp_path (`treelib`, and a `jax` with an array
class that reduces as jax 0.4's does): what crosses does not need the real jax.
"""

from __future__ import annotations

import textwrap

from execution_support import engine_fixture, repo_job, write_repo

engine = engine_fixture(("strong",))

TREELIB = textwrap.dedent("""\
    class Registry:
        \"\"\"The library's one registry of node kinds (jax's PyTreeRegistry).\"\"\"

        def __init__(self):
            self.kinds = {"list": list}

        def __reduce__(self):
            return "registry"


    class Dispatcher:
        \"\"\"A callable the library holds once under a name that is not its own.\"\"\"

        def __call__(self, value):
            return value

        def __reduce__(self):
            return "dispatch"


    registry = Registry()
    dispatch = Dispatcher()


    class Tree:
        def __init__(self, nodes, registry):
            self.nodes = nodes
            self.registry = registry
    """)
OPS = textwrap.dedent("""\
    import treelib


    def plant(n):
        return treelib.Tree(list(range(n)), treelib.registry)


    def plant_dispatched(n):
        return treelib.Tree(list(range(n)), treelib.dispatch)
    """)
TESTS = textwrap.dedent("""\
    import treelib

    from pkg.ops import plant, plant_dispatched


    def test_plant():
        tree = plant(3)
        assert tree.nodes == [0, 1, 2]
        assert tree.registry is treelib.registry   # the judge's own


    def test_plant_dispatched():
        tree = plant_dispatched(2)
        assert tree.nodes == [0, 1]
    """)


def job(repo, text, test, symbol, reference=False):
    return repo_job(repo, "pkg/ops.py", text, f"tests/test_ops.py::{test}", symbol,
                    reference, problem_id=symbol)


def run(engine, jobs):
    results = {r.job_id: r for r in engine.run(jobs)}
    return [results[j.job_id] for j in jobs]


def test_a_library_object_held_by_name_crosses_or_is_an_error_naming_it(engine, tmp_path):
    repo = write_repo(tmp_path / "repo", {"pkg/__init__.py": "", "pkg/ops.py": OPS,
                                          "treelib/__init__.py": TREELIB,
                                          "tests/test_ops.py": TESTS})
    wrong = OPS.replace("list(range(n)), treelib.registry", "list(range(n + 1)), "
                        "treelib.registry")
    plant, wrong_plant, dispatched = run(engine, [
        job(repo, OPS, "test_plant", "plant", reference=True),
        job(repo, wrong, "test_plant", "plant"),
        job(repo, OPS, "test_plant_dispatched", "plant_dispatched", reference=True)])
    # the registry: the judge's own object of that name (it was `tampered`)
    assert plant.outcome == "passed", (plant.outcome, plant.reason, plant.evidence)
    assert wrong_plant.outcome == "failed", (wrong_plant.outcome, wrong_plant.reason)
    # a callable held by a name: no data form, an error that names it (was `tampered`)
    assert dispatched.outcome == "error", (dispatched.outcome, dispatched.reason,
                                           dispatched.evidence)
    assert "cannot cross from the solution process" in dispatched.reason, dispatched.reason
    assert "treelib.dispatch" in dispatched.reason, dispatched.reason


# A stand-in for jax 0.4's array: its reduction is jax's (`_reconstruct_array`, which calls
# the function it is given and sets the state of what that returns).
JAX_INIT = textwrap.dedent("""\
    from jax._src.array import ArrayImpl, device_put

    Array = ArrayImpl
    """)
JAX_ARRAY = textwrap.dedent("""\
    import numpy as np


    class Aval:
        def __init__(self, weak_type):
            self.weak_type = weak_type

        def update(self, weak_type):
            return Aval(weak_type)


    class ArrayImpl:
        def __init__(self, value, weak_type=False):
            self._value = np.array(value)
            self._value.flags.writeable = False
            self.aval = Aval(weak_type)

        def __array__(self, dtype=None, copy=None):
            return np.asarray(self._value, dtype=dtype)

        def __eq__(self, other):
            return np.asarray(self._value == np.asarray(other))

        def __reduce__(self):
            fun, args, arr_state = self._value.__reduce__()
            return (_reconstruct_array, (fun, args, arr_state,
                                         {"weak_type": self.aval.weak_type}))


    def device_put(value):
        return ArrayImpl(np.array(value))


    def _reconstruct_array(fun, args, arr_state, aval_state):
        np_value = fun(*args)
        np_value.__setstate__(arr_state)
        value = device_put(np_value)
        value.aval = value.aval.update(**aval_state)
        return value
    """)
JAX_OPS = textwrap.dedent("""\
    import jax
    import numpy as np


    def double(values):
        return {"doubled": jax.device_put(np.asarray(values) * 2.0),
                "weak": jax._src.array._reconstruct_array(
                    *jax.device_put(np.ones(2)).__reduce__()[1][:3], {"weak_type": True})}
    """)
JAX_TESTS = textwrap.dedent("""\
    import jax
    import numpy as np

    from pkg.ops import double


    def test_double():
        out = double([1.0, 2.5])
        assert type(out["doubled"]) is jax.Array
        np.testing.assert_allclose(np.asarray(out["doubled"]), [2.0, 5.0])
        assert out["doubled"].aval.weak_type is False
        assert out["weak"].aval.weak_type is True
    """)


def test_a_jax_array_crosses_as_its_values(engine, tmp_path):
    """A jax array in a reply: jax's own reduction names `_reconstruct_array`, which the
    judge would have had to call with the message's function (a handle of the solution's
    then, ran after the call); it crosses as its values and weak type, a jax array of
    the judge's own jax."""
    repo = write_repo(tmp_path / "repo", {
        "pkg/__init__.py": "", "pkg/ops.py": JAX_OPS, "jax/__init__.py": JAX_INIT,
        "jax/_src/__init__.py": "", "jax/_src/array.py": JAX_ARRAY,
        "tests/test_ops.py": JAX_TESTS})
    wrong = JAX_OPS.replace("* 2.0", "* 3.0")
    reference, candidate = run(engine, [
        repo_job(repo, "pkg/ops.py", JAX_OPS, "tests/test_ops.py", "double", True),
        repo_job(repo, "pkg/ops.py", wrong, "tests/test_ops.py", "double")])
    assert reference.outcome == "passed", (reference.outcome, reference.reason,
                                           reference.evidence, reference.stdout[-2000:])
    assert candidate.outcome == "failed", (candidate.outcome, candidate.reason)


# A stand-in for jax's jitted functions: `jaxlib.xla_extension.PjitFunction` wrapping a
# Python function (its `__wrapped__`), held by its module under that function's name.
XLA = textwrap.dedent("""\
    import functools


    class PjitFunction:
        def __init__(self, fun):
            functools.update_wrapper(self, fun)

        def __call__(self, *args):
            return self.__wrapped__(*args)


    def jit(fun):
        return PjitFunction(fun)
    """)
POLY = textwrap.dedent("""\
    from jaxlib.xla_extension import jit


    @jit
    def polyval(coeffs, x):
        out = 0.0
        for c in coeffs:
            out = out * x + c
        return out
    """)
TERM_OPS = textwrap.dedent("""\
    from jaxpoly import polyval


    class Term:
        def __init__(self, coeff_fn, scale):
            self.coeff_fn = coeff_fn
            self.scale = scale


    def term(scale):
        return Term(polyval, scale)


    def evaluate(fn, coeffs, x):
        return fn is polyval, fn(coeffs, x)
    """)
TERM_TESTS = textwrap.dedent("""\
    import jaxpoly

    from pkg.ops import evaluate, term


    def test_evaluate():
        same, value = evaluate(jaxpoly.polyval, [1.0, 2.0], 3.0)
        assert same   # the solution process's own, no handle of the judge's
        assert value == 5.0


    def test_term():
        made = term(2.0)
        assert made.coeff_fn is jaxpoly.polyval   # the judge's own, no handle
        assert made.scale * made.coeff_fn([1.0, 2.0], 3.0) == 10.0
    """)


def test_a_librarys_jitted_function_crosses_as_the_judges_own(engine, tmp_path):
    """pennylane's pulse Hamiltonians hold `jnp.polyval` (a function jax.jit compiled) as a
    coefficient function: it came back from _generate_tapes_and_coeffs as a handle of the
    solution process, and the judge's jax, tracing through the test's pulse, sent the
    handle its tracers ("Abstract tracer value encountered ... in the __reduce__
    method"). Like a numba dispatcher, it crosses as the name its module holds it under,
    both ways: each process's own function of that name (sent by jax's own reduction,
    the judge's function it wraps went as a handle: the solution process traced through
    it and sent the judge its tracers)."""
    repo = write_repo(tmp_path / "repo", {
        "pkg/__init__.py": "", "pkg/ops.py": TERM_OPS, "jaxlib/__init__.py": "",
        "jaxlib/xla_extension.py": XLA, "jaxpoly/__init__.py": POLY,
        "tests/test_ops.py": TERM_TESTS})
    wrong = TERM_OPS.replace("Term(polyval, scale)", "Term(polyval, scale + 1)")
    reference, candidate, given = run(engine, [
        repo_job(repo, "pkg/ops.py", TERM_OPS, "tests/test_ops.py::test_term", "term", True),
        repo_job(repo, "pkg/ops.py", wrong, "tests/test_ops.py::test_term", "term"),
        repo_job(repo, "pkg/ops.py", TERM_OPS, "tests/test_ops.py::test_evaluate",
                 "evaluate", True)])
    assert reference.outcome == "passed", (reference.outcome, reference.reason,
                                           reference.evidence, reference.stdout[-2000:])
    assert candidate.outcome == "failed", (candidate.outcome, candidate.reason)
    assert given.outcome == "passed", (given.outcome, given.reason, given.stdout[-2000:])
