"""The `taxonomy_versions` table: every bug-taxonomy document ever used, by version.

The only SQL on this table; curator.taxonomy validates documents and builds Taxonomy
objects from these rows.
"""

from __future__ import annotations

from curator.store import Store, now


def latest(store: Store) -> dict | None:
    """{version, sha256, body} of the highest version, or None when there is none."""
    return store.one("SELECT version, sha256, body FROM taxonomy_versions "
                     "ORDER BY version DESC LIMIT 1")


def get(store: Store, version: int) -> dict | None:
    return store.one("SELECT version, body FROM taxonomy_versions WHERE version = ?",
                     (version,))


def insert(store: Store, version: int, sha256: str, body: str, source: str) -> None:
    """Add a version (audited); call inside a transaction."""
    store.execute(
        "INSERT INTO taxonomy_versions (version, sha256, body, source, created_at, "
        "created_by) VALUES (?, ?, ?, ?, ?, ?)",
        (version, sha256, body, source, now(), store.actor))
    store.audit("taxonomy", str(version), "create", after={"source": source, "sha256": sha256})


def listing(store: Store) -> list[dict]:
    return store.query("SELECT version, source, created_at, created_by FROM taxonomy_versions "
                       "ORDER BY version")
