"""Versioned schema migrations: db/migrations/NNNN_name.sql, tracked in PRAGMA user_version."""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from curator.errors import StoreError

_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str


def _migration_files() -> list[tuple[str, str]]:
    try:
        folder = resources.files("curator._migrations")
        files = [(f.name, f.read_text(encoding="utf-8")) for f in folder.iterdir()
                 if f.name.endswith(".sql")]
    except (ModuleNotFoundError, FileNotFoundError, TypeError):
        files = []
    if not files:  # running from a source tree without an install
        folder = Path(__file__).resolve().parents[2] / "db" / "migrations"
        files = [(p.name, p.read_text(encoding="utf-8")) for p in folder.glob("*.sql")]
    return files


def all_migrations() -> list[Migration]:
    migrations = []
    for name, sql in _migration_files():
        match = _NAME.match(name)
        if match:
            migrations.append(Migration(int(match.group(1)), name, sql))
    migrations.sort(key=lambda m: m.version)
    versions = [m.version for m in migrations]
    if len(set(versions)) != len(versions):
        raise StoreError(f"two migrations share a version number: {versions}")
    return migrations


def latest_version() -> int:
    migrations = all_migrations()
    return migrations[-1].version if migrations else 0


def split_statements(sql: str) -> list[str]:
    """Split a script into statements; trigger bodies with inner semicolons stay whole."""
    statements, buffer = [], ""
    for line in sql.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                statements.append(buffer.strip())
            buffer = ""
    if buffer.strip() and not all(
        ln.strip().startswith("--") or not ln.strip() for ln in buffer.splitlines()
    ):
        raise StoreError(f"incomplete SQL statement at end of migration: {buffer.strip()[:60]}")
    return statements


def current_version(conn: sqlite3.Connection) -> int:
    return conn.execute("PRAGMA user_version").fetchone()[0]


def migrate(conn: sqlite3.Connection, target: int | None = None, path: str = "") -> int:
    """Apply every migration above the database's version, each in its own transaction.

    The connection must be in autocommit mode (isolation_level=None).
    """
    migrations = all_migrations()
    newest = migrations[-1].version if migrations else 0
    target = newest if target is None else target
    version = current_version(conn)
    if version > newest:
        raise StoreError(
            f"{path or 'database'}: schema version {version} is newer than this curator "
            f"understands ({newest}); upgrade curator")
    for migration in migrations:
        if migration.version > target:
            break
        if migration.version <= version:
            continue  # already applied: opening a current database takes no write lock
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Re-read inside the write lock: another process may have migrated meanwhile.
            if current_version(conn) >= migration.version:
                conn.execute("ROLLBACK")
                continue
            for statement in split_statements(migration.sql):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {migration.version}")
            conn.execute("COMMIT")
        except Exception as exc:
            conn.execute("ROLLBACK")
            raise StoreError(f"{path or 'database'}: migration {migration.name} failed: {exc}")
    return current_version(conn)
