"""Claiming samples to evaluate, so two evaluations of one workspace split the work.

A claim is a row in sample_claims (curator.store.sample_claims); INSERT OR IGNORE makes
the first claimant win, inside a short write transaction. A claim whose process is gone
(same host, pid not alive) or that is older than STALE_S is stale: the next claimant
deletes it and takes the sample.
"""

from __future__ import annotations

import os
import socket
import uuid
from datetime import UTC, datetime, timedelta

from curator.processes import pid_alive
from curator.store import Store, now
from curator.store import sample_claims as claim_rows

STALE_S = 6 * 3600


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
        rows = claim_rows.listed(self.store)
        stale = [r["sample_id"] for r in rows if r["claimed_at"] < cutoff or (
            r["host"] == self.host and r["pid"] != self.pid and not pid_alive(r["pid"]))]
        claim_rows.delete(self.store, stale)

    def claim(self, sample_ids: list[int]) -> set[int]:
        """Claim what nobody else holds; returns the ids this process now owns."""
        if not sample_ids:
            return set()
        stamp = now()
        with self.store.transaction():
            self._clear_stale()
            claim_rows.insert(self.store, sample_ids, self.owner, self.host, self.pid, stamp)
            mine = claim_rows.owned(self.store, self.owner)
        return mine & set(sample_ids)

    def release(self, sample_ids: list[int] | None = None) -> None:
        """Give back some claims (after their runs are recorded), or all of them."""
        with self.store.transaction():
            claim_rows.release(self.store, self.owner, sample_ids)
