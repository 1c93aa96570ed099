"""Failure review: the queue of failing samples, labels in the bug taxonomy, agreement.

The functions the CLI and the TUI call:

    queue(store, annotator)        -> [ReviewItem] (prompt, reference, code, failing tests)
    item(store, sample_id)         -> ReviewItem
    label(store, sample_id, annotator, pairs=[(category, reason)], verdict=None)
    undo(store)                    -> what was undone, or None
    progress(store, annotator)     -> {annotator: {assigned, labelled, remaining, ...}}
    assign(store, annotators, overlap, seed)
    adjudicate(store, sample_id, pairs=..., verdict=..., accept=annotator)
    stats(store)                   -> progress, category counts, agreement, disagreements
"""

from curator.review.annotations import VERDICTS, adjudicate, clear, label, undo
from curator.review.queue import ReviewItem, assign, item, progress, queue, queue_ids
from curator.review.stats import stats

__all__ = ["VERDICTS", "ReviewItem", "adjudicate", "assign", "clear", "item", "label",
           "progress", "queue", "queue_ids", "stats", "undo"]
