"""Seed problems through the engine vs. the naive way (a fresh `python -m pytest` each).

    .venv/bin/python benchmarks/engine_vs_pytest.py [--workers N] [--isolation auto|weak]

Both sides run the same reference solutions with the same parallelism. The engine's time
includes starting its warm workers. Per-run overhead is a run's duration (fork to reap,
inside the worker) minus the time its tests' own bodies took.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from curator.execution.engine import Engine, default_workers
from curator.execution.job import Job, Limits
from curator.problem_files import read_problem

ROOT = Path(__file__).resolve().parents[1]


def seed_problems(folder: Path):
    problems = []
    for path in sorted(folder.iterdir()):
        if (path / "problem.toml").is_file():
            problem, _ = read_problem(path)
            if not problem.repo_backed:
                problems.append(problem)
    return problems


def through_engine(problems, workers: int, isolation: str):
    jobs = [Job(problem_id=p.id, solution=p.solution, tests=p.tests,
                limits=Limits(timeout_s=120)) for p in problems]
    started = time.perf_counter()
    with Engine(workers=workers, isolation=isolation, hide=[str(ROOT)]) as engine:
        engine.pool.wait_ready()
        ready = time.perf_counter()
        results = list(engine.run(jobs))
        done = time.perf_counter()
        level = engine.isolation
    return results, done - started, done - ready, level


def naive_one(problem) -> tuple[str, bool, float]:
    folder = Path(tempfile.mkdtemp(prefix="naive-"))
    try:
        (folder / "solution.py").write_text(problem.solution, encoding="utf-8")
        (folder / "test_solution.py").write_text(problem.tests, encoding="utf-8")
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               "test_solution.py"], cwd=folder, capture_output=True, check=False)
        return problem.id, done.returncode == 0, time.perf_counter() - started
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def naive(problems, workers: int):
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(naive_one, problems))
    return results, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=default_workers())
    parser.add_argument("--isolation", default="auto", choices=("auto", "strong", "weak"))
    parser.add_argument("--problems", type=Path, default=ROOT / "problems")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    problems = seed_problems(args.problems)
    results, engine_total, engine_runs, level = through_engine(problems, args.workers,
                                                                args.isolation)
    naive_results, naive_total = naive(problems, args.workers)
    overheads = [r.duration_s - sum(t.get("duration_s", 0.0) for t in r.tests) for r in results]
    report = {
        "problems": len(problems),
        "workers": args.workers,
        "isolation": level,
        "load_average": os.getloadavg()[0],
        "engine_s": round(engine_total, 3),
        "engine_runs_only_s": round(engine_runs, 3),
        "engine_passed": sum(r.outcome == "passed" for r in results),
        "naive_s": round(naive_total, 3),
        "naive_passed": sum(ok for _, ok, _ in naive_results),
        "ratio": round(naive_total / engine_total, 2),
        "median_overhead_ms": round(1000 * statistics.median(overheads), 1),
        "median_run_ms": round(1000 * statistics.median(r.duration_s for r in results), 1),
        "median_naive_run_ms": round(1000 * statistics.median(t for _, _, t in naive_results),
                                     1),
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{report['problems']} seed problems, {args.workers} worker(s), "
          f"isolation {level}, load average {report['load_average']:.1f}")
    print(f"engine:  {report['engine_s']:.2f} s  ({report['engine_runs_only_s']:.2f} s after "
          f"warm-up; {report['engine_passed']} passed)")
    print(f"naive:   {report['naive_s']:.2f} s  (fresh python -m pytest per problem; "
          f"{report['naive_passed']} passed)")
    print(f"ratio:   {report['ratio']:.1f}x faster")
    print(f"per-run overhead: median {report['median_overhead_ms']:.0f} ms "
          f"(run median {report['median_run_ms']:.0f} ms vs "
          f"{report['median_naive_run_ms']:.0f} ms naive)")


if __name__ == "__main__":
    main()
