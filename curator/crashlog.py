"""The last resort for bugs: one line for the person, the traceback in db/logs/.

No Python traceback ever reaches a user. The CLI's entry point and the app's error
modal hand unexpected exceptions here; the file named in the one line holds the
traceback for a bug report.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import tempfile
import traceback
from datetime import UTC, datetime
from pathlib import Path

LOGS = "logs"


def log_dir(db_dir: Path | None) -> Path:
    """db/logs/ of the workspace, or a folder in the temp dir when there is none."""
    if db_dir is not None:
        return Path(db_dir) / LOGS
    return Path(tempfile.gettempdir()) / "curator-logs"


def write(exc: BaseException, db_dir: Path | None, command: list[str] | None = None) -> Path | None:
    """Write the traceback of `exc`; returns the file (None when nothing could be written)."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    header = (f"curator crash at {stamp}\npid {os.getpid()}\n"
              f"command: {' '.join(command if command is not None else sys.argv)}\n\n")
    for folder in (log_dir(db_dir), log_dir(None)):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"crash-{stamp}-{os.getpid()}.log"
            path.write_text(header + text, encoding="utf-8", errors="replace")
            return path
        except OSError:
            continue
    return None


def one_line(exc: BaseException) -> str:
    """What went wrong, in one line without a traceback."""
    if isinstance(exc, RecursionError):
        what = "input nested too deeply to process"
    elif isinstance(exc, MemoryError):
        what = "out of memory"
    elif isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
        what = "the database is busy (locked by another process)"
    else:
        what = f"{type(exc).__name__}: {exc}"
    return " ".join(what.split())[:300]


def report(exc: BaseException, db_dir: Path | None, command: list[str] | None = None) -> str:
    """The one line to show for an unexpected exception, after logging it."""
    path = write(exc, db_dir, command)
    where = f" (traceback in {path})" if path else ""
    return f"internal error: {one_line(exc)}{where}"
