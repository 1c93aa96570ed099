"""The `repo_envs` table: the environment built for each upstream repository's tests.

The only SQL on this table; curator.repos.environments builds the environments. Rows come back
with `packages` and `preload` decoded (lists).
"""

from __future__ import annotations

import json

from curator.store import Store


def _decoded(row: dict) -> dict:
    for key in ("packages", "preload", "left_out", "missing"):
        row[key] = json.loads(row.get(key) or "[]")
    return row


def get(store: Store, repo_id: int) -> dict | None:
    """The environment of one repository, or None when none was built."""
    row = store.one("SELECT * FROM repo_envs WHERE repo_id = ?", (repo_id,))
    return None if row is None else _decoded(row)


def save(store: Store, record: dict, replaced: bool) -> None:
    """Store the environment of record["repo_id"] (`packages` and `preload` as lists),
    replacing the one built before (`replaced`); audited, in one transaction."""
    row = dict(record, packages=json.dumps(record["packages"]),
               preload=json.dumps(record["preload"]),
               left_out=json.dumps(record.get("left_out") or []),
               missing=json.dumps(record.get("missing") or []))
    with store.transaction():
        store.execute(f"INSERT OR REPLACE INTO repo_envs ({', '.join(row)}) VALUES "
                      f"({', '.join('?' * len(row))})", list(row.values()))
        store.audit("repo_env", record["repo_id"], "update" if replaced else "create",
                    after={"commit": record["commit_sha"], "key": record["key"],
                           "path": record["path"], "packages": len(record["packages"]),
                           "status": record.get("status", "built"),
                           "reason": record.get("reason", "")})


def list_with_repos(store: Store) -> list[dict]:
    """Every environment with its repository's repo_name, repo_url and registered
    interpreter (`registered`), by repository name."""
    rows = store.query("SELECT e.*, r.name AS repo_name, r.url AS repo_url, "
                       "r.python AS registered FROM repo_envs e JOIN repos r "
                       "ON r.id = e.repo_id ORDER BY r.name")
    return [_decoded(row) for row in rows]


def lock_for_url(store: Store, url: str) -> dict | None:
    """{lock, commit_sha, python_version, name} of the repository with this URL, or None."""
    return store.one("SELECT e.lock, e.commit_sha, e.python_version, r.name FROM repo_envs e "
                     "JOIN repos r ON r.id = e.repo_id WHERE r.url = ?", (url,))
