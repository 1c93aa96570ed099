"""`curator validate`: do a problem's tests catch wrong answers?

For each problem, through the sandboxed engine (never in this process):

1. stability: the reference runs `repeat` times (recorded as ordinary reference runs, so
   the latest passing one is the baseline); tests whose outcome differs between the runs
   are `flaky_tests` (a test missing from a run counts as an outcome of its own);
2. discrimination: a stub of the entry point (its body a `raise NotImplementedError`)
   is held to the baseline; the baseline tests it does not fail are
   `non_exercising_tests`, the share it fails is `stub_failed_share`, and it must fail
   at least one (`discriminates`);
3. test strength: up to `mutants` AST mutants of the reference (curator.validity.mutants)
   run the same way. A mutant that passes survives; one that times out, or hit a harness
   failure, is counted apart; every other outcome kills it. The mutation score is
   killed / (killed + survived).

A problem whose reference never passes gets null figures and a `reason`. Results are
stored per problem and solution (with a hash of its tests): validating an unchanged
problem again with the same settings returns the stored result without running.
All runs of a call go through one engine, so its warm workers run jobs in parallel.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from curator import runs
from curator.errors import CuratorError
from curator.execution import trust
from curator.execution.engine import Engine
from curator.execution.job import Job, RunResult
from curator.problem import Problem
from curator.progress import CancelCheck, Progress
from curator.store import Store
from curator.store import problems as problem_store
from curator.store import validations as validation_store
from curator.store.runs import excluded, solution_hash
from curator.validity.mutants import Mutant, make_mutants
from curator.validity.source import symbol_of
from curator.validity.stub import NoEntryPoint, stub_solution
from curator.workspace import Workspace

DEFAULT_MUTANTS = 20
DEFAULT_REPEAT = 3
NOT_COUNTED = ("timeout", "infra")     # a mutant with these outcomes is neither killed nor alive
JSON_KEYS = ("id", "discriminates", "stub_failed_share", "non_exercising_tests", "stable",
             "flaky_tests", "mutation_score", "mutants", "killed", "survivors")


def tests_hash(store: Store, problem: Problem) -> str:
    """What the tests are: their text, node ids, entry point and left-out tests."""
    source = problem.source or {}
    data = [problem.entry_point, problem.kind, problem.tests or "",
            list(problem.test_node_ids or []),
            sorted(row["node_id"] for row in excluded(store, problem.id)),
            [source.get(k) for k in ("repo", "commit", "path", "symbol")]]
    return hashlib.sha256(json.dumps(data).encode("utf-8")).hexdigest()


@dataclass
class Validity:
    """What validation found for one problem (to_json: the `--json` row)."""

    id: str
    discriminates: bool | None = None
    stub_failed_share: float | None = None
    non_exercising_tests: list[str] | None = None
    stable: bool | None = None
    flaky_tests: list[str] | None = None
    mutation_score: float | None = None
    mutants: int | None = None
    killed: int | None = None
    survivors: list[dict] | None = None     # {"operator", "line", "original", "mutated"}
    reason: str | None = None
    # Shown by the app and the text output, stored with the rest:
    baseline_tests: int = 0
    stub_outcome: str = ""
    equivalent: int = 0
    timeouts: int = 0
    not_run: int = 0                 # infra outcomes
    reference_outcomes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    reused: bool = False

    def to_json(self) -> dict:
        data = {key: getattr(self, key) for key in JSON_KEYS}
        if data["survivors"] is not None:
            data["survivors"] = [{"operator": s["operator"], "line": s["line"]}
                                 for s in data["survivors"]]
        if self.reason is not None:
            data["reason"] = self.reason
        return data

    def to_record(self) -> dict:
        data = {key: getattr(self, key) for key in self.__dataclass_fields__
                if key != "reused"}
        return data

    @classmethod
    def from_record(cls, data: dict) -> Validity:
        names = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in names})

    @property
    def valid(self) -> bool | None:
        """False when a stub passes or the reference is flaky; None when not decided."""
        if self.discriminates is None:
            return None
        return bool(self.discriminates and self.stable)


@dataclass
class ValidationReport:
    problems: list[Validity] = field(default_factory=list)
    cancelled: bool = False
    runs: int = 0
    mutant_runs: int = 0
    seconds: float = 0.0
    isolation: str = ""

    def to_json(self) -> dict:
        return {"problems": [v.to_json() for v in self.problems]}

    def summary(self) -> dict:
        decided = [v for v in self.problems if v.discriminates is not None]
        return {"problems": len(self.problems),
                "not_discriminating": sum(1 for v in decided if not v.discriminates),
                "unstable": sum(1 for v in decided if not v.stable),
                "undecided": len(self.problems) - len(decided),
                "reused": sum(1 for v in self.problems if v.reused),
                "runs": self.runs, "mutant_runs": self.mutant_runs,
                "seconds": round(self.seconds, 2),
                "mutants_per_s": round(self.mutant_runs / self.seconds, 2)
                if self.seconds and self.mutant_runs else None,
                "cancelled": self.cancelled}


def stored(store: Store, problem: Problem) -> Validity | None:
    """The stored validation of the problem's current solution and tests, or None."""
    row = validation_store.get(store, problem.id, solution_hash(problem.solution))
    if row is None or row["tests_hash"] != tests_hash(store, problem):
        return None
    return Validity.from_record(row["result"])


