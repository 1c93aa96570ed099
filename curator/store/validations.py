"""The `validations` table: what `curator validate` found for a problem's current solution.

The only SQL on this table; curator.validity decides what a result holds.
"""

from __future__ import annotations

import json

from curator.store import Store, now


def _decode(row: dict | None) -> dict | None:
    if row is None:
        return None
    row["result"] = json.loads(row["result"])
    return row


def get(store: Store, problem_id: str, solution_hash: str) -> dict | None:
    """The stored validation of this solution of the problem, or None."""
    return _decode(store.one("SELECT * FROM validations WHERE problem_id = ? AND "
                             "solution_hash = ?", (problem_id, solution_hash)))


def current(store: Store, wanted: dict[str, tuple[str, str]]) -> dict[str, dict]:
    """problem id -> its stored validation, for {problem id: (solution hash, tests hash)};
    a validation of another solution or other tests is absent."""
    out = {}
    for row in store.query("SELECT * FROM validations"):
        key = wanted.get(row["problem_id"])
        if key is not None and (row["solution_hash"], row["tests_hash"]) == key:
            out[row["problem_id"]] = _decode(row)
    return out


def save(store: Store, problem_id: str, solution_hash: str, tests_hash: str,
         mutants_asked: int, repeat: int, result: dict) -> None:
    """Store (or replace) one validation, audited, in its own transaction."""
    flag = {True: 1, False: 0, None: None}
    values = (problem_id, solution_hash, tests_hash, mutants_asked, repeat,
              flag[result.get("discriminates")], flag[result.get("stable")],
              result.get("mutation_score"), json.dumps(result, sort_keys=True), now(),
              store.actor)
    with store.transaction():
        store.execute(
            "INSERT INTO validations (problem_id, solution_hash, tests_hash, mutants_asked, "
            "repeat, discriminates, stable, mutation_score, result, created_at, actor) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (problem_id, solution_hash) "
            "DO UPDATE SET tests_hash = excluded.tests_hash, "
            "mutants_asked = excluded.mutants_asked, repeat = excluded.repeat, "
            "discriminates = excluded.discriminates, stable = excluded.stable, "
            "mutation_score = excluded.mutation_score, result = excluded.result, "
            "created_at = excluded.created_at, actor = excluded.actor", values)
        store.audit("validation", problem_id, "create", after={
            "solution_hash": solution_hash, "tests_hash": tests_hash,
            "discriminates": result.get("discriminates"), "stable": result.get("stable"),
            "mutation_score": result.get("mutation_score")})


def invalid_ids(store: Store) -> set[str]:
    """Problems whose latest stored validation says a stub passes or the reference is
    flaky (the Problems table's `valid:no`)."""
    rows = store.query("SELECT v.problem_id, v.discriminates, v.stable FROM validations v "
                       "JOIN (SELECT problem_id, MAX(created_at) AS at FROM validations "
                       "GROUP BY problem_id) last ON last.problem_id = v.problem_id "
                       "AND last.at = v.created_at")
    return {r["problem_id"] for r in rows if r["discriminates"] == 0 or r["stable"] == 0}
