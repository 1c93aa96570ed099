"""The `candidates` table (with the `label_suggestions` mined for them): the only SQL on them.

Listing, showing and rejecting live here; curator.mining.mine decides what a mined
candidate holds, curator.mining.promote what accepting one does. Every change is audited.
"""

from __future__ import annotations

import json

from curator.errors import CuratorError, NotFoundError
from curator.store import Store, now

STATUSES = ("new", "accepted", "rejected", "vanished")


_JSON = ("decorators", "imports", "needed_imports", "evidence", "tests", "suggestions")


def _decode(row: dict) -> dict:
    for key in _JSON:
        if key in row and isinstance(row[key], str):
            row[key] = json.loads(row[key])
    return row


def to_json(row: dict, full: bool = False) -> dict:
    """The public shape of a candidate (`candidates list --json` rows)."""
    data = {
        "id": row["id"], "repo": row["repo_url"], "repo_name": row["repo_name"],
        "commit": row["commit_sha"], "path": row["path"], "qualname": row["qualname"],
        "kind": row["kind"], "lines": f"{row['line_start']}-{row['line_end']}",
        "score": row["score"], "tests": row["tests"], "license": row["license"],
        "status": row["status"], "framework": row["framework"],
        "signature": row["signature"], "evidence": row["evidence"],
        "suggestions": row["suggestions"], "reason": row["reason"],
        "problem_id": row["problem_id"], "vanished_commit": row["vanished_commit"],
    }
    if full:
        for key in ("docstring", "source", "decorators", "imports", "needed_imports",
                    "class_header", "ast_hash", "first_commit", "created_at", "updated_at"):
            data[key] = row[key]
    return data


_SELECT = ("SELECT c.*, r.url AS repo_url, r.name AS repo_name FROM candidates c "
           "JOIN repos r ON r.id = c.repo_id")


def get(store: Store, candidate_id: int | str) -> dict:
    try:
        cid = int(candidate_id)
    except (TypeError, ValueError):
        raise NotFoundError(f"candidate {candidate_id!r} not found (ids are numbers)") from None
    row = store.one(f"{_SELECT} WHERE c.id = ?", (cid,))
    if row is None:
        raise NotFoundError(f"candidate {cid} not found")
    return _decode(row)


def list_rows(store: Store, min_score: float | None = None, status: str | None = "new",
              repo_id: int | None = None, with_tests: bool = False,
              text: str | None = None) -> list[dict]:
    """Candidates, best score first; status None or 'all' for every status."""
    where, params = [], []
    if status and status != "all":
        if status not in STATUSES:
            raise CuratorError(f"unknown candidate status {status!r}")
        where.append("c.status = ?")
        params.append(status)
    if min_score is not None:
        where.append("c.score >= ?")
        params.append(min_score)
    if repo_id is not None:
        where.append("c.repo_id = ?")
        params.append(repo_id)
    if with_tests:
        where.append("c.tests != '[]'")
    if text:
        where.append("(c.qualname LIKE ? OR c.path LIKE ?)")
        params += [f"%{text}%", f"%{text}%"]
    sql = _SELECT + (" WHERE " + " AND ".join(where) if where else "") + \
        " ORDER BY c.score DESC, r.name, c.path, c.line_start"
    return [_decode(r) for r in store.query(sql, params)]


def reject(store: Store, candidate_id: int | str, reason: str) -> dict:
    reason = (reason or "").strip()
    if not reason:
        raise CuratorError("a rejection needs a reason (--reason TEXT)")
    row = get(store, candidate_id)
    if row["status"] == "accepted":
        raise CuratorError(f"candidate {row['id']} was accepted as problem "
                           f"{row['problem_id']}; retire that problem instead")
    with store.transaction():
        store.execute("UPDATE candidates SET status = 'rejected', reason = ?, updated_at = ? "
                      "WHERE id = ?", (reason, now(), row["id"]))
        store.audit("candidate", row["id"], "reject", "status", row["status"], "rejected")
        store.audit("candidate", row["id"], "update", "reason", row["reason"], reason)
    return get(store, row["id"])


