"""Label rounds: several annotators vote a problem's stage, task and data; the majority decides.

A round gives each problem to `per_item` annotators (balanced, deterministic for a seed).
Each annotator votes on the dimensions they were given; a vote is audited and undoable.
`resolve` applies, per dimension, the value more than half of the votes name to every
problem whose assigned annotators have all voted (one vote from one annotator is a
`single` decision); ties and problems still waiting for votes are left to `adjudicate`.
Every decision is recorded with who decided and how (majority k/n, adjudicated), in
`label_decisions` and in the audit log, and the label is written to the problem (database
and problem.toml).

Blind voting: until an annotator with an assignment has voted, `view` shows them their
own vote only, not the problem's current labels or the others' votes.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from curator import sync
from curator.errors import CuratorError, NotFoundError
from curator.labels import AXES
from curator.panel import balance
from curator.review.agreement import agreement
from curator.store import Store, now
from curator.store import label_votes as vote_store
from curator.store import problems as problem_store

VOTE_ENTITY = "label_vote"
DECISION_ENTITY = "label_decision"
SINGLE, MAJORITY, ADJUDICATED = "single", "majority", "adjudicated"


def _dimensions(text: str | None) -> tuple[str, ...]:
    if not text:
        return AXES
    dims = tuple(d.strip() for d in text.split(",") if d.strip())
    unknown = [d for d in dims if d not in AXES]
    if unknown or not dims:
        raise CuratorError(f"unknown dimension(s) {', '.join(unknown) or '(none)'}: "
                           f"give some of {','.join(AXES)}")
    return tuple(a for a in AXES if a in dims)


def _names(annotators) -> list[str]:
    names = [a.strip() for a in annotators if a and a.strip()]
    if not names:
        raise CuratorError("give at least one annotator (--annotators ana,ben,cy)")
    if len(set(names)) != len(names):
        raise CuratorError("an annotator is listed twice")
    return names


# -- assignment --------------------------------------------------------------------------


def assign(store: Store, annotators, per_item: int, problems: list[str] | None = None,
           status: str | None = None, dimensions: str | None = None, seed: int = 0) -> dict:
    """Give each chosen problem not yet in a round to `per_item` annotators, balanced."""
    names = _names(annotators)
    dims = _dimensions(dimensions)
    if not 1 <= per_item <= len(names):
        raise CuratorError(f"--per-item must be between 1 and the number of annotators "
                           f"({len(names)}), got {per_item}")
    known = problem_store.statuses(store)
    if problems:
        missing = [p for p in problems if p not in known]
        if missing:
            raise NotFoundError(f"problem(s) not found: {', '.join(missing)}")
        chosen = list(dict.fromkeys(problems))
    else:
        chosen = sorted(p for p, s in known.items()
                        if (s == status if status else s != "retired"))
    current: dict[str, list[str]] = {}
    for row in vote_store.assignments(store):
        current.setdefault(row["problem_id"], []).append(row["annotator"])
    todo = [p for p in chosen if p not in current]
    plan: dict[str, list[str]] = balance.plan(todo, names, per_item, current, seed)
    stamp = now()
    with store.transaction():
        for pid, people in plan.items():
            for a in people:
                vote_store.assign(store, pid, a, ",".join(dims), stamp)
                store.audit("label_assignment", f"{pid}/{a}", "assign",
                            after={"dimensions": list(dims), "per_item": per_item,
                                   "seed": seed})
    return {"assigned": len(plan), "already_assigned": len(chosen) - len(todo),
            "per_item": per_item, "dimensions": list(dims),
            "annotators": {a: sum(a in p for p in plan.values()) for a in names}}


def _assignments(store: Store) -> dict[str, dict[str, tuple[str, ...]]]:
    """problem id -> annotator -> dimensions."""
    out: dict[str, dict[str, tuple[str, ...]]] = {}
    for row in vote_store.assignments(store):
        out.setdefault(row["problem_id"], {})[row["annotator"]] = _dimensions(row["dimensions"])
    return out


def _votes(store: Store) -> dict[str, dict[str, dict]]:
    out: dict[str, dict[str, dict]] = {}
    for row in vote_store.votes(store):
        out.setdefault(row["problem_id"], {})[row["annotator"]] = row
    return out


# -- votes -------------------------------------------------------------------------------


def _public(row: dict | None) -> dict | None:
    if row is None:
        return None
    return {k: row[k] for k in ("problem_id", "annotator", *AXES, "note", "voted_at")}


def vote(store: Store, problem_id: str, annotator: str, stage: str | None = None,
         task: str | None = None, data: str | None = None, note: str = "") -> dict:
    """Record (or replace) one annotator's labels of a problem; audited, undoable."""
    if not annotator:
        raise CuratorError("an annotator name is needed (--user or $CURATOR_USER)")
    if not problem_store.exists(store, problem_id):
        raise NotFoundError(f"problem {problem_id!r} not found")
    given = {a: v for a, v in zip(AXES, (stage, task, data)) if v}
    for axis, value in given.items():
        if store.label(axis, value) is None:
            slugs = ", ".join(r["slug"] for r in store.labels(axis))
            raise CuratorError(f"problem {problem_id}: {value!r} is not a {axis} label "
                               f"(one of {slugs})")
    assigned = _assignments(store).get(problem_id, {}).get(annotator)
    needed = assigned or ()
    missing = [a for a in needed if a not in given]
    if missing:
        flags = " and ".join(f"--{a}" for a in missing)
        raise CuratorError(f"problem {problem_id}: {annotator} is to vote "
                           f"{', '.join(needed)}; give {flags} too")
    if not given:
        raise CuratorError(f"problem {problem_id}: give at least one of --stage, --task, "
                           "--data")
    with store.transaction():
        before = _public(vote_store.vote(store, problem_id, annotator))
        after = _public(vote_store.upsert_vote(store, problem_id, annotator, given,
                                               note or "", now()))
        store.audit(VOTE_ENTITY, f"{problem_id}/{annotator}", "vote", before=before,
                    after=after)
    people = _assignments(store).get(problem_id, {})
    cast = vote_store.votes(store, problem_id)
    return dict(after, votes=len(cast), assigned=len(people))


