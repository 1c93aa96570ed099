"""Repo-backed runs: warm (forked from a worker of the repository's environment, in the
sandbox) against a cold `python -m pytest NODE_IDS` in the same environment.

    .venv/bin/python benchmarks/repo_runs.py SNAPSHOT --workspace WS [--limit N]
        [--isolation auto|strong|weak] [--json]

SNAPSHOT is the repository as mined (its path or URL). WS is a workspace where it was
mined, `curator repo env` built its environment and candidates were accepted. Each
problem's reference runs warm and then cold, interleaved, so both see the same machine
load. Per-run time: the wall time of one run as the caller sees it. The warm worker's
start-up (importing torch and the heavy dependencies once) is reported separately.
Outcome counts (passed, failed, skipped, xfailed, xpassed) are compared per problem
(node ids that the repository's conftest drops without a word are left out: pytest's
own summary does not mention them).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter

from curator import runs
from curator.execution import sandbox
from curator.execution.engine import Engine
from curator.repos import identity
from curator.store import Store
from curator.store import problems as problem_store
from curator.workspace import discover

SUMMARY = re.compile(r"(\d+) (passed|failed|skipped|xfailed|xpassed|errors?|deselected)")


def cold_run(job, rundir: str) -> tuple[float, Counter, int]:
    env = sandbox.base_env(rundir, python=job.python, plugins_autoload=True)
    args = [job.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *(job.node_ids or []),
            *[a for node in job.deselect for a in ("--deselect", node)]]
    started = time.perf_counter()
    done = subprocess.run(args, cwd=job.repo_dir, env=env, capture_output=True, text=True,
                          timeout=job.limits.timeout_s + 600, check=False)
    seconds = time.perf_counter() - started
    tail = (done.stdout.strip().splitlines() or [""])[-1]
    counts = Counter()
    for number, word in SUMMARY.findall(tail):
        counts["error" if word.startswith("error") else word] += int(number)
    counts.pop("deselected", None)
    return seconds, counts, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("snapshot")
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--limit", type=int, default=30)
    parser.add_argument("--isolation", default="auto")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    workspace = discover(args.workspace)
    with Store(workspace.db_path, "benchmark") as store:
        repo = identity.find(store, args.snapshot)
        problems = [p for p in problem_store.all_problems(store)
                    if p.repo_backed and (p.source or {}).get("repo") == repo["url"]]
        problems = problems[:args.limit]
        if not problems:
            sys.exit(f"error: no repo-backed problem of {repo['name']} in {args.workspace}")
        jobs = [runs.job_for(store, workspace, p, p.solution, "reference",
                             runs.default_limits(store, workspace, p, 600.0))
                for p in problems]
    rows = []
    with Engine(workers=1, isolation=args.isolation, hide=[str(workspace.root)]) as engine:
        started = time.perf_counter()
        list(engine.run([jobs[0]]))             # starts the warm worker of this environment
        warmup = time.perf_counter() - started
        for job in jobs:
            started = time.perf_counter()
            (result,) = list(engine.run([job]))
            warm_s = time.perf_counter() - started
            with tempfile.TemporaryDirectory(prefix="cold-") as rundir:
                cold_s, cold_counts, code = cold_run(job, rundir)
            # Node ids the repository's conftest drops silently are listed as deselected
            # by our runs; pytest's own summary does not count them.
            warm_counts = Counter(t["outcome"] for t in result.tests
                                  if t.get("message") != "not collected")
            rows.append({"problem": job.problem_id, "warm_s": round(warm_s, 3),
                         "cold_s": round(cold_s, 3), "outcome": result.outcome,
                         "reason": result.reason[:120], "warm": dict(warm_counts),
                         "cold": dict(cold_counts), "cold_exit": code,
                         "agree": warm_counts == cold_counts,
                         "mode": result.env.get("repo_run")})
        isolation = engine.isolation
    warm_median = statistics.median(r["warm_s"] for r in rows)
    cold_median = statistics.median(r["cold_s"] for r in rows)
    summary = {"repo": repo["name"], "problems": len(rows), "isolation": isolation,
               "warm_worker_start_s": round(warmup, 2),
               "warm_median_s": round(warm_median, 3), "cold_median_s": round(cold_median, 3),
               "ratio": round(cold_median / warm_median, 2) if warm_median else None,
               "references_passed": sum(r["outcome"] == "passed" for r in rows),
               "outcomes_agree": sum(r["agree"] for r in rows)}
    if args.json:
        print(json.dumps({"rows": rows, "summary": summary}, indent=2))
        return
    print(f"{'problem':48} {'warm s':>7} {'cold s':>7}  outcome  tests (warm | cold)")
    for r in rows:
        mark = "" if r["agree"] else "  <- differ"
        print(f"{r['problem'][:48]:48} {r['warm_s']:7.2f} {r['cold_s']:7.2f}  "
              f"{r['outcome']:8} {dict(sorted(r['warm'].items()))} | "
              f"{dict(sorted(r['cold'].items()))}{mark}")
    print(f"\n{summary['repo']}: {summary['problems']} problems, isolation "
          f"{summary['isolation']}; warm worker start {summary['warm_worker_start_s']} s")
    print(f"median per run: warm {summary['warm_median_s']} s, cold {summary['cold_median_s']}"
          f" s: {summary['ratio']}x; references passed {summary['references_passed']}/"
          f"{summary['problems']}; outcome counts agree {summary['outcomes_agree']}/"
          f"{summary['problems']}")


if __name__ == "__main__":
    main()
