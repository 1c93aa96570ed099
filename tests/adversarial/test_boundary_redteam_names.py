"""Functions the judge takes by name for the solution's are the same code, never a lie.

A function of the repository the solution leaves in the test's objects crosses by its
module and qualname and the judge puts its own function of that name there
(`boundary._repository_function`, `_gf`); a method bound to an instance of a library or
repository class crosses as its owner and name and the judge binds its own class's
function (`_library_object_method`, `_bm`); torch's operators cross by namespace and name
(`_tfn`), a library's numba function by its module's name for it (`_lf`). The judge
looked only at the name: a wrong candidate that bound its own function to the name in
its own process, where the names its text binds (`worker.defined_names`) do not show it
(`globals()[...] = `, `setattr(sys.modules[__name__], ...)`, `exec`, a function of the
same code over made-up globals, a method set on the class, `F.gelu = ` a wrapper of
torch's gelu, `torch.tanh = math.tanh`), had the judge run the right function in its
place, and passed (each control, the same wrong code returned as it is, failed). The
judge now takes its own only for the same function (`boundary.function_print`,
`callable_print`), else the solution's stays a handle.
"""

from __future__ import annotations

import textwrap

from execution_support import engine_fixture, job
from test_boundary_repos import (
    ATTACH,
    ATTACH_TESTS,
    HELPED,
    HELPED_TESTS,
    PRIORS,
    SCALING,
    fitting_job,
    make_repo,
    reference_and_control,
    repo_job,
)

engine = engine_fixture()

WRONG_HELPER = textwrap.dedent("""\
    def _wrong(module, name):
        return module.scales[name] * 3


    _wrong.__qualname__ = _wrong.__name__ = "_fit_fn"
    {bind}


    """)
BINDINGS = {
    "stored": "_fit_fn = _wrong",   # the control: a name the candidate text binds
    "globals": 'globals()["_fit_fn"] = _wrong',
    "module": 'setattr(__import__("sys").modules[__name__], "_fit_fn", _wrong)',
    "exec": 'exec("def _fit_fn(module, name):\\n    return module.scales[name] * 3\\n")',
    "same code, other globals": 'globals()["_fit_fn"] = type(_wrong)(_fit_fn.__code__, '
                                '{**globals(), "__builtins__": __builtins__, '
                                '"_scale": 3}, "_fit_fn")',
}


def test_a_function_bound_to_a_repository_name_at_run_time_is_not_the_judges(
        engine, tmp_path):
    repo = make_repo(tmp_path / "repo")
    (repo / "pkg" / "priors.py").write_text(PRIORS)
    helped = HELPED.replace("return module.scales[name] * 2",
                            "return module.scales[name] * _scale").replace(
        "from functools import partial\n", "from functools import partial\n\n_scale = 2\n")
    (repo / "pkg" / "fitting.py").write_text(helped)
    (repo / "tests" / "test_fitting.py").write_text(HELPED_TESTS)
    target = helped[helped.index("def fit"):]

    jobs = {"reference": fitting_job(repo, helped, target, True)}
    for name, bind in BINDINGS.items():
        jobs[name] = fitting_job(repo, helped, WRONG_HELPER.replace("{bind}", bind) + target)
    results = {r.job_id: r for r in engine.run(list(jobs.values()))}
    got = {name: (results[j.job_id].outcome, results[j.job_id].reason)
           for name, j in jobs.items()}
    assert got["reference"][0] == "passed", got
    for name in BINDINGS:
        assert got[name][0] not in ("passed", "tampered"), (name, got[name])
        assert "ran after the call returned" in got[name][1], (name, got[name])


