"""A DL-Bench release rebuilt repository by repository: `curator dlbench rebuild`.

    .venv/bin/python benchmarks/dlbench_rebuild.py SNAPSHOT_DLBENCH NAME=SNAPSHOT... \
        [--as-of 2024-09-20] [--keep DIR] [--isolation auto|strong|weak] [--json]

SNAPSHOT_DLBENCH: a clone or bare mirror of the DL-Bench repository (the v2 release
Dataset/DLBenchv2.tar.gz is read from its history) or the release itself. NAME=SNAPSHOT:
a DL-Bench repository name (pyro, pfrl, small-text, ...) and a clone or bare mirror of
it. Nothing touches the network but the package indexes the environments come from.

In a workspace (temporary, or --keep DIR, which also resumes a run that stopped) it runs
what a person would: `dlbench import`, then `dlbench rebuild --repo NAME=SNAPSHOT...
--as-of DATE` one repository at a time, and prints per repository: problems, resolved,
environment (ok or why not) and its seconds, green, and the causes of the excluded
tests; then the shares the targets are about (resolved / problems, repositories with an
environment, green / resolved). Not a test: the figures depend on the machine and on the
package indexes.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from curator import workspace as workspace_mod
from curator.dlbench import importer, rebuild
from curator.dlbench.resolve import parse_assignments
from curator.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dlbench_resolve import release_from  # noqa: E402


def table(report: rebuild.RebuildReport) -> list[str]:
    head = f"{'repository':<16} {'problems':>8} {'resolved':>8} {'env s':>7} {'green':>6}  " \
           "env / causes"
    lines = [head, "-" * len(head)]
    for repo in report.repos:
        causes = ", ".join(f"{n} {c}" for c, n in repo.triaged.items() if n) or "-"
        env = "ok" if repo.env == "ok" else f"env: {repo.env[:90]}"
        lines.append(f"{repo.name:<16} {repo.problems:>8} {repo.resolved:>8} "
                     f"{repo.env_seconds:>7.0f} {repo.green:>6}  {env}; {causes}")
    totals = report.to_json()["totals"]
    envs = sum(r.env == "ok" for r in report.repos)
    lines.append("-" * len(head))
    lines.append(f"{'total':<16} {totals['problems']:>8} {totals['resolved']:>8} "
                 f"{'':>7} {totals['green']:>6}")
    shares = (("resolved", totals["resolved"], totals["problems"], "of the problems"),
              ("environments", envs, len(report.repos), "of the repositories"),
              ("green", totals["green"], totals["resolved"], "of the resolved"))
    for what, got, out_of, of in shares:
        share = got / max(1, out_of)
        lines.append(f"{what:<13} {got:>4}/{out_of:<4} {share:>4.0%} {of:<20} target 90%: "
                     f"{'met' if share >= TARGET else 'not met'}")
    return lines


TARGET = 0.9


def not_run(store, report: rebuild.RebuildReport) -> list[str]:
    """The release's repositories with imported problems that this run did not cover (no
    snapshot given for them), with their problem counts."""
    done = {r.name.lower() for r in report.repos}
    groups = rebuild.imported_groups(store)
    return [f"{name} ({len(rows)} problems)" for name, rows in sorted(groups.items())
            if name.lower() not in done]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dlbench", type=Path)
    parser.add_argument("repos", nargs="+", metavar="NAME=SNAPSHOT")
    parser.add_argument("--as-of", default="2024-09-20")
    parser.add_argument("--keep", type=Path, help="use (and keep) this folder")
    parser.add_argument("--isolation", default="auto", choices=("auto", "strong", "weak"))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    sources = parse_assignments(args.repos, "repository", "NAME=SNAPSHOT")

    tmp = tempfile.TemporaryDirectory(prefix="dlbench-rebuild-")
    root = args.keep or Path(tmp.name)
    root.mkdir(parents=True, exist_ok=True)
    if (root / "ws" / "curator.toml").is_file():
        ws = workspace_mod.discover(str(root / "ws"))
    else:
        ws = workspace_mod.init(root / "ws")
    (ws.root / "curator.toml").write_text(f'[execution]\nisolation = "{args.isolation}"\n',
                                          encoding="utf-8")
    ws = workspace_mod.discover(str(ws.root))
    with Store(ws.db_path, "benchmark") as store:
        if not store.one("SELECT COUNT(*) AS n FROM problem_imports")["n"]:
            importer.import_dlbench(store, ws, release_from(args.dlbench, root))
        started = time.monotonic()
        report = rebuild.RebuildReport()
        # one repository at a time, as it goes; once for all its spellings (kornia, Kornia)
        given = rebuild.by_repository(sources, rebuild.imported_groups(store))
        for name, spellings in given.items():
            def note(repo, what, done, total):
                print(f"\r{repo}: {what[:60]:<60} {done}/{total}", end="", file=sys.stderr,
                      flush=True)
            part = rebuild.rebuild(store, ws, spellings, as_of=args.as_of, only=[name],
                                   progress=note)
            print(file=sys.stderr)
            report.repos += part.repos
            for line in table(part)[2:3]:
                print(line, file=sys.stderr, flush=True)
        seconds = time.monotonic() - started
        skipped = not_run(store, report)
    if args.json:
        print(json.dumps({**report.to_json(), "seconds": round(seconds, 1),
                          "env_seconds": {r.name: r.env_seconds for r in report.repos},
                          "not_run": skipped},
                         indent=1))
    else:
        print("\n".join(table(report)))
        print(f"{seconds:.0f} s in all")
        if skipped:
            print(f"not run here (no snapshot given): {', '.join(skipped)}")
        for repo in report.repos:
            for item in repo.not_green:
                print(f"  {repo.name} not green {item['id']}: {item['reason'][:160]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
