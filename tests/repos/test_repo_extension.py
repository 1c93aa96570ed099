"""A repository with a compiled C++ extension (as pytorch3d and CompressAI have): its
environment compiles it once per commit against the environment's pinned CPU torch, in
the checkout runs import from; spliced candidates run without a rebuild, also in a
checkout written anew; an extension that does not compile leaves the environment not
built, with the compiler's reason.

Each environment installs torch: the built repository's whole life is one test (a
module-scoped fixture would be built once per xdist worker anyway). The kernel is written
against torch's stable ABI headers (torch/csrc/stable), registered as a torch op and
linked to the environment's libtorch, like a real extension, but its build step takes
about 5 s of CPU where one including torch/extension.h took 37 s (on a loaded machine,
110 s of a 199 s environment build).
"""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner
from repo_support import (
    make_repo,
    mine_and_accept,
    needs_strong,
    offline_index,  # noqa: F401  (the fixture)
)

from curator import runs
from curator.cli import main
from curator.execution.engine import Engine
from curator.repos import recipes
from curator.store import Store, repo_envs
from curator.store import problems as problem_store

pytestmark = [needs_strong, pytest.mark.slow, pytest.mark.timeout(1800)]

SETUP = '''import os

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension


class CountedBuild(BuildExtension):
    """Says in TINYEXT_BUILD_LOG each time the extension is compiled."""

    def run(self):
        if os.environ.get("TINYEXT_BUILD_LOG"):
            with open(os.environ["TINYEXT_BUILD_LOG"], "a") as log:
                log.write("compiled\\n")
        super().run()


setup(name="tinyext", version="0.1", packages=["tinyext"],
      ext_modules=[CppExtension("tinyext._ops", ["tinyext/ops.cpp"],
                                extra_compile_args=["-O0", "-g0"])],   # quicker
      cmdclass={"build_ext": CountedBuild})
'''

OPS_CPP = '''#include <Python.h>
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>

using torch::stable::Tensor;

// x * k for float32 tensors, by a loop of its own: a kernel, not a call back into Python.
Tensor scaled(Tensor x, double k) {
  Tensor in = torch::stable::contiguous(x);
  Tensor out = torch::stable::empty_like(in);
  const float* src = static_cast<const float*>(in.data_ptr());
  float* dst = static_cast<float*>(out.data_ptr());
  for (int64_t i = 0; i < in.numel(); ++i) dst[i] = static_cast<float>(src[i] * k);
  return out;
}

STABLE_TORCH_LIBRARY(tinyext, m) { m.def("scaled(Tensor x, float k) -> Tensor"); }

STABLE_TORCH_LIBRARY_IMPL(tinyext, CompositeExplicitAutograd, m) {
  m.impl("scaled", TORCH_BOX(&scaled));
}

static struct PyModuleDef ops = {PyModuleDef_HEAD_INIT, "_ops", NULL, -1, NULL};
PyMODINIT_FUNC PyInit__ops(void) { return PyModule_Create(&ops); }
'''

OPS_PY = '''import torch

from tinyext import _ops  # noqa: F401  (loading it registers torch.ops.tinyext)

scaled = torch.ops.tinyext.scaled


def triple(x):
    """Three times x, by the compiled kernel."""
    return scaled(x, 3.0)
'''

TESTS = '''import torch

from tinyext.ops import triple


def test_triple():
    assert torch.equal(triple(torch.ones(2)), torch.full((2,), 3.0))


def test_triple_keeps_the_shape():
    assert triple(torch.zeros(2, 3)).shape == (2, 3)
'''

# A candidate spliced in: another body, the same compiled kernel.
CANDIDATE = '''def triple(x):
    return scaled(scaled(x, 1.5), 2.0)
'''
WRONG = '''def triple(x):
    return scaled(x, 2.0)
'''


def _files(cpp: str) -> dict[str, str]:
    return {"setup.py": SETUP, "conftest.py": "", "tinyext/__init__.py": "",
            "tinyext/ops.cpp": cpp, "tinyext/ops.py": OPS_PY, "tests/test_ops.py": TESTS}


def _compiles(log) -> int:
    return len(log.read_text().splitlines()) if log.is_file() else 0


def _worktree(ws, name):
    return next(p for p in (ws.repos_dir / "worktrees").iterdir()
                if p.is_dir() and p.name.startswith(f"{name}-"))


def _env(ws, name):
    with Store(ws.db_path, "tester") as store:
        return next(e for e in repo_envs.list_with_repos(store) if e["repo_name"] == name)


