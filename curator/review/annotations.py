"""Review labels: one current label per (sample, annotator), a final label per sample.

A label is either a bug with 1-2 (category, reason) pairs (each category may carry a
DL-specific sub-category, or "not-dl"), or a verdict: `sample-correct` (the sample really
works) or `benchmark-defect` (the problem itself is wrong).

Every change writes an audit row with the label before and after. Undo walks back the
acting person's own labelling actions through the audit log: it restores the "before" of
their latest action not yet undone, and records that as an `undo` audit row.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from curator.errors import CuratorError, NotFoundError
from curator.review import suggest
from curator.store import Store, now, review_labels
from curator.store.review_labels import (  # noqa: F401  (the label reads, in one place)
    all_final,
    all_labels,
    get,
    get_final,
)
from curator.taxonomy import BUG, VERDICTS, Taxonomy, current

LABEL_ENTITY = "review_label"
FINAL_ENTITY = "review_final"
MAX_PAIRS = 2


@dataclass(frozen=True)
class Pair:
    category: str
    dl: str | None = None
    reason: str = ""

    def to_json(self) -> dict:
        return {"category": self.category, "dl": self.dl, "reason": self.reason}


@dataclass(frozen=True)
class LabelValue:
    """What an annotator says about a failing sample."""
    verdict: str = BUG
    pairs: tuple[Pair, ...] = field(default_factory=tuple)
    note: str = ""

    def to_json(self) -> dict:
        return {"verdict": self.verdict, "pairs": [p.to_json() for p in self.pairs],
                "note": self.note}

    @property
    def primary(self) -> str:
        """The nominal value agreement is measured on: the verdict, or the first category."""
        return self.verdict if self.verdict != BUG else self.pairs[0].category

    @property
    def categories(self) -> tuple[str, ...]:
        return tuple(p.category for p in self.pairs)


def format_label(label: dict | None, taxonomy: Taxonomy | None = None) -> str:
    """One line for a stored label (as `to_json` gives it), the same in the CLI and the app:
    a verdict's name, or each pair as `category name / dl-category: reason`."""
    if not label:
        return "not labelled yet"
    if label["verdict"] != BUG:
        name = taxonomy.verdict_name(label["verdict"]) if taxonomy else label["verdict"]
        return f"verdict: {name}"
    parts = []
    for pair in label["pairs"]:
        name = taxonomy.category_name(pair["category"]) if taxonomy else ""
        text = pair["category"] + (f" {name}" if name else "")
        text += f" / {pair['dl']}" if pair.get("dl") else ""
        parts.append(f"{text}: {pair.get('reason') or '(no reason)'}")
    return "; ".join(parts)


def make(taxonomy: Taxonomy, pairs=(), verdict: str | None = None, note: str = "") -> LabelValue:
    """Validate a label: pairs are (category spec, reason) with spec '8', 'slug' or '8/dl-id'."""
    pairs = list(pairs)
    if verdict not in (None, BUG):
        if verdict not in VERDICTS:
            raise CuratorError(f"unknown verdict {verdict!r} (expected {' or '.join(VERDICTS)})")
        if pairs:
            raise CuratorError(f"a {verdict} verdict takes no categories")
        return LabelValue(verdict, (), note or "")
    if not pairs:
        raise CuratorError("give 1-2 categories (with reasons) or a verdict")
    if len(pairs) > MAX_PAIRS:
        raise CuratorError(f"at most {MAX_PAIRS} (category, reason) pairs, got {len(pairs)}")
    out = []
    for spec, reason in pairs:
        category, dl = taxonomy.resolve(spec)
        pair = Pair(category, dl, (reason or "").strip())
        if any(p.category == pair.category and p.dl == pair.dl for p in out):
            raise CuratorError(f"category {spec!r} given twice")
        out.append(pair)
    return LabelValue(BUG, tuple(out), note or "")


def from_json(data: dict) -> LabelValue:
    """A label from stored or exchanged JSON (structure checked, ids not resolved)."""
    verdict = data.get("verdict") or BUG
    if verdict not in (BUG, *VERDICTS):
        raise ValueError(f"unknown verdict {verdict!r}")
    raw_pairs = data.get("pairs") or []
    if isinstance(raw_pairs, str):
        raw_pairs = json.loads(raw_pairs)
    if not isinstance(raw_pairs, list):
        raise ValueError("'pairs' must be a list")
    pairs = []
    for item in raw_pairs:
        if not isinstance(item, dict) or not str(item.get("category") or "").strip():
            raise ValueError("each pair needs a 'category'")
        dl = item.get("dl")
        pairs.append(Pair(str(item["category"]), None if dl in (None, "") else str(dl),
                          str(item.get("reason") or "")))
    if verdict == BUG and not 1 <= len(pairs) <= MAX_PAIRS:
        raise ValueError(f"a bug label needs 1-{MAX_PAIRS} pairs")
    if verdict != BUG and pairs:
        raise ValueError(f"a {verdict} verdict takes no pairs")
    return LabelValue(verdict, tuple(pairs), str(data.get("note") or ""))


# -- annotator labels ---------------------------------------------------------------------


def write_label(store: Store, sample_id: int, annotator: str, value: LabelValue,
                taxonomy_version: int | None, labelled_at: str) -> dict:
    return review_labels.upsert(store, sample_id, annotator, value.verdict,
                                [p.to_json() for p in value.pairs], value.note,
                                taxonomy_version, labelled_at)


