"""Claiming samples to evaluate, so two evaluations of one workspace split the work.

A claim is a row in sample_claims; INSERT OR IGNORE makes the first claimant win, inside
a short write transaction. A claim whose process is gone (same host, pid not alive) or
that is older than STALE_S is stale: the next claimant deletes it and takes the sample.
"""

from __future__ import annotations

import os
import socket
import uuid
from datetime import UTC, datetime, timedelta

from curator.store import Store, now, pid_alive

STALE_S = 6 * 3600
CHUNK = 500


class Claims:
    """The claims of one evaluating process."""

    def __init__(self, store: Store):
        self.store = store
        self.host = socket.gethostname()
        self.pid = os.getpid()
        self.owner = f"{self.host}:{self.pid}:{uuid.uuid4().hex[:8]}"

    def _clear_stale(self) -> None:
        cutoff = (datetime.now(UTC) - timedelta(seconds=STALE_S)).isoformat(
            timespec="microseconds")
        rows = self.store.query("SELECT sample_id, host, pid, claimed_at FROM sample_claims")
        stale = [r["sample_id"] for r in rows if r["claimed_at"] < cutoff or (
            r["host"] == self.host and r["pid"] != self.pid and not pid_alive(r["pid"]))]
        for start in range(0, len(stale), CHUNK):
            part = stale[start:start + CHUNK]
            self.store.execute(f"DELETE FROM sample_claims WHERE sample_id IN "
                               f"({','.join('?' * len(part))})", part)

    def claim(self, sample_ids: list[int]) -> set[int]:
        """Claim what nobody else holds; returns the ids this process now owns."""
        if not sample_ids:
            return set()
        stamp = now()
        with self.store.transaction():
            self._clear_stale()
            self.store.conn.executemany(
                "INSERT OR IGNORE INTO sample_claims (sample_id, owner, host, pid, claimed_at) "
                "VALUES (?, ?, ?, ?, ?)",
                [(sid, self.owner, self.host, self.pid, stamp) for sid in sample_ids])
            mine = {r["sample_id"] for r in self.store.query(
                "SELECT sample_id FROM sample_claims WHERE owner = ?", (self.owner,))}
        return mine & set(sample_ids)

    def release(self, sample_ids: list[int] | None = None) -> None:
        """Give back some claims (after their runs are recorded), or all of them."""
        with self.store.transaction():
            if sample_ids is None:
                self.store.execute("DELETE FROM sample_claims WHERE owner = ?", (self.owner,))
                return
            for start in range(0, len(sample_ids), CHUNK):
                part = sample_ids[start:start + CHUNK]
                self.store.execute(
                    f"DELETE FROM sample_claims WHERE owner = ? AND sample_id IN "
                    f"({','.join('?' * len(part))})", [self.owner, *part])
