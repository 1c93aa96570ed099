"""Repo-backed runs: the AST patch of the target symbol and the pinned worktree."""

from __future__ import annotations

import ast
import os
import sys
import textwrap
import types

import pytest
from mining_support import BOXES, make_dl_repo, mine_first_commit, mining_workspace

from curator import workspace as workspace_mod
from curator.mining import promote
from curator.pysource.patch import MissingSymbol, PatchError, replace_symbol
from curator.repos import identity
from curator.repos.checkout import prepare
from curator.repos.gitcache import run_git
from curator.store import Store
from curator.store import problems as problem_store

MODULE = '''"""Module docstring."""
from __future__ import annotations

import torch
from .common import EPS

SCALE = 2


def other(x):
    return x + 1


def target(x):
    """Old."""
    return x * SCALE


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()

    @torch.no_grad()
    def forward(self, x):
        return x


def tail():
    return target(1)
'''


def test_function_replaced_with_helpers_imports_and_future_first():
    solution = textwrap.dedent('''\
        from __future__ import division
        import math
        import torch
        from .common import EPS

        LIMIT = 3

        def _helper(x):
            return math.sqrt(x)

        def other(x):
            return "the solution's copy loses to the module's"

        def target(x):
            """New."""
            return _helper(x) * LIMIT

        print("example usage that must not run")
        ''')
    out = replace_symbol(MODULE, "target", solution, path="pkg/mod.py")
    tree = ast.parse(out)
    assert ast.get_docstring(tree) == "Module docstring."
    assert [type(s).__name__ for s in tree.body[:3]] == ["Expr", "ImportFrom", "ImportFrom"]
    assert {a.name for s in tree.body[1:3] for a in s.names} == {"annotations", "division"}
    lines = out.splitlines()
    assert lines.index("import math") == lines.index("from .common import EPS") + 1
    assert out.count("import torch") == 1 and out.count("from .common import EPS") == 1
    assert out.index("def _helper(x):") < out.index("def target(x):")
    assert "LIMIT = 3" in out and "print(" not in out
    assert 'return x + 1' in out and "the solution's copy" not in out
    assert '"""New."""' in out and '"""Old."""' not in out
    assert out.index("def target(x):") < out.index("class Net") < out.index("def tail():")
    # run it with stand-ins for torch and the relative import (no torch import here)
    fake_torch = types.SimpleNamespace(nn=types.SimpleNamespace(Module=object),
                                       no_grad=lambda: (lambda f: f))
    runnable = out.replace("from .common import EPS", "EPS = 0").replace("import torch\n", "")
    namespace: dict = {"torch": fake_torch}
    exec(compile(runnable, "m", "exec"), namespace)  # noqa: S102 - our own patched text
    assert namespace["target"](16) == 12.0 and namespace["tail"]() == 3.0


def test_method_replaced_inside_its_class_keeping_decorators_and_new_methods():
    solution = textwrap.dedent('''\
        import torch

        class Net(torch.nn.Module):
            def __init__(self):
                raise RuntimeError("the module's __init__ must stay")

            def forward(self, x):
                """Doubles."""
                text = """keep
        this indentation"""
                return self._double(x)

            def _double(self, x):
                return x * 2
        ''')
    out = replace_symbol(MODULE, "Net.forward", solution)
    tree = ast.parse(out)
    net = next(s for s in tree.body if isinstance(s, ast.ClassDef))
    methods = {f.name: f for f in net.body if isinstance(f, ast.FunctionDef)}
    assert set(methods) == {"__init__", "forward", "_double"}
    assert ast.unparse(methods["forward"].decorator_list[0]) == "torch.no_grad()"
    assert "raise RuntimeError" not in out
    assert '        text = """keep\nthis indentation"""' in out
    # a bare `def forward` (no class) is accepted for a method problem too
    bare = "def forward(self, x):\n    return x + 100\n"
    out = replace_symbol(MODULE, "Net.forward", bare)
    assert "    @torch.no_grad()\n    def forward(self, x):\n        return x + 100" in out


