"""Runs of problems: building jobs, running them through the engine, `curator run`.

The same path serves reference solutions and LLM samples: `job_for` takes any solution
text; the results are recorded in the `runs` table through curator.store.runs (its
functions are re-exported here, so `runs.record` and `runs.latest` keep working).
"""

from __future__ import annotations

import ast
import re
import statistics
import uuid
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from curator.config import ExecutionConfig
from curator.errors import CuratorError
from curator.execution import trust, verdict
from curator.execution.engine import Engine, default_workers, resolve_backend
from curator.execution.job import Job, Limits, RunResult
from curator.problem import Problem
from curator.progress import CancelCheck, Progress, checkpoint
from curator.repos import checkout, environments, identity, recipes
from curator.store import Store, now, repo_envs
from curator.store import problems as problem_store
from curator.store.runs import (  # noqa: F401  (re-exported: the runs API in one place)
    SOLUTION_KINDS,
    add_excluded,
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
    remove_excluded,
    solution_hash,
)
from curator.workspace import Workspace

# Ray nodes build or reuse a repo-backed job's checkout and environment with this.
REPO_PREPARING = {"repo_preparer": "curator.repos.environments:materialize"}
# A reference never timed on this machine gets a generous first limit (a repository's
# first run imports its framework and may run many tests); after one passing run, the
# limit is the measured time rule below.
FIRST_TIMEOUT_S = 900.0
DEFAULT_TIMEOUT_S = FIRST_TIMEOUT_S
# ...which grows with the tests it collects: a node id may name a file of many tests (pyro's
# tests/infer/test_inference.py, 68, of which RWS's took 133 s across the boundary alone:
# the first run timed out after 19 tests, and so did the triage). FIRST_PER_TEST_S for
# each collected test, never beyond FIRST_MAX_TIMEOUT_S (nor below the first limit). A
# workspace that sets its own first limit ([execution] first_timeout_s or timeout_s) gets
# that limit alone.
FIRST_PER_TEST_S = 30.0
FIRST_MAX_TIMEOUT_S = 3600.0
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
    reference's own measured time; until the reference has been timed, the generous
    first limit ([execution] first_timeout_s; by default FIRST_TIMEOUT_S, which grows by
    FIRST_PER_TEST_S for each test the run collects, up to FIRST_MAX_TIMEOUT_S,
    `Limits.wall_limit`: a file of many tests is one node id). A repository problem's
    reference is timed in its repository's current environment: a time measured before
    that environment was built (other libraries: a rebuild that adds tensorflow makes
    collection alone take seconds) does not count, nor does one measured on other tests
    than its node ids now name (tests added to it).
    """
    conf = settings(workspace)
    limits = Limits(**conf.run_limits())
    if timeout is not None:
        limits.timeout_s = float(timeout)
        return limits
    repo = (problem.source or {}).get("repo") if problem.repo_backed else None
    record = identity.record_for(store, repo) if isinstance(repo, str) and repo else None
    env = repo_envs.get(store, record["id"]) if record else None
    since = env.get("built_at") if env else None
    nodes = None
    if problem.repo_backed:
        left_out = {row["node_id"] for row in excluded(store, problem.id)}
        nodes = [n for n in problem.test_node_ids if n not in left_out]
    measured = reference_time(store, problem.id, since=since, node_ids=nodes)
    if measured is None:
        first = conf.first_timeout_s if conf.first_timeout_s is not None else conf.timeout_s
        limits.timeout_s = FIRST_TIMEOUT_S if first is None else first
        if first is None:   # a first limit of the workspace's own is the limit
            limits.per_test_s = FIRST_PER_TEST_S
            limits.max_timeout_s = FIRST_MAX_TIMEOUT_S
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
    job.symbol = source.get("symbol") or problem.entry_point
    job.env_preload = environments.preload_for(store, source.get("repo"), python)
    recipe = recipes.load(workspace, source["repo"]) if source.get("repo") else None
    job.disable_plugins = sorted(recipe.disable_plugins) if recipe is not None else []
    # What a cluster node needs to rebuild the checkout and environment itself.
    if source.get("repo") and source.get("commit"):
        job.repo = environments.portable_spec(store, source["repo"], source["commit"], python)
    left_out = [row["node_id"] for row in excluded(store, problem.id)]
    # every one of them excluded: only they are collected (each deselected), never the
    # whole repository's tests, which empty node ids would run
    job.node_ids = [n for n in problem.test_node_ids if n not in left_out] or \
        list(problem.test_node_ids)
    # every one, also those the problem names itself: another of its node ids (their
    # module, their class) would collect them again
    job.deselect = left_out
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
                 address: str | None = None, resume: bool = False,
                 allow_weak: bool | None = None) -> RunReport:
    """Run the reference solutions of these problems (all when ids is None), `repeat`
    times each, record every run, and flag problems whose outcomes differ as flaky.

    backend/address: "local" or "ray" (default: [execution] backend/address). resume: only
    top up to `repeat` runs per problem, counting the runs the current reference already
    has (same solution text, outcome other than infra), so an interrupted run can be
    finished by running the same command with resume. allow_weak: consent to run mined
    or imported problems (untrusted code) under weak isolation (default: [execution]
    allow_weak); without it they raise WeakIsolationRefused before anything runs."""
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
                        extra=dict(REPO_PREPARING),
                        eager=not all(job.repo_backed for job in jobs))
    try:
        wanted = {job.problem_id for job in jobs}
        trust.check(engine.isolation, untrusted([p for p in problems if p.id in wanted]),
                    trust.allowed(conf, allow_weak))
        report = RunReport(isolation=engine.isolation, skipped=skipped)
        progress, tests = per_test(progress)
        for result in engine.run(jobs, progress=progress, cancelled=cancelled,
                                 test_progress=tests):
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
               engine: Engine | None = None, allow_weak: bool | None = None) -> RunReport:
    """Run a problem as edited on screen, not as saved: its solution against its tests.

    When nothing that runs differs from the saved problem this is an ordinary reference
    run; otherwise the run is recorded as `unsaved`, so it shows in the history but never
    counts as the reference's result (ready, gates, baselines, scoring)."""
    saved = problem_store.get(store, problem.id)
    if (saved.solution, saved.tests, saved.entry_point, saved.kind) == (
            problem.solution, problem.tests, problem.entry_point, problem.kind):
        return run_problems(store, workspace, [problem.id], workers=1, progress=progress,
                            cancelled=cancelled, engine=engine, allow_weak=allow_weak)
    job = job_for(store, workspace, problem, problem.solution, "reference",
                  default_limits(store, workspace, saved))
    own = engine is None
    conf = settings(workspace)
    if own:
        # a repository problem's run needs no worker of plain runs (as run_problems)
        engine = Engine(workers=1, preload=conf.preload, isolation=conf.isolation,
                        hide=[str(workspace.root)], eager=not job.repo_backed)
    try:
        trust.check(engine.isolation, untrusted([saved]), trust.allowed(conf, allow_weak))
        report = RunReport(isolation=engine.isolation)
        progress, tests = per_test(progress)
        for result in engine.run([job], progress=progress, cancelled=cancelled,
                                 test_progress=tests):
            run_id = record(store, result, "reference", solution_hash(problem.solution),
                            unsaved=True)
            report.runs.append({**_run_json(run_id, result), "unsaved": True})
    finally:
        if own:
            engine.close()
    report.cancelled = not report.runs
    return report


