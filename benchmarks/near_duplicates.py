"""The near-duplicate gate's pairs: exact all-pairs Jaccard against the LSH path, timed.

    .venv/bin/python benchmarks/near_duplicates.py [--problems DIR | --workspace WS]
        [--threshold 0.9 --threshold 0.7 ...] [--json]

Fingerprints every problem's solution (default: tests/fixtures/seed_problems, the seed
benchmark; --workspace reads a workspace's database, e.g. one with the DL-Bench release
imported), keeps one representative per identical fingerprint as the gate does, then
finds the pairs at each threshold twice: comparing every pair exactly, and through
`similarity.near_duplicates` with the MinHash LSH forced on (EXACT_BELOW = 0). Prints
the pairs each finds, the pairs only one of them finds and both times side by side.
Run it with PYTHONPATH set to another checkout to compare its LSH with this one's.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from curator import problem_files
from curator.release import similarity
from curator.store import Store
from curator.store import problems as problem_store

ROOT = Path(__file__).resolve().parents[1]


def solutions(args) -> dict[str, str]:
    if args.workspace:
        db = Path(args.workspace) / "db" / "curator.sqlite"
        with Store(db, "bench") as store:
            return {p.id: p.solution for p in problem_store.all_problems(store)}
    out = {}
    for folder in sorted(Path(args.problems).iterdir()):
        if folder.is_dir():
            problem = problem_files.read_problem(folder)[0]
            out[problem.id] = problem.solution
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", default=str(ROOT / "tests" / "fixtures" / "seed_problems"))
    parser.add_argument("--workspace")
    parser.add_argument("--threshold", type=float, action="append")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    thresholds = args.threshold or [0.9, 0.8, 0.7, 0.5, 0.3]
    code = solutions(args)
    prints: dict[frozenset, str] = {}
    for pid in sorted(code):
        fp = similarity.fingerprint(code[pid])
        if fp:
            prints.setdefault(fp, pid)
    representatives = {pid: fp for fp, pid in prints.items()}
    rows = []
    for threshold in thresholds:
        started = time.perf_counter()
        saved = similarity.EXACT_BELOW
        try:
            similarity.EXACT_BELOW = 10 ** 9
            exact = {(p.a, p.b) for p in similarity.near_duplicates(representatives, threshold)}
            exact_s = time.perf_counter() - started
            started = time.perf_counter()
            similarity.EXACT_BELOW = 0
            lsh = {(p.a, p.b) for p in similarity.near_duplicates(representatives, threshold)}
            lsh_s = time.perf_counter() - started
        finally:
            similarity.EXACT_BELOW = saved
        rows.append({"threshold": threshold, "exact_pairs": len(exact), "lsh_pairs": len(lsh),
                     "only_exact": sorted(exact - lsh), "only_lsh": sorted(lsh - exact),
                     "exact_s": round(exact_s, 3), "lsh_s": round(lsh_s, 3)})
    summary = {"problems": len(code), "representatives": len(representatives),
               "similarity": similarity.__file__, "thresholds": rows}
    if args.json:
        print(json.dumps(summary, indent=2))
        return
    print(f"{summary['problems']} problems, {summary['representatives']} distinct "
          f"fingerprints ({summary['similarity']})")
    print(f"{'threshold':>9} {'exact':>6} {'lsh':>6} {'missed':>6} {'extra':>6} "
          f"{'exact s':>8} {'lsh s':>8}")
    for row in rows:
        print(f"{row['threshold']:>9.2f} {row['exact_pairs']:>6} {row['lsh_pairs']:>6} "
              f"{len(row['only_exact']):>6} {len(row['only_lsh']):>6} "
              f"{row['exact_s']:>8.3f} {row['lsh_s']:>8.3f}")


if __name__ == "__main__":
    main()
