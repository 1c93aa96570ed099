"""Unsaved editor text rescued when the app dies: db/recovery/<stamp>-<actor>.json.

No textual here, so it works even while the app is falling over.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

FOLDER = "recovery"


def recovery_dir(db_dir: Path) -> Path:
    return Path(db_dir) / FOLDER


def write(db_dir: Path, actor: str, drafts: dict[str, dict[str, str]],
          reason: str = "") -> Path | None:
    """Write the drafts (problem id -> field -> text); returns the file, None if nothing."""
    drafts = {pid: fields for pid, fields in drafts.items() if fields}
    if not drafts:
        return None
    folder = recovery_dir(db_dir)
    folder.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    safe_actor = "".join(c if c.isalnum() or c in "-_" else "_" for c in actor) or "unknown"
    path = folder / f"{stamp}-{safe_actor}.json"
    tmp = path.with_suffix(".tmp")
    payload = {"saved_at": stamp, "actor": actor, "reason": reason, "drafts": drafts}
    tmp.write_text(json.dumps(payload, indent=2, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)
    return path


def find(db_dir: Path, problem_id: str) -> list[tuple[Path, dict[str, str]]]:
    """Recovery files holding drafts of this problem, newest first."""
    folder = recovery_dir(db_dir)
    if not folder.is_dir():
        return []
    found = []
    for path in sorted(folder.glob("*.json"), reverse=True):
        try:
            payload = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        fields = payload.get("drafts", {}).get(problem_id)
        if fields:
            found.append((path, fields))
    return found