def untrusted(problems: Iterable[Problem]) -> list[str]:
    """Ids of the problems whose reference run executes code nobody here wrote (mined or
    imported from a repository): under weak isolation they need consent."""
    return [p.id for p in problems if trust.untrusted_reference(p)]


def per_test(progress: Progress | None):
    """(progress, test_progress) for Engine.run: the label of `progress` also says which
    test of a run finished last and how many are done ("p1: test 3/22 tests/t.py::x"),
    so a long first run shows it is moving (the CLI's bar, the app's run status)."""
    if progress is None:
        return None, None
    state = {"done": 0, "total": 0}

    def jobs(done: int, total: int, label: str) -> None:
        state["done"], state["total"] = done, total
        progress(done, total, label)

    def tests(problem_id: str, test_id: str, done: int, collected: int | None) -> None:
        of = f"/{collected}" if collected else ""
        progress(state["done"], state["total"], f"{problem_id}: test {done}{of} {test_id}")

    return jobs, tests


def _cpus() -> int:
    return default_workers()


def _run_json(run_id: int, result: RunResult) -> dict:
    return {"run_id": run_id, "problem_id": result.problem_id, "outcome": result.outcome,
            "duration_s": result.duration_s,
            "tests": [{"id": t["id"], "outcome": t["outcome"]} for t in result.tests],
            "not_counted": verdict.not_counted(result.tests),
            "reason": result.reason, "timeout_s": result.timeout_s, "env": result.env,
            "job_id": result.job_id, "evidence": result.evidence}


