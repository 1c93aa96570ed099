"""The `prompt_drafts` table: drafts of a problem's prompt beside prompt.md.

One row per (problem, source): `docstring` (the candidate's docstring as text) and
`model:NAME` (drafted by a model, with the hash of the request template). The only SQL on
this table; curator.mining.prompt_drafts makes and checks the drafts.
"""

from __future__ import annotations

from curator.store import Store


def put(store: Store, problem_id: str, source: str, text: str, created_at: str,
        model: str | None = None, template_sha256: str | None = None) -> None:
    store.execute(
        "INSERT INTO prompt_drafts (problem_id, source, model, template_sha256, text, "
        "created_at, actor) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (problem_id, source) "
        "DO UPDATE SET model = excluded.model, template_sha256 = excluded.template_sha256, "
        "text = excluded.text, created_at = excluded.created_at, actor = excluded.actor",
        (problem_id, source, model, template_sha256, text, created_at, store.actor))


def for_problem(store: Store, problem_id: str) -> list[dict]:
    """The problem's drafts, the docstring draft first, then by time."""
    return store.query("SELECT * FROM prompt_drafts WHERE problem_id = ? "
                       "ORDER BY source != 'docstring', created_at, source", (problem_id,))