def test_unparsable_solution_goes_in_as_is_and_missing_symbol_raises():
    out = replace_symbol(MODULE, "target", "def target(x):\n    return (\n")
    with pytest.raises(SyntaxError):
        ast.parse(out)
    assert "def other(x):" in out and '"""Old."""' not in out
    with pytest.raises(MissingSymbol):
        replace_symbol(MODULE, "target", "def something_else():\n    return 1\n")
    with pytest.raises(PatchError, match="not found"):
        replace_symbol(MODULE, "Net.missing", "def missing(self):\n    pass\n")


def test_module_without_imports_gets_them_after_the_docstring():
    module = '"""Doc."""\n\n\ndef f(x):\n    return x\n'
    out = replace_symbol(module, "f", "import numpy as np\n\ndef f(x):\n    return np.abs(x)\n")
    assert out.startswith('"""Doc."""\nimport numpy as np\n')
    ast.parse(out)


@pytest.fixture(scope="module")
def dl_repo(tmp_path_factory):
    return make_dl_repo(tmp_path_factory.mktemp("upstream") / "dlrepo")


@pytest.fixture
def accepted(tmp_path, dl_repo):
    ws = mining_workspace(tmp_path / "ws")
    with Store(ws.db_path, "miner") as store:
        ids = mine_first_commit(store, ws, dl_repo)
        promote.accept(store, ws, ids["FocalLoss.forward"], "focal")
        promote.accept(store, ws, ids["xyxy_to_cxcywh"], "convert")
        yield ws, store


def test_prepare_pins_a_reused_worktree_and_patches_the_module(accepted, dl_repo):
    ws, store = accepted
    problem = problem_store.get(store, "convert")
    repo_dir, overlay, python = prepare(ws, problem, problem.solution, store)
    assert python == sys.executable
    assert run_git(["rev-parse", "HEAD"], cwd=repo_dir).strip() == dl_repo["first"]
    # the upstream default branch has moved on; the checkout has the pinned version
    assert (os.path.join(repo_dir, "pkg", "boxes.py"))
    with open(os.path.join(repo_dir, "pkg", "boxes.py"), encoding="utf-8") as fh:
        assert fh.read() == BOXES
    assert set(overlay) == {"pkg/boxes.py"}
    patched = overlay["pkg/boxes.py"]
    ast.parse(patched)
    assert patched.count("def xyxy_to_cxcywh(") == 1 and "class FocalLoss" in patched
    wrong = "def xyxy_to_cxcywh(boxes):\n    return boxes\n"
    again_dir, overlay2, _ = prepare(ws, problem, wrong, store)
    assert again_dir == repo_dir
    assert "    return boxes\n" in overlay2["pkg/boxes.py"]
    assert run_git(["status", "--porcelain"], cwd=repo_dir).strip() == ""


def test_prepare_method_problem_and_configured_python(accepted, dl_repo):
    ws, store = accepted
    problem = problem_store.get(store, "focal")
    python = os.path.realpath(sys.executable)
    identity.set_python(store, str(dl_repo["path"]), python)
    _, overlay, chosen = prepare(ws, problem, problem.solution, store)
    assert chosen == python
    tree = ast.parse(overlay["pkg/boxes.py"])
    focal = next(s for s in tree.body if isinstance(s, ast.ClassDef) and s.name == "FocalLoss")
    assert [f.name for f in focal.body if isinstance(f, ast.FunctionDef)] == ["__init__",
                                                                               "forward"]


def test_prepare_clones_into_a_fresh_workspace(accepted, tmp_path, dl_repo):
    _, store = accepted
    problem = problem_store.get(store, "convert")
    # the upstream folder has no remote, so its problems name it "dlrepo", which another
    # workspace cannot clone; a portable URL in [source] repo can be
    assert problem.source["repo"] == "dlrepo"
    problem.source["repo"] = f"file://{dl_repo['path']}"
    other = workspace_mod.init(tmp_path / "elsewhere")
    repo_dir, overlay, python = prepare(other, problem, problem.solution)
    assert repo_dir.startswith(str(other.repos_dir))
    assert python == sys.executable and "pkg/boxes.py" in overlay
