"""The `candidate_assignments` and `candidate_votes` tables: a panel reviewing candidates.

The only SQL on these tables; curator.panel.candidates applies the acceptance rule and
audits every vote.
"""

from __future__ import annotations

from curator.store import Store


def assignments(store: Store) -> dict[int, list[str]]:
    """candidate id -> its reviewers, in name order."""
    out: dict[int, list[str]] = {}
    for row in store.query("SELECT candidate_id, reviewer FROM candidate_assignments "
                           "ORDER BY candidate_id, reviewer"):
        out.setdefault(row["candidate_id"], []).append(row["reviewer"])
    return out


def assign(store: Store, candidate_id: int, reviewer: str, assigned_at: str) -> None:
    """Give one candidate to one reviewer (inside the caller's transaction)."""
    store.execute(
        "INSERT INTO candidate_assignments (candidate_id, reviewer, assigned_at, "
        "assigned_by) VALUES (?, ?, ?, ?)", (candidate_id, reviewer, assigned_at, store.actor))


def votes(store: Store, candidate_id: int | None = None) -> list[dict]:
    """Votes {candidate_id, reviewer, relevant (0/1), reason, voted_at} (of one candidate)."""
    if candidate_id is not None:
        return store.query("SELECT * FROM candidate_votes WHERE candidate_id = ? "
                           "ORDER BY reviewer", (int(candidate_id),))
    return store.query("SELECT * FROM candidate_votes ORDER BY candidate_id, reviewer")


def vote(store: Store, candidate_id: int, reviewer: str) -> dict | None:
    return store.one("SELECT * FROM candidate_votes WHERE candidate_id = ? AND reviewer = ?",
                     (int(candidate_id), reviewer))


def upsert_vote(store: Store, candidate_id: int, reviewer: str, relevant: bool, reason: str,
                voted_at: str) -> dict:
    store.execute(
        "INSERT INTO candidate_votes (candidate_id, reviewer, relevant, reason, voted_at) "
        "VALUES (?, ?, ?, ?, ?) ON CONFLICT (candidate_id, reviewer) DO UPDATE SET "
        "relevant = excluded.relevant, reason = excluded.reason, voted_at = excluded.voted_at",
        (int(candidate_id), reviewer, int(bool(relevant)), reason, voted_at))
    return vote(store, candidate_id, reviewer)
