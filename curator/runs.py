"""Runs of problems: building jobs, running them through the engine, `curator run`.

The same path serves reference solutions and LLM samples: `job_for` takes any solution
text; the results are recorded in the `runs` table through curator.store.runs (its
functions are re-exported here, so `runs.record` and `runs.latest` keep working).
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from curator.config import ExecutionConfig
from curator.errors import CuratorError
from curator.execution import verdict
from curator.execution.engine import Engine, default_workers, resolve_backend
from curator.execution.job import Job, Limits, RunResult
from curator.problem import Problem
from curator.progress import CancelCheck, Progress
from curator.repos import checkout, environments
from curator.store import Store
from curator.store import problems as problem_store
from curator.store.runs import (  # noqa: F401  (re-exported: the runs API in one place)
    SOLUTION_KINDS,
    baseline,
    baseline_row,
    excluded,
    get,
    history,
    latest,
    record,
    recorded,
    reference_passes,
    reference_time,
    solution_hash,
)
from curator.workspace import Workspace

# Ray nodes build or reuse a repo-backed job's checkout and environment with this.
REPO_PREPARING = {"repo_preparer": "curator.repos.environments:materialize"}
DEFAULT_TIMEOUT_S = 60.0      # when the reference has never been timed on this machine
TIMEOUT_FLOOR_S = 10.0
TIMEOUT_FACTOR = 10.0



def settings(workspace: Workspace | None) -> ExecutionConfig:
    """The [execution] table of curator.toml."""
    return workspace.config.execution if workspace is not None else ExecutionConfig()


# -- limits ------------------------------------------------------------------------------


def default_limits(store: Store, workspace: Workspace | None, problem: Problem,
                   timeout: float | None = None) -> Limits:
    """Limits from [execution]; the timeout is max(floor, factor x reference time).

    A fixed limit fails correct solutions on slow machines, so it scales with the
    reference's own measured time; DEFAULT_TIMEOUT_S until the reference has been timed.
    """
    conf = settings(workspace)
    limits = Limits(**conf.run_limits())
    if timeout is not None:
        limits.timeout_s = float(timeout)
        return limits
    measured = reference_time(store, problem.id)
    if measured is None:
        limits.timeout_s = DEFAULT_TIMEOUT_S if conf.timeout_s is None else conf.timeout_s
    else:
        floor = TIMEOUT_FLOOR_S if conf.timeout_floor_s is None else conf.timeout_floor_s
        factor = TIMEOUT_FACTOR if conf.timeout_factor is None else conf.timeout_factor
        limits.timeout_s = round(max(floor, factor * measured), 3)
    return limits


# -- jobs --------------------------------------------------------------------------------


def job_for(store: Store, workspace: Workspace, problem: Problem, solution_text: str,
            solution_kind: str = "reference", limits: Limits | None = None) -> Job:
    """The job that runs `solution_text` against the problem's tests."""
    if solution_kind not in SOLUTION_KINDS:
        raise CuratorError(f"solution kind {solution_kind!r} must be one of "
                           f"{', '.join(SOLUTION_KINDS)}")
    limits = limits or default_limits(store, workspace, problem)
    job = Job(problem_id=problem.id, solution=solution_text or "",
              entry_point=problem.entry_point, kind=problem.kind, tests=problem.tests,
              limits=limits, reference=solution_kind == "reference")
    if solution_kind != "reference":
        job.baseline = baseline(store, problem)
    if not problem.repo_backed or not (solution_text or "").strip():
        return job
    try:
        repo_dir, overlay, python = checkout.prepare(workspace, problem, solution_text,
                                                     store=store)
    except checkout.MissingSymbol:
        job.solution = ""  # nothing to run: recorded as no_code
        return job
    job.repo_dir, job.overlay, job.python = str(repo_dir), dict(overlay), python
    source = problem.source or {}
    job.env_preload = environments.preload_for(store, source.get("repo"), python)
    # What a cluster node needs to rebuild the checkout and environment itself.
    if source.get("repo") and source.get("commit"):
        job.repo = environments.portable_spec(store, source["repo"], source["commit"], python)
    job.node_ids = list(problem.test_node_ids)
    job.deselect = [row["node_id"] for row in excluded(store, problem.id)
                    if row["node_id"] not in job.node_ids]
    job.tests = None
    return job


# -- `curator run` -------------------------------------------------------------------------


@dataclass
class RunReport:
    runs: list[dict] = field(default_factory=list)
    flaky: list[str] = field(default_factory=list)
    isolation: str = ""
    cancelled: bool = False
    skipped: int = 0                   # --resume: runs the current reference already had
    cluster: dict = field(default_factory=dict)   # ray backend: nodes, runs/s, retries

    @property
    def all_passed(self) -> bool:
        return all(r["outcome"] == "passed" for r in self.runs)

    def summary(self) -> dict:
        counts = Counter(r["outcome"] for r in self.runs)
        durations = [r["duration_s"] for r in self.runs]
        return {
            "runs": len(self.runs),
            "problems": len({r["problem_id"] for r in self.runs}),
            "outcomes": dict(sorted(counts.items())),
            "passed": counts.get("passed", 0),
            "not_passed": len(self.runs) - counts.get("passed", 0),
            "flaky": self.flaky,
            "isolation": self.isolation,
            "median_duration_s": round(statistics.median(durations), 4) if durations else None,
            "cancelled": self.cancelled,
            "skipped": self.skipped,
            **({"cluster": self.cluster} if self.cluster else {}),
        }

    def to_json(self) -> dict:
        return {"runs": self.runs, "summary": self.summary()}


