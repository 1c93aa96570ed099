"""The `problem_imports` table: where an imported problem came from (a DL-Bench file or a
release) and, for DL-Bench drafts, how resolving them against their repository went.

The only SQL on this table; curator.release.importing and curator.dlbench.resolve decide
what a row holds, curator.dlbench.taxonomy_data finds DL-Bench problems by file name.
"""

from __future__ import annotations

import json

from curator.store import Store, now

DLBENCH_ORIGINS = ("dlbench-txt", "dlbench-csv")   # a DL-Bench .txt file, a DL-Bench CSV row


def problem_for_key(store: Store, origins: tuple[str, ...], origin_key: str) -> str | None:
    """The id of the problem imported from `origin_key` (case ignored) by one of these
    origins, or None."""
    marks = ",".join("?" * len(origins))
    row = store.one(f"SELECT problem_id FROM problem_imports WHERE origin IN ({marks}) "
                    "AND origin_key = ? COLLATE NOCASE", (*origins, origin_key))
    return row["problem_id"] if row else None


def rows_for(store: Store, origins: tuple[str, ...]) -> list[dict]:
    """Every import row from these origins, by problem id, as stored (flags, raw and
    resolution are JSON text)."""
    marks = ",".join("?" * len(origins))
    return store.query(f"SELECT * FROM problem_imports WHERE origin IN ({marks}) "
                       "ORDER BY problem_id", origins)


def problems_by_key(store: Store, origins: tuple[str, ...]) -> dict[str, str]:
    """origin key (file name, or NAME-VERSION) -> problem id, for these origins."""
    marks = ",".join("?" * len(origins))
    return {r["origin_key"]: r["problem_id"] for r in store.query(
        f"SELECT origin_key, problem_id FROM problem_imports WHERE origin IN ({marks})",
        origins)}


def record(store: Store, problem_id: str, origin: str, origin_key: str, flags: list[str],
           raw: dict) -> None:
    """Remember where a problem was imported from (replacing an earlier row; not audited)."""
    store.execute(
        "INSERT OR REPLACE INTO problem_imports (problem_id, origin, origin_key, flags, raw, "
        "imported_at, actor) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (problem_id, origin, origin_key, json.dumps(flags), json.dumps(raw, ensure_ascii=False),
         now(), store.actor))


def set_resolution(store: Store, problem_id: str, flags: list[str], resolution: dict) -> None:
    """Store the flags and the resolution record of a resolved draft (not audited)."""
    store.execute("UPDATE problem_imports SET flags = ?, resolution = ? WHERE problem_id = ?",
                  (json.dumps(flags), json.dumps(resolution, ensure_ascii=False), problem_id))


def for_problem(store: Store, problem_id: str) -> dict | None:
    """{"origin", "key", "flags"} of the import a problem came from, or None."""
    row = store.one("SELECT origin, origin_key, flags FROM problem_imports "
                    "WHERE problem_id = ?", (problem_id,))
    if row is None:
        return None
    try:
        flags = json.loads(row["flags"] or "[]")
    except ValueError:
        flags = []
    return {"origin": row["origin"], "key": row["origin_key"],
            "flags": [str(f) for f in flags] if isinstance(flags, list) else []}
