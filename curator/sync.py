"""problems/ folder <-> database: `load` (files -> database) and `dump` (database -> files)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from curator.errors import CuratorError
from curator.problem import Problem, validate
from curator.problem_files import scan, write_problem
from curator.progress import CancelCheck, Progress, checkpoint
from curator.store import Store
from curator.store import problems as problem_store
from curator.store import runs as run_store


@dataclass
class LoadReport:
    loaded: list[str] = field(default_factory=list)      # created or updated
    unchanged: list[str] = field(default_factory=list)
    changes: dict[str, list[str]] = field(default_factory=dict)
    errors: list[dict] = field(default_factory=list)     # {"path", "message"}

    def to_json(self) -> dict:
        return {"loaded": len(self.loaded), "unchanged": len(self.unchanged),
                "loaded_ids": self.loaded, "changes": self.changes, "errors": self.errors}


def load(store: Store, problems_dir: str | Path, progress: Progress | None = None,
         cancelled: CancelCheck | None = None) -> LoadReport:
    """Read every problem folder into the database in one transaction.

    Malformed folders are reported and skipped; the valid ones load. A process killed
    half-way leaves the database as it was before (one transaction).
    """
    report = LoadReport()
    result = scan(problems_dir)
    for error in result.errors:
        report.errors.append({"path": error.path, "message": error.message})
    total = len(result.problems)
    with store.transaction():
        for index, (problem, raw, _folder) in enumerate(result.problems, 1):
            checkpoint(cancelled, "load")
            changed = problem_store.save(store, problem, raw_toml=raw)
            if changed:
                report.loaded.append(problem.id)
                report.changes[problem.id] = changed
            else:
                report.unchanged.append(problem.id)
            if progress:
                progress(index, total, problem.id)
    return report


@dataclass
class DumpReport:
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    errors: list[dict] = field(default_factory=list)     # {"path", "message"}

    def to_json(self) -> dict:
        return {"written": len(self.written), "unchanged": len(self.unchanged),
                "written_ids": self.written, "errors": self.errors}


def dump(store: Store, problems_dir: str | Path, ids: list[str] | None = None,
         progress: Progress | None = None) -> DumpReport:
    """Write every problem (or the given ids) from the database to problems/<id>/."""
    report = DumpReport()
    problems = problem_store.all_problems(store) if ids is None else [
        problem_store.get(store, i) for i in ids]
    for index, problem in enumerate(problems, 1):
        errors = validate(problem)
        if errors:  # a row from an older database that problem.toml cannot hold
            report.errors.append({"path": str(Path(problems_dir) / problem.id / "problem.toml"),
                                  "message": "; ".join(errors)})
            continue
        if dump_one(store, problem, problems_dir):
            report.written.append(problem.id)
        else:
            report.unchanged.append(problem.id)
        if progress:
            progress(index, len(problems), problem.id)
    return report


def dump_one(store: Store, problem: Problem, problems_dir: str | Path) -> bool:
    raw = problem_store.get_raw_toml(store, problem.id)
    changed, text = write_problem(problem, problems_dir, raw)
    if text != raw:
        # problem.toml was re-rendered from the database: remember its new exact text so
        # the next load sees no change.
        problem_store.set_raw_toml(store, problem.id, text)
    return changed


def save_and_write(store: Store, problem: Problem, problems_dir: str | Path) -> list[str]:
    """What ctrl+s in the app does: save to the database, then mirror to the files.

    A problem becomes `ready` only once its reference solution has passed its tests.
    """
    if problem.status == "ready" and problem_store.exists(store, problem.id):
        before = problem_store.get(store, problem.id)
        if before.status != "ready":
            if not run_store.reference_passes(store, problem):
                raise CuratorError(
                    f"problem {problem.id}: cannot mark ready before its saved reference "
                    f"solution passes its tests; run it first (ctrl+r on the problem in the "
                    f"app, `curator run {problem.id}` in a shell)")
    changed = problem_store.save(store, problem, keep_raw=True)
    dump_one(store, problem_store.get(store, problem.id), problems_dir)
    return changed
