"""Review statistics: progress, category counts, agreement, disagreements.

Agreement is measured on one nominal value per label: the verdict, or for a bug the
first (main) category. Items labelled by two or more annotators are the agreement set;
those whose values differ are disagreements, to be adjudicated.

Category counts are over each queue item's effective label: the adjudicated one, else
the one label it has, else the shared value when all annotators agree (the first
annotator's label). Unresolved disagreements are counted separately.

Suggested categories: of the labels saved after suggestions were shown, how many took the
first one (`precision`) and how many chose one of the three (`top3`).
"""

from __future__ import annotations

from curator.review import annotations as review_annotations
from curator.review.agreement import krippendorff_alpha_nominal, pairwise_kappa
from curator.review.queue import progress, queue_ids
from curator.review.suggest import precision
from curator.store import Store
from curator.store import samples as sample_store
from curator.taxonomy import BUG, current


def _effective(labels: dict[str, dict], final: dict | None) -> tuple[dict | None, bool]:
    """(label to count, disagreement?) for one item."""
    if final is not None:
        values = {review_annotations.from_json(v).primary for v in labels.values()}
        return final, len(values) > 1
    if not labels:
        return None, False
    values = {review_annotations.from_json(v).primary for v in labels.values()}
    if len(values) > 1:
        return None, True
    return labels[min(labels)], False


def stats(store: Store, model: str | None = None) -> dict:
    taxonomy = current(store)
    ids = queue_ids(store, model)
    id_set = set(ids)
    by_item: dict[int, dict[str, dict]] = {}
    for row in review_annotations.all_labels(store):
        if row["sample_id"] in id_set:
            by_item.setdefault(row["sample_id"], {})[row["annotator"]] = row
    finals = {k: v for k, v in review_annotations.all_final(store).items() if k in id_set}

    top = {c.id: 0 for c in taxonomy.categories}
    dl = {c.id: 0 for c in taxonomy.dl_categories}
    verdicts = {v.id: 0 for v in taxonomy.verdicts}
    unresolved = 0
    disagreements = []
    for sample_id in ids:
        labels = by_item.get(sample_id, {})
        effective, disagree = _effective(labels, finals.get(sample_id))
        if disagree:
            disagreements.append(sample_id)
        if effective is None:
            unresolved += disagree
            continue
        value = review_annotations.from_json(effective)
        if value.verdict != BUG:
            verdicts[value.verdict] = verdicts.get(value.verdict, 0) + 1
            continue
        for pair in value.pairs:
            top[pair.category] = top.get(pair.category, 0) + 1
            if pair.dl:
                dl[pair.dl] = dl.get(pair.dl, 0) + 1

    # Agreement over items with two or more labels.
    doubly = {i: labels for i, labels in by_item.items() if len(labels) >= 2}
    units = [[review_annotations.from_json(v).primary for v in labels.values()]
             for labels in doubly.values()]
    alpha = krippendorff_alpha_nominal(units)
    per_annotator: dict[str, dict] = {}
    for sample_id, labels in doubly.items():
        for name, row in labels.items():
            per_annotator.setdefault(name, {})[sample_id] = review_annotations.from_json(row).primary
    samples = {r["id"]: r for r in sample_store.identities(store)} if disagreements else {}
    return {
        "items": len(ids),
        "labelled": sum(1 for i in ids if by_item.get(i)),
        "adjudicated": len(finals),
        "progress": progress(store),
        "categories": {"top_level": top, "dl_specific": dl, "verdicts": verdicts,
                       "unresolved": unresolved},
        "suggestions": precision(store, id_set),
        "agreement": {
            "items": len(doubly),
            "krippendorff_alpha": None if alpha is None else round(alpha, 4),
            "cohen_kappa": pairwise_kappa(per_annotator),
        },
        "disagreements": [
            {"sample_id": i, "problem_id": samples[i]["problem_id"],
             "model": samples[i]["model"],
             "labels": {name: {"verdict": row["verdict"], "pairs": row["pairs"],
                               "note": row["note"]}
                        for name, row in by_item[i].items()},
             "adjudicated": i in finals}
            for i in disagreements],
    }
