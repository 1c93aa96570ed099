"""The `repos` table: mined repositories (identity, cache key, interpreter, pin date).

The only SQL on this table; curator.repos.identity decides identities, clones caches and
checks interpreters. Every change is audited.
"""

from __future__ import annotations

from curator.store import Store, now


def by_id(store: Store, repo_id: int) -> dict | None:
    return store.one("SELECT * FROM repos WHERE id = ?", (int(repo_id),))


def by_url(store: Store, url: str) -> dict | None:
    return store.one("SELECT * FROM repos WHERE url = ?", (url,))


def by_source(store: Store, source: str) -> dict | None:
    """The first repository registered from this local folder."""
    return store.one("SELECT * FROM repos WHERE source = ? ORDER BY id LIMIT 1", (source,))


def by_name(store: Store, name: str, suffix: bool = False) -> list[dict]:
    """Rows named exactly `name`, or (suffix) also ending in `/name`."""
    if suffix:
        return store.query("SELECT * FROM repos WHERE name = ? OR name LIKE ?",
                           (name, f"%/{name}"))
    return store.query("SELECT * FROM repos WHERE name = ?", (name,))


def insert(store: Store, url: str, name: str, cache_key: str) -> None:
    """Add a repository unless another process just did (same URL); audited."""
    stamp = now()
    with store.transaction():
        cursor = store.execute(
            "INSERT OR IGNORE INTO repos (url, name, cache_key, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?)", (url, name, cache_key, stamp, stamp))
        if cursor.rowcount:
            store.audit("repo", cursor.lastrowid, "create", after={"url": url})


def update(store: Store, row: dict, changes: dict) -> dict:
    """Set columns of one repository (audited per column); returns the row as stored."""
    changes = {k: v for k, v in changes.items() if row.get(k) != v}
    if changes:
        with store.transaction():
            sets = ", ".join(f"{k} = ?" for k in changes)
            store.execute(f"UPDATE repos SET {sets}, updated_at = ? WHERE id = ?",
                          (*changes.values(), now(), row["id"]))
            for key, value in changes.items():
                store.audit("repo", row["id"], "update", key, row.get(key), value)
    return by_id(store, row["id"])


def list_with_counts(store: Store) -> list[dict]:
    """Every repository with its candidate count and last mined commit."""
    return store.query(
        "SELECT r.*, (SELECT COUNT(*) FROM candidates c WHERE c.repo_id = r.id) AS candidates, "
        "(SELECT commit_sha FROM mined_commits m WHERE m.repo_id = r.id "
        " ORDER BY m.mined_at DESC LIMIT 1) AS last_commit "
        "FROM repos r ORDER BY r.name, r.id")