# -- reference triage ----------------------------------------------------------------------

TRIAGE_RUNS = 3
CAUSES = ("needs_gpu", "needs_network", "flaky", "fails_upstream")
# A test that fails only with the target served across the judge/solution boundary (it
# passes in the upstream checkout): this tool's limit, recorded, never excluded for it.
BOUNDARY = "boundary"
# A run that ended before every test ran: its missing tests were not reached.
ENDED_EARLY = ("timeout", "crashed", "oom")
OK_OUTCOMES = ("passed", "skipped", "xfailed", "xpassed", "deselected")
# What a failing test's message says about why it cannot pass on this machine.
_GPU = re.compile(r"\bCUDA\b|\bcuda\b|NVIDIA|\bnvml\b|cudnn|\bGPU\b|\bgpus?\b|"
                  r"Torch not compiled with CUDA", re.IGNORECASE)
_NETWORK = re.compile(
    r"ConnectionError|Max retries exceeded|Couldn't reach|couldn't connect|"
    r"Temporary failure in name resolution|Name or service not known|Network is unreachable|"
    r"urlopen error|Failed to establish a new connection|Could not resolve host|"
    r"getaddrinfo|gaierror|nodename nor servname|Connection refused|ConnectTimeout|"
    r"ReadTimeout|OfflineModeIsEnabled|LocalEntryNotFoundError|HTTP Error|HTTPError|"
    r"URLError|SSLError|RemoteDisconnected|No route to host|huggingface\.co|"
    r"socket\.timeout|timed out while connecting", re.IGNORECASE)


def failure_cause(messages: list[str]) -> str:
    """needs_gpu, needs_network or fails_upstream for a test that failed in every run."""
    text = "\n".join(m for m in messages if m)
    if _GPU.search(text):
        return "needs_gpu"
    if _NETWORK.search(text):
        return "needs_network"
    return "fails_upstream"


def is_triage_exclusion(reason: str) -> bool:
    return reason.split(":", 1)[0].strip() in CAUSES


@dataclass
class TriageResult:
    problem_id: str
    green: bool
    reason: str = ""
    causes: dict[str, str] = field(default_factory=dict)   # {node id: cause}
    runs: int = 0
    skipped: bool = False                                  # resumed: triaged before

    def to_json(self) -> dict:
        return {"id": self.problem_id, "green": self.green, "reason": self.reason,
                "causes": dict(sorted(self.causes.items())), "runs": self.runs}


def stub_of(solution: str, entry_point: str) -> str | None:
    """The solution with the entry point's body replaced by `raise NotImplementedError`
    (None when it cannot be made): the remaining tests must fail it."""
    try:
        tree = ast.parse(solution)
    except SyntaxError:
        return None
    name = entry_point.rpartition(".")[2]
    nodes = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
             and n.name == name]
    if not nodes:
        return None
    node = nodes[0]
    lines = solution.splitlines(keepends=True)
    first = node.body[0]
    if first.lineno == node.lineno:   # `def f(): return 1` on one line
        return None
    indent = " " * first.col_offset
    head = lines[:first.lineno - 1]
    tail = lines[node.end_lineno:]
    return "".join(head) + f"{indent}raise NotImplementedError\n" + "".join(tail)


