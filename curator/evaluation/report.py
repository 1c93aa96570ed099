"""pass@k reports per model: overall, by stage / task / data, and the outcome mix.

Only problems whose latest reference run passed are scored; the others are listed in
"excluded". Samples judged elsewhere (`runs.external`) are scored all the same, since
their reference passed where they were judged; "judged_elsewhere" counts them (the key
is there only when there are some). Per problem, n is the number of evaluated samples
and c the passing ones;
pass@k averages over the problems with n >= k, and is absent where no problem has.
A model evaluated with several techniques gets one entry per technique, "model [technique]".
"""

from __future__ import annotations

import csv
from pathlib import Path

from curator.evaluation.outcomes import PASSED, PENDING, excluded_problems, sample_runs
from curator.evaluation.pass_at_k import KS, mean_pass_at_k, model_key, per_problem
from curator.labels import AXES
from curator.store import Store
from curator.store import problems as problem_rows
from curator.store import samples as sample_rows

UNLABELLED = "unlabelled"


def metrics(counts: list[tuple[int, int]]) -> dict:
    """{"pass@k": .. for k with some n >= k, "problems": .., "samples": ..} for (n, c) pairs."""
    counts = [(n, c) for n, c in counts if n > 0]
    out: dict = {}
    for k in KS:
        value = mean_pass_at_k(counts, k)
        if value is not None:
            out[f"pass@{k}"] = round(value[0], 4)
    out["problems"] = len(counts)
    out["samples"] = sum(n for n, _ in counts)
    return out


def build(store: Store, model: str | None = None, by: str | None = None) -> dict:
    """The report as a JSON-ready dict (shape in the module docstring)."""
    samples = sample_rows.list_rows(store, model=model)
    runs = sample_runs(store)
    outcomes = {sid: run["outcome"] for sid, run in runs.items()}
    # Judged elsewhere against a reference that passed there: scored even when the
    # reference has not run here.
    external = {sid for sid, run in runs.items() if run.get("external")}
    labels = problem_rows.labels_by_id(store)
    excluded = excluded_problems(store, sorted({s["problem_id"] for s in samples
                                                if s["id"] not in external}))
    techniques: dict[str, set[str]] = {}
    for s in samples:
        techniques.setdefault(s["model"], set()).add(s["technique"])

    # key -> problem -> (n, c); key -> outcome -> count
    counts = per_problem(((s["model"], s["technique"], s["problem_id"],
                           None if outcomes.get(s["id"], PENDING) == PENDING
                           else outcomes[s["id"]] == PASSED) for s in samples), skip=set(excluded))
    mixes: dict[str, dict[str, int]] = {}
    judged_elsewhere: dict[str, int] = {}
    for s in samples:
        if s["problem_id"] in excluded:
            continue
        key = model_key(s["model"], s["technique"], techniques[s["model"]])
        outcome = outcomes.get(s["id"], PENDING)
        if s["id"] in external:
            judged_elsewhere[key] = judged_elsewhere.get(key, 0) + 1
        mix = mixes.setdefault(key, {})
        mix[outcome] = mix.get(outcome, 0) + 1
    axes = (by,) if by else AXES
    models: dict[str, dict] = {}
    for key in sorted(mixes):
        problems = counts.get(key, {})
        entry: dict = {"overall": metrics(list(problems.values()))}
        for axis in axes:
            buckets: dict[str, list[tuple[int, int]]] = {}
            for pid, (n, c) in problems.items():
                value = (labels.get(pid) or {}).get(axis) or UNLABELLED
                buckets.setdefault(value, []).append((n, c))
            entry[axis] = {value: metrics(pairs) for value, pairs in sorted(buckets.items())}
        entry["outcomes"] = dict(sorted(mixes[key].items()))
        if judged_elsewhere.get(key):
            entry["judged_elsewhere"] = judged_elsewhere[key]
        models[key] = entry
    return {"models": models, "excluded": sorted(excluded),
            "excluded_reasons": dict(sorted(excluded.items()))}


CSV_COLUMNS = ["model", "breakdown", "label", "problems", "samples"] + [f"pass@{k}" for k in KS]


def _csv_row(model: str, breakdown: str, label: str, m: dict) -> list:
    return [model, breakdown, label, m["problems"], m["samples"]] + [
        m.get(f"pass@{k}", "") for k in KS]


def csv_rows(report: dict) -> list[list]:
    rows = []
    for model, entry in report["models"].items():
        rows.append(_csv_row(model, "overall", "", entry["overall"]))
        for axis in AXES:
            for label, m in entry.get(axis, {}).items():
                rows.append(_csv_row(model, axis, label, m))
    return rows


def write_csv(report: dict, path: str | Path) -> int:
    rows = csv_rows(report)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(CSV_COLUMNS)
        writer.writerows(rows)
    return len(rows)