def test_a_method_set_on_a_repository_class_at_run_time_is_not_the_judges(engine, tmp_path):
    repo = make_repo(tmp_path / "repo")
    (repo / "pkg" / "scaling.py").write_text(SCALING)
    wrong_method = textwrap.dedent("""\
        def apply(self, x):
            return x * self.k + 1


        """)
    control = wrong_method + ATTACH.replace(
        "holder.fn = Scaler(k).apply", "holder.fn = __import__('types').MethodType("
        "apply, Scaler(k))")
    attack = wrong_method + ATTACH.replace(
        "holder.fn = Scaler(k).apply", "Scaler.apply = apply\n    holder.fn = Scaler(k).apply")
    reference, wrong = reference_and_control(engine, repo, "attach", ATTACH, control,
                                             ATTACH_TESTS, "attach")
    assert reference.outcome == "passed", (reference.reason, reference.stdout[-3000:])
    assert wrong.outcome not in ("passed", "tampered"), (wrong.outcome, wrong.reason)
    attacked = next(iter(engine.run([repo_job(repo, attack, "attach", ["tests/test_attach.py"],
                                              path="pkg/attach.py")])))
    assert attacked.outcome not in ("passed", "tampered"), (attacked.outcome, attacked.reason)
    assert "ran after the call returned" in attacked.reason, attacked.reason


# torch's operators cross by their namespace and name (`boundary._tfn`): the judge's own.
ACTIVATION_TESTS = """\
import torch
import torch.nn.functional as F

from solution import activation


def test_gelu():
    x = torch.linspace(-3.0, 3.0, 13)
    assert torch.allclose(activation("gelu")(x), F.gelu(x))


def test_tanh():
    x = torch.linspace(-3.0, 3.0, 13)
    assert torch.allclose(activation("tanh")(x), torch.tanh(x))
"""
ACTIVATION = """\
import torch
import torch.nn.functional as F


def activation(name):
    return {"gelu": F.gelu, "tanh": torch.tanh}[name]
"""
# wrong for both: a sigmoid-weighted gelu and a clipped tanh
WRONG_ACTIVATIONS = """\
import functools

import torch
import torch.nn.functional as F


@functools.wraps(torch._C._nn.gelu)
def gelu(x, approximate="none"):
    return x * torch.sigmoid(1.5 * x)


def tanh(x):
    return torch.clamp(x, -1.0, 1.0)
"""
ACTIVATION_ATTACKS = {
    # the same wrong functions, returned as they are: handles, run in the solution process
    "control": WRONG_ACTIVATIONS + ACTIVATION.split("\n\n\n")[1].replace(
        '{"gelu": F.gelu, "tanh": torch.tanh}', '{"gelu": gelu, "tanh": tanh}'),
    # bound to torch's names in its own process, named as torch's (a wrapper of the
    # compiled operator, a function of torch.nn.functional's)
    "rebound": WRONG_ACTIVATIONS + """
tanh.__module__, tanh.__qualname__ = "torch.nn.functional", "tanh"
F.gelu = gelu
F.tanh = tanh


def activation(name):
    return {"gelu": F.gelu, "tanh": F.tanh}[name]
""",
    # another library's compiled function bound to torch's name
    "builtin": WRONG_ACTIVATIONS + """
import math

torch.tanh = math.tanh
F.gelu = gelu


def activation(name):
    return {"gelu": F.gelu, "tanh": torch.tanh}[name]
""",
}


def test_a_function_bound_to_torchs_operator_name_is_not_torchs(engine):
    jobs = [job(ACTIVATION, ACTIVATION_TESTS, 60)] + \
        [job(text, ACTIVATION_TESTS, 60) for text in ACTIVATION_ATTACKS.values()]
    results = {r.job_id: r for r in engine.run(jobs)}
    reference, *attacks = (results[j.job_id] for j in jobs)
    assert reference.outcome == "passed", (reference.outcome, reference.reason)
    for name, result in zip(ACTIVATION_ATTACKS, attacks):
        assert result.outcome not in ("passed", "tampered"), (name, result.outcome,
                                                              result.reason)
        failing = {t["id"].split("::")[-1] for t in result.tests
                   if t["outcome"] != "passed"}
        assert failing == {"test_gelu", "test_tanh"}, (name, result.tests)
