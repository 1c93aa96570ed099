"""The `mined_commits` table: each commit of a repository that was mined or pinned.

The only SQL on this table; curator.mining.mine decides what a mined commit's summary
holds and audits it, curator.repos.environments builds environments at the latest one.
"""

from __future__ import annotations

import json

from curator.store import Store, now


def get(store: Store, repo_id: int | None, commit_sha: str) -> dict | None:
    """The row of this commit of the repository, when it was mined."""
    return store.one("SELECT * FROM mined_commits WHERE repo_id = ? AND commit_sha = ?",
                     (repo_id, commit_sha))


def latest(store: Store, repo_id: int) -> str | None:
    """The commit of the repository mined last, or None when none was."""
    row = store.one("SELECT commit_sha FROM mined_commits WHERE repo_id = ? "
                    "ORDER BY mined_at DESC LIMIT 1", (repo_id,))
    return row["commit_sha"] if row else None


def record(store: Store, repo_id: int, commit_sha: str, rev: str | None, license: str,
           summary: dict, all_candidates: bool = False, mined_at: str | None = None) -> None:
    """Record (or replace) one mined commit; inside the caller's transaction."""
    store.execute(
        "INSERT OR REPLACE INTO mined_commits (repo_id, commit_sha, rev, all_candidates, "
        "license, summary, mined_at, actor) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (repo_id, commit_sha, rev, int(all_candidates), license, json.dumps(summary),
         mined_at or now(), store.actor))
