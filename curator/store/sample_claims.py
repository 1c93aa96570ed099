"""The `sample_claims` table: which evaluating process runs which sample.

The only SQL on this table; curator.evaluation.claims decides which claims are stale and
holds the transaction around each step (the first claimant wins: INSERT OR IGNORE).
"""

from __future__ import annotations

from curator.store import Store

CHUNK = 500     # sample ids per statement (SQLite limits the number of parameters)


def listed(store: Store) -> list[dict]:
    """Every claim: sample_id, host, pid, claimed_at."""
    return store.query("SELECT sample_id, host, pid, claimed_at FROM sample_claims")


def delete(store: Store, sample_ids: list[int]) -> None:
    """Drop the claims on these samples, whoever holds them."""
    for start in range(0, len(sample_ids), CHUNK):
        part = sample_ids[start:start + CHUNK]
        store.execute(f"DELETE FROM sample_claims WHERE sample_id IN "
                      f"({','.join('?' * len(part))})", part)


def insert(store: Store, sample_ids: list[int], owner: str, host: str, pid: int,
           stamp: str) -> None:
    """Claim the samples nobody holds yet (one held by another claimant stays theirs)."""
    store.conn.executemany(
        "INSERT OR IGNORE INTO sample_claims (sample_id, owner, host, pid, claimed_at) "
        "VALUES (?, ?, ?, ?, ?)",
        [(sid, owner, host, pid, stamp) for sid in sample_ids])


def owned(store: Store, owner: str) -> set[int]:
    """The samples this claimant holds."""
    return {r["sample_id"] for r in store.query(
        "SELECT sample_id FROM sample_claims WHERE owner = ?", (owner,))}


def release(store: Store, owner: str, sample_ids: list[int] | None = None) -> None:
    """Drop this claimant's claims on these samples, or all of them (None)."""
    if sample_ids is None:
        store.execute("DELETE FROM sample_claims WHERE owner = ?", (owner,))
        return
    for start in range(0, len(sample_ids), CHUNK):
        part = sample_ids[start:start + CHUNK]
        store.execute(
            f"DELETE FROM sample_claims WHERE owner = ? AND sample_id IN "
            f"({','.join('?' * len(part))})", [owner, *part])
