"""Read-only queries the app needs beyond curator.store. No textual here.

Every table exists once the store has migrated the database, so nothing here checks.
"""

from __future__ import annotations

from curator import runs
from curator.store import Store


def last_outcomes(store: Store) -> dict[str, str]:
    """problem id -> outcome of its latest reference run."""
    return {pid: row["outcome"] for pid, row in runs.latest(store, "reference").items()}


def run_history(store: Store, problem_id: str, limit: int = 100) -> list[dict]:
    """Runs of this problem, newest first (tests and env decoded)."""
    return runs.history(store, problem_id, limit)


def label_suggestions(store: Store, problem_id: str) -> list[dict]:
    """Mined label suggestions for a problem, one per (axis, slug), strongest first:
    [{axis, slug, score, reason}] where score sums the weights of the rules that fired.

    Reads the mining table label_suggestions.
    """
    rows = store.query(
        "SELECT axis, slug, weight, rule || ': ' || evidence AS reason FROM label_suggestions "
        "WHERE problem_id = ? ORDER BY id", (problem_id,))
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


def label_counts(store: Store) -> dict[str, dict[str, int]]:
    """axis -> slug ('' for unset) -> number of problems, retired problems left out."""
    counts: dict[str, dict[str, int]] = {}
    for axis in ("stage", "task", "data"):
        rows = store.query(
            f"SELECT {axis} AS slug, COUNT(*) AS n FROM problems "
            f"WHERE status != 'retired' GROUP BY {axis}")
        counts[axis] = {row["slug"]: row["n"] for row in rows}
    return counts


def status_counts(store: Store) -> dict[str, int]:
    rows = store.query("SELECT status, COUNT(*) AS n FROM problems GROUP BY status")
    return {row["status"]: row["n"] for row in rows}


def find_problems(store: Store, text: str, limit: int = 20) -> list[dict]:
    """Problems whose id or title contains `text` (for "go to problem ...")."""
    like = f"%{text.strip()}%"
    return store.query(
        "SELECT id, title FROM problems WHERE id LIKE ? OR title LIKE ? ORDER BY id LIMIT ?",
        (like, like, limit))
