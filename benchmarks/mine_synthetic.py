"""Mining speed on synthetic repositories.

Flat layout (default): a git repository of 2,000 source modules with torch / numpy
functions and classes, plus a test module for every fourth one. It is mined once to fill
the cache, then the parse-and-index step is timed on the cached repository, and a full
re-mine into a fresh database (index + store); files per second are printed.

    .venv/bin/python benchmarks/mine_synthetic.py [--modules 2000] [--keep DIR]

Target: >= 200 Python files per second for parse-and-index on one core.

Star layout (`--layout star`): package `__init__` files each re-exporting 20 children
with `from .x import *`, four levels deep (lib/sI/sJ/mK.py), every leaf star-importing
its parent and the root package (import cycles) and calling a neighbour's helper through
them; tests import everything from the root. Repositories of growing size (1, 2, 4 ...
top-level subpackages) are indexed in one run, and the table shows seconds per 1,000
files for each: time grows linearly when that column stays flat.

    .venv/bin/python benchmarks/mine_synthetic.py --layout star [--sizes 1,2,4]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from curator import workspace as workspace_mod
from curator.mining.index import index_commit
from curator.mining.mine import mine
from curator.mining.settings import MiningSettings
from curator.repos.gitcache import CachedRepo, cache_for
from curator.store import Store

TARGET_FILES_PER_S = 200

SOURCE = '''"""Generated module {i}."""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .common import EPS


def normalize_{i}(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Normalise x along dim ({i})."""
    mean = x.mean(dim=dim, keepdim=True)
    std = x.std(dim=dim, keepdim=True).clamp(min=EPS)
    return (x - mean) / std


def iou_{i}(a, b):
    """IoU of two xyxy boxes."""
    x0, y0 = max(a[0], b[0]), max(a[1], b[1])
    x1, y1 = min(a[2], b[2]), min(a[3], b[3])
    inter = max(0.0, x1 - x0) * max(0.0, y1 - y0)
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def accuracy_{i}(preds, labels):
    preds = np.asarray(preds)
    return float((preds == np.asarray(labels)).mean()) + {i} * 0


class Block{i}(nn.Module):
    """A small residual block."""

    def __init__(self, channels: int = {c}):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.norm = nn.BatchNorm2d(channels)

    def forward(self, x):
        return F.relu(x + self.norm(self.conv(x)))

    def extra_repr(self) -> str:
        return "block {i}"
'''

TEST = '''import torch

from pkg.sub{s}.mod{i} import normalize_{i}, Block{i}
import pkg.sub{s}.mod{i} as m


def test_normalize():
    out = normalize_{i}(torch.randn(4, 8))
    assert out.shape == (4, 8)


def test_iou():
    assert m.iou_{i}((0, 0, 1, 1), (0, 0, 1, 1)) == 1.0


class TestBlock:
    def setup_method(self):
        self.block = Block{i}()

    def test_shape(self):
        assert self.block(torch.zeros(1, {c}, 4, 4)).shape == (1, {c}, 4, 4)
