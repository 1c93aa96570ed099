"""The `mined_commits` table: each commit of a repository that was mined or pinned.

The only SQL on this table for the release package; curator.release.resolve pins DL-Bench
drafts to a commit and records it here as mining does.
"""

from __future__ import annotations

import json

from curator.store import Store, now


def record(store: Store, repo_id: int, commit_sha: str, rev: str | None, license: str,
           summary: dict, all_candidates: bool = False) -> None:
    """Record (or replace) one repository commit; inside the caller's transaction."""
    store.execute(
        "INSERT OR REPLACE INTO mined_commits (repo_id, commit_sha, rev, all_candidates, "
        "license, summary, mined_at, actor) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (repo_id, commit_sha, rev, int(all_candidates), license, json.dumps(summary), now(),
         store.actor))