def suggestions_for(store: Store, problem_id: str) -> list[dict]:
    """Label suggestions stored for a problem, strongest first per axis."""
    return store.query(
        "SELECT axis, slug, rule, evidence, weight, candidate_id FROM label_suggestions "
        "WHERE problem_id = ? ORDER BY axis, weight DESC, slug, rule", (problem_id,))


def of_repo(store: Store, repo_id: int) -> list[dict]:
    """Every candidate of one repository, as stored (JSON columns still text)."""
    return store.query("SELECT * FROM candidates WHERE repo_id = ?", (repo_id,))


def insert(store: Store, values: dict, repo_url: str) -> int:
    """Add one mined candidate (column -> value, JSON already encoded); audited. Inside the
    caller's transaction; returns the new id."""
    cursor = store.execute(
        f"INSERT INTO candidates ({', '.join(values)}) "
        f"VALUES ({', '.join('?' * len(values))})", list(values.values()))
    store.audit("candidate", cursor.lastrowid, "create", after={
        "repo": repo_url, "commit": values["commit_sha"], "path": values["path"],
        "qualname": values["qualname"], "ast_hash": values["ast_hash"]})
    return cursor.lastrowid


def update(store: Store, row: dict, changes: dict, stamp: str) -> None:
    """Set columns of one candidate as stored in `row` (updated_at = stamp); the audit row
    holds each changed column but the source. Inside the caller's transaction."""
    changes = dict(changes, updated_at=stamp)
    store.execute(f"UPDATE candidates SET {', '.join(f'{k} = ?' for k in changes)} "
                  f"WHERE id = ?", [*changes.values(), row["id"]])
    audited = {k: v for k, v in changes.items() if k not in ("updated_at", "source")}
    store.audit("candidate", row["id"], "update",
                before={k: row[k] for k in audited}, after=audited)


def mark_accepted(store: Store, row: dict, problem_id: str, stamp: str) -> None:
    """The candidate became problem `problem_id`; audited, inside the caller's transaction."""
    store.execute("UPDATE candidates SET status = 'accepted', problem_id = ?, "
                  "updated_at = ? WHERE id = ?", (problem_id, stamp, row["id"]))
    store.audit("candidate", row["id"], "accept", "status", row["status"], "accepted")
    store.audit("candidate", row["id"], "update", "problem_id", row["problem_id"], problem_id)


def add_suggestion(store: Store, problem_id: str, item: dict, candidate_id: int,
                   stamp: str) -> None:
    """Keep one mined label suggestion ({axis, slug, rule, evidence, weight}) for a problem,
    unless it is there already; audited, inside the caller's transaction."""
    cursor = store.execute(
        "INSERT OR IGNORE INTO label_suggestions (problem_id, axis, slug, rule, "
        "evidence, weight, source, candidate_id, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, 'mining', ?, ?)",
        (problem_id, item["axis"], item["slug"], item["rule"], item["evidence"],
         item["weight"], candidate_id, stamp))
    if cursor.rowcount:
        store.audit("label_suggestion", cursor.lastrowid, "create", after={
            "problem_id": problem_id, "axis": item["axis"], "slug": item["slug"],
            "rule": item["rule"]})


def suggestions_as_stored(store: Store, problem_id: str) -> list[dict]:
    """Label suggestions for a problem in the order they were stored:
    {axis, slug, weight, reason} with reason "rule: evidence"."""
    return store.query(
        "SELECT axis, slug, weight, rule || ': ' || evidence AS reason FROM label_suggestions "
        "WHERE problem_id = ? ORDER BY id", (problem_id,))


def status_counts(store: Store) -> dict[str, int]:
    """status -> number of candidates (statuses without any are absent)."""
    return {r["status"]: r["n"] for r in store.query(
        "SELECT status, COUNT(*) AS n FROM candidates GROUP BY status")}
