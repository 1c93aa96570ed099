"""The `problem_imports` table: where an imported problem came from (a DL-Bench file or a
release) and, for DL-Bench drafts, how resolving them against their repository went.

The only SQL on this table; curator.release.importing and curator.release.resolve decide
what a row holds, curator.evaluation.external finds DL-Bench problems by file name.
"""

from __future__ import annotations

from curator.store import Store

DLBENCH_ORIGINS = ("dlbench-txt", "dlbench-csv")   # a DL-Bench .txt file, a DL-Bench CSV row


def problem_for_key(store: Store, origins: tuple[str, ...], origin_key: str) -> str | None:
    """The id of the problem imported from `origin_key` (case ignored) by one of these
    origins, or None."""
    marks = ",".join("?" * len(origins))
    row = store.one(f"SELECT problem_id FROM problem_imports WHERE origin IN ({marks}) "
                    "AND origin_key = ? COLLATE NOCASE", (*origins, origin_key))
    return row["problem_id"] if row else None
