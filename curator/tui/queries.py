"""What the app's screens read, shaped for them; the SQL is in curator.store. No textual here."""

from __future__ import annotations

from curator import runs
from curator.store import Store
from curator.store import candidates as candidate_store
from curator.validity import validate as validity


def last_outcomes(store: Store) -> dict[str, str]:
    """problem id -> outcome of its latest reference run."""
    return {pid: row["outcome"] for pid, row in runs.latest(store, "reference").items()}


def validity_states(store: Store) -> dict[str, str]:
    """problem id -> "yes", "no" or "" (not validated): the Problems filter's `valid:`."""
    return validity.states(store)


def validity_of(store: Store, problem_id: str):
    """The stored validation of the problem's current solution and tests, or None."""
    from curator.store import problems as problem_store
    return validity.stored(store, problem_store.get(store, problem_id))


def run_history(store: Store, problem_id: str, limit: int = 100) -> list[dict]:
    """Runs of this problem, newest first (tests and env decoded)."""
    return runs.history(store, problem_id, limit)


def label_suggestions(store: Store, problem_id: str) -> list[dict]:
    """Mined label suggestions for a problem, one per (axis, slug), strongest first:
    [{axis, slug, score, reason}] where score sums the weights of the rules that fired.
    """
    rows = candidate_store.suggestions_as_stored(store, problem_id)
    merged: dict[tuple[str, str], dict] = {}
    for row in rows:
        entry = merged.setdefault((row["axis"], row["slug"]), {
            "axis": row["axis"], "slug": row["slug"], "score": 0.0, "reasons": []})
        entry["score"] += float(row["weight"] or 0)
        if row["reason"]:
            entry["reasons"].append(row["reason"])
    result = []
    for entry in sorted(merged.values(), key=lambda e: -e["score"]):
        result.append({"axis": entry["axis"], "slug": entry["slug"],
                       "score": round(entry["score"], 3),
                       "reason": "; ".join(entry.pop("reasons"))})
    return result
