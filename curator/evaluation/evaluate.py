"""Evaluating samples: run every sample without an outcome through the execution engine.

A report scores only problems whose reference passes, so evaluation first runs every
reference (of the problems these samples belong to) that has no run of its current
solution yet, and says so in the report (`references`).

Resumable: a sample counts as evaluated once it has a run whose outcome is not `infra`
(a harness failure says nothing about the sample, so it is tried again). Each result is
recorded as soon as it arrives, so an interrupted evaluation keeps what finished and the
next one picks up the rest. Self-contained and repo-backed problems go through the same
`job_for` the reference runs use.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from curator import runs as run_store
from curator.errors import CuratorError
from curator.evaluation.outcomes import INFRA
from curator.execution.engine import Engine, default_workers
from curator.progress import CancelCheck, Progress
from curator.store import Store
from curator.store import problems as problem_store
from curator.workspace import Workspace


@dataclass
class EvalReport:
    evaluated: int = 0
    skipped: int = 0                   # already had an outcome
    outcomes: dict[str, int] = field(default_factory=dict)
    infra: int = 0
    errors: list[dict] = field(default_factory=list)   # {"sample_id", "message"}: no job built
    run_ids: list[int] = field(default_factory=list)
    isolation: str = ""
    cancelled: bool = False
    cluster: dict = field(default_factory=dict)   # ray backend: nodes, runs/s, retries
    # references run first because they had no current run: {"problem_id", "outcome"}
    references: list[dict] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"evaluated": self.evaluated, "skipped": self.skipped,
                "references": self.references,
                "outcomes": dict(sorted(self.outcomes.items())), "infra": self.infra,
                "errors": self.errors, "run_ids": self.run_ids, "isolation": self.isolation,
                "cancelled": self.cancelled,
                **({"cluster": self.cluster} if self.cluster else {})}


def pending(store: Store, model: str | None = None) -> list[dict]:
    """Samples with no run, or only infra runs, in id order."""
    sql = ("SELECT s.id, s.problem_id, s.code FROM samples s WHERE NOT EXISTS ("
           "  SELECT 1 FROM runs r WHERE r.sample_id = s.id AND r.outcome != ?)")
    params: list = [INFRA]
    if model is not None:
        sql += " AND s.model = ?"
        params.append(model)
    return store.query(sql + " ORDER BY s.id", params)


def references_to_run(store: Store, model: str | None = None) -> list[str]:
    """Problems with samples (of this model) whose current reference has no run yet."""
    sql = "SELECT DISTINCT problem_id FROM samples" + (" WHERE model = ?" if model else "")
    ids = [r["problem_id"] for r in store.query(sql + " ORDER BY problem_id",
                                                 (model,) if model else ())]
    todo = []
    for pid in ids:
        if not problem_store.exists(store, pid):
            continue
        problem = problem_store.get(store, pid)
        if not run_store.recorded(store, problem):
            todo.append(pid)
    return todo


def evaluate(store: Store, workspace: Workspace, model: str | None = None,
             workers: int | None = None, timeout: float | None = None,
             limit: int | None = None, progress: Progress | None = None,
             cancelled: CancelCheck | None = None, engine: Engine | None = None,
             backend: str | None = None, address: str | None = None) -> EvalReport:
    """Run the not-yet-evaluated samples (of one model, or all) and record each outcome.

    backend/address: "local" or "ray" (default: [execution] backend/address)."""
    references = references_to_run(store, model)
    todo = pending(store, model)
    total_sql = "SELECT COUNT(*) AS n FROM samples" + (" WHERE model = ?" if model else "")
    total = store.one(total_sql, (model,) if model else ())["n"]
    report = EvalReport(skipped=total - len(todo))
    if limit is not None:
        todo = todo[:limit]
    conf = run_store.settings(workspace)
    own = engine is None and bool(todo or references)
    if own:
        from curator.execution.engine import resolve_backend

        backend, address = resolve_backend(conf, backend, address)
        size = max(len(todo), len(references), 1)
        engine = Engine(workers=min(workers or conf.get("workers") or default_workers(),
                                    size) if backend == "local"
                        else workers or conf.get("workers"),
                        preload=conf.get("preload", ()), isolation=conf.get("isolation", "auto"),
                        hide=[str(workspace.root)], backend=backend, address=address)
    try:
        if references:
            refs = run_store.run_problems(
                store, workspace, references, engine=engine, cancelled=cancelled,
                progress=(lambda done, total, label: progress(done, total,
                                                               f"reference {label}"))
                if progress else None)
            report.references = [{"problem_id": r["problem_id"], "outcome": r["outcome"]}
                                 for r in refs.runs]
            if refs.cancelled:
                report.cancelled = True
                return report
        _run_samples(store, workspace, report, todo, engine, timeout, progress, cancelled)
    finally:
        if own and engine is not None:
            engine.close()
    return report


def _run_samples(store: Store, workspace: Workspace, report: EvalReport, todo: list[dict],
                 engine: Engine | None, timeout: float | None, progress: Progress | None,
                 cancelled: CancelCheck | None) -> None:
    problems: dict = {}
    jobs, owners = [], {}
    for sample in todo:
        pid = sample["problem_id"]
        try:
            if pid not in problems:
                problems[pid] = problem_store.get(store, pid)
            problem = problems[pid]
            limits = run_store.default_limits(store, workspace, problem, timeout)
            job = run_store.job_for(store, workspace, problem, sample["code"] or "",
                                    solution_kind="sample", limits=limits)
        except CuratorError as exc:
            report.errors.append({"sample_id": sample["id"], "message": str(exc)})
            continue
        except (RecursionError, MemoryError) as exc:
            # Hostile code must cost only its own sample, never the batch.
            what = "nested too deeply" if isinstance(exc, RecursionError) else "too large"
            report.errors.append({"sample_id": sample["id"],
                                  "message": f"cannot prepare the run: the code is {what}"})
            continue
        jobs.append(job)
        owners[job.job_id] = (sample["id"], run_store.solution_hash(sample["code"] or ""))
    if not jobs or engine is None:
        return
    counts: Counter = Counter()
    report.isolation = engine.isolation
    for result in engine.run(jobs, progress=progress, cancelled=cancelled):
        sample_id, digest = owners[result.job_id]
        report.run_ids.append(run_store.record(store, result, "sample", digest,
                                               sample_id=sample_id))
        counts[result.outcome] += 1
        if result.outcome == INFRA:
            report.infra += 1
        else:
            report.evaluated += 1
    report.cluster = engine.info().get("cluster") or {}
    report.outcomes = dict(counts)
    report.cancelled = len(report.run_ids) < len(jobs)
