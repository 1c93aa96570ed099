"""The `label_assignments`, `label_votes` and `label_decisions` tables: label rounds.

The only SQL on these tables; curator.panel.rounds decides assignments, validates votes,
audits every change and resolves the majority.
"""

from __future__ import annotations

from curator.store import Store

AXES = ("stage", "task", "data")


# -- assignments -------------------------------------------------------------------------


def assignments(store: Store) -> list[dict]:
    """Every assignment {problem_id, annotator, dimensions, assigned_at, assigned_by}."""
    return store.query("SELECT * FROM label_assignments ORDER BY problem_id, annotator")


def assign(store: Store, problem_id: str, annotator: str, dimensions: str,
           assigned_at: str) -> None:
    """Give one problem to one annotator (inside the caller's transaction)."""
    store.execute(
        "INSERT INTO label_assignments (problem_id, annotator, dimensions, assigned_at, "
        "assigned_by) VALUES (?, ?, ?, ?, ?)",
        (problem_id, annotator, dimensions, assigned_at, store.actor))


# -- votes -----------------------------------------------------------------------------


def vote(store: Store, problem_id: str, annotator: str) -> dict | None:
    return store.one("SELECT * FROM label_votes WHERE problem_id = ? AND annotator = ?",
                     (problem_id, annotator))


def votes(store: Store, problem_id: str | None = None) -> list[dict]:
    """Votes (of one problem), by problem then annotator."""
    if problem_id is not None:
        return store.query("SELECT * FROM label_votes WHERE problem_id = ? "
                           "ORDER BY annotator", (problem_id,))
    return store.query("SELECT * FROM label_votes ORDER BY problem_id, annotator")


def upsert_vote(store: Store, problem_id: str, annotator: str, values: dict, note: str,
                voted_at: str) -> dict:
    """Set one annotator's vote (axes missing from `values` are NULL)."""
    store.execute(
        "INSERT INTO label_votes (problem_id, annotator, stage, task, data, note, voted_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (problem_id, annotator) DO UPDATE SET "
        "stage = excluded.stage, task = excluded.task, data = excluded.data, "
        "note = excluded.note, voted_at = excluded.voted_at",
        (problem_id, annotator, *(values.get(a) for a in AXES), note, voted_at))
    return vote(store, problem_id, annotator)


def delete_vote(store: Store, problem_id: str, annotator: str) -> None:
    store.execute("DELETE FROM label_votes WHERE problem_id = ? AND annotator = ?",
                  (problem_id, annotator))


# -- decisions ---------------------------------------------------------------------------


def decisions(store: Store) -> dict[str, dict[str, dict]]:
    """problem id -> axis -> {value, method, votes, of, decided_by, decided_at}."""
    out: dict[str, dict[str, dict]] = {}
    for row in store.query("SELECT * FROM label_decisions ORDER BY problem_id, axis"):
        out.setdefault(row["problem_id"], {})[row["axis"]] = row
    return out


def decide(store: Store, problem_id: str, axis: str, value: str, method: str, votes: int,
           of: int, decided_at: str, decided_by: str | None = None) -> None:
    """Record how one axis of a problem was decided (inside the caller's transaction);
    `decided_by` defaults to the store's actor (an undo restores someone else's)."""
    store.execute(
        "INSERT INTO label_decisions (problem_id, axis, value, method, votes, of, "
        "decided_by, decided_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (problem_id, axis) DO UPDATE SET value = excluded.value, "
        "method = excluded.method, votes = excluded.votes, of = excluded.of, "
        "decided_by = excluded.decided_by, decided_at = excluded.decided_at",
        (problem_id, axis, value, method, votes, of, decided_by or store.actor, decided_at))


def delete_decision(store: Store, problem_id: str, axis: str) -> None:
    store.execute("DELETE FROM label_decisions WHERE problem_id = ? AND axis = ?",
                  (problem_id, axis))


# -- undo --------------------------------------------------------------------------------


UNDOABLE = ("(entity = 'label_vote' AND action = 'vote') OR (entity = 'label_decision' "
            "AND action IN ('resolve', 'adjudicate'))")


def last_undoable(store: Store, actor: str) -> dict | None:
    """The actor's latest act in label rounds not yet undone: a vote, an adjudication or
    a resolve's decision (its audit row)."""
    return store.one(
        f"SELECT * FROM audit WHERE actor = ? AND ({UNDOABLE}) AND id NOT IN "
        "(SELECT CAST(field AS INTEGER) FROM audit WHERE action = 'undo' AND entity IN "
        "('label_vote', 'label_decision')) ORDER BY id DESC LIMIT 1", (actor,))


def act_rows(store: Store, actor: str, action: str, act: str) -> list[dict]:
    """The decision audit rows of one act (one `resolve` or `adjudicate`), not undone."""
    return store.query(
        "SELECT * FROM audit WHERE actor = ? AND entity = 'label_decision' AND action = ? "
        "AND json_extract(after, '$.act') = ? AND id NOT IN (SELECT CAST(field AS INTEGER) "
        "FROM audit WHERE action = 'undo' AND entity = 'label_decision') ORDER BY id",
        (actor, action, act))