def current(store: Store, problems: list[Problem]) -> dict[str, Validity]:
    """problem id -> the stored validation of its current solution and tests."""
    wanted = {p.id: (solution_hash(p.solution), tests_hash(store, p)) for p in problems}
    return {pid: Validity.from_record(row["result"])
            for pid, row in validation_store.current(store, wanted).items()}


def states(store: Store, problems: list[Problem] | None = None) -> dict[str, str]:
    """problem id -> "yes" (its current tests discriminate and the reference is stable),
    "no" (a stub passes them or a test is flaky) or "" (not validated, or undecided)."""
    if problems is None:
        problems = problem_store.all_problems(store)
    found = current(store, problems)
    out = {}
    for problem in problems:
        valid = found[problem.id].valid if problem.id in found else None
        out[problem.id] = "" if valid is None else ("yes" if valid else "no")
    return out


def invalid_ids(store: Store, problems: list[Problem]) -> set[str]:
    """Problems whose current validation found a stub passing or a flaky reference."""
    return {pid for pid, v in current(store, problems).items() if v.valid is False}


# -- judging one problem from its runs ------------------------------------------------------


def flaky_tests(results: list[RunResult]) -> list[str]:
    """Tests whose outcome differs between runs (absent from a run: `missing`)."""
    counted = [r for r in results if r.outcome != "infra"]
    if len(counted) < 2:
        return []
    per_run = [{t["id"]: t["outcome"] for t in r.tests} for r in counted]
    names = set().union(*per_run)
    return sorted(n for n in names if len({run.get(n, "missing") for run in per_run}) > 1)


def passed_ids(baseline: dict[str, str]) -> list[str]:
    return sorted(node for node, outcome in baseline.items() if outcome == "passed")


def not_failed_by(result: RunResult, wanted: list[str]) -> list[str]:
    """Those of `wanted` (baseline tests) that passed in this run."""
    outcomes = {t["id"]: t["outcome"] for t in result.tests}
    return [node for node in wanted if outcomes.get(node) == "passed"]


def judge_mutant(result: RunResult) -> str:
    """killed, survived, or (not counted) timeout / infra."""
    if result.outcome in NOT_COUNTED:
        return result.outcome
    return "survived" if result.outcome == "passed" else "killed"


# -- the batch ---------------------------------------------------------------------------


@dataclass
class _Plan:
    problem: Problem
    solution_hash: str
    tests_hash: str
    validity: Validity
    mutants: list[Mutant] = field(default_factory=list)
    equivalent: int = 0
    reference: list[RunResult] = field(default_factory=list)
    stub: RunResult | None = None
    mutant_results: dict[int, RunResult] = field(default_factory=dict)
    baseline: dict[str, str] | None = None   # what the stub and mutants were held to
    started: float = 0.0
    error: str | None = None


def engine_for(workspace: Workspace, workers: int | None, jobs: int,
               plain: bool = True) -> Engine:
    return runs._engine_for(workspace, jobs, workers, plain)


def needs_consent(store: Store, ids: Iterable[str] | None = None) -> list[str]:
    """Ids of the problems `validate(store, ..., ids)` would run that are mined or imported
    (untrusted under weak isolation: the app asks before it starts)."""
    problems = ([problem_store.get(store, pid) for pid in ids] if ids is not None
                else [p for p in problem_store.all_problems(store) if p.status != "retired"])
    return runs.untrusted(problems)


