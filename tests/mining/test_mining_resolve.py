"""Resolving tests to functions at scale: star imports, cycles, call graph, dispatch."""

from __future__ import annotations

import time

import pytest
from mining_support import commit, git, mining_workspace, write

from curator.mining.mine import mine
from curator.store import Store
from curator.store import candidates as candidate_store

FANOUT = 5   # 1 + 5 + 25 packages and 125 leaf modules, four levels deep


def star_layout(fanout: int = FANOUT) -> dict[str, str]:
    """`lib/sI/sJ/mK.py` leaves, each package `__init__` star-importing its children.

    Every leaf also star-imports its parent package and the root (import cycles), and
    calls a helper from its neighbour through the root's namespace. One test module per
    inner package imports the leaves' functions from the root package.
    """
    files = {"lib/__init__.py": "".join(f"from .s{i} import *\n" for i in range(fanout))}
    for i in range(fanout):
        files[f"lib/s{i}/__init__.py"] = "".join(
            f"from .s{j} import *\n" for j in range(fanout))
        for j in range(fanout):
            package = f"lib/s{i}/s{j}"
            files[f"{package}/__init__.py"] = "".join(
                f"from .m{k} import *\n" for k in range(fanout)) + "from lib import *\n"
            names = []
            for k in range(fanout):
                tag = f"{i}_{j}_{k}"
                neighbour = f"{i}_{j}_{(k + 1) % fanout}"
                files[f"{package}/m{k}.py"] = (
                    "from .. import *\nfrom lib import *\nimport torch\n\n\n"
                    f"def helper_{tag}(x):\n    return torch.relu(x) + {k}\n\n\n"
                    f"def op_{tag}(x):\n    return helper_{neighbour}(x) * 2\n\n\n"
                    f"def _private_{tag}(x):\n    return x - {k}\n")
                names.append(f"op_{tag}")
            body = "".join(f"\n\ndef test_{name}():\n    assert {name}(1) is not None\n"
                           for name in names)
            files[f"tests/s{i}/test_s{j}.py"] = f"from lib import {', '.join(names)}\n{body}"
    return files


@pytest.fixture
def ws(tmp_path):
    return mining_workspace(tmp_path / "ws")


def mine_files(tmp_path, ws, files):
    repo = tmp_path / "upstream"
    repo.mkdir()
    git(repo, "init", "-q")
    write(repo, files)
    commit(repo, "layout")
    with Store(ws.db_path, "miner") as store:
        # CPU time of this process: the bound is on resolution's cost, and stays
        # meaningful when other work shares the machine (git runs in children).
        started = time.process_time()
        report = mine(store, ws, str(repo))
        report.wall = time.process_time() - started
        rows = {r["qualname"]: r for r in candidate_store.list_rows(store, status="all")}
    return report, rows


def test_nested_star_imports_with_cycles_mine_fast_with_the_right_links(tmp_path, ws):
    files = star_layout()
    report, rows = mine_files(tmp_path, ws, files)
    seconds = report.wall  # clone, parse, link and store
    assert report.files == len(files) and report.ok
    assert seconds < 2.0, f"{len(files)} files took {seconds:.1f} s"
    # every op_ is tested directly by exactly its own test
    ops = {q: r for q, r in rows.items() if q.startswith("op_")}
    assert len(ops) == FANOUT ** 3
    for qualname, row in ops.items():
        i, j, _ = qualname[3:].split("_")
        assert row["tests"] == [f"tests/s{i}/test_s{j}.py::test_{qualname}"]
        assert row["path"] == f"lib/s{i}/s{j}/m{qualname.rsplit('_', 1)[1]}.py"
    # helpers are reached only through the op_ that calls them (the neighbour's helper)
    helper = rows["helper_2_3_1"]
    assert helper["tests"] == ["tests/s2/test_s3.py::test_op_2_3_0"]
    indirect = [e for e in helper["evidence"] if e["kind"] == "indirect-tests"]
    assert indirect and indirect[0]["detail"].endswith("op_2_3_0 -> helper_2_3_1")
    assert not any(q.startswith("_private") for q in rows)


