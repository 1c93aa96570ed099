"""Small git repositories for the mining tests, built with the git CLI in tmp_path."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

GIT_IDENTITY = ["-c", "user.name=tester", "-c", "user.email=tester@localhost",
                "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false",
                "-c", "core.hooksPath=/dev/null"]

MIT = """MIT License

Copyright (c) 2024 Somebody

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction.
"""

BOXES = '''"""Box utilities."""
from __future__ import annotations

import torch
from torch import nn
import torch.nn.functional as F

from .common import EPS


def box_area(boxes: torch.Tensor) -> torch.Tensor:
    """Area of (N, 4) xyxy boxes."""
    return (boxes[:, 2] - boxes[:, 0]).clamp(min=0) * (boxes[:, 3] - boxes[:, 1]).clamp(min=0)


def xyxy_to_cxcywh(boxes):
    """Convert xyxy boxes to centre-size form."""
    x0, y0, x1, y1 = boxes.unbind(-1)
    return torch.stack([(x0 + x1) / 2, (y0 + y1) / 2, x1 - x0, y1 - y0], dim=-1)


def _stub():
    raise NotImplementedError


class FocalLoss(nn.Module):
    """Binary focal loss."""

    def __init__(self, gamma: float = 2.0):
        super().__init__()
        self.gamma = gamma

    def forward(self, logits, targets):
        """Mean focal loss of logits against 0/1 targets."""
        p = torch.sigmoid(logits).clamp(EPS, 1 - EPS)
        ce = F.binary_cross_entropy(p, targets, reduction="none")
        return ((1 - p) ** self.gamma * ce).mean()
'''

COMMON = "EPS = 1e-6\n"

METRICS = '''import numpy as np


def accuracy(preds, labels):
    """Fraction of predictions equal to the labels."""
    preds = np.asarray(preds)
    return float((preds == np.asarray(labels)).mean())
'''

UNTESTED = '''import torch


def gelu_approx(x):
    return 0.5 * x * (1 + torch.tanh(0.79788456 * (x + 0.044715 * x ** 3)))
'''

# The same function as xyxy_to_cxcywh with different formatting and docstring.
DUPLICATE = '''import torch


def xyxy_to_cxcywh(boxes):
    # a copy, reformatted
    x0, y0, x1, y1 = boxes.unbind( -1 )
    return torch.stack(
        [(x0 + x1) / 2, (y0 + y1) / 2, x1 - x0, y1 - y0],
        dim=-1,
    )
'''

CONVERT_TEST = '''def _convert(b):
    return xyxy_to_cxcywh(b)


def test_convert_via_helper():
    out = _convert(torch.tensor([[0.0, 0.0, 2.0, 4.0]]))
    assert out.tolist() == [[1.0, 2.0, 2.0, 4.0]]


'''

TEST_BOXES = '''import torch
import pytest

from pkg import box_area as area
from pkg.boxes import xyxy_to_cxcywh, FocalLoss


''' + CONVERT_TEST + '''def test_area():
    assert area(torch.tensor([[0.0, 0.0, 2.0, 3.0]])).tolist() == [6.0]


def test_area_empty():
    assert area(torch.zeros(0, 4)).shape == (0,)


def test_area_negative_is_zero():
    assert area(torch.tensor([[2.0, 2.0, 1.0, 1.0]])).tolist() == [0.0]


class TestFocal:
    def setup_method(self):
        self.loss = FocalLoss(gamma=2.0)

    def test_zero_when_confident(self):
        value = self.loss(torch.tensor([20.0]), torch.tensor([1.0]))
        assert value.item() < 1e-6

    def test_positive(self):
        assert self.loss(torch.zeros(3), torch.ones(3)).item() > 0

    def test_gamma_zero_is_bce(self):
        logits, targets = torch.tensor([0.3, -1.2]), torch.tensor([1.0, 0.0])
        expected = torch.nn.functional.binary_cross_entropy_with_logits(logits, targets)
        assert torch.allclose(FocalLoss(gamma=0.0)(logits, targets), expected, atol=1e-5)
'''

TEST_METRICS = '''import unittest

import pkg.metrics as M


class MetricsCase(unittest.TestCase):
    def test_accuracy(self):
        self.assertEqual(M.accuracy([1, 2, 3], [1, 2, 0]), 2 / 3)

    def test_all_right(self):
        self.assertEqual(M.accuracy([1], [1]), 1.0)
'''

TEST_CONVERT_V2 = '''import torch

from pkg.boxes import cxcywh_to_xyxy


def test_back():
    assert cxcywh_to_xyxy(torch.tensor([[1.0, 2.0, 2.0, 4.0]])).tolist() == [[0.0, 0.0, 2.0, 4.0]]
'''

CXCYWH = '''

def cxcywh_to_xyxy(boxes):
    """Convert centre-size boxes to xyxy."""
    cx, cy, w, h = boxes.unbind(-1)
    return torch.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], dim=-1)
'''


def git(repo: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull,
               GIT_AUTHOR_NAME="tester", GIT_AUTHOR_EMAIL="tester@localhost",
               GIT_COMMITTER_NAME="tester", GIT_COMMITTER_EMAIL="tester@localhost")
    out = subprocess.run(["git", *GIT_IDENTITY, *args], cwd=repo, env=env, check=True,
                         capture_output=True, text=True)
    return out.stdout.strip()


def write(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def commit(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def make_dl_repo(root: Path) -> dict:
    """The test repository: two commits. Returns {"path", "first", "second"}."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    write(root, {
        "LICENSE": MIT,
        "conftest.py": "",
        "pkg/__init__.py": "from .boxes import box_area\n",
        "pkg/common.py": COMMON,
        "pkg/boxes.py": BOXES,
        "pkg/metrics.py": METRICS,
        "pkg/untested.py": UNTESTED,
        "pkg/copy_of_boxes.py": DUPLICATE,
        "pkg/legacy.py": 'print "python 2"\n',
        "pkg/latin1.py": b"# caf\xe9\nx = 1\n",
        "pkg/generated.py": "TABLE = [\n" + "    1,\n" * 5000 + "]\n",
        "docs/conf.py": "import torch\n\ndef setup(app):\n    return torch.zeros(1)\n",
        "tests/test_boxes.py": TEST_BOXES,
        "tests/test_metrics.py": TEST_METRICS,
    })
    os.symlink("/etc/passwd", root / "pkg" / "escape.py")
    os.symlink("/etc", root / "outside")
    first = commit(root, "first")
    boxes = BOXES.replace(
        '''def xyxy_to_cxcywh(boxes):
    """Convert xyxy boxes to centre-size form."""
    x0, y0, x1, y1 = boxes.unbind(-1)
    return torch.stack([(x0 + x1) / 2, (y0 + y1) / 2, x1 - x0, y1 - y0], dim=-1)
''', "") + CXCYWH
    write(root, {"pkg/boxes.py": boxes, "tests/test_convert.py": TEST_CONVERT_V2,
                 "tests/test_boxes.py": TEST_BOXES.replace(
                     "from pkg.boxes import xyxy_to_cxcywh, FocalLoss",
                     "from pkg.boxes import FocalLoss").replace(
                     CONVERT_TEST, "")})
    (root / "pkg" / "copy_of_boxes.py").unlink()
    second = commit(root, "second")
    git(root, "tag", "v1", first)
    return {"path": root, "first": first, "second": second}


