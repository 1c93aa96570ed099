"""Problems in the database: read, list, create and update, every change audited."""

from __future__ import annotations

import json
from collections.abc import Iterable

from curator.errors import CuratorError, NotFoundError
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