def undo(store: Store, actor: str | None = None, problems_dir: Path | None = None
         ) -> dict | None:
    """Undo the actor's latest act in label rounds not yet undone, whatever it was.

    A vote: the vote before it is restored. An adjudication, or a resolve (every decision
    that run made): each decision goes back to what it was (or away) and each problem's
    label to its value before. The audit log gets an `undo` row per undone row.

    Returns {"action": "vote" | "adjudicate" | "resolve", "problem_id", "annotator",
    "restored", "decisions": [{problem_id, axis, restored, label}]} (for a vote
    `restored` is the vote now in force, and `decisions` is empty; for a decision act,
    `problem_id` is its first problem), or None when there is nothing to undo. Refuses,
    changing nothing, when what the act wrote changed since (a later vote, an edit).
    """
    actor = actor or store.actor
    with store.transaction():
        row = vote_store.last_undoable(store, actor)
        if row is None:
            return None
        if row["entity"] == VOTE_ENTITY:
            return _undo_vote(store, row)
        after = json.loads(row["after"])
        rows = vote_store.act_rows(store, actor, row["action"], after["act"]) \
            if after.get("act") else [row]
        return _undo_decisions(store, problems_dir, row["action"], rows)


def _undo_vote(store: Store, row: dict) -> dict:
    pid, _, annotator = row["entity_id"].partition("/")
    before = json.loads(row["before"]) if row["before"] else None
    after = json.loads(row["after"]) if row["after"] else None
    if _public(vote_store.vote(store, pid, annotator)) != after:
        raise CuratorError(f"problem {pid}: {annotator}'s vote changed since your last "
                           "vote; nothing undone")
    if before is None:
        vote_store.delete_vote(store, pid, annotator)
    else:
        vote_store.upsert_vote(store, pid, annotator, before, before["note"],
                               before["voted_at"])
    store.audit(VOTE_ENTITY, row["entity_id"], "undo", field=str(row["id"]),
                before=after, after=before)
    return {"action": "vote", "problem_id": pid, "annotator": annotator,
            "restored": before, "decisions": []}


