"""The `samples` table: LLM outputs for problems, one row per sample, audited on creation.

The only SQL on this table; curator.evaluation.samples reads sample files and decides
what a row holds, curator.evaluation.evaluate runs them.
"""

from __future__ import annotations

import hashlib

from curator.errors import CuratorError, NotFoundError
from curator.store import Store, now

_SUMMARY = ("id, problem_id, model, technique, temperature, sample_index, format, extraction, "
            "code IS NULL AS no_code, origin, created_at")


def insert(store: Store, *, problem_id: str, model: str, technique: str,
           temperature: float | None, sample_index: int, format: str, raw: str,
           code: str | None, extraction: str, content_hash: str, origin: str) -> int | None:
    """Insert one sample (inside the caller's transaction); None when it already exists."""
    if id_for_content(store, content_hash) is not None:
        return None
    code_hash = hashlib.sha256(code.encode()).hexdigest() if code is not None else None
    cursor = store.execute(
        "INSERT INTO samples (problem_id, model, technique, temperature, sample_index, format, "
        "raw, code, extraction, code_sha256, content_hash, origin, created_at, created_by) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (problem_id, model, technique, temperature, sample_index, format, raw, code,
         extraction, code_hash, content_hash, origin, now(), store.actor))
    sample_id = cursor.lastrowid
    store.audit("sample", sample_id, "create", after={
        "problem_id": problem_id, "model": model, "technique": technique,
        "sample_index": sample_index, "format": format, "extraction": extraction,
        "origin": origin})
    return sample_id


def get(store: Store, sample_id: int) -> dict:
    row = store.one("SELECT * FROM samples WHERE id = ?", (int(sample_id),))
    if row is None:
        raise NotFoundError(f"sample {sample_id} not found")
    return row


def list_rows(store: Store, model: str | None = None, problem_id: str | None = None,
              technique: str | None = None) -> list[dict]:
    where, params = [], []
    for column, value in (("model", model), ("problem_id", problem_id),
                          ("technique", technique)):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    sql = f"SELECT {_SUMMARY} FROM samples" + (" WHERE " + " AND ".join(where) if where else "") \
        + " ORDER BY id"
    rows = store.query(sql, params)
    for row in rows:
        row["no_code"] = bool(row["no_code"])
    return rows


def models(store: Store) -> list[str]:
    return [r["model"] for r in store.query("SELECT DISTINCT model FROM samples ORDER BY model")]


def check_models_exist(store: Store, model: str | None) -> None:
    if model is not None and not store.one("SELECT 1 AS x FROM samples WHERE model = ?",
                                           (model,)):
        raise CuratorError(f"no samples for model {model!r} (import some first)")


def pending(store: Store, model: str | None = None) -> list[dict]:
    """{id, problem_id, code} of the samples (of this model) with no run whose outcome is
    not infra, by id."""
    sql = ("SELECT s.id, s.problem_id, s.code FROM samples s WHERE NOT EXISTS ("
           "  SELECT 1 FROM runs r WHERE r.sample_id = s.id AND r.outcome != 'infra')")
    params: list = []
    if model is not None:
        sql += " AND s.model = ?"
        params.append(model)
    return store.query(sql + " ORDER BY s.id", params)


def problems_with_samples(store: Store, model: str | None = None) -> list[str]:
    """Ids of the problems with samples (of this model), sorted."""
    sql = "SELECT DISTINCT problem_id FROM samples" + (" WHERE model = ?" if model else "")
    return [r["problem_id"] for r in store.query(sql + " ORDER BY problem_id",
                                                  (model,) if model else ())]


def count(store: Store, model: str | None = None) -> int:
    """How many samples (of this model) there are."""
    sql = "SELECT COUNT(*) AS n FROM samples" + (" WHERE model = ?" if model else "")
    return store.one(sql, (model,) if model else ())["n"]


def id_for_content(store: Store, content_hash: str) -> int | None:
    """The id of the sample with this content hash (the same on every machine), or None."""
    row = store.one("SELECT id FROM samples WHERE content_hash = ?", (content_hash,))
    return row["id"] if row else None


def identities(store: Store) -> list[dict]:
    """Every sample's identity without its text: id, problem_id, model, technique,
    temperature, sample_index, content_hash, code_sha256; by id."""
    return store.query("SELECT id, problem_id, model, technique, temperature, "
                       "sample_index, content_hash, code_sha256 FROM samples ORDER BY id")


def problem_ids(store: Store, model: str | None = None) -> list[dict]:
    """{id, problem_id} of every sample (of this model), by id."""
    sql = "SELECT id, problem_id FROM samples" + (" WHERE model = ?" if model else "")
    return store.query(sql + " ORDER BY id", (model,) if model else ())


def with_problems(store: Store, sample_ids: list[int]) -> list[dict]:
    """These samples with what judging them needs from their problem, by id: the sample's
    id, problem_id, model, technique, sample_index, code, raw, extraction and the problem's
    entry_point, title, stage, task, data, prompt, solution."""
    placeholders = ",".join("?" * len(sample_ids))
    return store.query(
        "SELECT s.id, s.problem_id, s.model, s.technique, s.sample_index, s.code, s.raw, "
        "s.extraction, p.entry_point, p.title, p.stage, p.task, p.data, p.prompt, "
        "p.solution FROM samples s JOIN problems p ON p.id = s.problem_id "
        f"WHERE s.id IN ({placeholders}) ORDER BY s.id", sample_ids)


def counts(store: Store) -> dict:
    """{n: samples, models: distinct models}."""
    return store.one("SELECT COUNT(*) AS n, COUNT(DISTINCT model) AS models FROM samples")
