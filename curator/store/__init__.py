"""The workspace database: SQLite through sqlite-utils, migrated, audited, shared safely."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from curator.errors import StoreError
from curator.labels import DEFAULT_LABELS
from curator.processes import pid_alive
from curator.store.migrations import migrate
from curator.timestamps import now

# sqlite-utils imports pandas when it is installed, only to store pandas.Timestamp values
# as TEXT, which the store never writes: that import was half of every command's start
# (~0.5 s of CPU). It is imported with pandas hidden; pandas stays importable afterwards.
_PANDAS_LOADED = "pandas" in sys.modules
if not _PANDAS_LOADED:
    sys.modules["pandas"] = None  # type: ignore[assignment]  # import pandas: ImportError
try:
    import sqlite_utils
finally:
    if not _PANDAS_LOADED and sys.modules.get("pandas", 0) is None:
        del sys.modules["pandas"]

BUSY_TIMEOUT_MS = 30_000
READ_RETRY_S = 30.0      # readers retry a locked database with backoff for this long


def _locked(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and (
        "locked" in str(exc) or "busy" in str(exc))


def writer_file(db_path: str | Path) -> Path:
    """Who holds the write lock: pid, command and start, written by every writer."""
    db_path = Path(db_path)
    return db_path.with_name(db_path.name + ".writer")


def lock_holder(db_path: str | Path) -> str | None:
    """`pid 123 (curator samples import big.jsonl) since 12:00:01`, or None if unknown."""
    try:
        info = json.loads(writer_file(db_path).read_text(encoding="utf-8"))
        pid = int(info["pid"])
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return None
    if info.get("host") == socket.gethostname() and not pid_alive(pid):
        return None
    command = " ".join(str(info.get("command") or "").split())[:120]
    return f"pid {pid} ({command}) since {info.get('since', '?')}"


def lock_message(exc: BaseException, db_path: str | Path | None) -> str | None:
    """The one line for a lock that outlasted the busy timeout (None for other errors)."""
    if not _locked(exc) or db_path is None:
        return None
    holder = lock_holder(db_path)
    who = f" by {holder}" if holder else " by another process"
    return f"{db_path}: the database is locked{who}; try again when it finishes"


def _json(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


class Store:
    """One connection to the workspace database, acting as one person (the actor)."""

    def __init__(self, path: str | Path, actor: str = "unknown", *, migrate_schema: bool = True,
                 busy_timeout_ms: int = BUSY_TIMEOUT_MS):
        self.path = Path(path)
        self.actor = actor
        if self.path.is_dir():
            raise StoreError(f"{self.path}: is a folder, not a database file")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            conn = sqlite3.connect(str(self.path), timeout=busy_timeout_ms / 1000,
                                   isolation_level=None, check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
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
                message = lock_message(exc, self.path)
                raise StoreError(message or f"{self.path}: not a usable database: {exc}") \
                    from None
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
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            message = lock_message(exc, self.path)
            if message:
                raise StoreError(message) from None
            raise
        self._depth = 1
        self._claim_writer()
        try:
            yield self
        except BaseException:
            self._depth = 0
            self._release_writer()
            self.conn.execute("ROLLBACK")
            raise
        self._depth = 0
        self._release_writer()
        self.conn.execute("COMMIT")

    def _claim_writer(self) -> None:
        # Written while holding the write lock, removed before letting it go, so the file
        # always names the current writer (a stale one names a dead pid and is ignored).
        try:
            writer_file(self.path).write_text(json.dumps({
                "pid": os.getpid(), "host": socket.gethostname(),
                "command": " ".join(["curator", *sys.argv[1:]]) if sys.argv else "curator",
                "since": time.strftime("%H:%M:%S")}), encoding="utf-8")
        except OSError:
            pass

    def _release_writer(self) -> None:
        try:
            writer_file(self.path).unlink(missing_ok=True)
        except OSError:
            pass

    def query(self, sql: str, params: Any = ()) -> list[dict]:
        """Rows as dicts. A reader never fails on a lock: it retries with backoff."""
        delay, waited = 0.05, 0.0
        while True:
            try:
                return list(self.db.query(sql, params))
            except sqlite3.OperationalError as exc:
                if not _locked(exc) or self._depth or waited >= READ_RETRY_S:
                    message = lock_message(exc, self.path)
                    if message:
                        raise StoreError(message) from None
                    raise
            time.sleep(delay)
            waited += delay
            delay = min(delay * 2, 1.0)

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

    def label(self, axis: str, slug: str) -> dict | None:
        return self.one("SELECT * FROM labels WHERE axis = ? AND slug = ?", (axis, slug))

    def set_label_text(self, axis: str, slug: str, name: str | None = None,
                       definition: str | None = None) -> None:
        row = self.label(axis, slug)
        if row is None:
            raise StoreError(f"unknown {axis} label {slug!r}")
        with self.transaction():
            for field, value in (("name", name), ("definition", definition)):
                if value is not None and value != row[field]:
                    self.execute(f"UPDATE labels SET {field} = ? WHERE axis = ? AND slug = ?",
                                 (value, axis, slug))
                    self.audit("label", f"{axis}/{slug}", "update", field, row[field], value)