def _engine_for(workspace: Workspace, jobs: int, workers: int | None = None,
                plain: bool = False) -> Engine:
    """An engine of at most `jobs` workers; plain: whether any job runs without a
    repository (else no plain worker warms)."""
    conf = settings(workspace)
    return Engine(workers=max(1, min(workers or conf.workers or _cpus(), jobs)),
                  preload=conf.preload, isolation=conf.isolation,
                  hide=[str(workspace.root)], extra=dict(REPO_PREPARING), eager=plain)


def _missing_paths(store: Store, workspace: Workspace, problem: Problem) -> list[str]:
    """Paths the problem's checkout lacks (git objects absent from the clone)."""
    source = problem.source or {}
    if not source.get("repo") or not source.get("commit"):
        return []
    return checkout.missing_paths(workspace, source["repo"], source["commit"], store)


def triage(store: Store, workspace: Workspace, ids: Iterable[str], runs: int = TRIAGE_RUNS,
           progress: Progress | None = None, cancelled: CancelCheck | None = None,
           engine: Engine | None = None, resume: bool = True, stub: bool = True,
           test_progress=None, keep: set[str] | frozenset[str] = frozenset()
           ) -> list[TriageResult]:
    """Establish the baseline of each problem's reference: run it `runs` times; every test
    that fails gets a cause (needs_gpu, needs_network, flaky: differs across the runs,
    fails_upstream: fails every time for another reason, and also in one run of the
    upstream checkout with nothing served across the judge/solution boundary; a test that
    passes there fails for this tool's limit: the problem is not green, "boundary: ...",
    and that test's cause is `boundary`, never excluded; a test that upstream run never
    reached is run upstream alone first) and is excluded from the problem
    with that cause as the reason (the record `candidates accept --exclude` writes); the
    problem is green when its remaining tests pass (one more run, which stores the
    baseline) and a stub of the function fails at least one of them. A problem with no
    test left (every one excluded, or every one skipped upstream) is not green, with the
    reason.

    resume: a problem already triaged with its current reference is not run again.
    keep: node ids whose exclusion stays (a recipe's); an earlier triage's other
    exclusions are dropped first, so each triage sees every test."""
    from curator.store import triage as triage_store

    results: list[TriageResult] = []
    ids = list(ids)
    own = engine is None
    if own:
        engine = _engine_for(workspace, runs)
    try:
        for index, pid in enumerate(ids):
            checkpoint(cancelled, "triage")
            problem = problem_store.get(store, pid)
            hash_ = triage_key(problem, environments.lock_for(
                store, (problem.source or {}).get("repo")) if problem.repo_backed else "")
            before = triage_store.get(store, pid)
            if resume and before is not None and before["solution_hash"] == hash_:
                results.append(TriageResult(pid, before["green"], before["reason"],
                                            before["causes"], before["runs"], skipped=True))
                continue
            if progress:
                progress(index, len(ids), f"{pid}: {runs} runs")
            result = _triage_one(store, workspace, problem, runs, engine, cancelled, stub,
                                 test_progress, keep)
            if result is None:   # cancelled
                break
            if not result.reason.startswith("infra"):
                triage_store.save(store, pid, hash_, result.green, result.reason,
                                  result.causes, result.runs)
            results.append(result)
        if progress:
            progress(len(ids), len(ids), "triaged")
    finally:
        if own:
            engine.close()
    return results


WARM_UPS = 3   # first runs of a triage that failed while filling the run cache, at most


def triage_key(problem: Problem, lock: str = "") -> str:
    """What a stored triage holds for: the reference, the tests it runs (a problem
    resolved again with other node ids, as sparseml's once its expanded test was named
    by its class, is triaged again, not resumed with the old tests' verdict) and the lock
    of the environment it ran in (pyod's, built again with another combo, made its
    uncollectable test module collect: its old verdict no longer held)."""
    return solution_hash("\0".join([problem.solution, *problem.test_node_ids,
                                     *([lock] if lock else [])]))


