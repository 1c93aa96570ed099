"""Runs of problems: building jobs, recording results in the `runs` table, `curator run`.

The same path serves reference solutions and LLM samples: `job_for` takes any solution
text, `record` stores the result with what ran (kind, hash, sample id).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import statistics
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from curator.errors import CuratorError
from curator.execution import verdict
from curator.execution.engine import Engine
from curator.execution.job import Job, Limits, RunResult
from curator.problem import Problem
from curator.store import Store, now
from curator.store import problems as problem_store
from curator.workspace import Workspace

SOLUTION_KINDS = ("reference", "sample")
DEFAULT_TIMEOUT_S = 60.0      # when the reference has never been timed on this machine
TIMEOUT_FLOOR_S = 10.0
TIMEOUT_FACTOR = 10.0

Progress = Callable[[int, int, str], None]
Cancelled = Callable[[], bool]


def solution_hash(solution: str) -> str:
    return hashlib.sha256(solution.encode("utf-8")).hexdigest()


def settings(workspace: Workspace | None) -> dict:
    """The [execution] table of curator.toml."""
    config = (workspace.config if workspace is not None else {}) or {}
    return dict(config.get("execution") or {})


# -- limits ------------------------------------------------------------------------------


def reference_time(store: Store, problem_id: str) -> float | None:
    """How long the latest passing reference run of this problem took on this machine."""
    row = store.one(
        "SELECT duration_s FROM runs WHERE problem_id = ? AND solution_kind = 'reference' "
        "AND outcome = 'passed' ORDER BY id DESC LIMIT 1", (problem_id,))
    return row["duration_s"] if row else None


def default_limits(store: Store, workspace: Workspace | None, problem: Problem,
                   timeout: float | None = None) -> Limits:
    """Limits from [execution]; the timeout is max(floor, factor x reference time).

    A fixed limit fails correct solutions on slow machines, so it scales with the
    reference's own measured time; DEFAULT_TIMEOUT_S until the reference has been timed.
    """
    conf = settings(workspace)
    limits = Limits(**{k: conf[k] for k in ("memory_mb", "processes", "file_mb",
                                            "open_files", "output_kb") if k in conf})
    if timeout is not None:
        limits.timeout_s = float(timeout)
        return limits
    measured = reference_time(store, problem.id)
    if measured is None:
        limits.timeout_s = float(conf.get("timeout_s", DEFAULT_TIMEOUT_S))
    else:
        floor = float(conf.get("timeout_floor_s", TIMEOUT_FLOOR_S))
        factor = float(conf.get("timeout_factor", TIMEOUT_FACTOR))
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
    try:  # imported lazily: the engine works without the mining part
        checkout = importlib.import_module("curator.mining.checkout")
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("curator.mining"):
            raise CuratorError(f"problem {problem.id}: repo-backed runs need the mining "
                               "module (curator.mining.checkout)") from None
        raise
    try:
        repo_dir, overlay, python = checkout.prepare(workspace, problem, solution_text,
                                                     store=store)
    except getattr(checkout, "MissingSymbol", ()):
        job.solution = ""  # nothing to run: recorded as no_code
        return job
    job.repo_dir, job.overlay, job.python = str(repo_dir), dict(overlay), python
    job.env_preload = _env_preload(store, problem, python)
    envs = importlib.import_module("curator.mining.envs")
    job.repo = envs.portable_spec(store, problem.source["repo"], problem.source["commit"],
                                  python)
    job.node_ids = list(problem.test_node_ids)
    job.deselect = [row["node_id"] for row in excluded(store, problem.id)
                    if row["node_id"] not in job.node_ids]
    job.tests = None
    return job


def _env_preload(store: Store, problem: Problem, python: str) -> list[str]:
    """What warm workers of the problem's repository environment import once."""
    try:
        envs = importlib.import_module("curator.mining.envs")
    except ModuleNotFoundError:
        return ["torch"]
    return envs.preload_for(store, (problem.source or {}).get("repo"), python)


# -- baselines and excluded tests -----------------------------------------------------------


def baseline(store: Store, problem: Problem) -> dict[str, str] | None:
    """{node id: outcome} of the current reference's passing run, or None."""
    row = store.one("SELECT * FROM baselines WHERE problem_id = ?", (problem.id,))
    if row is None or row["solution_hash"] != solution_hash(problem.solution):
        return None
    return json.loads(row["tests"])


def baseline_row(store: Store, problem_id: str) -> dict | None:
    row = store.one("SELECT * FROM baselines WHERE problem_id = ?", (problem_id,))
    if row is not None:
        row["tests"] = json.loads(row["tests"])
    return row


def excluded(store: Store, problem_id: str) -> list[dict]:
    """Upstream tests the problem leaves out, with the reason each was left out."""
    return store.query("SELECT node_id, reason, actor, created_at FROM excluded_tests "
                       "WHERE problem_id = ? ORDER BY node_id", (problem_id,))


