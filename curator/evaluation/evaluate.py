"""Evaluating samples: run every sample without an outcome through the execution engine.

Resumable: a sample counts as evaluated once it has a run whose outcome is not `infra`
(a harness failure says nothing about the sample, so it is tried again). Each result is
recorded as soon as it arrives, so an interrupted evaluation keeps what finished and the
next one picks up the rest. Self-contained and repo-backed problems go through the same
`job_for` the reference runs use.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from curator.errors import CuratorError
from curator.evaluation.outcomes import INFRA
from curator.execution import runs as run_store
from curator.execution.engine import Engine, default_workers
from curator.store import Store
from curator.store import problems as problem_store
from curator.workspace import Workspace

Progress = Callable[[int, int, str], None]
Cancelled = Callable[[], bool]


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

    def to_json(self) -> dict:
        return {"evaluated": self.evaluated, "skipped": self.skipped,
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


def evaluate(store: Store, workspace: Workspace, model: str | None = None,
             workers: int | None = None, timeout: float | None = None,
             limit: int | None = None, progress: Progress | None = None,
             cancelled: Cancelled | None = None, engine: Engine | None = None,
             backend: str | None = None, address: str | None = None) -> EvalReport:
    """Run the not-yet-evaluated samples (of one model, or all) and record each outcome.

    backend/address: "local" or "ray" (default: [execution] backend/address)."""
    todo = pending(store, model)
    total_sql = "SELECT COUNT(*) AS n FROM samples" + (" WHERE model = ?" if model else "")
    total = store.one(total_sql, (model,) if model else ())["n"]
    report = EvalReport(skipped=total - len(todo))
    if limit is not None:
        todo = todo[:limit]
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
    if not jobs:
        return report
    conf = run_store.settings(workspace)
    own = engine is None
    if own:
        from curator.execution.engine import resolve_backend

        backend, address = resolve_backend(conf, backend, address)
        engine = Engine(workers=min(workers or conf.get("workers") or default_workers(),
                                    len(jobs)) if backend == "local"
                        else workers or conf.get("workers"),
                        preload=conf.get("preload", ()), isolation=conf.get("isolation", "auto"),
                        hide=[str(workspace.root)], backend=backend, address=address)
    counts: Counter = Counter()
    try:
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
    finally:
        if own:
            engine.close()
    report.outcomes = dict(counts)
    report.cancelled = len(report.run_ids) < len(jobs)
    return report
