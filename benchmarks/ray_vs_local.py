"""Throughput of the Ray backend vs. the local pool on one machine.

    .venv/bin/python benchmarks/ray_vs_local.py [--runs 300] [--workers N] [--address ADDR]
                                               [--isolation auto|weak] [--json]

Both sides run the same jobs (the seed references, repeated up to --runs) with the same
number of warm workers: the local pool with N workers, and a Ray node with N CPUs (a new
local Ray instance, or the cluster at --address). Throughput is counted from the moment
the workers are warm to the last result; start-up (warming, for Ray also starting the
instance and the node's actor) is reported separately. Target: Ray within 1.5x of local.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

from curator.execution.engine import Engine, default_workers
from curator.execution.job import Job, Limits
from curator.problem_files import read_problem

ROOT = Path(__file__).resolve().parents[1]
TARGET = 1.5


def jobs_for(runs: int) -> list[Job]:
    problems = []
    for path in sorted((ROOT / "problems").iterdir()):
        if (path / "problem.toml").is_file():
            problem, _ = read_problem(path)
            if not problem.repo_backed:
                problems.append(problem)
    return [Job(problem_id=p.id, solution=p.solution, tests=p.tests, entry_point=p.entry_point,
                kind=p.kind, limits=Limits(timeout_s=120))
            for i in range(runs) for p in [problems[i % len(problems)]]]


def measure(engine: Engine, jobs: list[Job]) -> dict:
    started = time.perf_counter()
    engine.start()
    if hasattr(engine.pool, "wait_ready"):
        engine.pool.wait_ready()
    ready = time.perf_counter()
    results = list(engine.run(jobs))
    done = time.perf_counter()
    return {"runs": len(results), "startup_s": round(ready - started, 2),
            "run_s": round(done - ready, 2), "runs_per_s": round(len(results) / (done - ready), 2),
            "outcomes": dict(Counter(r.outcome for r in results)),
            "isolation": engine.isolation}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--workers", type=int, default=default_workers())
    parser.add_argument("--address", help="an existing Ray cluster (default: a new local one)")
    parser.add_argument("--isolation", default="auto", choices=["auto", "strong", "weak"])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    try:
        import ray
    except ImportError:
        print('this benchmark needs Ray: pip install ".[ray]"', file=sys.stderr)
        return 1
    jobs = jobs_for(args.runs)
    hide: list[str] = []   # no workspace to hide: the seed problems are plain data here

    with Engine(workers=args.workers, isolation=args.isolation, hide=hide) as engine:
        local = measure(engine, jobs)

    started = time.perf_counter()
    if args.address:
        ray.init(address=args.address, log_to_driver=False, logging_level="warning")
    else:
        ray.init(address="local", num_cpus=args.workers, include_dashboard=False,
                 log_to_driver=False, logging_level="warning")
    connect_s = time.perf_counter() - started
    try:
        with Engine(backend="ray", workers=args.workers, isolation=args.isolation,
                    hide=hide) as engine:
            on_ray = measure(engine, jobs)
            on_ray["startup_s"] = round(on_ray["startup_s"] + connect_s, 2)
            on_ray["nodes"] = {label: n["done"] for label, n in
                               engine.pool.stats()["nodes"].items()}
    finally:
        ray.shutdown()

    ratio = local["runs_per_s"] / on_ray["runs_per_s"]
    report = {"workers": args.workers, "cpus": os.cpu_count(), "local": local, "ray": on_ray,
              "local_over_ray": round(ratio, 3), "target": TARGET, "within_target":
              ratio <= TARGET}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"{len(jobs)} runs of {len({j.problem_id for j in jobs})} seed references, "
          f"{args.workers} warm workers, isolation {local['isolation']}")
    for name, side in (("local", local), ("ray", on_ray)):
        print(f"  {name:5} {side['runs_per_s']:7.2f} runs/s  ({side['run_s']:.1f} s for "
              f"{side['runs']} runs; start-up {side['startup_s']:.1f} s)  {side['outcomes']}")
    if set(local["outcomes"]) != {"passed"} or set(on_ray["outcomes"]) != {"passed"}:
        print("  warning: not every reference passed; the figures are not comparable")
    print(f"  local/ray throughput ratio: {ratio:.2f}x (target <= {TARGET}x: "
          f"{'met' if ratio <= TARGET else 'NOT met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