def test_call_graph_is_depth_limited_and_skips_unrelated_functions(tmp_path, ws):
    files = {
        "pkg/__init__.py": "",
        "pkg/chain.py": (
            "import torch\n\n\n"
            "def top(x):\n    return middle(x) + 1\n\n\n"
            "def middle(x):\n    return bottom(x) * 2\n\n\n"
            "def bottom(x):\n    return deeper(x) - 1\n\n\n"
            "def deeper(x):\n    return deepest(x) / 2\n\n\n"
            "def deepest(x):\n    return torch.relu(x) + 3\n\n\n"
            "def unrelated(x):\n    return torch.tanh(x) + 1\n"),
        "tests/test_chain.py": "from pkg.chain import top\n\n\ndef test_top():\n"
                               "    assert top(1)\n",
    }
    _, rows = mine_files(tmp_path, ws, files)
    assert rows["top"]["tests"] == ["tests/test_chain.py::test_top"]
    for name in ("middle", "bottom", "deeper"):  # depth 1..3
        assert rows[name]["tests"] == ["tests/test_chain.py::test_top"]
    via = [e["detail"] for e in rows["deeper"]["evidence"] if e["kind"] == "indirect-tests"]
    assert via == ["1 test(s) of a caller, through top -> middle -> bottom -> deeper"]
    assert "deepest" not in rows and "unrelated" not in rows


AUGMENT = '''import torch
from torch import nn


class AugmentationBase(nn.Module):
    def __init__(self, p: float = 0.5):
        super().__init__()
        self.p = p

    def forward(self, x):
        params = self.generate_parameters(x.shape)
        return self.apply_func(x, params)

    def apply_func(self, x, params):
        return self.apply_transform(x, params)

    def generate_parameters(self, shape):
        return {"p": torch.full((shape[0],), self.p)}

    def apply_transform(self, x, params):
        raise NotImplementedError


class RandomSaturation(AugmentationBase):
    def __init__(self, saturation: float = 1.0, p: float = 0.5):
        super().__init__(p=p)
        self.saturation = saturation

    def apply_transform(self, x, params):
        return x * self.saturation * params["p"][:, None]


class RandomHue(AugmentationBase):
    def apply_transform(self, x, params):
        return x + params["p"][:, None]
'''


def test_dispatch_through_the_base_class_reaches_the_subclass_override(tmp_path, ws):
    files = {
        "aug/__init__.py": "from .intensity import *\n",
        "aug/intensity.py": AUGMENT,
        "tests/test_saturation.py": (
            "import torch\nfrom aug import RandomSaturation\n\n\n"
            "def test_saturation():\n    out = RandomSaturation(0.5)(torch.ones(2, 3))\n"
            "    assert out.shape == (2, 3)\n"),
    }
    _, rows = mine_files(tmp_path, ws, files)
    node = "tests/test_saturation.py::test_saturation"
    # the test calls the instance: the inherited forward is tested directly ...
    assert rows["AugmentationBase.forward"]["tests"] == [node]
    # ... and dispatches, through apply_func, to the subclass's apply_transform
    saturation = rows["RandomSaturation.apply_transform"]
    assert saturation["tests"] == [node]
    via = [e["detail"] for e in saturation["evidence"] if e["kind"] == "indirect-tests"]
    assert via and "RandomSaturation.apply_func (AugmentationBase)" in via[0]
    # the constructor of the class the test builds is a candidate; the sibling's
    # override, which this test never runs, is not linked
    assert rows["RandomSaturation.__init__"]["tests"] == [node]
    assert "RandomHue.apply_transform" not in rows


def test_the_call_path_shown_is_the_same_on_every_run(tmp_path, ws):
    # one test calls eight callers of one helper: the path shown starts from the first
    # caller by name, not from wherever a set of names happened to iterate first
    names = ["caller_h", "caller_c", "caller_f", "caller_a", "caller_g", "caller_b",
             "caller_e", "caller_d"]
    body = "".join(f"\n\ndef {n}(x):\n    return helper(x) + 1\n" for n in names)
    files = {
        "pkg/__init__.py": "",
        "pkg/ops.py": f"import torch\n\n\ndef helper(x):\n    return torch.relu(x)\n{body}",
        "tests/test_ops.py": f"from pkg.ops import {', '.join(names)}\n\n\n"
                             "def test_all():\n" + "".join(f"    assert {n}(1)\n" for n in names),
    }
    _, rows = mine_files(tmp_path, ws, files)
    via = [e["detail"] for e in rows["helper"]["evidence"] if e["kind"] == "indirect-tests"]
    assert via == ["1 test(s) of a caller, through caller_a -> helper"]