def _undo_decisions(store: Store, problems_dir: Path | None, action: str,
                    rows: list[dict]) -> dict:
    decided = _decisions(store)
    labels: dict[str, dict[str, str | None]] = {}
    undone = []
    for row in rows:
        pid, axis = row["entity_id"], row["field"]
        after = json.loads(row["after"])
        before = json.loads(row["before"]) if row["before"] else None
        now_in_force = decided.get(pid, {}).get(axis)
        keys = ("value", "method", "votes", "of")
        if now_in_force is None or {k: now_in_force[k] for k in keys} != \
                {k: after[k] for k in keys}:
            raise CuratorError(f"problem {pid}: the {axis} decision changed since your "
                               f"{action}; nothing undone")
        if "label_before" in after:
            problem = problem_store.get(store, pid)
            if getattr(problem, axis) != after["value"]:
                raise CuratorError(
                    f"problem {pid}: its {axis} label was changed to "
                    f"{getattr(problem, axis)!r} since your {action}; nothing undone")
            labels.setdefault(pid, {})[axis] = after["label_before"]
        if before is None:
            vote_store.delete_decision(store, pid, axis)
        else:
            vote_store.decide(store, pid, axis, before["value"], before["method"],
                              before["votes"], before["of"],
                              before.get("at") or now_in_force["decided_at"],
                              before.get("by") or now_in_force["decided_by"])
        store.audit(DECISION_ENTITY, pid, "undo", field=str(row["id"]),
                    before={k: after[k] for k in (*keys, "by") if k in after},
                    after=dict(before, label=after.get("label_before"))
                    if before else {"label": after.get("label_before")})
        undone.append({"problem_id": pid, "axis": axis, "restored": before,
                       "label": after.get("label_before")})
    for pid, values in labels.items():
        _set_labels(store, problems_dir, pid, values)
    return {"action": action, "problem_id": undone[0]["problem_id"] if undone else None,
            "annotator": None, "restored": None, "decisions": undone}


# -- what an annotator may see -----------------------------------------------------------


@dataclass
class View:
    """What the Labels tab shows one annotator of one problem."""
    problem_id: str
    annotator: str
    assigned: tuple[str, ...] = ()          # dimensions to vote; () when not assigned
    own: dict | None = None
    blind: bool = False                     # others' votes and current labels hidden
    others: list[dict] = field(default_factory=list)
    decisions: dict[str, dict] = field(default_factory=dict)


def view(store: Store, problem_id: str, annotator: str) -> View:
    """Blind until an assigned annotator has voted: then everything is shown."""
    assigned = _assignments(store).get(problem_id, {}).get(annotator, ())
    votes = _votes(store).get(problem_id, {})
    own = _public(votes.get(annotator))
    blind = bool(assigned) and own is None
    if blind:
        return View(problem_id, annotator, assigned, None, True)
    return View(problem_id, annotator, assigned, own, False,
                [_public(v) for name, v in sorted(votes.items()) if name != annotator],
                _decisions(store).get(problem_id, {}))


BLIND = "blind"   # what a label reads to an annotator who has not voted it yet


def blind_for(store: Store, annotator: str) -> set[str]:
    """The problems whose labels `annotator` may not see yet (assigned, not voted)."""
    votes = _votes(store)
    return {pid for pid, people in _assignments(store).items()
            if annotator in people and annotator not in votes.get(pid, {})}


def hide_labels(values: dict) -> dict:
    """A copy of a problem's dict (a row, `to_dict()`) with its labels read `blind`."""
    return {**values, **{axis: BLIND for axis in AXES if axis in values}}


def hide_in_rows(store: Store, annotator: str | None, rows: list[dict],
                 key: str = "id") -> list[dict]:
    """Problem rows as `annotator` may see them: labels of open assignments read `blind`."""
    blind = blind_for(store, annotator) if annotator else set()
    return [hide_labels(row) if row[key] in blind else row for row in rows]


_TOML_LABEL = re.compile(rf"^(\s*(?:{'|'.join(AXES)})\s*=\s*).*$", re.MULTILINE)


def _hide_in_text(value):
    """An audit before/after with the labels hidden: a JSON record's label keys, or the
    label lines of a problem.toml text."""
    if not isinstance(value, str) or not value:
        return value
    if value.startswith("{"):
        try:
            record = json.loads(value)
        except ValueError:
            record = None
        if isinstance(record, dict):
            return json.dumps(hide_labels(record), sort_keys=True, ensure_ascii=False)
    return _TOML_LABEL.sub(lambda m: f'{m.group(1)}"{BLIND}"', value)


def hide_in_history(rows: list[dict]) -> list[dict]:
    """A problem's audit rows with every label value read `blind` (a label field's before
    and after, a created record's label keys, problem.toml's label lines)."""
    out = []
    for row in rows:
        row = dict(row)
        for side in ("before", "after"):
            if row.get("field") in AXES:
                row[side] = None if row[side] is None else BLIND
            else:
                row[side] = _hide_in_text(row[side])
        out.append(row)
    return out


def label_counts_for(store: Store, annotator: str | None) -> dict[str, dict[str, int]]:
    """axis -> slug -> problems (retired left out), as `annotator` may see them: the
    problems they are still to vote blind count under `blind`, not under their labels."""
    counts = problem_store.label_counts(store)
    blind = blind_for(store, annotator) if annotator else set()
    if not blind:
        return counts
    out = {axis: dict(by_slug) for axis, by_slug in counts.items()}
    for row in problem_store.list_rows(store):
        if row["id"] not in blind or row["status"] == "retired":
            continue
        for axis in AXES:
            slug = row[axis] or ""
            out[axis][slug] -= 1
            if not out[axis][slug]:
                del out[axis][slug]
            out[axis][BLIND] = out[axis].get(BLIND, 0) + 1
    return out