# Settings for the test workspace: a small size cap so the generated file is "huge".
CURATOR_TOML = "[mining]\nmax_file_bytes = 20000\n"


def mining_workspace(root: Path):
    """A new workspace at root with the mining settings above."""
    from curator import workspace as workspace_mod

    ws = workspace_mod.init(root)
    (ws.root / "curator.toml").write_text(CURATOR_TOML, encoding="utf-8")
    return workspace_mod.discover(ws.root)


def mine_first_commit(store, ws, repo: dict) -> dict[str, int]:
    """Mine the repo's first commit; qualname -> candidate id."""
    from curator.mining.mine import mine
    from curator.store import candidates as candidate_store

    mine(store, ws, str(repo["path"]), rev=repo["first"])
    return {r["qualname"]: r["id"] for r in candidate_store.list_rows(store)}


def make_slow_repo(root: Path, modules: int = 200, functions: int = 120) -> Path:
    """A repository that takes seconds to mine (for cancel tests): many small functions,
    each module with a test module calling its first function."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    files = {"big/__init__.py": ""}
    for m in range(modules):
        files[f"big/mod{m}.py"] = "import torch\n" + "".join(
            f"\n\ndef f{m}_{i}(x):\n    return torch.relu(x) * {i} + f{m}_{(i + 1) % functions}(x)\n"
            for i in range(functions))
        files[f"tests/test_mod{m}.py"] = (f"from big.mod{m} import f{m}_0\n\n\n"
                                          f"def test_f():\n    assert f{m}_0(1)\n")
    write(root, files)
    commit(root, "slow")
    return root
