"""The `review_labels` and `review_final` tables: annotators' labels and adjudicated ones.

The only SQL on these tables; curator.review.annotations validates labels, audits every
change and undoes them. Rows come back with `pairs` decoded.
"""

from __future__ import annotations

import json

from curator.errors import NotFoundError
from curator.store import Store


def _decoded(row: dict | None) -> dict | None:
    if row is None:
        return None
    out = dict(row)
    out["pairs"] = json.loads(out["pairs"]) if isinstance(out["pairs"], str) else out["pairs"]
    return out


def _pairs_json(pairs: list[dict]) -> str:
    return json.dumps(pairs, ensure_ascii=False)


def check_sample(store: Store, sample_id: int) -> None:
    if not store.one("SELECT 1 AS x FROM samples WHERE id = ?", (sample_id,)):
        raise NotFoundError(f"sample {sample_id} not found")


# -- annotators' labels ------------------------------------------------------------------


def get(store: Store, sample_id: int, annotator: str) -> dict | None:
    return _decoded(store.one(
        "SELECT * FROM review_labels WHERE sample_id = ? AND annotator = ?",
        (int(sample_id), annotator)))


def all_labels(store: Store) -> list[dict]:
    return [_decoded(r) for r in store.query(
        "SELECT * FROM review_labels ORDER BY sample_id, annotator")]


def upsert(store: Store, sample_id: int, annotator: str, verdict: str, pairs: list[dict],
           note: str, taxonomy_version: int | None, labelled_at: str) -> dict:
    store.execute(
        "INSERT INTO review_labels (sample_id, annotator, verdict, pairs, note, "
        "taxonomy_version, labelled_at) VALUES (?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (sample_id, annotator) DO UPDATE SET verdict = excluded.verdict, "
        "pairs = excluded.pairs, note = excluded.note, "
        "taxonomy_version = excluded.taxonomy_version, labelled_at = excluded.labelled_at",
        (sample_id, annotator, verdict, _pairs_json(pairs), note, taxonomy_version,
         labelled_at))
    return get(store, sample_id, annotator)


def delete(store: Store, sample_id: int, annotator: str) -> None:
    store.execute("DELETE FROM review_labels WHERE sample_id = ? AND annotator = ?",
                  (int(sample_id), annotator))


# -- final (adjudicated) labels ----------------------------------------------------------


def get_final(store: Store, sample_id: int) -> dict | None:
    return _decoded(store.one("SELECT * FROM review_final WHERE sample_id = ?",
                              (int(sample_id),)))


def all_final(store: Store) -> dict[int, dict]:
    return {r["sample_id"]: _decoded(r) for r in store.query("SELECT * FROM review_final")}


def upsert_final(store: Store, sample_id: int, verdict: str, pairs: list[dict], note: str,
                 adjudicator: str, taxonomy_version: int | None, labelled_at: str) -> dict:
    store.execute(
        "INSERT INTO review_final (sample_id, verdict, pairs, note, taxonomy_version, "
        "adjudicator, labelled_at) VALUES (?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (sample_id) DO UPDATE SET verdict = excluded.verdict, "
        "pairs = excluded.pairs, note = excluded.note, "
        "taxonomy_version = excluded.taxonomy_version, adjudicator = excluded.adjudicator, "
        "labelled_at = excluded.labelled_at",
        (sample_id, verdict, _pairs_json(pairs), note, taxonomy_version, adjudicator,
         labelled_at))
    return get_final(store, sample_id)


def delete_final(store: Store, sample_id: int) -> None:
    store.execute("DELETE FROM review_final WHERE sample_id = ?", (int(sample_id),))


# -- the audit trail of labelling, for undo ----------------------------------------------


def last_undoable(store: Store, actor: str, entities: tuple[str, str]) -> dict | None:
    """The actor's latest label/adjudicate audit row on these entities not yet undone."""
    return store.one(
        "SELECT * FROM audit WHERE actor = ? AND entity IN (?, ?) "
        "AND action IN ('label', 'adjudicate') AND id NOT IN ("
        "  SELECT CAST(field AS INTEGER) FROM audit WHERE action = 'undo' "
        "  AND entity IN (?, ?)) ORDER BY id DESC LIMIT 1",
        (actor, *entities, *entities))


# -- with the samples they label, for exchange between machines ------------------------------

_SAMPLE_KEYS = "s.content_hash, s.problem_id, s.model, s.technique, s.sample_index"


def labels_with_samples(store: Store, annotator: str | None = None) -> list[dict]:
    """Annotators' labels (of one annotator), each with its sample's content_hash,
    problem_id, model, technique and sample_index; by sample, then annotator."""
    sql = f"SELECT l.*, {_SAMPLE_KEYS} FROM review_labels l JOIN samples s ON s.id = l.sample_id"
    params: tuple = ()
    if annotator:
        sql += " WHERE l.annotator = ?"
        params = (annotator,)
    return [_decoded(r) for r in store.query(sql + " ORDER BY l.sample_id, l.annotator", params)]


def finals_with_samples(store: Store) -> list[dict]:
    """Final labels, each with its sample's keys (as labels_with_samples); by sample."""
    return [_decoded(r) for r in store.query(
        f"SELECT f.*, {_SAMPLE_KEYS} FROM review_final f JOIN samples s ON s.id = f.sample_id "
        "ORDER BY f.sample_id")]