def history_for(store: Store, problem_id: str, annotator: str | None) -> list[dict]:
    """A problem's audit rows as `annotator` may see them (labels hidden until they vote)."""
    rows = store.history("problem", problem_id)
    if annotator and problem_id in blind_for(store, annotator):
        return hide_in_history(rows)
    return rows


def my_queue(store: Store, annotator: str) -> list[dict]:
    """The annotator's assigned problems in id order: {problem_id, dimensions, done}."""
    votes = _votes(store)
    return [{"problem_id": pid, "dimensions": list(people[annotator]),
             "done": annotator in votes.get(pid, {})}
            for pid, people in sorted(_assignments(store).items()) if annotator in people]


# -- tallies, resolution, adjudication ---------------------------------------------------


def _decisions(store: Store) -> dict[str, dict[str, dict]]:
    return {pid: {axis: {k: row[k] for k in ("value", "method", "votes", "of", "decided_by",
                                             "decided_at")}
                  for axis, row in by_axis.items()}
            for pid, by_axis in vote_store.decisions(store).items()}


def tally(values: list[str]) -> tuple[str | None, int, int]:
    """(the value more than half of the votes name, its votes, all votes); None on a tie."""
    n = len(values)
    if not n:
        return None, 0, 0
    value, k = Counter(values).most_common(1)[0]
    if 2 * k <= n:
        return None, k, n
    return value, k, n


def _round_items(store: Store) -> tuple[dict, dict, list[str]]:
    assigned = _assignments(store)
    votes = _votes(store)
    items = sorted(set(assigned) | set(votes))
    return assigned, votes, items


def _set_labels(store: Store, problems_dir: Path | None, problem_id: str,
                values: dict[str, str]) -> None:
    problem = problem_store.get(store, problem_id)
    changed = {a: v for a, v in values.items() if getattr(problem, a) != v}
    if not changed:
        return
    for axis, value in changed.items():
        setattr(problem, axis, value)
    if problems_dir is None:
        problem_store.save(store, problem, keep_raw=True)
    else:
        sync.save_and_write(store, problem, problems_dir)


def _before(old: dict | None, record: dict) -> dict | None:
    """A decision as it was before a change (for the audit log and undo)."""
    if old is None:
        return None
    return dict({key: old[key] for key in record}, by=old["decided_by"],
                at=old["decided_at"])


def resolve(store: Store, problems_dir: Path | None = None) -> dict:
    """Apply the majority per dimension wherever all assigned annotators have voted.

    Adjudicated dimensions are kept. Returns {"resolved": [{problem_id, axis, value,
    method, votes, of}], "ties": [{problem_id, axis, votes: {value: n}}], "too_few":
    [{problem_id, axis, votes, needed}]}.
    """
    assigned, votes, items = _round_items(store)
    decided = _decisions(store)
    resolved, ties, too_few = [], [], []
    stamp = now()
    current = None   # the problem whose labels a decision may change, read once
    with store.transaction():
        for pid in items:
            people = assigned.get(pid, {})
            cast = votes.get(pid, {})
            apply: dict[str, str] = {}
            for axis in AXES:
                values = [v[axis] for v in cast.values() if v[axis]]
                needed = sum(axis in dims for dims in people.values())
                if not values and not needed:
                    continue
                if decided.get(pid, {}).get(axis, {}).get("method") == ADJUDICATED:
                    continue
                if len(values) < max(needed, 1):
                    too_few.append({"problem_id": pid, "axis": axis, "votes": len(values),
                                    "needed": needed})
                    continue
                value, k, n = tally(values)
                if value is None:
                    ties.append({"problem_id": pid, "axis": axis,
                                 "votes": dict(sorted(Counter(values).items()))})
                    continue
                method = SINGLE if n == 1 else MAJORITY
                record = {"value": value, "method": method, "votes": k, "of": n}
                old = decided.get(pid, {}).get(axis)
                if old and {key: old[key] for key in record} == record:
                    continue
                if current is None or current.id != pid:
                    current = problem_store.get(store, pid)
                vote_store.decide(store, pid, axis, value, method, k, n, stamp)
                store.audit(DECISION_ENTITY, pid, "resolve", field=axis,
                            before=_before(old, record),
                            after=dict(record, by=store.actor, act=stamp,
                                       label_before=getattr(current, axis)))
                apply[axis] = value
                resolved.append(dict(record, problem_id=pid, axis=axis))
            if apply:
                _set_labels(store, problems_dir, pid, apply)
    return {"resolved": resolved, "ties": ties, "too_few": too_few}


