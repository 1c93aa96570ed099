"""Latest run outcomes of samples and references (the `runs` table, curator.store.runs).

"Latest" is the run with the highest id. An `infra` outcome says the harness failed, not
the solution, so it never counts as a sample's result (the sample is evaluated again).
"""

from __future__ import annotations

from curator.store import Store
from curator.store import runs as run_rows

PASSED = "passed"
INFRA = "infra"
PENDING = "pending"  # a sample with no usable run yet


def reference_outcomes(store: Store) -> dict[str, str]:
    """problem id -> outcome of its latest reference run (problems never run are absent)."""
    return run_rows.reference_outcomes(store)


def sample_runs(store: Store, sample_ids: list[int] | None = None) -> dict[int, dict]:
    """sample id -> its latest non-infra run row (samples without one are absent)."""
    return run_rows.latest_sample_runs(store, sample_ids)


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
