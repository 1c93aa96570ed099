"""Importing our own bundles: every problems.jsonl row back into a problem (ready), so
that building again from the imported workspace gives the same problems.jsonl.
(DL-Bench's release is imported by curator.dlbench.importing.)
"""

from __future__ import annotations

from pathlib import Path

from curator import sync
from curator.dlbench.importer import ImportReport, record_import
from curator.errors import ReleaseError
from curator.problem import ID_PATTERN, Problem, validate
from curator.progress import CancelCheck, Progress, checkpoint
from curator.release.reader import read_bundle
from curator.release.rows import row_errors, row_problem
from curator.release.verify import verify
from curator.store import Store
from curator.store import problems as problem_store
from curator.workspace import Workspace


def _titles(bundle) -> dict[str, str]:
    titles = {}
    for _number, row in bundle.jsonl("annotations.jsonl"):
        if isinstance(row, dict) and row.get("type") == "labels" and row.get("task_id"):
            titles[row["task_id"]] = str(row.get("title") or "")
    return titles


def _same(a: Problem, b: Problem) -> bool:
    keys = ("entry_point", "kind", "stage", "task", "data", "framework", "source",
            "test_node_ids", "prompt", "solution", "tests")
    return all(getattr(a, k) == getattr(b, k) for k in keys)


def import_release(store: Store, workspace: Workspace, path: str | Path,
                   status: str = "ready", dry_run: bool = False,
                   progress: Progress | None = None,
                   cancelled: CancelCheck | None = None) -> ImportReport:
    """Read one of our bundles (folder or .tar.gz) back into the workspace."""
    limits = workspace.limits
    checked = verify(path, limits=limits)
    if not checked.ok:
        first = checked.issues[0]
        raise ReleaseError(f"{path}: bundle does not verify ({len(checked.issues)} issue(s), "
                           f"first: {first}); run `curator release verify`")
    bundle = read_bundle(path, limits)
    key = f"{bundle.name}-{bundle.version}"
    titles = _titles(bundle)
    report = ImportReport(dry_run=dry_run)
    todo: list[Problem] = []
    for number, row in bundle.jsonl("problems.jsonl"):
        where = f"problems.jsonl:{number}"
        if isinstance(row, Exception) or row_errors(row, bundle.name):
            report.skipped.append({"file": where, "reason": "row does not match the schema"})
            continue
        problem = row_problem(row, titles.get(row["task_id"], ""), status)
        if not ID_PATTERN.match(problem.id) or validate(problem):
            report.skipped.append({"file": where, "reason": "; ".join(validate(problem))})
            continue
        if problem_store.exists(store, problem.id):
            existing = problem_store.get(store, problem.id)
            reason = ("already present, unchanged" if _same(existing, problem)
                      else "a different problem with this id exists")
            report.skipped.append({"file": where, "reason": f"{problem.id}: {reason}"})
            continue
        todo.append(problem)
        report.problems.append({"id": problem.id, "file": where,
                                "entry_point": problem.entry_point, "kind": problem.kind,
                                "flags": []})
    if dry_run or not todo:
        return report
    with store.transaction():
        for index, problem in enumerate(todo, 1):
            checkpoint(cancelled, "import")
            problem_store.save(store, problem)
            record_import(store, problem.id, "release", key, [],
                           {"task_id": f"{bundle.name}/{problem.id}"})
            if progress:
                progress(index, len(todo), problem.id)
    sync.dump(store, workspace.problems_dir, [p.id for p in todo])
    return report