def run_problems(store: Store, workspace: Workspace, ids: Iterable[str] | None = None,
                 workers: int | None = None, timeout: float | None = None, repeat: int = 1,
                 progress: Progress | None = None, cancelled: CancelCheck | None = None,
                 engine: Engine | None = None, backend: str | None = None,
                 address: str | None = None, resume: bool = False) -> RunReport:
    """Run the reference solutions of these problems (all when ids is None), `repeat`
    times each, record every run, and flag problems whose outcomes differ as flaky.

    backend/address: "local" or "ray" (default: [execution] backend/address). resume: only
    top up to `repeat` runs per problem, counting the runs the current reference already
    has (same solution text, outcome other than infra), so an interrupted run can be
    finished by running the same command with resume."""
    problems = ([problem_store.get(store, pid) for pid in ids] if ids is not None
                else problem_store.all_problems(store))
    jobs, hashes = [], {}
    skipped = 0
    for problem in problems:
        have = recorded(store, problem) if resume else 0
        skipped += min(have, max(1, repeat))
        for _ in range(max(1, repeat) - have):
            job = job_for(store, workspace, problem, problem.solution, "reference",
                          default_limits(store, workspace, problem, timeout))
            jobs.append(job)
            hashes[job.job_id] = solution_hash(problem.solution)
    conf = settings(workspace)
    if not jobs and resume:
        return RunReport(skipped=skipped)
    own = engine is None
    if own:
        backend, address = resolve_backend(conf, backend, address)
        engine = Engine(workers=min(workers or conf.workers or _cpus(),
                                    max(1, len(jobs))) if backend == "local"
                        else workers or conf.workers,
                        preload=conf.preload, isolation=conf.isolation,
                        hide=[str(workspace.root)], backend=backend, address=address,
                        extra=dict(REPO_PREPARING))
    try:
        report = RunReport(isolation=engine.isolation, skipped=skipped)
        for result in engine.run(jobs, progress=progress, cancelled=cancelled):
            run_id = record(store, result, "reference", hashes[result.job_id])
            report.runs.append(_run_json(run_id, result))
        report.cluster = engine.info().get("cluster") or {}
    finally:
        if own:
            engine.close()
    report.cancelled = len(report.runs) < len(jobs)
    by_problem: dict[str, set[str]] = {}
    for run in report.runs:
        by_problem.setdefault(run["problem_id"], set()).add(run["outcome"])
    report.flaky = sorted(pid for pid, outcomes in by_problem.items() if len(outcomes) > 1)
    order = {p.id: i for i, p in enumerate(problems)}
    report.runs.sort(key=lambda r: (order.get(r["problem_id"], 0), r["run_id"]))
    return report


def run_edited(store: Store, workspace: Workspace, problem: Problem,
               progress: Progress | None = None, cancelled: CancelCheck | None = None,
               engine: Engine | None = None) -> RunReport:
    """Run a problem as edited on screen, not as saved: its solution against its tests.

    When nothing that runs differs from the saved problem this is an ordinary reference
    run; otherwise the run is recorded as `unsaved`, so it shows in the history but never
    counts as the reference's result (ready, gates, baselines, scoring)."""
    saved = problem_store.get(store, problem.id)
    if (saved.solution, saved.tests, saved.entry_point, saved.kind) == (
            problem.solution, problem.tests, problem.entry_point, problem.kind):
        return run_problems(store, workspace, [problem.id], workers=1, progress=progress,
                            cancelled=cancelled, engine=engine)
    job = job_for(store, workspace, problem, problem.solution, "reference",
                  default_limits(store, workspace, saved))
    own = engine is None
    if own:
        conf = settings(workspace)
        engine = Engine(workers=1, preload=conf.preload, isolation=conf.isolation,
                        hide=[str(workspace.root)])
    try:
        report = RunReport(isolation=engine.isolation)
        for result in engine.run([job], progress=progress, cancelled=cancelled):
            run_id = record(store, result, "reference", solution_hash(problem.solution),
                            unsaved=True)
            report.runs.append({**_run_json(run_id, result), "unsaved": True})
    finally:
        if own:
            engine.close()
    report.cancelled = not report.runs
    return report


def _cpus() -> int:
    return default_workers()


def _run_json(run_id: int, result: RunResult) -> dict:
    return {"run_id": run_id, "problem_id": result.problem_id, "outcome": result.outcome,
            "duration_s": result.duration_s,
            "tests": [{"id": t["id"], "outcome": t["outcome"]} for t in result.tests],
            "not_counted": verdict.not_counted(result.tests),
            "reason": result.reason, "timeout_s": result.timeout_s, "env": result.env,
            "job_id": result.job_id, "evidence": result.evidence}
