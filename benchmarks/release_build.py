"""How long `curator release build` takes for a big benchmark (target: 10,000 problems < 10 s).

    .venv/bin/python benchmarks/release_build.py [--count 10000] [--keep DIR]

Setup (not timed): a workspace with COUNT ready problems whose solutions are varied
generated code (so the near-duplicate gate has real work, not one giant cluster), their
problem folders, a licence, and one passing reference run each. Then it times:

- check: every release gate over all problems;
- build: the whole `release build` (gates, rendering, writing the folder and the
  .tar.gz, recording the release, marking every problem released, rewriting problem.toml);
- rebuild: the same version again (nothing to mark), which must give the same sha256;
- verify: `release verify` of the archive.

Not a test: the numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

from curator import sync
from curator import workspace as workspace_mod
from curator.labels import DATA, STAGES, TASKS
from curator.problem import Problem
from curator.release import bundle, gates
from curator.release.verify import verify
from curator.store import Store, now
from curator.store import problems as problem_store
from curator.store.runs import solution_hash

OPS = ("torch.relu", "torch.sigmoid", "torch.tanh", "torch.exp", "torch.abs", "torch.sqrt",
       "torch.log1p", "torch.square", "torch.neg", "torch.floor")
REDUCE = ("sum", "mean", "amax", "amin", "std", "logsumexp")


def make_problem(index: int, rng: random.Random) -> Problem:
    name = f"op_{index:05d}"
    lines = [f"def {name}(x, y):", f'    """Generated problem {index}."""']
    names = ["x", "y"]
    for step in range(rng.randint(3, 9)):
        kind = rng.random()
        a, b = rng.choice(names), rng.choice(names)
        if kind < 0.35:
            expr = f"{rng.choice(OPS)}({a}) {rng.choice('+-*')} {b}"
        elif kind < 0.6:
            expr = f"{a}.{rng.choice(REDUCE)}(dim=-1, keepdim=True) {rng.choice('+-*')} {b}"
        elif kind < 0.8:
            expr = f"torch.clamp({a}, min={rng.randint(-5, 0)}, max={rng.randint(1, 9)})"
        else:
            expr = f"torch.where({a} > {rng.randint(-3, 3)}, {a}, {b} * {rng.randint(2, 7)})"
        names.append(f"t{step}")
        lines.append(f"    t{step} = {expr}")
    lines.append(f"    return {names[-1]}")
    solution = "import torch\n\n\n" + "\n".join(lines) + "\n"
    tests = (f"import torch\n\nfrom solution import {name}\n\n\n"
             + "".join(f"def test_case_{k}():\n    x = torch.ones(2, 3) * {k}\n"
                       f"    assert {name}(x, x).shape == (2, 3)\n\n\n" for k in range(3)))
    return Problem(id=f"gen_{index:05d}", entry_point=name, title=f"Generated op {index}",
                   stage=rng.choice(STAGES), task=rng.choice(TASKS), data=rng.choice(DATA),
                   status="ready", prompt=f"Write `{name}(x, y)` as specified ({index}).\n",
                   solution=solution, tests=tests)


def setup(root: Path, count: int) -> workspace_mod.Workspace:
    ws = workspace_mod.init(root)
    (root / "curator.toml").write_text('[release]\nlicense = "MIT"\n', encoding="utf-8")
    ws = workspace_mod.discover(root)
    rng = random.Random(0)
    problems = [make_problem(i, rng) for i in range(count)]
    with Store(ws.db_path, "bench") as store:
        with store.transaction():
            for problem in problems:
                problem_store.save(store, problem)
            stamp = now()
            store.conn.executemany(
                "INSERT INTO runs (problem_id, solution_kind, solution_hash, outcome, tests, "
                "duration_s, env, timeout_s, started_at, actor, job_id) "
                "VALUES (?, 'reference', ?, 'passed', ?, 0.1, ?, 10, ?, 'bench', ?)",
                [(p.id, solution_hash(p.solution),
                  json.dumps([{"id": f"t{k}", "outcome": "passed"} for k in range(3)]),
                  json.dumps({"python": "3.11", "torch": "2.13.0", "isolation": "strong"}),
                  stamp, uuid.uuid4().hex) for p in problems])
        sync.dump(store, ws.problems_dir)
    return ws


def timed(label: str, func):
    start = time.perf_counter()
    value = func()
    print(f"{label:<8} {time.perf_counter() - start:6.2f} s", flush=True)
    return value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--keep", type=Path, help="Build the workspace here and keep it.")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="curator-release-bench-"))
    try:
        print(f"setting up {args.count} problems in {root} ...", flush=True)
        ws = setup(root / "ws", args.count)
        with Store(ws.db_path, "bench") as store:
            report = timed("check", lambda: gates.check(store, ws))
            print(f"         {len(report.failures)} gate failure(s)")
            first = timed("build", lambda: bundle.build(store, ws, "1.0.0", root / "out",
                                                        allow_failing=True))
            second = timed("rebuild", lambda: bundle.build(store, ws, "1.0.0", root / "out2",
                                                           allow_failing=True))
        checked = timed("verify", lambda: verify(first.archive))
        size = first.archive.stat().st_size / 1e6
        print(f"archive  {size:6.2f} MB, {first.problems} problems, "
              f"{len(first.released)} marked released")
        same = first.archive_sha256 == second.archive_sha256
        print(f"reproducible: {same}; verify ok: {checked.ok}")
        return 0 if same and checked.ok else 1
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