def consent(engine: Engine, workspace: Workspace, problems: Iterable[Problem],
            allow_weak: bool | None) -> None:
    """Refuse (WeakIsolationRefused) before anything runs when mined or imported problems
    (their reference, stub and mutants run the repository's code) would run under weak
    isolation without consent, as `curator run` does."""
    trust.check(engine.isolation, runs.untrusted(problems),
                trust.allowed(runs.settings(workspace), allow_weak))


class _Counter:
    """One progress bar over both phases of the batch."""

    def __init__(self, progress: Progress | None, total: int):
        self.progress, self.total, self.done = progress, total, 0

    def shrink(self, by: int) -> None:
        self.total -= by

    def __call__(self, done: int, total: int, what: str) -> None:
        if self.progress and done:
            self.done += 1
            self.progress(self.done, self.total, what)


def validate(store: Store, workspace: Workspace, ids: Iterable[str] | None = None,
             mutants: int = DEFAULT_MUTANTS, repeat: int = DEFAULT_REPEAT,
             workers: int | None = None, progress: Progress | None = None,
             cancelled: CancelCheck | None = None, engine: Engine | None = None,
             fresh: bool = False, allow_weak: bool | None = None) -> ValidationReport:
    """Validate these problems (all when ids is None); see the module docstring.

    fresh: run again even when an unchanged problem has a stored result. allow_weak:
    consent to run mined or imported problems under weak isolation (default: [execution]
    allow_weak); without it they raise WeakIsolationRefused before anything runs."""
    if mutants < 0 or repeat < 1:
        raise CuratorError("--mutants must be >= 0 and --repeat >= 1")
    problems = ([problem_store.get(store, pid) for pid in ids] if ids is not None
                else [p for p in problem_store.all_problems(store) if p.status != "retired"])
    started = time.monotonic()
    report = ValidationReport()
    plans: list[_Plan] = []
    for problem in problems:
        s_hash, t_hash = solution_hash(problem.solution), tests_hash(store, problem)
        row = None if fresh else validation_store.get(store, problem.id, s_hash)
        if row is not None and row["tests_hash"] == t_hash and \
                (row["mutants_asked"], row["repeat"]) == (mutants, repeat):
            validity = Validity.from_record(row["result"])
            validity.reused = True
            report.problems.append(validity)
            continue
        plan = _Plan(problem, s_hash, t_hash, Validity(problem.id))
        try:
            symbol = symbol_of(problem.entry_point, problem.source)
            stub_solution(problem.solution, symbol)
            made = make_mutants(problem.solution, symbol, mutants)
            plan.mutants, plan.equivalent = made.mutants, made.equivalent
        except NoEntryPoint as exc:
            plan.error = f"{problem.id}: {exc}"
        plans.append(plan)
        report.problems.append(plan.validity)
    todo = [p for p in plans if p.error is None]
    for plan in plans:
        if plan.error is not None:
            plan.validity.reason = plan.error
            _save(store, plan, mutants, repeat)
    if not todo:
        report.seconds = time.monotonic() - started
        return report
    counter = _Counter(progress, sum(repeat + 1 + len(p.mutants) for p in todo))
    own = engine is None
    if own:
        engine = engine_for(workspace, workers, counter.total,
                            plain=not all(p.problem.repo_backed for p in todo))
    try:
        consent(engine, workspace, [p.problem for p in todo], allow_weak)
        report.isolation = engine.isolation
        _reference_phase(store, workspace, engine, todo, repeat, counter, cancelled, report)
        if not report.cancelled:
            _variant_phase(store, workspace, engine, todo, counter, cancelled, report)
    finally:
        if own:
            engine.close()
    for plan in todo:
        if report.cancelled and not _complete(plan):
            continue   # nothing half-written: a cancelled problem keeps what it had
        _conclude(plan)
        _save(store, plan, mutants, repeat)
    if report.cancelled:
        done = {p.problem.id for p in todo if _complete(p)}
        report.problems = [v for v in report.problems
                           if v.reused or v.id in done or v.reason is not None]
    report.seconds = time.monotonic() - started
    return report


def _complete(plan: _Plan) -> bool:
    if plan.validity.reason is not None:
        return True
    return plan.stub is not None and len(plan.mutant_results) == len(plan.mutants)