'''


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost",
                    "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args],
                   cwd=repo, check=True, capture_output=True)


def build_repo(root: Path, modules: int) -> Path:
    repo = root / "synthetic"
    (repo / "pkg").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "pkg" / "common.py").write_text("EPS = 1e-6\n")
    for i in range(modules):
        sub = repo / "pkg" / f"sub{i // 100}"
        if not sub.exists():
            sub.mkdir()
            (sub / "__init__.py").write_text("")
            (sub / "common.py").write_text("EPS = 1e-6\n")
        channels = 4 + i % 5
        (sub / f"mod{i}.py").write_text(SOURCE.format(i=i, c=channels))
        if i % 4 == 0:
            (repo / "tests" / f"test_mod{i}.py").write_text(
                TEST.format(i=i, s=i // 100, c=channels))
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "synthetic")
    return repo


def star_files(top: int, fanout: int = 20) -> dict[str, str]:
    """The star layout with `top` subpackages under the root (see the module docstring)."""
    files = {"lib/__init__.py": "".join(f"from .s{i} import *\n" for i in range(top))}
    for i in range(top):
        files[f"lib/s{i}/__init__.py"] = "".join(
            f"from .s{j} import *\n" for j in range(fanout))
        for j in range(fanout):
            package = f"lib/s{i}/s{j}"
            files[f"{package}/__init__.py"] = "".join(
                f"from .m{k} import *\n" for k in range(fanout)) + "from lib import *\n"
            names = []
            for k in range(fanout):
                tag, neighbour = f"{i}_{j}_{k}", f"{i}_{j}_{(k + 1) % fanout}"
                files[f"{package}/m{k}.py"] = (
                    "from .. import *\nfrom lib import *\nimport torch\n\n\n"
                    f"def helper_{tag}(x):\n    return torch.relu(x) + {k}\n\n\n"
                    f"def op_{tag}(x):\n    return helper_{neighbour}(x) * 2\n")
                names.append(f"op_{tag}")
            tests = "".join(f"\n\ndef test_{n}():\n    assert lib.{n}(1) is not None\n"
                            for n in names[: fanout // 2])
            tests += "".join(f"\n\ndef test_{n}():\n    assert {n}(1) is not None\n"
                             for n in names[fanout // 2:])
            files[f"tests/s{i}/test_s{j}.py"] = (
                f"import lib\nfrom lib import {', '.join(names[fanout // 2:])}\n{tests}")
    return files


def build_star_repo(root: Path, top: int) -> Path:
    repo = root / f"star{top}"
    for path, text in star_files(top).items():
        target = repo / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "star layout")
    return repo


def star_benchmark(root: Path, sizes: list[int]) -> int:
    """Index star layouts of growing size in one run; print seconds per 1,000 files."""
    rows = []
    for top in sizes:
        repo = build_star_repo(root, top)
        cache = CachedRepo(url=str(repo), path=repo / ".git")
        commit = cache.resolve(None)
        started, cpu = time.perf_counter(), time.process_time()
        result = index_commit(cache, commit, MiningSettings(), with_tests=True)
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
        expected = top * 20 * 20 * 2   # every op_ directly, every helper through a call
        rows.append((top, result.files, wall, cpu, len(result.candidates), expected))
    print(f"star layout: __init__ re-exporting 20 children, 4 levels, cycles "
          f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    print(f"{'top':>4} {'files':>6} {'wall s':>7} {'cpu s':>6} {'cpu s/1k files':>15} "
          f"{'x smallest':>10} {'candidates':>10}")
    base = rows[0][3] / rows[0][1]
    ok = True
    for top, files, wall, cpu, found, expected in rows:
        per_k = 1000 * cpu / files
        print(f"{top:>4} {files:>6} {wall:>7.2f} {cpu:>6.2f} {per_k:>15.2f} "
              f"{per_k / (1000 * base):>10.2f} {found:>5}/{expected}")
        ok &= found == expected
    growth = (rows[-1][3] / rows[-1][1]) / base
    print(f"CPU time per file at the largest size is {growth:.2f}x the smallest "
          f"({'linear' if growth < 1.5 else 'NOT linear'}); candidates "
          f"{'all found' if ok else 'MISSING'}")
    return 0 if ok and growth < 1.5 else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layout", choices=("flat", "star"), default="flat")
    parser.add_argument("--sizes", default="1,2,4",
                        help="Star layout: top-level subpackages per run (20 x 21 files each).")
    parser.add_argument("--modules", type=int, default=2000)
    parser.add_argument("--keep", help="Build in this folder and keep it.")
    parser.add_argument("--repeat", type=int, default=3,
                        help="Time parse-and-index this many times (best is reported).")
    args = parser.parse_args()
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="mine-bench-"))
    root.mkdir(parents=True, exist_ok=True)
    if args.layout == "star":
        try:
            return star_benchmark(root, [int(n) for n in args.sizes.split(",")])
        finally:
            if not args.keep:
                shutil.rmtree(root, ignore_errors=True)
    try:
        started = time.perf_counter()
        repo = build_repo(root, args.modules)
        print(f"built {repo} with {args.modules} modules in "
              f"{time.perf_counter() - started:.1f} s")
        ws = workspace_mod.init(root / "ws")
        with Store(ws.db_path, "bench") as store:
            first = mine(store, ws, str(repo))
        print(f"first mine (clone + index + store): {first.files} files, "
              f"{first.candidates} candidates with tests, {first.seconds:.2f} s")

        cache = cache_for(ws.repos_dir, str(repo))
        walls, cpus = [], []
        for _ in range(args.repeat):
            started, cpu = time.perf_counter(), time.process_time()
            result = index_commit(cache, first.commit, MiningSettings(), with_tests=True)
            walls.append(time.perf_counter() - started)
            cpus.append(time.process_time() - cpu)
        seconds = min(walls)
        rate = result.files / seconds
        print(f"parse-and-index (cached repo): {result.files} files, {result.parsed} parsed, "
              f"{result.functions} functions, {len(result.candidates)} candidates, "
              f"{result.tests} tests")
        print(f"  wall per run: {', '.join(f'{w:.2f} s' for w in walls)}; best {seconds:.2f} s "
              f"= {rate:.0f} files/s; median {result.files / statistics.median(walls):.0f} "
              f"files/s; CPU of this process {result.files / min(cpus):.0f} files/s "
              f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")

        ws.db_path.unlink()
        for suffix in ("-wal", "-shm"):
            Path(str(ws.db_path) + suffix).unlink(missing_ok=True)
        with Store(ws.db_path, "bench") as store:
            full = mine(store, ws, str(repo), with_tests=False)
        print(f"full re-mine into a fresh database (--all-candidates, cache present): "
              f"{full.files} files, {full.candidates} candidates stored in "
              f"{full.seconds:.2f} s = {full.files / full.seconds:.0f} files/s")
        verdict = "meets" if rate >= TARGET_FILES_PER_S else "MISSES"
        print(f"parse-and-index, best wall time: {rate:.0f} files/s ({verdict} the target of "
              f"{TARGET_FILES_PER_S} files/s)")
        return 0 if rate >= TARGET_FILES_PER_S else 1
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("GIT_TERMINAL_PROMPT", "0")
    sys.exit(main())
