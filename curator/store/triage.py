"""The `triage` table: the outcome of triaging a problem's reference (curator.runs.triage).

The only SQL on this table. Rows come back with `causes` decoded ({node id: cause}) and
`green` as a bool.
"""

from __future__ import annotations

import json

from curator.store import Store, now


def _decoded(row: dict) -> dict:
    row["causes"] = json.loads(row["causes"])
    row["green"] = bool(row["green"])
    return row


def get(store: Store, problem_id: str) -> dict | None:
    row = store.one("SELECT * FROM triage WHERE problem_id = ?", (problem_id,))
    return None if row is None else _decoded(row)


def save(store: Store, problem_id: str, solution_hash: str, green: bool, reason: str,
         causes: dict[str, str], runs: int) -> None:
    """Store (or replace) the triage of one problem; audited, in the caller's transaction
    when there is one."""
    row = {"problem_id": problem_id, "solution_hash": solution_hash, "green": int(green),
           "reason": reason, "causes": json.dumps(causes, sort_keys=True), "runs": runs,
           "created_at": now(), "actor": store.actor}
    before = store.one("SELECT problem_id FROM triage WHERE problem_id = ?", (problem_id,))
    with store.transaction():
        store.execute(f"INSERT OR REPLACE INTO triage ({', '.join(row)}) VALUES "
                      f"({', '.join('?' * len(row))})", list(row.values()))
        store.audit("triage", problem_id, "update" if before else "create",
                    after={"green": green, "reason": reason, "causes": causes})