def test_the_extension_is_compiled_once_and_every_run_finds_it(tmp_path, offline_index,  # noqa: F811
                                                               monkeypatch):
    log = tmp_path / "builds.log"
    monkeypatch.setenv("TINYEXT_BUILD_LOG", str(log))
    upstream = make_repo(tmp_path / "tinyext", _files(OPS_CPP))
    ws, base = mine_and_accept(tmp_path, upstream, "triple", "triple")

    # Built once, against the environment's torch, in the checkout runs import from.
    first = CliRunner().invoke(main, [*base, "repo", "env", "tinyext"])
    assert first.exit_code == 0, first.output
    assert _compiles(log) == 1, "the extension was compiled more than once"
    assert "compiled by the recipe's build steps" in first.output
    recipe = recipes.load(ws, str(upstream))
    assert recipe.build == ["python setup.py build_ext --inplace"]
    assert recipe.frameworks == ["torch"]   # setup.py imports it; nothing declares it
    env = _env(ws, "tinyext")
    assert (env["status"], env["reason"]) == ("built", "")
    worktree = _worktree(ws, "tinyext")
    (ext,) = (worktree / "tinyext").glob("_ops*.so")
    stamp = ext.stat().st_mtime_ns
    assert not (worktree / "build").exists()   # setuptools' scratch is not left behind
    again = CliRunner().invoke(main, [*base, "repo", "env", "tinyext"])
    assert again.exit_code == 0 and "reused" in again.output, again.output
    assert _compiles(log) == 1

    # Spliced candidates run against it; nothing is compiled again.
    with Store(ws.db_path, "tester") as store:
        problem = problem_store.get(store, "triple")
        jobs = [runs.job_for(store, ws, problem, text, "sample")
                for text in (problem.solution, CANDIDATE, WRONG)]
    with Engine(workers=1, isolation="strong", warm_repos=True, eager=False) as engine:
        results = {r.job_id: r for r in engine.run(jobs)}
    outcomes = [results[j.job_id].outcome for j in jobs]
    assert outcomes == ["passed", "passed", "failed"], [
        results[j.job_id].reason for j in jobs]
    assert _compiles(log) == 1 and ext.stat().st_mtime_ns == stamp

    # A checkout written anew from git objects (a cleaned cache) finds the extension
    # again: it comes back from the environment's build cache.
    shutil.rmtree(worktree)
    with Store(ws.db_path, "tester") as store:
        problem = problem_store.get(store, "triple")
        job = runs.job_for(store, ws, problem, CANDIDATE, "sample")
    assert list((_worktree(ws, "tinyext") / "tinyext").glob("_ops*.so"))
    with Engine(workers=1, isolation="strong", warm_repos=False, eager=False) as engine:
        (result,) = engine.run([job])
    assert result.outcome == "passed", result.reason
    assert _compiles(log) == 1

    # The environment built again takes the same build from the cache.
    rebuilt = CliRunner().invoke(main, [*base, "repo", "env", "tinyext", "--rebuild"])
    assert rebuilt.exit_code == 0, rebuilt.output
    assert "taken from the build cache" in rebuilt.output
    assert _compiles(log) == 1
    code = CliRunner().invoke(main, [*base, "run", "triple", "--json"])
    (run,) = json.loads(code.stdout)["runs"]
    assert run["outcome"] == "passed", run["reason"]
    # and `doctor` imports it from its checkout (it is built there, not installed)
    doctor = CliRunner().invoke(main, [*base, "doctor", "--json"])
    (listed,) = json.loads(doctor.stdout)["repo_envs"]
    assert listed["imports"] is True, listed


def test_an_extension_that_does_not_compile_leaves_the_environment_not_built(
        tmp_path, offline_index):  # noqa: F811
    broken = OPS_CPP.replace("#include <Python.h>",
                             "#include <tinyext_vendored_header.h>\n#include <Python.h>")
    upstream = make_repo(tmp_path / "badext", _files(broken))
    ws, base = mine_and_accept(tmp_path, upstream, "triple", "triple")
    out = CliRunner().invoke(main, [*base, "repo", "env", "badext"])
    assert out.exit_code == 1
    # the compiler's own line, not setup.py's last ("command 'g++' failed")
    assert "not usable" in out.output and "tinyext_vendored_header.h" in out.output, \
        out.output
    env = _env(ws, "badext")
    assert env["status"] == "broken"
    assert "build step" in env["reason"] and "tinyext_vendored_header.h" in env["reason"]
    doctor = CliRunner().invoke(main, [*base, "doctor", "--json"])
    (listed,) = json.loads(doctor.stdout)["repo_envs"]
    assert listed["imports"] is False and "tinyext_vendored_header.h" in listed["detail"]
    code = CliRunner().invoke(main, [*base, "run", "triple", "--json"])
    (run,) = json.loads(code.stdout)["runs"]
    assert run["outcome"] != "passed"