def set_label(store: Store, sample_id: int, annotator: str, value: LabelValue,
              taxonomy_version: int | None = None, by_key: bool = False) -> dict:
    """Give (or replace) `annotator`'s label on a sample; audited and undoable. Whether it
    took the first suggested category is recorded (`by_key`: through the accept key)."""
    sample_id = int(sample_id)
    if not annotator:
        raise CuratorError("an annotator name is needed")
    if taxonomy_version is None:
        taxonomy_version = current(store).version
    with store.transaction():
        review_labels.check_sample(store, sample_id)
        before = get(store, sample_id, annotator)
        after = write_label(store, sample_id, annotator, value, taxonomy_version, now())
        store.audit(LABEL_ENTITY, f"{sample_id}/{annotator}", "label", before=before,
                    after=after)
        suggest.record_outcome(store, sample_id, annotator, value.verdict, value.categories,
                               by_key)
    return after


def label(store: Store, sample_id: int, annotator: str | None = None, pairs=(),
          verdict: str | None = None, note: str = "", by_key: bool = False) -> dict:
    """The one-call form for the CLI and the TUI: validate against the current taxonomy, store."""
    taxonomy = current(store)
    value = make(taxonomy, pairs, verdict, note)
    return set_label(store, sample_id, annotator or store.actor, value, taxonomy.version,
                     by_key)


def accept_suggestion(store: Store, sample_id: int, annotator: str | None = None) -> dict:
    """Label a sample with its first suggested category (the app's accept key)."""
    shown = suggest.stored(store, sample_id)
    if not shown:
        raise CuratorError(f"sample {sample_id} has no suggested category yet "
                           "(run `curator review suggest`)")
    first = shown[0]
    spec = f"{first.category}/{first.dl}"
    reason = f"suggested ({first.source}): {first.evidence}"[:500]
    return label(store, sample_id, annotator, [(spec, reason)], by_key=True)


def clear(store: Store, sample_id: int, annotator: str) -> dict | None:
    """Remove an annotator's label (audited, undoable)."""
    sample_id = int(sample_id)
    with store.transaction():
        before = get(store, sample_id, annotator)
        if before is None:
            return None
        review_labels.delete(store, sample_id, annotator)
        store.audit(LABEL_ENTITY, f"{sample_id}/{annotator}", "label", before=before,
                    after=None)
    return before


# -- final (adjudicated) labels ------------------------------------------------------------------


def write_final(store: Store, sample_id: int, value: LabelValue, adjudicator: str,
                taxonomy_version: int | None, labelled_at: str) -> dict:
    return review_labels.upsert_final(store, sample_id, value.verdict,
                                      [p.to_json() for p in value.pairs], value.note,
                                      adjudicator, taxonomy_version, labelled_at)


def adjudicate(store: Store, sample_id: int, pairs=(), verdict: str | None = None,
               note: str = "", accept: str | None = None) -> dict:
    """Set the final label: given explicitly, or `accept` one annotator's label as final."""
    sample_id = int(sample_id)
    taxonomy = current(store)
    with store.transaction():
        review_labels.check_sample(store, sample_id)
        if accept:
            chosen = get(store, sample_id, accept)
            if chosen is None:
                raise NotFoundError(f"sample {sample_id}: {accept} has not labelled it")
            if pairs or verdict:
                raise CuratorError("give either --accept or a label, not both")
            value = from_json(chosen)
            if note:
                value = LabelValue(value.verdict, value.pairs, note)
            version = chosen.get("taxonomy_version")
        else:
            value = make(taxonomy, pairs, verdict, note)
            version = taxonomy.version
        before = get_final(store, sample_id)
        after = write_final(store, sample_id, value, store.actor, version, now())
        store.audit(FINAL_ENTITY, str(sample_id), "adjudicate", before=before, after=after)
    return after


# -- undo -------------------------------------------------------------------------------------


def _restore(store: Store, entity: str, entity_id: str, state: dict | None) -> None:
    if entity == LABEL_ENTITY:
        sample_id, _, annotator = entity_id.partition("/")
        if state is None:
            review_labels.delete(store, int(sample_id), annotator)
        else:
            write_label(store, int(sample_id), annotator, from_json(state),
                         state.get("taxonomy_version"), state["labelled_at"])
    else:
        if state is None:
            review_labels.delete_final(store, int(entity_id))
        else:
            write_final(store, int(entity_id), from_json(state), state["adjudicator"],
                         state.get("taxonomy_version"), state["labelled_at"])


def _current_state(store: Store, entity: str, entity_id: str) -> dict | None:
    if entity == LABEL_ENTITY:
        sample_id, _, annotator = entity_id.partition("/")
        return get(store, int(sample_id), annotator)
    return get_final(store, int(entity_id))


def undo(store: Store, actor: str | None = None) -> dict | None:
    """Undo `actor`'s (default: the store's actor) latest labelling action not yet undone.

    Returns {"sample_id", "annotator", "action", "restored"} or None when there is
    nothing to undo. Refuses (CuratorError) when the label changed since, e.g. by an import.
    """
    actor = actor or store.actor
    with store.transaction():
        row = review_labels.last_undoable(store, actor, (LABEL_ENTITY, FINAL_ENTITY))
        if row is None:
            return None
        entity, entity_id = row["entity"], row["entity_id"]
        before = json.loads(row["before"]) if row["before"] else None
        after = json.loads(row["after"]) if row["after"] else None
        now_state = _current_state(store, entity, entity_id)
        if now_state != after:
            raise CuratorError(
                f"sample {entity_id.split('/')[0]}: the label changed since your last action "
                "(another change or an import); nothing undone")
        _restore(store, entity, entity_id, before)
        store.audit(entity, entity_id, "undo", field=str(row["id"]), before=after, after=before)
    sample_id, _, annotator = entity_id.partition("/")
    return {"sample_id": int(sample_id), "annotator": annotator or None,
            "action": row["action"], "restored": before}
