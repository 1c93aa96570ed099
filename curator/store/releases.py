"""The `releases` and `release_problems` tables: every bundle built here and what it held.

The only SQL on these tables; curator.release.bundle builds the bundles and marks their
problems released.
"""

from __future__ import annotations

from curator.store import Store, now


def listing(store: Store, name: str | None = None) -> list[dict]:
    """name, version, out_dir, archive_sha256, problem_count, built_at; newest first."""
    sql = "SELECT name, version, out_dir, archive_sha256, problem_count, built_at FROM releases"
    return store.query(sql + (" WHERE name = ?" if name else "") + " ORDER BY id DESC",
                       (name,) if name else ())


def get(store: Store, name: str, version: str) -> dict | None:
    """{id, archive_sha256} of the release built under this name and version, or None."""
    return store.one("SELECT id, archive_sha256 FROM releases WHERE name = ? AND "
                     "version = ?", (name, version))


def insert(store: Store, name: str, version: str, archive_sha256: str, allow_failing: bool,
           manifest: str, out_dir: str, problems: list[tuple[str, str]]) -> int:
    """Record a release and its (problem id, content sha256) pairs; returns its id.

    The caller holds the transaction and writes the audit row.
    """
    cursor = store.execute(
        "INSERT INTO releases (name, version, archive_sha256, problem_count, "
        "allow_failing, manifest, out_dir, built_at, actor) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (name, version, archive_sha256, len(problems), int(bool(allow_failing)), manifest,
         out_dir, now(), store.actor))
    release_id = cursor.lastrowid
    store.conn.executemany(
        "INSERT INTO release_problems (release_id, problem_id, content_sha256) "
        "VALUES (?, ?, ?)", [(release_id, pid, sha) for pid, sha in problems])
    return release_id