def _uncollectable_here(problem: Problem, results: list[RunResult]
                        ) -> tuple[str, str] | None:
    """(needs_network or needs_gpu, the error) when every run ended in an error before any
    test ran, for a reason of this machine's, in a test module the problem runs whole
    (imagededup's package downloads pretrained weights at import: collecting the test
    module fails without the network); None otherwise."""
    if not results or not problem.test_node_ids or \
            any(r.outcome != "error" or r.tests for r in results):
        return None
    cause = failure_cause([r.reason or "" for r in results])
    if cause not in ("needs_gpu", "needs_network"):
        return None
    detail = results[0].reason or ""
    where = detail.split(": ", 1)[0]
    if any(node.split("::", 1)[0] != where for node in problem.test_node_ids):
        return None   # another test module of the problem may run: not this rule's
    return cause, detail


def upstream_job(job: Job) -> Job | None:
    """The reference job as upstream runs its tests: the checkout's own module, no target
    served from a solution process (nothing crosses the judge/solution boundary), so a
    test that fails in the reference's runs but passes here fails for this tool's limit,
    not upstream. None when the job is not repo-backed or the module cannot be read."""
    if not job.repo_backed or not job.overlay:
        return None
    relpath = next(iter(job.overlay))
    try:
        original = (Path(job.repo_dir) / relpath).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return None
    return replace(job, overlay={relpath: original}, symbol="", entry_point="",
                   job_id=uuid.uuid4().hex)


def _upstream_outcomes(store: Store, engine: Engine, job: Job, suspects: list[str],
                       hash_: str, cancelled: CancelCheck | None, test_progress
                       ) -> tuple[dict[str, str], int] | None:
    """({node id: outcome}, runs made) of the reference's failing tests run as upstream
    runs them (`upstream_job`): the whole job once, then each suspect that run never
    reached (it timed out or crashed first: pyro's RWS tests take ~90 s each, so a 300 s
    limit reached three of eleven) alone, all at once on the engine's workers; a test no
    run reached has no outcome. None when cancelled."""
    native = upstream_job(job)
    if native is None:
        return {}, 0
    ran = _run_jobs(store, engine, [native], hash_, cancelled, test_progress,
                    record_runs=False)
    if not ran:
        return None
    outcomes = {t["id"]: t["outcome"] for r in ran for t in r.tests}
    unreached = [tid for tid in suspects if tid not in outcomes]
    if not unreached or ran[0].outcome not in ENDED_EARLY:
        return outcomes, len(ran)
    alone = [replace(native, node_ids=[tid], deselect=[], job_id=uuid.uuid4().hex)
             for tid in unreached]
    more = _run_jobs(store, engine, alone, hash_, cancelled, test_progress,
                     record_runs=False)
    if len(more) < len(alone):
        return None
    for result in more:
        outcomes.update((t["id"], t["outcome"]) for t in result.tests
                        if t["id"] in unreached)
    return outcomes, len(ran) + len(more)


def _run_jobs(store: Store, engine: Engine, jobs: list[Job], hash_: str,
              cancelled: CancelCheck | None, test_progress, record_runs: bool = True
              ) -> list[RunResult]:
    out = []
    for result in engine.run(jobs, cancelled=cancelled, test_progress=test_progress):
        if record_runs:
            record(store, result, "reference", hash_)
        out.append(result)
    return out


