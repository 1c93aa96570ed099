"""Latest run outcomes of samples and references, read from the `runs` table.

"Latest" is the run with the highest id. An `infra` outcome says the harness failed, not
the solution, so it never counts as a sample's result (the sample is evaluated again).
"""

from __future__ import annotations

from curator.store import Store

PASSED = "passed"
INFRA = "infra"
PENDING = "pending"  # a sample with no usable run yet


def reference_outcomes(store: Store) -> dict[str, str]:
    """problem id -> outcome of its latest reference run (problems never run are absent)."""
    rows = store.query(
        "SELECT r.problem_id, r.outcome FROM runs r JOIN ("
        "  SELECT problem_id, MAX(id) AS id FROM runs WHERE solution_kind = 'reference' "
        "  AND unsaved = 0 "
        "  GROUP BY problem_id) last ON last.id = r.id")
    return {r["problem_id"]: r["outcome"] for r in rows}


def sample_runs(store: Store, sample_ids: list[int] | None = None) -> dict[int, dict]:
    """sample id -> its latest non-infra run row (samples without one are absent)."""
    sql = ("SELECT r.* FROM runs r JOIN ("
           "  SELECT sample_id, MAX(id) AS id FROM runs "
           "  WHERE sample_id IS NOT NULL AND outcome != 'infra' GROUP BY sample_id"
           ") last ON last.id = r.id")
    rows = store.query(sql)
    wanted = None if sample_ids is None else set(sample_ids)
    return {r["sample_id"]: r for r in rows if wanted is None or r["sample_id"] in wanted}


def sample_outcomes(store: Store) -> dict[int, str]:
    return {sid: row["outcome"] for sid, row in sample_runs(store).items()}


def excluded_problems(store: Store, problem_ids) -> dict[str, str]:
    """problem id -> why it is excluded from scores and review (reference does not pass)."""
    refs = reference_outcomes(store)
    out = {}
    for pid in problem_ids:
        outcome = refs.get(pid)
        if outcome is None:
            out[pid] = "reference never run"
        elif outcome != PASSED:
            out[pid] = f"reference {outcome}"
    return out
