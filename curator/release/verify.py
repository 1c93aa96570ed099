"""Re-checking a bundle: files against the manifest, rows against the schema, and
(optionally) every canonical solution against its tests in the sandbox.

Every problem found is reported with the file and, where there is one, the row (line).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from curator.archives import ArchiveError, read_tar_gz
from curator.dlbench import fileformat
from curator.errors import CuratorError
from curator.execution.engine import Engine
from curator.execution.job import OUTCOMES, Job
from curator.limits import DEFAULT, Limits, csv_rows, one_line
from curator.progress import CancelCheck, Progress
from curator.release.reader import MANIFEST, PROBLEMS, Bundle, read_bundle
from curator.release.rows import row_errors, row_problem
from curator.runs import job_for


@dataclass
class Issue:
    file: str
    message: str
    row: int | None = None

    def to_json(self) -> dict:
        return {"file": self.file, "row": self.row, "message": self.message}

    def __str__(self) -> str:
        where = f"{self.file}:{self.row}" if self.row is not None else self.file
        return one_line(f"{where}: {self.message}")


@dataclass
class VerifyReport:
    bundle: str
    name: str = ""
    version: str = ""
    files_checked: int = 0
    rows_checked: int = 0
    issues: list[Issue] = field(default_factory=list)
    rerun: dict | None = None

    @property
    def ok(self) -> bool:
        return not self.issues

    def summary(self) -> str:
        """One line for people: what was checked, what re-ran, the verdict."""
        text = (f"{self.name} {self.version}: {self.files_checked} file(s), "
                f"{self.rows_checked} row(s) checked")
        if self.rerun:
            mix = ", ".join(f"{n} {o}" for o, n in self.rerun["outcomes"].items())
            text += f"; re-ran {self.rerun['jobs']} solution(s): {mix or 'nothing ran'}"
        return text + (", ok" if self.ok else f", {len(self.issues)} issue(s)")

    def to_json(self) -> dict:
        return {"ok": self.ok, "bundle": self.bundle, "name": self.name,
                "version": self.version, "files_checked": self.files_checked,
                "rows_checked": self.rows_checked,
                "issues": [i.to_json() for i in self.issues], "rerun": self.rerun}


def _check_files(bundle: Bundle, manifest: dict, report: VerifyReport) -> None:
    listed = manifest.get("files")
    if not isinstance(listed, dict):
        report.issues.append(Issue(MANIFEST, "has no `files` table"))
        return
    for rel, entry in sorted(listed.items()):
        data = bundle.files.get(rel)
        if data is None:
            report.issues.append(Issue(rel, "listed in the manifest but missing"))
            continue
        report.files_checked += 1
        if not isinstance(entry, dict):
            report.issues.append(Issue(MANIFEST, f"entry for {rel} is not an object"))
            continue
        if entry.get("size") != len(data):
            report.issues.append(Issue(rel, f"size {len(data)} != manifest {entry.get('size')}"))
        digest = hashlib.sha256(data).hexdigest()
        if entry.get("sha256") != digest:
            report.issues.append(Issue(rel, f"sha256 {digest[:12]} != manifest "
                                            f"{str(entry.get('sha256'))[:12]}"))
    for rel in sorted(set(bundle.files) - set(listed) - {MANIFEST}):
        report.issues.append(Issue(rel, "not listed in the manifest"))


def _check_archives(bundle: Bundle, report: VerifyReport, limits: Limits) -> None:
    """A folder's own .tar.gz must hold exactly the folder's files; its .sha256 must match.

    Archives of other versions built into the same folder are left to be verified by path.
    """
    own = f"{bundle.name}-{bundle.version}.tar.gz"
    for archive in bundle.archives:
        if len(bundle.archives) > 1 and archive.name != own:
            continue
        sidecar = archive.with_name(archive.name + ".sha256")
        try:
            with open(archive, "rb") as handle:
                digest = hashlib.file_digest(handle, "sha256").hexdigest()
        except OSError as exc:
            report.issues.append(Issue(archive.name, f"cannot read: {exc.strerror}"))
            continue
        if sidecar.is_file():
            expected = sidecar.read_text(encoding="utf-8", errors="replace").split()
            if not expected or expected[0] != digest:
                report.issues.append(Issue(sidecar.name, f"does not match {archive.name}"))
        try:
            _prefix, files = read_tar_gz(archive, limits)
        except ArchiveError as exc:
            report.issues.append(Issue(archive.name, str(exc)))
            continue
        for rel in sorted(set(files) | set(bundle.files)):
            if files.get(rel) != bundle.files.get(rel):
                what = "missing from the archive" if rel not in files else (
                    "not in the folder" if rel not in bundle.files else "differs from the folder")
                report.issues.append(Issue(f"{archive.name}:{rel}", what))


def _check_problems(bundle: Bundle, manifest: dict, report: VerifyReport) -> set[str]:
    name = manifest.get("name")
    seen: dict[str, int] = {}
    for number, row in bundle.jsonl(PROBLEMS):
        report.rows_checked += 1
        if isinstance(row, Exception):
            report.issues.append(Issue(PROBLEMS, str(row), number))
            continue
        for error in row_errors(row, name):
            report.issues.append(Issue(PROBLEMS, error, number))
        task_id = row.get("task_id") if isinstance(row, dict) else None
        if isinstance(task_id, str):
            if task_id in seen:
                report.issues.append(Issue(PROBLEMS, f"duplicate task_id {task_id!r} (also "
                                                     f"line {seen[task_id]})", number))
            seen[task_id] = number
    if PROBLEMS not in bundle.files:
        report.issues.append(Issue(PROBLEMS, "missing"))
    counts = manifest.get("counts") or {}
    if isinstance(counts, dict) and counts.get("problems") not in (None, len(seen)):
        report.issues.append(Issue(MANIFEST, f"counts.problems is {counts.get('problems')} "
                                             f"but {PROBLEMS} has {len(seen)} rows"))
    return set(seen)


def _check_linked(bundle: Bundle, file: str, task_ids: set[str], report: VerifyReport,
                  required: tuple[str, ...]) -> None:
    for number, row in bundle.jsonl(file):
        report.rows_checked += 1
        if isinstance(row, Exception):
            report.issues.append(Issue(file, str(row), number))
            continue
        if not isinstance(row, dict):
            report.issues.append(Issue(file, "a row must be a JSON object", number))
            continue
        missing = [k for k in required if k not in row]
        if missing:
            report.issues.append(Issue(file, f"missing field(s): {', '.join(missing)}", number))
        if row.get("task_id") not in task_ids:
            report.issues.append(Issue(file, f"task_id {row.get('task_id')!r} is not in "
                                             f"{PROBLEMS}", number))
        if file == "results.jsonl" and row.get("outcome") not in OUTCOMES:
            report.issues.append(Issue(file, f"outcome {row.get('outcome')!r} is unknown",
                                       number))


def _check_csv(bundle: Bundle, task_ids: set[str], report: VerifyReport) -> None:
    raw = bundle.files.get("dlbench.csv")
    if raw is None:
        report.issues.append(Issue("dlbench.csv", "missing"))
        return
    records = iter(csv_rows(raw.decode("utf-8", "replace")))
    _line, header = next(records, (1, []))
    if tuple(header) != fileformat.CSV_COLUMNS:
        report.issues.append(Issue("dlbench.csv", f"header {header} != "
                                                  f"{list(fileformat.CSV_COLUMNS)}", 1))
    rows = []
    for line, row in records:
        if isinstance(row, str):
            report.issues.append(Issue("dlbench.csv", row, line))
        elif any(c.strip() for c in row):
            rows.append(row)
    if len(rows) != len(task_ids):
        report.issues.append(Issue("dlbench.csv", f"{len(rows)} rows but {PROBLEMS} has "
                                                  f"{len(task_ids)}"))


def _rerun(bundle: Bundle, workers: int, progress: Progress | None,
           cancelled: CancelCheck | None, store=None, workspace=None) -> tuple[dict, list]:
    """Run every canonical solution against its tests; (summary, issues for failures)."""
    rows = [(n, r) for n, r in bundle.jsonl(PROBLEMS) if isinstance(r, dict)
            and not row_errors(r)]
    jobs, where, issues = [], {}, []
    for number, row in rows:
        problem = row_problem(row)
        if problem.test_node_ids:
            if store is None or workspace is None:
                issues.append(Issue(PROBLEMS, "repo-backed: re-run needs a workspace with the "
                                              "upstream repository", number))
                continue
            try:
                job = job_for(store, workspace, problem, problem.solution)
            except CuratorError as exc:
                issues.append(Issue(PROBLEMS, f"{row['task_id']}: cannot prepare: {exc}",
                                    number))
                continue
        else:
            job = Job(problem_id=problem.id, solution=problem.solution,
                      entry_point=problem.entry_point, kind=problem.kind, tests=problem.tests)
        jobs.append(job)
        where[job.job_id] = (number, row["task_id"])
    outcomes: dict[str, int] = {}
    if not jobs:
        return {"jobs": 0, "outcomes": {}}, issues
    hide = [str(workspace.root)] if workspace is not None else []
    with Engine(workers=max(1, min(workers, len(jobs))), hide=hide) as engine:
        for done, result in enumerate(engine.run(jobs, cancelled=cancelled), 1):
            number, task_id = where[result.job_id]
            outcomes[result.outcome] = outcomes.get(result.outcome, 0) + 1
            if result.outcome != "passed":
                why = f": {result.reason}" if result.reason else ""
                issues.append(Issue(PROBLEMS, f"{task_id}: canonical solution "
                                              f"{result.outcome}{why}", number))
            if progress:
                progress(done, len(jobs), task_id)
    return {"jobs": len(jobs), "outcomes": dict(sorted(outcomes.items()))}, issues


def verify(path, rerun: bool = False, workers: int = 2, progress: Progress | None = None,
           cancelled: CancelCheck | None = None, store=None,
           workspace=None, limits: Limits | None = None) -> VerifyReport:
    """Check a bundle folder or archive; `rerun` also runs every canonical solution."""
    if limits is None:
        limits = workspace.limits if workspace is not None else DEFAULT
    bundle = read_bundle(path, limits)
    report = VerifyReport(str(path))
    manifest = bundle.manifest
    report.name, report.version = bundle.name, bundle.version
    _check_files(bundle, manifest, report)
    if bundle.kind == "folder":
        _check_archives(bundle, report, limits)
    task_ids = _check_problems(bundle, manifest, report)
    _check_linked(bundle, "annotations.jsonl", task_ids, report, ("type", "task_id"))
    _check_linked(bundle, "results.jsonl", task_ids, report,
                  ("task_id", "solution_kind", "outcome"))
    _check_csv(bundle, task_ids, report)
    if rerun:
        summary, issues = _rerun(bundle, workers, progress, cancelled, store, workspace)
        report.rerun = summary
        report.issues.extend(issues)
    return report

