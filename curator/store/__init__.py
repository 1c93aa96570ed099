"""The workspace database: SQLite through sqlite-utils, migrated, audited, shared safely."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlite_utils

from curator.errors import StoreError
from curator.labels import DEFAULT_LABELS
from curator.store.migrations import migrate
from curator.timestamps import now

BUSY_TIMEOUT_MS = 30_000


def _json(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


class Store:
    """One connection to the workspace database, acting as one person (the actor)."""

    def __init__(self, path: str | Path, actor: str = "unknown", *, migrate_schema: bool = True):
        self.path = Path(path)
        self.actor = actor
        if self.path.is_dir():
            raise StoreError(f"{self.path}: is a folder, not a database file")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            conn = sqlite3.connect(str(self.path), timeout=BUSY_TIMEOUT_MS / 1000,
                                   isolation_level=None, check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA foreign_keys = ON")
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            conn.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: cannot open database: {exc}") from None
        self.conn = conn
        self.journal_mode = mode
        self.db = sqlite_utils.Database(conn)
        self._depth = 0
        if migrate_schema:
            try:
                migrate(conn, path=str(self.path))
            except sqlite3.DatabaseError as exc:
                conn.close()
                raise StoreError(f"{self.path}: not a usable database: {exc}") from None
            except StoreError:
                conn.close()
                raise
            self._seed_labels()

    # -- plumbing ---------------------------------------------------------------

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[Store]:
        """A write transaction (BEGIN IMMEDIATE); nested calls join the outer one."""
        if self._depth:
            self._depth += 1
            try:
                yield self
            finally:
                self._depth -= 1
            return
        self.conn.execute("BEGIN IMMEDIATE")
        self._depth = 1
        try:
            yield self
        except BaseException:
            self._depth = 0
            self.conn.execute("ROLLBACK")
            raise
        self._depth = 0
        self.conn.execute("COMMIT")

    def query(self, sql: str, params: Any = ()) -> list[dict]:
        return list(self.db.query(sql, params))

    def one(self, sql: str, params: Any = ()) -> dict | None:
        rows = self.query(sql, params)
        return rows[0] if rows else None

    def execute(self, sql: str, params: Any = ()) -> sqlite3.Cursor:
        return self.conn.execute(sql, params)

    # -- audit --------------------------------------------------------------------

    def audit(self, entity: str, entity_id: str, action: str, field: str | None = None,
              before: Any = None, after: Any = None) -> None:
        """Append one row to the audit log. Call inside the mutation's transaction."""
        self.conn.execute(
            "INSERT INTO audit (at, actor, entity, entity_id, action, field, before, after) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (now(), self.actor, entity, str(entity_id), action, field, _json(before), _json(after)),
        )

    def history(self, entity: str, entity_id: str) -> list[dict]:
        return self.query(
            "SELECT * FROM audit WHERE entity = ? AND entity_id = ? ORDER BY id",
            (entity, str(entity_id)))

    # -- label vocabularies ------------------------------------------------------

    def _seed_labels(self) -> None:
        if self.one("SELECT 1 AS x FROM labels LIMIT 1"):
            return
        with self.transaction():
            for position, label in enumerate(DEFAULT_LABELS):
                self.execute(
                    "INSERT OR IGNORE INTO labels (axis, slug, name, definition, position) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (label.axis, label.slug, label.name, label.definition, position))

    def labels(self, axis: str | None = None) -> list[dict]:
        if axis:
            return self.query("SELECT * FROM labels WHERE axis = ? ORDER BY position", (axis,))
        return self.query("SELECT * FROM labels ORDER BY position")

    def set_label_text(self, axis: str, slug: str, name: str | None = None,
                       definition: str | None = None) -> None:
        row = self.one("SELECT * FROM labels WHERE axis = ? AND slug = ?", (axis, slug))
        if row is None:
            raise StoreError(f"unknown {axis} label {slug!r}")
        with self.transaction():
            for field, value in (("name", name), ("definition", definition)):
                if value is not None and value != row[field]:
                    self.execute(f"UPDATE labels SET {field} = ? WHERE axis = ? AND slug = ?",
                                 (value, axis, slug))
                    self.audit("label", f"{axis}/{slug}", "update", field, row[field], value)


def open_store(path: str | Path, actor: str = "unknown") -> Store:
    return Store(path, actor)