def _store_baseline(store: Store, run_id: int, result: RunResult, hash_: str) -> None:
    tests = verdict.baseline_of(result.tests)
    before = store.one("SELECT tests FROM baselines WHERE problem_id = ?", (result.problem_id,))
    store.execute(
        "INSERT INTO baselines (problem_id, solution_hash, run_id, tests, created_at) "
        "VALUES (?, ?, ?, ?, ?) ON CONFLICT (problem_id) DO UPDATE SET "
        "solution_hash = excluded.solution_hash, run_id = excluded.run_id, "
        "tests = excluded.tests, created_at = excluded.created_at",
        (result.problem_id, hash_, run_id, json.dumps(tests, sort_keys=True), now()))
    if before is None or json.loads(before["tests"]) != tests:
        store.audit("baseline", result.problem_id, "update" if before else "create",
                    after={"run_id": run_id, "solution_hash": hash_, "tests": tests})


# -- the runs table -----------------------------------------------------------------------


def record(store: Store, result: RunResult, solution_kind: str, solution_hash: str,
           sample_id: int | None = None, started_at: str | None = None) -> int:
    """Store one run (and its audit row); returns the run id."""
    if solution_kind not in SOLUTION_KINDS:
        raise CuratorError(f"solution kind {solution_kind!r} must be one of "
                           f"{', '.join(SOLUTION_KINDS)}")
    row = {
        "problem_id": result.problem_id, "solution_kind": solution_kind,
        "solution_hash": solution_hash, "sample_id": sample_id, "outcome": result.outcome,
        "tests": json.dumps(result.tests), "duration_s": result.duration_s,
        "stdout": result.stdout, "stderr": result.stderr, "reason": result.reason,
        "env": json.dumps(result.env, sort_keys=True), "timeout_s": result.timeout_s,
        "started_at": started_at or now(), "actor": store.actor, "job_id": result.job_id,
    }
    with store.transaction():
        cursor = store.execute(
            f"INSERT INTO runs ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
            list(row.values()))
        run_id = cursor.lastrowid
        if solution_kind == "reference" and result.outcome == "passed":
            _store_baseline(store, run_id, result, solution_hash)
        store.audit("run", run_id, "create", after={
            "problem_id": result.problem_id, "solution_kind": solution_kind,
            "solution_hash": solution_hash, "sample_id": sample_id,
            "outcome": result.outcome, "job_id": result.job_id})
    return run_id


def _decode(row: dict) -> dict:
    for key in ("tests", "env"):
        if isinstance(row.get(key), str):
            row[key] = json.loads(row[key])
    return row


def get(store: Store, run_id: int) -> dict:
    row = store.one("SELECT * FROM runs WHERE id = ?", (run_id,))
    if row is None:
        from curator.errors import NotFoundError

        raise NotFoundError(f"run {run_id} not found")
    return _decode(row)


def latest(store: Store, solution_kind: str = "reference") -> dict[str, dict]:
    """problem id -> its latest run of that kind (the Problems table's "last run")."""
    rows = store.query(
        "SELECT r.* FROM runs r JOIN (SELECT problem_id, MAX(id) AS id FROM runs "
        "WHERE solution_kind = ? GROUP BY problem_id) last ON last.id = r.id",
        (solution_kind,))
    return {row["problem_id"]: _decode(row) for row in rows}


def reference_passes(store: Store, problem: Problem) -> bool:
    """Whether the latest reference run of the problem's current solution passed."""
    row = store.one(
        "SELECT outcome FROM runs WHERE problem_id = ? AND solution_kind = 'reference' "
        "AND solution_hash = ? AND outcome != 'infra' ORDER BY id DESC LIMIT 1",
        (problem.id, solution_hash(problem.solution)))
    return row is not None and row["outcome"] == "passed"


def history(store: Store, problem_id: str, limit: int = 100) -> list[dict]:
    """Runs of one problem, newest first."""
    rows = store.query("SELECT * FROM runs WHERE problem_id = ? ORDER BY id DESC LIMIT ?",
                       (problem_id, limit))
    return [_decode(row) for row in rows]


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
                 progress: Progress | None = None, cancelled: Cancelled | None = None,
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
        have = _recorded(store, problem) if resume else 0
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
        from curator.execution.engine import resolve_backend

        backend, address = resolve_backend(conf, backend, address)
        engine = Engine(workers=min(workers or conf.get("workers") or _cpus(),
                                    max(1, len(jobs))) if backend == "local"
                        else workers or conf.get("workers"),
                        preload=conf.get("preload", ()), isolation=conf.get("isolation", "auto"),
                        hide=[str(workspace.root)], backend=backend, address=address)
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


def _recorded(store: Store, problem: Problem) -> int:
    """Runs (not infra) of this problem's current reference solution."""
    return store.one(
        "SELECT COUNT(*) AS n FROM runs WHERE problem_id = ? AND solution_kind = 'reference' "
        "AND solution_hash = ? AND outcome != 'infra'",
        (problem.id, solution_hash(problem.solution)))["n"]


def _cpus() -> int:
    from curator.execution.engine import default_workers

    return default_workers()


def _run_json(run_id: int, result: RunResult) -> dict:
    return {"run_id": run_id, "problem_id": result.problem_id, "outcome": result.outcome,
            "duration_s": result.duration_s,
            "tests": [{"id": t["id"], "outcome": t["outcome"]} for t in result.tests],
            "not_counted": verdict.not_counted(result.tests),
            "reason": result.reason, "timeout_s": result.timeout_s, "env": result.env,
            "job_id": result.job_id}
