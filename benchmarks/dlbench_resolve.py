"""How much of DL-Bench becomes runnable: import, resolve and run the kornia problems.

    .venv/bin/python benchmarks/dlbench_resolve.py SNAPSHOT_DLBENCH SNAPSHOT_KORNIA \
        [--as-of 2024-09-30] [--python PY | --make-env] [--isolation strong|weak|both|auto] \
        [--workers 2] \
        [--limit N] [--timeout 300] [--no-run] [--keep DIR] [--json]

SNAPSHOT_DLBENCH: a clone or bare mirror of the DL-Bench repository (the v2 release
Dataset/DLBenchv2.tar.gz is read from its history), or the release itself (folder or
tarball). SNAPSHOT_KORNIA: a clone or bare mirror of kornia. Nothing touches the network.

In a temporary workspace it runs what a person would: `dlbench import`, `dlbench resolve
--repo kornia=SNAPSHOT_KORNIA --as-of DATE`, `repo env kornia`, `run` on every
resolved kornia problem; and prints:

- the share of DL-Bench's kornia problems resolved (target >= 90%), with the reasons
  for the rest;
- the share of resolved references that pass their tests (target >= 90%), per sandbox
  level (`--isolation both`: strong, then weak, side by side), with the outcome of each
  of the rest and its cause (`needs network`: runs never have one; `file size limit`;
  `guard vetoed torch.compile`; `no test runs here`; `timeout`; `test failed`). A run passes when no test failed or errored and one passed;
  tests upstream skips or xfails are not counted; every resolved reference counts.

By default the references run in `curator repo env kornia`: kornia's declared dependencies
as of the pinned date (uv's exclude-newer) with the curator's torch. `--python PY` uses
an interpreter of your own instead (torch, pytest, numpy, pillow, packaging, kornia_rs),
and `--make-env` builds such a one with pip. Not a test: the pass share depends on the
interpreter's libraries.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from curator import runs as run_store
from curator import workspace as workspace_mod
from curator.dlbench import importer, resolve
from curator.repos import environments, identity
from curator.store import Store
from curator.store import runs as stored_runs

RELEASE_PATH = "Dataset/DLBenchv2.tar.gz"
ENV_PACKAGES = ["torch==2.13.0", "pytest", "numpy<2", "pillow", "packaging", "kornia_rs"]


def release_from(snapshot: Path, folder: Path) -> Path:
    """The v2 release: the path itself, or its blob from the snapshot's history."""
    if snapshot.is_file() or not ((snapshot / "HEAD").is_file() or (snapshot / ".git").exists()):
        return snapshot
    git = ["git", f"--git-dir={snapshot if (snapshot / 'HEAD').is_file() else snapshot / '.git'}"]
    commits = subprocess.run([*git, "rev-list", "--all", "--", RELEASE_PATH], check=True,
                             capture_output=True, text=True).stdout.split()
    for commit in commits:
        blob = subprocess.run([*git, "show", f"{commit}:{RELEASE_PATH}"], capture_output=True,
                              check=False)
        if blob.returncode == 0 and blob.stdout:
            out = folder / "DLBenchv2.tar.gz"
            out.write_bytes(blob.stdout)
            return out
    raise SystemExit(f"error: {snapshot}: no {RELEASE_PATH} in its history")


def with_isolation(ws: workspace_mod.Workspace, level: str) -> workspace_mod.Workspace:
    (ws.root / "curator.toml").write_text(f'[execution]\nisolation = "{level}"\n')
    return workspace_mod.discover(str(ws.root))


# What a failed reference's text says about why: the sandbox has no network by design.
CAUSES = (
    ("needs network", ("Temporary failure in name resolution", "Name or service not known",
                       "Network is unreachable", "urlopen error", "Failed to establish a new "
                       "connection", "Could not resolve host", "nodename nor servname")),
    ("file size limit", ("File size limit exceeded", "File too large")),
)


def cause(outcome: str, text: str) -> str:
    for name, needles in CAUSES:
        if any(needle in text for needle in needles):
            return name
    if outcome == "tampered" and "dynamo" in text and any(
            event in text for event in ("code.__new__", "function.__new__")):
        # The guard vetoes code and function creation while solution code is on the
        # stack; torch.compile of the reference does exactly that when a test compiles it.
        return "guard vetoed torch.compile"
    if outcome == "failed" and text.startswith("no test passed"):
        return "no test runs here (all skipped upstream)"
    return {"failed": "test failed"}.get(outcome, outcome)


def summary(store: Store, ran: run_store.RunReport, seconds: float) -> dict:
    outcomes = Counter(r["outcome"] for r in ran.runs)
    not_passed = []
    for r in ran.runs:
        if r["outcome"] == "passed":
            continue
        row = stored_runs.get(store, r["run_id"])
        text = "\n".join([r["reason"], row.get("stdout") or "", row.get("stderr") or "",
                          *(t["id"] for t in row.get("tests") or [])])
        not_passed.append({"id": r["problem_id"], "outcome": r["outcome"],
                           "cause": cause(r["outcome"], text), "reason": r["reason"][:160]})
    return {"references": len(ran.runs), "passed": outcomes.get("passed", 0),
            "share": round(outcomes.get("passed", 0) / max(1, len(ran.runs)), 4),
            "outcomes": dict(outcomes), "isolation": ran.isolation,
            "causes": dict(Counter(item["cause"] for item in not_passed)),
            "not_passed": not_passed, "seconds": round(seconds, 1)}