def adjudicate(store: Store, problem_id: str, problems_dir: Path | None = None,
               stage: str | None = None, task: str | None = None, data: str | None = None,
               note: str = "") -> dict:
    """Decide the given dimensions of a problem by hand (a tie, too few votes, a dispute)."""
    given = {a: v for a, v in zip(AXES, (stage, task, data)) if v}
    if not given:
        raise CuratorError(f"problem {problem_id}: give at least one of --stage, --task, "
                           "--data to adjudicate")
    if not problem_store.exists(store, problem_id):
        raise NotFoundError(f"problem {problem_id!r} not found")
    for axis, value in given.items():
        if store.label(axis, value) is None:
            raise CuratorError(f"problem {problem_id}: {value!r} is not a {axis} label")
    cast = _votes(store).get(problem_id, {})
    old = _decisions(store).get(problem_id, {})
    stamp = now()
    out = {}
    with store.transaction():
        problem = problem_store.get(store, problem_id)
        for axis, value in given.items():
            values = [v[axis] for v in cast.values() if v[axis]]
            record = {"value": value, "method": ADJUDICATED,
                      "votes": values.count(value), "of": len(values)}
            vote_store.decide(store, problem_id, axis, value, ADJUDICATED, record["votes"],
                              record["of"], stamp)
            store.audit(DECISION_ENTITY, problem_id, "adjudicate", field=axis,
                        before=_before(old.get(axis), record),
                        after=dict(record, by=store.actor, note=note or "", act=stamp,
                                   label_before=getattr(problem, axis)))
            out[axis] = dict(record, by=store.actor)
        _set_labels(store, problems_dir, problem_id, given)
    return {"problem_id": problem_id, "decided": out}


def decisions(store: Store) -> dict[str, dict[str, dict]]:
    """problem id -> axis -> {value, method, votes, of, decided_by, decided_at}."""
    return _decisions(store)


# -- statistics ----------------------------------------------------------------------------


def stats(store: Store) -> dict:
    """Progress per annotator and, per dimension, alpha, pairwise kappa and confusion."""
    assigned, votes, items = _round_items(store)
    complete = sum(1 for pid in items
                   if votes.get(pid) and set(assigned.get(pid, {})) <= set(votes[pid]))
    dimensions = {}
    for axis in AXES:
        by_item = {pid: {name: v[axis] for name, v in votes.get(pid, {}).items() if v[axis]}
                   for pid in items}
        dimensions[axis] = agreement(by_item)
    names = sorted({a for people in assigned.values() for a in people}
                   | {a for cast in votes.values() for a in cast})
    annotators = {}
    for name in names:
        mine = [pid for pid, people in assigned.items() if name in people]
        annotators[name] = {"assigned": len(mine),
                            "done": sum(name in votes.get(pid, {}) for pid in mine)}
    return {"items": len(items), "complete": complete, "dimensions": dimensions,
            "annotators": annotators}


# -- for the release -----------------------------------------------------------------------


def provenance(store: Store, problem_ids: set[str]) -> dict[str, dict]:
    """problem id -> {"decided": {axis: {value, method, votes, of, by}}, "votes":
    [{annotator, stage, task, data}]} for the problems that were in a label round."""
    decided = _decisions(store)
    votes = _votes(store)
    out: dict[str, dict] = {}
    for pid in sorted(problem_ids & (set(decided) | set(votes))):
        out[pid] = {
            "decided": {axis: {"value": d["value"], "method": d["method"],
                               "votes": d["votes"], "of": d["of"], "by": d["decided_by"]}
                        for axis, d in decided.get(pid, {}).items()},
            "votes": [{"annotator": name, **{a: v[a] for a in AXES}}
                      for name, v in sorted(votes.get(pid, {}).items())],
        }
    return out


def agreement_by_axis(store: Store, problem_ids: set[str]) -> dict[str, dict]:
    """Per axis, agreement over these problems' votes, plus the number of annotators."""
    votes = {pid: by for pid, by in _votes(store).items() if pid in problem_ids}
    out = {}
    for axis in AXES:
        by_item = {pid: {name: v[axis] for name, v in by.items() if v[axis]}
                   for pid, by in votes.items()}
        summary = agreement(by_item)
        summary["annotators"] = len({name for by in by_item.values() for name in by})
        out[axis] = summary
    return out
