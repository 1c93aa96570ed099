"""The `review_suggestions` and `review_suggestion_uses` tables: categories suggested for a
failing sample and whether annotators took the first one.

The only SQL on these tables; curator.review.suggest makes the suggestions and decides
what counts as accepted.
"""

from __future__ import annotations

import json

from curator.store import Store


def get(store: Store, sample_id: int) -> dict | None:
    row = store.one("SELECT * FROM review_suggestions WHERE sample_id = ?", (int(sample_id),))
    if row is None:
        return None
    out = dict(row)
    out["suggestions"] = json.loads(out["suggestions"])
    return out


def put(store: Store, sample_id: int, suggestions: list[dict], source: str,
        created_at: str) -> None:
    with store.transaction():
        store.execute(
            "INSERT INTO review_suggestions (sample_id, suggestions, source, created_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (sample_id) DO UPDATE SET "
            "suggestions = excluded.suggestions, source = excluded.source, "
            "created_at = excluded.created_at",
            (int(sample_id), json.dumps(suggestions, ensure_ascii=False), source, created_at))


def record_use(store: Store, sample_id: int, annotator: str, first: str, shown: list[str],
               chosen: str, accepted: bool, by_key: bool, decided_at: str) -> None:
    store.execute(
        "INSERT INTO review_suggestion_uses (sample_id, annotator, first, shown, chosen, "
        "accepted, by_key, decided_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (sample_id, annotator) DO UPDATE SET first = excluded.first, "
        "shown = excluded.shown, chosen = excluded.chosen, accepted = excluded.accepted, "
        "by_key = excluded.by_key, decided_at = excluded.decided_at",
        (int(sample_id), annotator, first, json.dumps(shown), chosen, int(accepted),
         int(by_key), decided_at))


def all_uses(store: Store) -> list[dict]:
    rows = store.query("SELECT * FROM review_suggestion_uses ORDER BY sample_id, annotator")
    return [{**r, "shown": json.loads(r["shown"]), "accepted": bool(r["accepted"]),
             "by_key": bool(r["by_key"])} for r in rows]