def _triage_one(store: Store, workspace: Workspace, problem: Problem, runs: int,
                engine: Engine, cancelled: CancelCheck | None, stub: bool,
                test_progress, keep=frozenset()) -> TriageResult | None:
    hash_ = solution_hash(problem.solution)
    stamp = now()
    with store.transaction():   # an earlier triage's exclusions go; people's stay
        for row in excluded(store, problem.id):
            if is_triage_exclusion(row["reason"]) and row["node_id"] not in keep:
                remove_excluded(store, problem.id, row["node_id"])
    limits = default_limits(store, workspace, problem)
    jobs = [job_for(store, workspace, problem, problem.solution, "reference", limits)
            for _ in range(max(1, runs))]
    if problem.test_node_ids and not set(jobs[0].node_ids) - set(jobs[0].deselect or ()):
        # every test of the problem excluded before it ran (the recipe's exclusions: a
        # test module that cannot be collected here): nothing to run, said why
        return _nothing_left_result(problem.id, {
            row["node_id"]: row["reason"] for row in excluded(store, problem.id)
            if row["node_id"] in problem.test_node_ids}, 0)
    # The first run alone (on two workers the three take two rounds either way): one that
    # does not finish within the limit leaves nothing to compare, and the others would
    # only spend the limit again.
    results = _run_jobs(store, engine, jobs[:1], hash_, cancelled, test_progress)
    for _ in range(WARM_UPS):
        if not results or results[0].outcome in ("passed", "timeout") or \
                not (results[0].env or {}).get("run_cache_kept"):
            break
        # It added to its environment's run cache (code compiled at run time: nncf's
        # C++ extension, whose build outlives nncf's own 60 s loader limit and goes on
        # where it stopped): a warm-up. The first run is one after it.
        again = job_for(store, workspace, problem, problem.solution, "reference", limits)
        results = _run_jobs(store, engine, [again], hash_, cancelled, test_progress)
    if results and results[0].outcome == "timeout":
        return TriageResult(problem.id, False, _timeout_reason(results), runs=1)
    if results:
        results += _run_jobs(store, engine, jobs[1:], hash_, cancelled, test_progress)
    if len(results) < len(jobs):
        return None
    done = len(results)
    # a test a run never reached (it timed out or crashed first) says nothing about it
    finished = sum(r.outcome not in ENDED_EARLY for r in results)
    infra = [r for r in results if r.outcome == "infra"]
    if infra:
        return TriageResult(problem.id, False, f"infra: {infra[0].reason}", runs=done)
    crossing = [r for r in results if r.outcome == "error" and
                verdict.crossing_reason(r.reason)]
    if crossing:
        # this tool's limit, not upstream's: nothing is excluded for it
        return TriageResult(problem.id, False, f"boundary: {crossing[0].reason}", runs=done)
    if all(r.outcome == "passed" for r in results):
        return _stub_check(store, workspace, problem, engine, cancelled,
                           TriageResult(problem.id, True, runs=done), stub)
    per_test: dict[str, list[dict]] = {}
    for result in results:
        for test in result.tests:
            per_test.setdefault(test["id"], []).append(test)
    failing = {tid: tests for tid, tests in per_test.items()
               if any(t["outcome"] not in OK_OUTCOMES for t in tests)}
    unreachable = _uncollectable_here(problem, results) if not failing else None
    if unreachable is not None:
        cause, detail = unreachable
        reason = f"{cause}: {detail}"[:500]
        with store.transaction():
            for node in problem.test_node_ids:
                add_excluded(store, problem.id, node, reason, stamp)
        causes = {node: cause for node in problem.test_node_ids}
        return TriageResult(problem.id, False, _nothing_left(
            causes, {node: reason for node in problem.test_node_ids}), causes, done)
    if not failing:
        bad = next(r for r in results if r.outcome != "passed")
        if bad.outcome == "timeout":
            return TriageResult(problem.id, False, _timeout_reason(results), runs=done)
        if bad.outcome == "failed" and all(
                t["outcome"] == "deselected" for r in results for t in r.tests):
            # every test its node ids collect is excluded (a module it runs whole, its
            # tests in the recipe's [exclude]): nothing left, said why, as before it ran
            rows = {row["node_id"]: row["reason"] for row in excluded(store, problem.id)
                    if any(row["node_id"].startswith(n + "::") or row["node_id"] == n
                           for n in problem.test_node_ids)}
            if rows:
                return _nothing_left_result(problem.id, rows, done)
        if bad.outcome == "failed" and bad.tests and all(
                t["outcome"] == "skipped" for r in results for t in r.tests):
            # upstream skips every test (kornia's LoFTR: marked slow, which its conftest
            # skips without --runslow, or skipped for the torch version): said why
            return TriageResult(problem.id, False, _all_skipped(bad.tests), runs=done)
        why = environments.left_out_because(store, (problem.source or {}).get("repo") or "",
                                            bad.reason)
        return TriageResult(problem.id, False, f"{bad.outcome}: {bad.reason}" +
                            (f" ({why})" if why else ""), runs=done)
    missing = _missing_paths(store, workspace, problem)
    causes, reasons = {}, {}
    for tid, tests in sorted(failing.items()):
        messages = [t.get("message", "") for t in tests if t["outcome"] not in OK_OUTCOMES]
        if len(tests) < finished or any(t["outcome"] in OK_OUTCOMES for t in tests):
            cause = "flaky"
            detail = f"failed {len(messages)} of {done} runs: {messages[0]}"
        else:
            cause = failure_cause(messages)
            detail = messages[0] if messages else "failed"
            needs = [p for p in missing if p in "\n".join(messages) or
                     p.rpartition("/")[2] in "\n".join(messages)]
            if needs and cause == "fails_upstream":
                detail = f"needs {needs[0]}, missing from the clone (git object absent)"
        causes[tid] = cause
        reasons[tid] = f"{cause}: {detail}"[:500]
    crossing: list[str] = []
    suspects = [tid for tid, cause in causes.items() if cause == "fails_upstream"]
    if suspects:
        upstream = _upstream_outcomes(store, engine, jobs[0], suspects, hash_, cancelled,
                                      test_progress)
        if upstream is None:
            return None
        outcomes, ran = upstream
        done += ran
        crossing = [tid for tid in suspects if outcomes.get(tid) == "passed"]
        for tid in crossing:   # this tool's limit, not upstream's: never excluded for it
            causes[tid] = BOUNDARY
            del reasons[tid]
        for tid in suspects:
            if tid not in outcomes and ran:
                # no upstream run finished it (pyro's slowest RWS tests, alone, under
                # load): the evidence is that, not an upstream failure
                reasons[tid] = (f"fails_upstream: no run in the upstream checkout finished "
                                f"it (limit {jobs[0].limits.timeout_s:g} s); across the "
                                f"boundary: {reasons[tid].split(': ', 1)[1]}")[:500]
    with store.transaction():
        for tid, reason in reasons.items():
            add_excluded(store, problem.id, tid, reason, stamp)
    if crossing:
        tid = crossing[0]
        message = next(t.get("message", "") for t in failing[tid]
                       if t["outcome"] not in OK_OUTCOMES)
        return TriageResult(problem.id, False, (
            f"boundary: {tid} passes in the upstream checkout but fails every time with "
            f"{problem.entry_point} served across the judge/solution boundary: "
            f"{message}")[:500], causes, done)
    kept = [tid for tid, tests in per_test.items() if tid not in failing and
            any(t["outcome"] == "passed" for t in tests)]
    if not kept:
        return TriageResult(problem.id, False, _nothing_left(causes, reasons), causes, done)
    confirm = job_for(store, workspace, problem, problem.solution, "reference", limits)
    (last,) = _run_jobs(store, engine, [confirm], hash_, cancelled, test_progress) or [None]
    if last is None:
        return None
    done += 1
    if last.outcome != "passed":
        return TriageResult(problem.id, False, f"{last.outcome} with the failing tests "
                            f"excluded: {last.reason}", causes, done)
    return _stub_check(store, workspace, problem, engine, cancelled,
                       TriageResult(problem.id, True, causes=causes, runs=done), stub)