def _reference_phase(store, workspace, engine, plans, repeat, counter, cancelled,
                     report) -> None:
    jobs: dict[str, tuple[_Plan, Job]] = {}
    for plan in plans:
        plan.started = time.monotonic()
        for _ in range(repeat):
            job = runs.job_for(store, workspace, plan.problem, plan.problem.solution,
                               "reference")
            jobs[job.job_id] = (plan, job)
    for result in engine.run([j for _, j in jobs.values()], progress=counter,
                             cancelled=cancelled):
        plan, _ = jobs[result.job_id]
        runs.record(store, result, "reference", plan.solution_hash)
        plan.reference.append(result)
        report.runs += 1
    if report.runs < len(jobs):
        report.cancelled = True
        return
    for plan in plans:
        plan.validity.reference_outcomes = sorted(r.outcome for r in plan.reference)
        plan.validity.flaky_tests = flaky_tests(plan.reference)
        if not any(r.passed for r in plan.reference):
            last = plan.reference[-1]
            why = f": {last.reason}" if last.reason else ""
            plan.validity.reason = (f"the reference does not pass ({last.outcome}{why}); "
                                    f"run `curator run {plan.problem.id}` and fix it first")
            plan.validity.flaky_tests = None
            counter.shrink(1 + len(plan.mutants))


def _variant_phase(store, workspace, engine, plans, counter, cancelled, report) -> None:
    jobs: dict[str, tuple[_Plan, int | None]] = {}
    all_jobs = []
    for plan in plans:
        if plan.validity.reason is not None:
            continue
        symbol = symbol_of(plan.problem.entry_point, plan.problem.source)
        variants = [(None, stub_solution(plan.problem.solution, symbol))]
        variants += [(index, m.text) for index, m in enumerate(plan.mutants)]
        for index, text in variants:
            job = runs.job_for(store, workspace, plan.problem, text, "sample")
            if job.baseline is None:   # the passing run above made it; never judge without
                plan.validity.reason = "no baseline was recorded for the reference"
                break
            plan.baseline = job.baseline
            jobs[job.job_id] = (plan, index)
            all_jobs.append(job)
    received = 0
    for result in engine.run(all_jobs, progress=counter, cancelled=cancelled):
        received += 1
        plan, index = jobs[result.job_id]
        if index is None:
            plan.stub = result
        else:
            plan.mutant_results[index] = result
            report.mutant_runs += 1
        report.runs += 1
    if received < len(all_jobs):
        report.cancelled = True


def _conclude(plan: _Plan) -> None:
    v, problem = plan.validity, plan.problem
    v.seconds = round(time.monotonic() - plan.started, 3) if plan.started else 0.0
    v.equivalent = plan.equivalent
    if v.reason is not None:
        return
    wanted = passed_ids(plan.baseline or {})
    v.baseline_tests = len(wanted)
    v.stable = not v.flaky_tests and len({r.outcome for r in plan.reference
                                          if r.outcome != "infra"}) <= 1
    stub = plan.stub
    v.stub_outcome = stub.outcome if stub else ""
    if stub is None or stub.outcome == "infra" or not wanted:
        v.reason = (f"{problem.id}: the stub's run hit a harness failure: "
                    f"{stub.reason if stub else 'not run'}" if wanted
                    else f"{problem.id}: the reference passed no test")
        v.discriminates = v.stable = None
        v.flaky_tests = None
        return
    survivors = not_failed_by(stub, wanted)
    v.non_exercising_tests = survivors
    v.stub_failed_share = round((len(wanted) - len(survivors)) / len(wanted), 4)
    v.discriminates = len(survivors) < len(wanted)
    killed, alive = 0, []
    for index, mutant in enumerate(plan.mutants):
        verdict = judge_mutant(plan.mutant_results[index])
        if verdict == "killed":
            killed += 1
        elif verdict == "survived":
            alive.append(mutant.to_json())
        elif verdict == "timeout":
            v.timeouts += 1
        else:
            v.not_run += 1
    v.killed, v.survivors = killed, alive
    v.mutants = killed + len(alive)
    v.mutation_score = round(killed / v.mutants, 4) if v.mutants else None


def _save(store: Store, plan: _Plan, mutants: int, repeat: int) -> None:
    validation_store.save(store, plan.problem.id, plan.solution_hash, plan.tests_hash,
                          mutants, repeat, plan.validity.to_record())
