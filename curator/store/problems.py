"""Problems in the database: read, list, create and update, every change audited.

The only SQL on the `problems` table, and the reads of the problems' audit trail (when
labels, solutions and tests changed) that the release needs.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from curator.errors import CuratorError, NotFoundError
from curator.labels import AXES
from curator.problem import Problem, validate
from curator.store import Store, now

_JSON_FIELDS = ("source", "test_node_ids")
# Columns compared and audited field by field (toml_raw is formatting, audited too).


_FIELDS = Problem.field_names()


def _to_row(problem: Problem) -> dict:
    row = problem.to_dict()
    for key in _JSON_FIELDS:
        row[key] = None if row[key] is None else json.dumps(row[key], ensure_ascii=False)
    return row


def _from_row(row: dict) -> Problem:
    kwargs = {k: row[k] for k in _FIELDS}
    for key in _JSON_FIELDS:
        kwargs[key] = None if kwargs[key] is None else json.loads(kwargs[key])
    return Problem(**kwargs)


def get(store: Store, problem_id: str) -> Problem:
    row = store.one("SELECT * FROM problems WHERE id = ?", (problem_id,))
    if row is None:
        raise NotFoundError(f"problem {problem_id!r} not found")
    return _from_row(row)


def get_raw_toml(store: Store, problem_id: str) -> str | None:
    row = store.one("SELECT toml_raw FROM problems WHERE id = ?", (problem_id,))
    return row["toml_raw"] if row else None


def exists(store: Store, problem_id: str) -> bool:
    return store.one("SELECT 1 AS x FROM problems WHERE id = ?", (problem_id,)) is not None


def all_problems(store: Store) -> list[Problem]:
    return [_from_row(r) for r in store.query("SELECT * FROM problems ORDER BY id")]


def list_rows(store: Store, stage: str | None = None, task: str | None = None,
              data: str | None = None, status: str | None = None,
              text: str | None = None, ids: Iterable[str] | None = None) -> list[dict]:
    """Summary rows (no code), filtered; `text` is an FTS5 query over title, prompt, code."""
    where, params = [], []
    for column, value in (("stage", stage), ("task", task), ("data", data),
                          ("status", status)):
        if value:
            where.append(f"p.{column} = ?")
            params.append(value)
    if ids is not None:
        ids = list(ids)
        where.append(f"p.id IN ({','.join('?' * len(ids))})")
        params.extend(ids)
    join = ""
    if text and fts_query(text):
        join = "JOIN problems_fts f ON f.rowid = p.rowid"
        where.append("problems_fts MATCH ?")
        params.append(fts_query(text))
    sql = (
        "SELECT p.id, p.title, p.kind, p.entry_point, p.stage, p.task, p.data, p.framework, "
        "p.status, p.source IS NOT NULL AS has_source, p.test_node_ids IS NOT NULL AS repo_backed, "
        "p.updated_at FROM problems p " + join
        + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY p.id")
    rows = store.query(sql, params)
    for row in rows:
        row["has_source"] = bool(row["has_source"])
        row["repo_backed"] = bool(row["repo_backed"])
    return rows


def fts_query(text: str) -> str:
    """Turn what a person typed into a safe FTS5 query: every word as a prefix term.

    Empty when the text holds no word (punctuation only), meaning "no text filter".
    """
    words = "".join(c if c.isalnum() or c == "_" else " " for c in text).split()
    return " ".join(f'"{w}"*' for w in words)


def save(store: Store, problem: Problem, raw_toml: str | None = None,
         keep_raw: bool = False) -> list[str]:
    """Create or update a problem; returns the fields that changed ([] when unchanged).

    Each changed field gets its own audit row; a new problem gets one 'create' row.
    """
    errors = validate(problem)
    if errors:
        raise CuratorError(f"problem {problem.id}: {'; '.join(errors)}")
    row = _to_row(problem)
    with store.transaction():
        old = store.one("SELECT * FROM problems WHERE id = ?", (problem.id,))
        stamp = now()
        if old is None:
            row.update(toml_raw=raw_toml, created_at=stamp, updated_at=stamp)
            store.execute(
                f"INSERT INTO problems ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                list(row.values()))
            store.audit("problem", problem.id, "create", after=problem.to_dict())
            return ["created"]
        if keep_raw:
            raw_toml = old["toml_raw"]
        changed = [k for k in _FIELDS if row[k] != old[k]]
        raw_changed = raw_toml != old["toml_raw"]
        if not changed and not raw_changed:
            return []
        updates = {k: row[k] for k in changed}
        updates["toml_raw"] = raw_toml
        updates["updated_at"] = stamp
        store.execute(
            f"UPDATE problems SET {', '.join(f'{k} = ?' for k in updates)} WHERE id = ?",
            [*updates.values(), problem.id])
        for key in changed:
            store.audit("problem", problem.id, "update", key, old[key], row[key])
        if raw_changed and not changed:
            store.audit("problem", problem.id, "update", "problem.toml",
                        old["toml_raw"], raw_toml)
            return ["problem.toml"]
        return changed


def update_fields(store: Store, problem_id: str, **changes) -> list[str]:
    """Change some fields of a stored problem (labels, status, prompt ...), audited."""
    problem = get(store, problem_id)
    unknown = set(changes) - set(_FIELDS)
    if unknown:
        raise CuratorError(f"problem {problem_id}: unknown field(s) {', '.join(sorted(unknown))}")
    for key, value in changes.items():
        setattr(problem, key, value)
    return save(store, problem, keep_raw=True)


def labels_by_id(store: Store) -> dict[str, dict]:
    """problem id -> {id, stage, task, data} for every problem."""
    return {r["id"]: r for r in store.query("SELECT id, stage, task, data FROM problems")}


# -- summaries and lookups for the app and the release --------------------------------------


def any_stored(store: Store) -> bool:
    """Whether the database holds at least one problem."""
    return store.one("SELECT 1 AS x FROM problems LIMIT 1") is not None


def all_ids(store: Store) -> set[str]:
    return {r["id"] for r in store.query("SELECT id FROM problems")}


def statuses(store: Store) -> dict[str, str]:
    """problem id -> status."""
    return {r["id"]: r["status"] for r in store.query("SELECT id, status FROM problems")}


def created_times(store: Store) -> dict[str, str]:
    """problem id -> created_at."""
    return {r["id"]: r["created_at"] for r in store.query("SELECT id, created_at FROM problems")}


def raw_tomls(store: Store, ids: list[str]) -> dict[str, str | None]:
    """problem id -> the exact problem.toml text stored with it, for these ids."""
    raws = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        for row in store.query(f"SELECT id, toml_raw FROM problems WHERE id IN "
                               f"({','.join('?' * len(chunk))})", chunk):
            raws[row["id"]] = row["toml_raw"]
    return raws


def set_raw_toml(store: Store, problem_id: str, text: str) -> None:
    """Remember the exact problem.toml text (formatting only, so no audit row)."""
    with store.transaction():
        store.execute("UPDATE problems SET toml_raw = ? WHERE id = ?", (text, problem_id))


def mark_released(store: Store, tomls: dict[str, str | None], stamp: str) -> None:
    """Set status released (and problem.toml text, when given) on these problems.

    One UPDATE per problem (the full-text trigger fires per row). The caller holds the
    transaction and writes the audit rows.
    """
    store.conn.executemany(
        "UPDATE problems SET status = 'released', updated_at = ?, "
        "toml_raw = COALESCE(?, toml_raw) WHERE id = ?",
        [(stamp, toml, pid) for pid, toml in tomls.items()])


def find(store: Store, text: str, limit: int = 20) -> list[dict]:
    """{id, title} of problems whose id or title contains `text`, by id."""
    like = f"%{text.strip()}%"
    return store.query(
        "SELECT id, title FROM problems WHERE id LIKE ? OR title LIKE ? ORDER BY id LIMIT ?",
        (like, like, limit))


def recently_updated(store: Store, limit: int = 5) -> list[dict]:
    """{id, title} of the problems changed last, newest first."""
    return store.query("SELECT id, title FROM problems ORDER BY updated_at DESC LIMIT ?",
                       (limit,))


def label_counts(store: Store) -> dict[str, dict[str, int]]:
    """axis -> slug ('' for unset) -> number of problems, retired problems left out."""
    counts: dict[str, dict[str, int]] = {}
    for axis in AXES:
        rows = store.query(
            f"SELECT {axis} AS slug, COUNT(*) AS n FROM problems "
            f"WHERE status != 'retired' GROUP BY {axis}")
        counts[axis] = {row["slug"]: row["n"] for row in rows}
    return counts


# -- the problems' audit trail ----------------------------------------------------------------


def code_changes(store: Store) -> dict[str, str]:
    """problem id -> when it was created or its solution or tests last changed (audit)."""
    rows = store.query(
        "SELECT entity_id, MAX(at) AS at FROM audit WHERE entity = 'problem' AND ("
        "action = 'create' OR field IN ('solution', 'tests', 'test_node_ids')) "
        "GROUP BY entity_id")
    return {r["entity_id"]: r["at"] for r in rows}


def label_changes(store: Store) -> list[dict]:
    """Audit rows creating a problem or changing its stage, task or data, oldest first:
    {entity_id, at, actor, action, field, after} with `after` as stored (JSON text)."""
    return store.query(
        "SELECT entity_id, at, actor, action, field, after FROM audit "
        "WHERE entity = 'problem' AND (action = 'create' OR field IN ('stage', 'task', "
        "'data')) ORDER BY id")
