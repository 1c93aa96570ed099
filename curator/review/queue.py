"""The review queue: failing samples (reference passes), who reviews which, and progress.

A sample is in the queue when its latest run did not pass (failed, error, timeout, oom,
crashed, no_code, tampered) and its problem's latest reference run passed, or when that
run was judged elsewhere (`runs.external`, e.g. DL-Bench's own test reports). Samples not evaluated
yet, or whose only runs are `infra`, are not in the queue.

Assignment gives every unassigned queue item to one annotator and a share (`overlap`) of
the items to two, cycling through every pair of annotators so each pair shares items for
agreement. It is deterministic for a given seed.
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from itertools import combinations

from curator.errors import CuratorError
from curator.evaluation.outcomes import PASSED, reference_outcomes, sample_runs
from curator.store import Store, now
from curator.store import review_assignments as assignment_store
from curator.store import review_labels as label_store
from curator.store import samples as sample_store


@dataclass
class ReviewItem:
    sample_id: int
    problem_id: str
    model: str
    technique: str
    sample_index: int
    outcome: str
    entry_point: str = ""
    title: str = ""
    stage: str = ""
    task: str = ""
    data: str = ""
    prompt: str = ""
    reference: str = ""
    code: str | None = None
    raw: str = ""
    extraction: str = ""
    failing_tests: list[dict] = field(default_factory=list)  # [{"id", "outcome"}]
    test_output: str = ""       # stdout + stderr of the run, as captured
    reason: str = ""            # the runner's one-line reason
    evidence: list[str] = field(default_factory=list)  # what a `tampered` run tried
    assigned: list[str] = field(default_factory=list)
    label: dict | None = None   # this annotator's current label
    final: dict | None = None   # the adjudicated label, if any

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def done(self) -> bool:
        return self.label is not None


def _run_evidence(run: dict) -> list[str]:
    """What a `tampered` run tried (stored with the run's environment)."""
    env = run.get("env")
    if isinstance(env, str):
        try:
            env = json.loads(env)
        except ValueError:
            env = {}
    evidence = run.get("evidence") or (env.get("evidence") if isinstance(env, dict) else [])
    return [str(e) for e in evidence or []]


def _run_tests(run: dict) -> list[dict]:
    tests = run.get("tests")
    if isinstance(tests, str):
        try:
            tests = json.loads(tests)
        except json.JSONDecodeError:
            tests = []
    return [t for t in (tests or []) if isinstance(t, dict)]


def queue_ids(store: Store, model: str | None = None) -> list[int]:
    """Sample ids in the review queue, in id order."""
    refs = reference_outcomes(store)
    runs = sample_runs(store)
    rows = sample_store.problem_ids(store, model)
    # A run judged elsewhere came with its own reference baseline (DL-Bench's report
    # shows the reference's run), so it does not wait for the reference to run here.
    return [r["id"] for r in rows
            if r["id"] in runs and runs[r["id"]]["outcome"] != PASSED
            and (refs.get(r["problem_id"]) == PASSED or runs[r["id"]].get("external"))]


def queue(store: Store, annotator: str | None = None, model: str | None = None,
          pending_only: bool = False) -> list[ReviewItem]:
    """Items to review, with everything needed to judge them.

    With an annotator: the items assigned to them (when nobody has any assignment yet,
    every queue item, so a lone reviewer needs no `assign`). `pending_only` drops items
    the annotator already labelled.
    """
    ids = queue_ids(store, model)
    assigned = assignment_store.by_sample(store)
    if annotator is not None and assigned:
        ids = [i for i in ids if annotator in assigned.get(i, [])]
    if not ids:
        return []
    runs = sample_runs(store, ids)
    finals = label_store.all_final(store)
    own = {}
    if annotator is not None:
        own = {r["sample_id"]: r for r in label_store.all_labels(store)
               if r["annotator"] == annotator}
    items = []
    for row in sample_store.with_problems(store, ids):
        if pending_only and row["id"] in own:
            continue
        run = runs[row["id"]]
        tests = _run_tests(run)
        output = "\n".join(x for x in (run.get("stdout") or "", run.get("stderr") or "") if x)
        items.append(ReviewItem(
            sample_id=row["id"], problem_id=row["problem_id"], model=row["model"],
            technique=row["technique"], sample_index=row["sample_index"],
            outcome=run["outcome"], entry_point=row["entry_point"], title=row["title"],
            stage=row["stage"], task=row["task"], data=row["data"], prompt=row["prompt"],
            reference=row["solution"], code=row["code"], raw=row["raw"],
            extraction=row["extraction"],
            failing_tests=[{"id": t.get("id"), "outcome": t.get("outcome")} for t in tests
                           if t.get("outcome") != PASSED],
            test_output=output, reason=run.get("reason") or "",
            evidence=_run_evidence(run),
            assigned=assigned.get(row["id"], []), label=own.get(row["id"]),
            final=finals.get(row["id"])))
    return items


def item(store: Store, sample_id: int, annotator: str | None = None) -> ReviewItem:
    """One queue item (whoever it is assigned to)."""
    for candidate in queue(store, None):
        if candidate.sample_id == int(sample_id):
            if annotator is not None:
                candidate.label = label_store.get(store, candidate.sample_id, annotator)
            return candidate
    raise CuratorError(f"sample {sample_id} is not in the review queue "
                       "(it passed, is not evaluated, or its reference does not pass)")


def assign(store: Store, annotators: list[str], overlap: float = 0.0, seed: int = 0,
           model: str | None = None) -> dict:
    """Assign every unassigned queue item; a share `overlap` of them to two annotators."""
    annotators = [a.strip() for a in annotators if a and a.strip()]
    if not annotators:
        raise CuratorError("give at least one annotator")
    if len(set(annotators)) != len(annotators):
        raise CuratorError("an annotator is listed twice")
    if not 0.0 <= overlap <= 1.0:
        raise CuratorError(f"the share of items given to two annotators (--overlap) must "
                           f"be between 0 and 1, got {overlap}")
    if overlap > 0 and len(annotators) < 2:
        raise CuratorError("an overlap needs at least two annotators")
    assigned = assignment_store.by_sample(store)
    todo = [i for i in queue_ids(store, model) if i not in assigned]
    rng = random.Random(seed)
    order = todo[:]
    rng.shuffle(order)
    n_double = round(overlap * len(order))
    doubles = set(order[:n_double])
    load = {a: sum(a in people for people in assigned.values()) for a in annotators}
    pairs = list(combinations(annotators, 2))
    rng.shuffle(pairs)
    plan: dict[int, list[str]] = {}
    for position, sample_id in enumerate(sorted(doubles)):
        plan[sample_id] = list(pairs[position % len(pairs)])
        for a in plan[sample_id]:
            load[a] += 1
    tiebreak = {a: rng.random() for a in annotators}
    for sample_id in sorted(set(order) - doubles):
        chosen = min(annotators, key=lambda a: (load[a], tiebreak[a]))
        plan[sample_id] = [chosen]
        load[chosen] += 1
    stamp = now()
    with store.transaction():
        for sample_id in sorted(plan):
            for annotator in plan[sample_id]:
                assignment_store.insert(store, sample_id, annotator, sample_id in doubles, stamp)
                store.audit("review_assignment", f"{sample_id}/{annotator}", "assign",
                            after={"overlap": sample_id in doubles, "seed": seed})
    per_annotator = {a: sum(a in people for people in plan.values()) for a in annotators}
    return {"assigned": len(plan), "double": len(doubles), "single": len(plan) - len(doubles),
            "already_assigned": len([i for i in queue_ids(store, model) if i in assigned]),
            "annotators": per_annotator, "seed": seed}


def progress(store: Store, annotator: str | None = None) -> dict[str, dict]:
    """Per annotator: assigned, labelled, remaining, labelled_today (over queue items)."""
    ids = set(queue_ids(store))
    assigned = assignment_store.by_sample(store)
    labels = [r for r in label_store.all_labels(store) if r["sample_id"] in ids]
    names = {a for people in assigned.values() for a in people} | {r["annotator"] for r in labels}
    if annotator is not None:
        names = {annotator}
    today = datetime.now(UTC).date().isoformat()
    out = {}
    for name in sorted(names):
        mine = {i for i, people in assigned.items() if name in people and i in ids}
        if not assigned:
            mine = set(ids)
        done = {r["sample_id"] for r in labels if r["annotator"] == name}
        out[name] = {
            "assigned": len(mine),
            "labelled": len(done & mine) if mine else len(done),
            "remaining": len(mine - done),
            "labelled_today": sum(1 for r in labels if r["annotator"] == name
                                  and str(r["labelled_at"]).startswith(today)),
        }
    return out