def _nothing_left_result(problem_id: str, rows: dict[str, str], runs: int) -> TriageResult:
    """Not green for want of tests: `rows`, node id -> "cause: message", are the
    problem's excluded tests (their causes as recorded; the four of triage kept)."""
    kept = {node: why.split(":", 1)[0].strip() for node, why in rows.items()}
    return TriageResult(problem_id, False, _nothing_left(kept, rows),
                        {k: v for k, v in kept.items() if v in CAUSES}, runs)


NOTHING_LEFT = "no test left"   # begins a triage reason
# What keeps a test from passing on this machine, not in the code: a machine with a GPU
# or the network would run the test, kept marked.
MACHINE_CAUSES = ("needs_gpu", "needs_network")


def _nothing_left(causes: dict[str, str], reasons: dict[str, str]) -> str:
    """Why a problem has no test left: how many of its tests went for each cause, and
    the first one's message (stanza's "3 needs_network" did not say that every one was a
    download of resources_1.9.0.json from raw.githubusercontent.com). `reasons`: node id
    -> "cause: message", the excluded tests' record."""
    tally = Counter(causes.values())
    reason = f"{NOTHING_LEFT}: " + ", ".join(f"{n} {c}" for c, n in sorted(tally.items()))
    node = next((n for n in sorted(causes) if reasons.get(n)), None)
    if node is None:
        return reason
    detail = " ".join(reasons[node].split(":", 1)[-1].split())
    if not detail.startswith(node.split("::", 1)[0] + ": "):   # a module's error names it
        detail = f"{node}: {detail}"
    return f"{reason} ({detail})"[:500]


