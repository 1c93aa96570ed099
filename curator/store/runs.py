"""The `runs` table: one row per run of a reference solution or a sample.

A run marked `unsaved` ran edits not saved yet (ctrl+r in the app): it shows in the
problem's history but never stands for the reference (ready, gates, baselines, timeouts,
scoring), so every reference query here leaves it out.

Each function here is the only SQL on `runs`; curator.runs builds and schedules the jobs.
"""

from __future__ import annotations

import hashlib
import json

from curator.errors import CuratorError, NotFoundError
from curator.execution import verdict
from curator.execution.job import RunResult
from curator.problem import Problem
from curator.store import Store, now
from curator.timestamps import parse_or_none

SOLUTION_KINDS = ("reference", "sample")


def solution_hash(solution: str) -> str:
    return hashlib.sha256(solution.encode("utf-8")).hexdigest()


def reference_time(store: Store, problem_id: str, since: str | None = None,
                   node_ids: list[str] | None = None) -> float | None:
    """How long the latest passing reference run of this problem took on this machine;
    with `since` (a timestamp: when its repository's environment was built), a run that
    started before counts for nothing (it ran other libraries, maybe other tests); with
    `node_ids` (the tests the next run runs), neither does a run that ran none of one of
    them: the problem's tests changed since (tests added to a problem a stub passed:
    Laplace's `laplace` was timed on 3 tests, then given 169)."""
    rows = store.query(
        "SELECT duration_s, started_at, tests FROM runs WHERE problem_id = ? AND "
        "solution_kind = 'reference' AND unsaved = 0 AND outcome = 'passed' "
        "ORDER BY id DESC LIMIT 1", (problem_id,))
    if not rows:
        return None
    if since is not None:
        started, built = parse_or_none(rows[0]["started_at"]), parse_or_none(since)
        if started is not None and built is not None and started < built:
            return None
    if node_ids and not _ran_all(node_ids, rows[0]["tests"]):
        return None
    return rows[0]["duration_s"]


def _ran_all(node_ids: list[str], tests: str | None) -> bool:
    """Whether a run's tests (its stored JSON) include some of each node id."""
    try:
        ran = [t.get("id") for t in json.loads(tests or "[]") if isinstance(t, dict)]
    except (TypeError, ValueError):
        return False
    ran = [t for t in ran if isinstance(t, str)]

    def covered(node: str) -> bool:
        node = node.rstrip("/")
        return any(t == node or t.startswith((node + "::", node + "[", node + "/"))
                   for t in ran)

    return all(covered(n) for n in node_ids)


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


def add_excluded(store: Store, problem_id: str, node_id: str, reason: str, stamp: str) -> None:
    """Leave one upstream test out of a problem, saying why; audited, inside the caller's
    transaction."""
    store.execute("INSERT INTO excluded_tests (problem_id, node_id, reason, actor, "
                  "created_at) VALUES (?, ?, ?, ?, ?)",
                  (problem_id, node_id, reason, store.actor, stamp))
    store.audit("excluded_test", f"{problem_id}::{node_id}", "create",
                after={"problem_id": problem_id, "node_id": node_id, "reason": reason})


def remove_excluded(store: Store, problem_id: str, node_id: str) -> None:
    """Put one upstream test back into a problem; audited, inside the caller's transaction."""
    store.execute("DELETE FROM excluded_tests WHERE problem_id = ? AND node_id = ?",
                  (problem_id, node_id))
    store.audit("excluded_test", f"{problem_id}::{node_id}", "delete",
                before={"problem_id": problem_id, "node_id": node_id})


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
           sample_id: int | None = None, started_at: str | None = None,
           unsaved: bool = False, external: str | None = None) -> int:
    """Store one run (and its audit row); returns the run id.

    unsaved: a run of edits not saved yet (shown in history, never the reference's result).
    external: where the outcome was judged when not here (e.g. "dlbench-taxonomy"); such
    a run is never a baseline.
    """
    if solution_kind not in SOLUTION_KINDS:
        raise CuratorError(f"solution kind {solution_kind!r} must be one of "
                           f"{', '.join(SOLUTION_KINDS)}")
    result = result.cleaned()   # a run's texts may hold surrogates, NULs, invalid UTF-8
    row = {
        "problem_id": result.problem_id, "solution_kind": solution_kind,
        "solution_hash": solution_hash, "sample_id": sample_id, "outcome": result.outcome,
        "tests": json.dumps(result.tests), "duration_s": result.duration_s,
        "stdout": result.stdout, "stderr": result.stderr, "reason": result.reason,
        "env": json.dumps(_env_with_evidence(result), sort_keys=True),
        "timeout_s": result.timeout_s,
        "started_at": started_at or now(), "actor": store.actor, "job_id": result.job_id,
    }
    if unsaved:
        row["unsaved"] = 1
    if external:
        row["external"] = external
    with store.transaction():
        cursor = store.execute(
            f"INSERT INTO runs ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
            list(row.values()))
        run_id = cursor.lastrowid
        if solution_kind == "reference" and result.outcome == "passed" and not unsaved \
                and not external:
            _store_baseline(store, run_id, result, solution_hash)
        store.audit("run", run_id, "create", after={
            "problem_id": result.problem_id, "solution_kind": solution_kind,
            "solution_hash": solution_hash, "sample_id": sample_id,
            "outcome": result.outcome, "job_id": result.job_id,
            **({"unsaved": True} if unsaved else {}),
            **({"external": external} if external else {})})
    return run_id


