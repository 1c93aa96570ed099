"""The `review_assignments` table: which annotator reviews which sample.

The only SQL on this table; curator.review.queue decides the assignment and audits it.
"""

from __future__ import annotations

from curator.store import Store


def by_sample(store: Store) -> dict[int, list[str]]:
    """sample id -> its annotators, in name order."""
    out: dict[int, list[str]] = {}
    for row in store.query("SELECT sample_id, annotator FROM review_assignments "
                           "ORDER BY sample_id, annotator"):
        out.setdefault(row["sample_id"], []).append(row["annotator"])
    return out


def insert(store: Store, sample_id: int, annotator: str, overlap: bool,
           assigned_at: str) -> None:
    """Give one sample to one annotator (inside the caller's transaction; not audited)."""
    store.execute(
        "INSERT INTO review_assignments (sample_id, annotator, overlap, "
        "assigned_at, assigned_by) VALUES (?, ?, ?, ?, ?)",
        (sample_id, annotator, int(overlap), assigned_at, store.actor))