def _timeout_reason(results: list[RunResult]) -> str:
    """Why a reference has no baseline: its runs did not finish within the limit (how
    many of them, how far the first got and its slowest test, to judge the limit by)."""
    slow = [r for r in results if r.outcome == "timeout"]
    tests = slow[0].tests
    failed = sum(t["outcome"] not in OK_OUTCOMES for t in tests)
    reason = (f"timeout: {slow[0].reason} in {len(slow)} of {len(results)} "
              f"run{'s' if len(results) > 1 else ''}, after {len(tests)} "
              f"test{'' if len(tests) == 1 else 's'} ({failed} failed)")
    if tests:
        top = max(tests, key=lambda t: t.get("duration_s") or 0.0)
        reason += f"; the slowest, {top['id']}, took {top.get('duration_s') or 0.0:.0f} s"
    return reason[:500]


STUB_PASSES = "the remaining tests pass with a stub of"   # begins a triage reason


def _stub_check(store: Store, workspace: Workspace, problem: Problem, engine: Engine,
                cancelled: CancelCheck | None, result: TriageResult,
                enabled: bool) -> TriageResult:
    if not enabled:
        return result
    text = stub_of(problem.solution, problem.entry_point)
    if text is None:
        return result
    job = job_for(store, workspace, problem, text, "sample")
    (run,) = list(engine.run([job], cancelled=cancelled)) or [None]
    if run is None:
        return result
    result.runs += 1
    if run.outcome == "passed":
        result.green = False
        # (also those a recipe excluded before the run: they ran deselected)
        causes = {row["node_id"]: row["reason"].split(":", 1)[0].strip()
                  for row in excluded(store, problem.id)
                  if is_triage_exclusion(row["reason"])}
        result.reason = (f"{STUB_PASSES} {problem.entry_point}: they do not exercise it"
                         f"{_skipped_note(run.tests)}"
                         f"{_excluded_note({**causes, **result.causes})}")[:500]
    return result


def skip_reason(test: dict) -> str:
    why = str(test.get("message") or "")
    why = why.partition("Skipped:")[2] or why
    return " ".join(why.strip().rstrip(")").strip("'\"").replace("\\n", " ").split())


def _all_skipped(tests: list[dict]) -> str:
    """Why a reference has no baseline when upstream skips every test it runs: how many
    tests went for each skip reason, the commonest first."""
    tally = Counter(skip_reason(t) for t in tests)
    whys = "; ".join(f"{n} {why[:120] or 'no reason given'}"
                     for why, n in sorted(tally.items(), key=lambda item: (-item[1], item[0])))
    return f"no test left: upstream skips all {len(tests)} ({whys})"[:500]


def _excluded_note(causes: dict[str, str]) -> str:
    """How many of a problem's tests were excluded, by cause: those may be the ones that
    exercise the function (pytorch3d's Rotate._get_matrix_inverse: only its tests on
    cuda:0 call it; Translate's: its one test on the CPU fails upstream, by 2.2e-8 against
    an atol of 1e-8)."""
    tally = Counter(c for c in causes.values() if c in CAUSES)
    if not tally:
        return ""
    excluded = ", ".join(f"{n} as {c}" for c, n in sorted(tally.items()))
    return f"; excluded {excluded}, which may be those that do"


def _skipped_note(tests: list[dict]) -> str:
    """How many of a run's tests were skipped and why the first was (pennylane's tests of
    an interface that is not installed: the ones that would have called the function)."""
    skipped = [t for t in tests if t["outcome"] == "skipped"]
    if not skipped:
        return ""
    why = skip_reason(skipped[0])
    return (f" ({len(skipped)} of {len(tests)} tests skipped"
            f"{': ' + why[:200] if why else ''})")
