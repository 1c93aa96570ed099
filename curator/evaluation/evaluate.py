"""Evaluating samples: run every sample without an outcome through the execution engine.

Two evaluations of one workspace at once split the work: samples are claimed a batch at
a time (curator.evaluation.claims), and a sample claimed by the other is left to it.

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

from curator import runs
from curator.errors import CuratorError
from curator.evaluation.claims import Claims
from curator.evaluation.outcomes import INFRA
from curator.execution import trust
from curator.execution.engine import Engine, default_workers, resolve_backend
from curator.execution.job import Job, RunResult
from curator.progress import CancelCheck, Progress
from curator.store import Store
from curator.store import problems as problem_store
from curator.store import runs as run_rows
from curator.store import samples as sample_rows
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
    claimed_elsewhere: int = 0         # pending samples another evaluation is running
    cluster: dict = field(default_factory=dict)   # ray backend: nodes, runs/s, retries
    # references run first because they had no current run: {"problem_id", "outcome"}
    references: list[dict] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"evaluated": self.evaluated, "skipped": self.skipped,
                "references": self.references,
                "outcomes": dict(sorted(self.outcomes.items())), "infra": self.infra,
                "errors": self.errors, "run_ids": self.run_ids, "isolation": self.isolation,
                "cancelled": self.cancelled, "claimed_elsewhere": self.claimed_elsewhere,
                **({"cluster": self.cluster} if self.cluster else {})}


def pending(store: Store, model: str | None = None) -> list[dict]:
    """Samples with no run, or only infra runs, in id order."""
    return sample_rows.pending(store, model)


def references_to_run(store: Store, model: str | None = None) -> list[str]:
    """Problems with samples (of this model) whose current reference has no run yet."""
    todo = []
    for pid in sample_rows.problems_with_samples(store, model):
        if not problem_store.exists(store, pid):
            continue
        problem = problem_store.get(store, pid)
        if not runs.recorded(store, problem):
            todo.append(pid)
    return todo


def untrusted_work(store: Store, todo: list[dict], references: list[str]) -> list[str]:
    """What of an evaluation is code nobody here wrote: every sample, and the references
    of mined or imported problems."""
    refs = runs.untrusted(problem_store.get(store, pid) for pid in references)
    return ([f"{len(todo)} sample(s)"] if todo else []) + refs


def needs_consent(store: Store, workspace: Workspace, model: str | None = None) -> list[str]:
    """What an evaluation would run weakly without consent (empty: nothing to ask): the
    app asks once per session before it evaluates."""
    conf = runs.settings(workspace)
    if not trust.consent_needed(trust.level(conf)[0]) or trust.allowed(conf):
        return []
    return untrusted_work(store, pending(store, model), references_to_run(store, model))


def evaluate(store: Store, workspace: Workspace, model: str | None = None,
             workers: int | None = None, timeout: float | None = None,
             limit: int | None = None, progress: Progress | None = None,
             cancelled: CancelCheck | None = None, engine: Engine | None = None,
             backend: str | None = None, address: str | None = None,
             allow_weak: bool | None = None) -> EvalReport:
    """Run the not-yet-evaluated samples (of one model, or all) and record each outcome.

    backend/address: "local" or "ray" (default: [execution] backend/address). Samples and
    mined references are untrusted code: under weak isolation they need allow_weak (default:
    [execution] allow_weak), else WeakIsolationRefused is raised before anything runs."""
    references = references_to_run(store, model)
    todo = pending(store, model)
    total = sample_rows.count(store, model)
    report = EvalReport(skipped=total - len(todo))
    if limit is not None:
        todo = todo[:limit]
    conf = runs.settings(workspace)
    own = engine is None and bool(todo or references)
    if own:
        backend, address = resolve_backend(conf, backend, address)
        size = max(len(todo), len(references), 1)
        engine = Engine(workers=min(workers or conf.workers or default_workers(),
                                    size) if backend == "local"
                        else workers or conf.workers,
                        preload=conf.preload, isolation=conf.isolation,
                        hide=[str(workspace.root)], backend=backend, address=address,
                        extra=dict(runs.REPO_PREPARING),
                        eager=not _repository_problems_only(store, todo, references))
    try:
        if engine is not None:
            trust.check(engine.isolation, untrusted_work(store, todo, references),
                        trust.allowed(conf, allow_weak))
            if own:   # workers warm up (seconds) while the jobs are claimed and built
                engine.start()
        if references:
            refs = runs.run_problems(
                store, workspace, references, engine=engine, cancelled=cancelled,
                allow_weak=True if engine is not None else allow_weak,   # checked above
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


def _repository_problems_only(store: Store, todo: list[dict], references: list[str]) -> bool:
    """Whether every sample and reference to run is of a repository's problem: such runs go
    to workers of the repository's environment, so the engine starts a slot's worker of
    plain runs only if a plain job still comes (PoolSettings.eager)."""
    wanted = {s["problem_id"] for s in todo} | set(references)
    return bool(wanted) and all(problem_store.exists(store, pid) and
                                problem_store.get(store, pid).repo_backed for pid in wanted)


def _run_samples(store: Store, workspace: Workspace, report: EvalReport, todo: list[dict],
                 engine: Engine | None, timeout: float | None, progress: Progress | None,
                 cancelled: CancelCheck | None) -> None:
    """Run the samples a batch at a time, each batch claimed first (see the docstring)."""
    if engine is None or not todo:
        return
    # Each batch ends with workers idle while its last runs finish: batches of about a
    # quarter of the work (at least 4 runs per worker, at most 64) keep those tails few
    # and still leave work for a second evaluation of the same workspace.
    per_worker = 4 * max(1, getattr(engine, "workers", 1) or 1)
    batch_size = max(per_worker, min(64, -(-len(todo) // 4)))
    claims = Claims(store)
    problems: dict = {}
    counts: Counter = Counter()
    done = 0
    try:
        for start in range(0, len(todo), batch_size):
            if cancelled and cancelled():
                report.cancelled = True
                break
            part = todo[start:start + batch_size]
            mine = claims.claim([s["id"] for s in part])
            finished = run_rows.samples_with_outcome(store, sorted(mine))
            report.claimed_elsewhere += len(part) - len(mine)
            report.skipped += len(finished)
            part = [s for s in part if s["id"] in mine and s["id"] not in finished]
            jobs, owners = _jobs(store, workspace, part, problems, timeout, report)
            if not jobs:
                continue
            report.isolation = engine.isolation
            offset = done

            def step(count: int, _total: int, label: str = "", offset: int = offset) -> None:
                if progress:
                    progress(offset + count, len(todo), label)

            recorded = 0
            for result in engine.run(jobs, progress=step, cancelled=cancelled):
                sample_id, digest = owners[result.job_id]
                run_id, result = _record(store, result, digest, sample_id)
                report.run_ids.append(run_id)
                recorded += 1
                counts[result.outcome] += 1
                if result.outcome == INFRA:
                    report.infra += 1
                else:
                    report.evaluated += 1
            done += len(part)
            report.cluster = _add_cluster(report.cluster, engine.info().get("cluster") or {})
            if recorded < len(jobs):
                report.cancelled = True
                break
    finally:
        claims.release()
    report.outcomes = dict(counts)


def _record(store: Store, result: RunResult, digest: str,
            sample_id: int) -> tuple[int, RunResult]:
    """Store a sample's run; one that cannot be stored is stored as `infra` with the
    reason, so the sample is not left pending and the batch goes on."""
    try:
        return runs.record(store, result, "sample", digest, sample_id=sample_id), result
    except Exception as exc:   # noqa: BLE001 - any storage failure of one result
        failed = RunResult.infra(
            Job(problem_id=result.problem_id, solution="", job_id=result.job_id),
            f"the run's result could not be stored: {type(exc).__name__}: {exc}"[:500],
            duration_s=result.duration_s)
        return runs.record(store, failed, "sample", digest, sample_id=sample_id), failed


_SUMMED = ("done", "total", "retried", "lost_runners", "duplicates", "infra", "elapsed_s")


def _add_cluster(total: dict, batch: dict) -> dict:
    """Cluster figures (ray) of the batches so far: counts and time summed, runs/s again."""
    if not total or not batch:
        return dict(batch or total)
    out = dict(batch)
    for key in _SUMMED:
        if isinstance(total.get(key), (int, float)) and isinstance(batch.get(key), (int, float)):
            out[key] = total[key] + batch[key]
    nodes = {label: dict(node) for label, node in (total.get("nodes") or {}).items()}
    for label, node in (batch.get("nodes") or {}).items():
        if label in nodes:
            nodes[label] = {**node, "done": nodes[label].get("done", 0) + node.get("done", 0)}
        else:
            nodes[label] = dict(node)
    out["nodes"] = nodes
    if isinstance(out.get("elapsed_s"), (int, float)) and out.get("elapsed_s"):
        out["elapsed_s"] = round(out["elapsed_s"], 2)
        out["runs_per_s"] = round(out.get("done", 0) / out["elapsed_s"], 2)
    return out


def _jobs(store: Store, workspace: Workspace, samples: list[dict], problems: dict,
          timeout: float | None, report: EvalReport) -> tuple[list, dict]:
    """The engine jobs for these samples; a sample whose job cannot be built is an error."""
    jobs, owners = [], {}
    for sample in samples:
        pid = sample["problem_id"]
        try:
            if pid not in problems:
                problems[pid] = problem_store.get(store, pid)
            problem = problems[pid]
            limits = runs.default_limits(store, workspace, problem, timeout)
            job = runs.job_for(store, workspace, problem, sample["code"] or "",
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
        owners[job.job_id] = (sample["id"], runs.solution_hash(sample["code"] or ""))
    return jobs, owners
