"""The `generation_cache` table: model answers already paid for, keyed by (model,
technique, temperature, prompt hash, sample index), so asking again costs nothing.

The only SQL on this table; curator.evaluation.generate builds the keys and requests.
"""

from __future__ import annotations

from curator.store import Store, now


def cached_text(store: Store, key: tuple) -> str | None:
    """The answer's text cached under key (model, technique, temperature, prompt_sha256,
    sample_index), or None."""
    row = store.one("SELECT text FROM generation_cache WHERE model = ? AND technique = ? AND "
                    "temperature = ? AND prompt_sha256 = ? AND sample_index = ?", key)
    return None if row is None else row["text"]


def remember(store: Store, key: tuple, problem_id: str, request: str, response: str,
             text: str) -> None:
    """Cache one answer (request and response as JSON text) unless the key has one already;
    inside the caller's transaction."""
    store.execute(
        "INSERT OR IGNORE INTO generation_cache (model, technique, temperature, "
        "prompt_sha256, sample_index, problem_id, request, response, text, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (*key, problem_id, request, response, text, now()))