def make_env(folder: Path) -> str:
    env = folder / "env"
    subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
    pip = [str(env / "bin" / "python"), "-m", "pip", "install", "-q"]
    subprocess.run([*pip, "torch==2.13.0"], check=True)
    subprocess.run([*pip, *ENV_PACKAGES[1:]], check=True)
    return str(env / "bin" / "python")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dlbench", type=Path)
    parser.add_argument("kornia", type=Path)
    parser.add_argument("--as-of", default="2024-09-30")
    parser.add_argument("--python")
    parser.add_argument("--make-env", action="store_true")
    parser.add_argument("--isolation", default="auto",
                        choices=("auto", "strong", "weak", "both"))
    parser.add_argument("--workers", type=int)
    parser.add_argument("--limit", type=int)
    parser.add_argument("--timeout", type=float, default=300,
                        help="seconds per reference run (a cold kornia import is slow)")
    parser.add_argument("--no-run", action="store_true")
    parser.add_argument("--keep", type=Path, help="use this folder (kept) as the workspace")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    tmp = tempfile.TemporaryDirectory(prefix="dlbench-resolve-")
    root = args.keep or Path(tmp.name)
    ws = workspace_mod.init(root / "ws")
    levels = ("strong", "weak") if args.isolation == "both" else (args.isolation,)
    ws = with_isolation(ws, levels[0])
    release = release_from(args.dlbench, root)
    out: dict = {}
    with Store(ws.db_path, "benchmark") as store:
        started = time.monotonic()
        imported = importer.import_dlbench(store, ws, release)
        out["import"] = {"imported": len(imported.problems), "drafts": imported.drafts,
                         "unmapped": imported.unmapped, "seconds": round(time.monotonic()
                                                                         - started, 1)}
        kornia = [p["id"] for p in imported.problems
                  if (store.one("SELECT raw FROM problem_imports WHERE problem_id = ?",
                                (p["id"],)) or {}).get("raw", "").lower().find(
                      '"repo": "kornia"') >= 0]
        started = time.monotonic()
        report = resolve.resolve(store, ws, {"kornia": str(args.kornia)}, as_of=args.as_of)
        resolved = [r["id"] for r in report.resolved if r["id"] in set(kornia)]
        reasons = Counter(u["reason"].split(":")[0] for u in report.unresolved
                          if u["id"] in set(kornia))
        out["resolve"] = {
            "kornia_problems": len(kornia), "resolved": len(resolved),
            "share": round(len(resolved) / max(1, len(kornia)), 4),
            "commit": next((r["commit"] for r in report.repos if r["name"] == "kornia"), None),
            "unresolved": [u for u in report.unresolved if u["id"] in set(kornia)],
            "reasons": dict(reasons), "seconds": round(time.monotonic() - started, 1)}
        if not args.no_run:
            if args.python or args.make_env:
                identity.set_python(store, "kornia", args.python or make_env(root))
            else:   # `curator repo env kornia`: the libraries as of the pinned date
                built = environments.build(store, ws, "kornia")
                out["env"] = {"python": built.python, "seconds": built.seconds}
            ids = resolved[:args.limit] if args.limit else resolved

            def progress(done: int, total: int, label: str) -> None:
                if not args.json:
                    print(f"\r  ran {done}/{total} {label[:50]:<50}", end="", file=sys.stderr)

            out["run"] = {}
            for level in levels:
                ws = with_isolation(ws, level)
                started = time.monotonic()
                ran = run_store.run_problems(store, ws, ids, workers=args.workers,
                                             timeout=args.timeout, progress=progress)
                out["run"][level] = summary(store, ran, time.monotonic() - started)
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print()
        i = out["import"]
        print(f"import: {i['imported']} problems, {i['drafts']} missing something, "
              f"unmapped {i['unmapped'] or 'none'} ({i['seconds']} s)")
        r = out["resolve"]
        print(f"resolve: {r['resolved']}/{r['kornia_problems']} kornia problems resolved "
              f"({r['share']:.1%}, target >= 90%) at {str(r['commit'])[:12]} as of "
              f"{args.as_of} ({r['seconds']} s)")
        for item in r["unresolved"]:
            print(f"  unresolved {item['id']}: {item['reason']}")
        for u in out.get("run", {}).values():
            causes = ", ".join(f"{n} {c}" for c, n in sorted(u["causes"].items()))
            print(f"run ({u['isolation']} isolation): {u['passed']}/"
                  f"{u['references']} resolved references pass ({u['share']:.1%}, target "
                  f">= 90%); not passed: {causes or 'none'} ({u['seconds']} s)")
        for u in out.get("run", {}).values():
            for item in u["not_passed"]:
                print(f"  [{u['isolation']}] {item['id']}: {item['outcome']}, {item['cause']}: "
                      f"{item['reason']}")
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