def _env_with_evidence(result: RunResult) -> dict:
    # What a `tampered` run tried is kept with the run's environment (the runs table has
    # no column of its own for it); readers get it back as row["evidence"].
    env = dict(result.env or {})
    if result.evidence:
        env["evidence"] = list(result.evidence)
    return env


def _decode(row: dict) -> dict:
    for key in ("tests", "env"):
        if isinstance(row.get(key), str):
            row[key] = json.loads(row[key])
    env = row.get("env") if isinstance(row.get("env"), dict) else {}
    row["evidence"] = list(env.pop("evidence", None) or [])
    return row


def get(store: Store, run_id: int) -> dict:
    row = store.one("SELECT * FROM runs WHERE id = ?", (run_id,))
    if row is None:
        raise NotFoundError(f"run {run_id} not found")
    return _decode(row)


def latest(store: Store, solution_kind: str = "reference") -> dict[str, dict]:
    """problem id -> its latest run of that kind (the Problems table's "last run")."""
    rows = store.query(
        "SELECT r.* FROM runs r JOIN (SELECT problem_id, MAX(id) AS id FROM runs "
        "WHERE solution_kind = ? AND unsaved = 0 GROUP BY problem_id) last "
        "ON last.id = r.id",
        (solution_kind,))
    return {row["problem_id"]: _decode(row) for row in rows}


def reference_passes(store: Store, problem: Problem) -> bool:
    """Whether the latest reference run of the problem's current solution passed."""
    row = store.one(
        "SELECT outcome FROM runs WHERE problem_id = ? AND solution_kind = 'reference' "
        "AND unsaved = 0 AND solution_hash = ? AND outcome != 'infra' "
        "ORDER BY id DESC LIMIT 1",
        (problem.id, solution_hash(problem.solution)))
    return row is not None and row["outcome"] == "passed"


def history(store: Store, problem_id: str, limit: int = 100) -> list[dict]:
    """Runs of one problem, newest first."""
    rows = store.query("SELECT * FROM runs WHERE problem_id = ? ORDER BY id DESC LIMIT ?",
                       (problem_id, limit))
    return [_decode(row) for row in rows]


def recorded(store: Store, problem: Problem) -> int:
    """Runs (not infra) of this problem's current reference solution."""
    return store.one(
        "SELECT COUNT(*) AS n FROM runs WHERE problem_id = ? AND solution_kind = 'reference' "
        "AND unsaved = 0 AND solution_hash = ? AND outcome != 'infra'",
        (problem.id, solution_hash(problem.solution)))["n"]


# -- latest outcomes (evaluation, review, release) ------------------------------------------


def reference_outcomes(store: Store) -> dict[str, str]:
    """problem id -> outcome of its latest reference run (problems never run are absent)."""
    rows = store.query(
        "SELECT r.problem_id, r.outcome FROM runs r JOIN ("
        "  SELECT problem_id, MAX(id) AS id FROM runs WHERE solution_kind = 'reference' "
        "  AND unsaved = 0 "
        "  GROUP BY problem_id) last ON last.id = r.id")
    return {r["problem_id"]: r["outcome"] for r in rows}


def latest_sample_runs(store: Store, sample_ids: list[int] | None = None) -> dict[int, dict]:
    """sample id -> its latest non-infra run row, as stored (tests and env JSON text);
    samples without one are absent. sample_ids: only these samples."""
    rows = store.query(
        "SELECT r.* FROM runs r JOIN ("
        "  SELECT sample_id, MAX(id) AS id FROM runs "
        "  WHERE sample_id IS NOT NULL AND outcome != 'infra' GROUP BY sample_id"
        ") last ON last.id = r.id")
    wanted = None if sample_ids is None else set(sample_ids)
    return {r["sample_id"]: r for r in rows if wanted is None or r["sample_id"] in wanted}


def samples_with_outcome(store: Store, sample_ids: list[int]) -> set[int]:
    """Those of the samples that have a run whose outcome is not infra."""
    out: set[int] = set()
    for start in range(0, len(sample_ids), 500):
        part = sample_ids[start:start + 500]
        out |= {r["sample_id"] for r in store.query(
            f"SELECT DISTINCT sample_id FROM runs WHERE outcome != 'infra' AND sample_id IN "
            f"({','.join('?' * len(part))})", part)}
    return out


def current_reference_runs(store: Store, problems: list[Problem]) -> dict[str, list[dict]]:
    """problem id -> reference runs of its current solution, oldest first.

    Rows hold id, problem_id, solution_hash, outcome, started_at, tests (JSON text), reason.
    """
    if not problems:
        return {}
    wanted = {p.id: solution_hash(p.solution) for p in problems}
    out: dict[str, list[dict]] = {}
    for row in store.query(
            "SELECT id, problem_id, solution_hash, outcome, started_at, tests, reason "
            "FROM runs WHERE solution_kind = 'reference' AND unsaved = 0 ORDER BY id"):
        if wanted.get(row["problem_id"]) == row["solution_hash"]:
            out.setdefault(row["problem_id"], []).append(row)
    return out


def stored_rows(store: Store, run_ids: list[int]) -> dict[int, dict]:
    """run id -> its row exactly as stored (tests and env still JSON text, evidence in env)."""
    out = {}
    for start in range(0, len(run_ids), 500):
        chunk = run_ids[start:start + 500]
        for run in store.query(f"SELECT * FROM runs WHERE id IN ({','.join('?' * len(chunk))})",
                               chunk):
            out[run["id"]] = run
    return out
