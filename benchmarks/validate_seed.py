"""`curator validate --all` on the seed benchmark: stub, repeats and mutants, timed.

    .venv/bin/python benchmarks/validate_seed.py [--workers 2] [--mutants 20] [--repeat 3]
        [--problems DIR] [--json]

Copies the problems (default: tests/fixtures/seed_problems, the frozen seed benchmark)
into a temporary workspace, loads them and validates every one through the sandboxed
engine with WORKERS warm workers. Prints the wall time, runs and mutants per second and
the figures per problem side by side (stub share, flaky tests, mutation score), then
validates again to show that an unchanged problem is not run twice. Target: under 3
minutes with 2 workers and 20 mutants.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

from curator import sync
from curator import workspace as workspace_mod
from curator.store import Store
from curator.validity.validate import validate

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--mutants", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--problems", default=str(ROOT / "tests" / "fixtures" / "seed_problems"))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="validate-bench-") as tmp:
        ws = workspace_mod.init(Path(tmp) / "ws")
        shutil.rmtree(ws.problems_dir)
        shutil.copytree(args.problems, ws.problems_dir)
        with Store(ws.db_path, "bench") as store:
            sync.load(store, ws.problems_dir)
            started = time.monotonic()
            report = validate(store, ws, mutants=args.mutants, repeat=args.repeat,
                              workers=args.workers)
            seconds = time.monotonic() - started
            again_started = time.monotonic()
            again = validate(store, ws, mutants=args.mutants, repeat=args.repeat,
                             workers=args.workers)
            again_s = time.monotonic() - again_started
    summary = report.summary()
    figures = {
        "problems": summary["problems"], "workers": args.workers, "mutants_asked": args.mutants,
        "repeat": args.repeat, "isolation": report.isolation, "seconds": round(seconds, 1),
        "runs": report.runs, "mutant_runs": report.mutant_runs,
        "runs_per_s": round(report.runs / seconds, 2),
        "mutants_per_s": round(report.mutant_runs / seconds, 2),
        "not_discriminating": summary["not_discriminating"], "unstable": summary["unstable"],
        "under_3_min": seconds < 180, "second_pass_s": round(again_s, 2),
        "second_pass_reused": sum(1 for v in again.problems if v.reused),
    }
    if args.json:
        print(json.dumps({"figures": figures,
                          "problems": [v.to_json() for v in report.problems]}, indent=2))
        return
    print(f"{'problem':<34} {'stub fails':>10} {'stable':>7} {'score':>6} {'killed':>8} "
          f"{'timeouts':>8}")
    for v in report.problems:
        score = "-" if v.mutation_score is None else f"{v.mutation_score:.2f}"
        share = "-" if v.stub_failed_share is None else f"{v.stub_failed_share:.2f}"
        print(f"{v.id:<34} {share:>10} {str(v.stable):>7} {score:>6} "
              f"{v.killed or 0:>3}/{v.mutants or 0:<4} {v.timeouts:>8}")
    print()
    for key, value in figures.items():
        print(f"{key:<20} {value}")


if __name__ == "__main__":
    main()
