"""Review: queue, assignment, labels with undo, stats and agreement, adjudication."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from samples_support import add_samples, make_problems, record_run

from curator import review
from curator.cli import main
from curator.errors import CuratorError, NotFoundError
from curator.store import Store

WRONG = [f"def add_one(x):\n    return x + {i}\n" for i in range(2, 8)]  # six failing samples


@pytest.fixture
def ws(empty_workspace):
    return empty_workspace


@pytest.fixture
def db(ws, tmp_path):
    store = Store(ws.db_path, "tester")
    make_problems(store)
    record_run(store, "add_one", "passed")
    record_run(store, "counter_bump", "passed")
    record_run(store, "double_it", "failed")  # reference broken: excluded from review
    yield store
    store.close()


def failing(db, tmp_path, count=6) -> list[int]:
    ids = add_samples(db, tmp_path, [{"task_id": "add_one", "solution": c} for c in WRONG[:count]])
    for sample_id in ids:
        record_run(db, "add_one", "failed", sample_id, stdout="assert 4 == 2",
                   reason="1 of 2 tests failed")
    return ids


def test_queue_holds_failures_with_everything_needed(db, tmp_path):
    ids = failing(db, tmp_path, 2)
    others = add_samples(db, tmp_path, [
        {"task_id": "add_one", "solution": "def add_one(x):\n    return x + 1\n"},  # passes
        {"task_id": "double_it", "solution": "def double(x):\n    return x\n"},     # bad ref
        {"task_id": "counter_bump", "solution": "class Counter: pass\n"},           # pending
        {"task_id": "counter_bump", "response": "no idea"},                         # infra only
    ], name="others.jsonl")
    record_run(db, "add_one", "passed", others[0])
    record_run(db, "double_it", "failed", others[1])
    record_run(db, "counter_bump", "infra", others[3])
    items = review.queue(db)
    assert [i.sample_id for i in items] == ids
    first = items[0]
    assert first.problem_id == "add_one" and first.outcome == "failed"
    assert "Return `x + 1`" in first.prompt
    assert "return x + 1" in first.reference
    assert first.code == WRONG[0]
    assert first.failing_tests == [{"id": "test_solution.py::test_b", "outcome": "failed"}]
    assert "assert 4 == 2" in first.test_output and first.reason == "1 of 2 tests failed"
    # A later passing run takes the sample out of the queue.
    record_run(db, "add_one", "passed", ids[0])
    assert [i.sample_id for i in review.queue(db)] == ids[1:]


def test_assign_overlap_deterministic(db, tmp_path):
    ids = failing(db, tmp_path, 6)
    result = review.assign(db, ["ann", "bob", "cy"], overlap=0.5, seed=7)
    assert result["assigned"] == 6 and result["double"] == 3
    plan: dict = {}
    for row in db.query("SELECT sample_id, annotator FROM review_assignments"):
        plan.setdefault(row["sample_id"], []).append(row["annotator"])
    assert sorted(plan) == ids
    assert sorted(len(v) for v in plan.values()) == [1, 1, 1, 2, 2, 2]
    doubles = [tuple(sorted(v)) for v in plan.values() if len(v) == 2]
    assert len(set(doubles)) == 3  # every pair of annotators shares an item
    loads = {a: sum(a in v for v in plan.values()) for a in ("ann", "bob", "cy")}
    assert sorted(loads.values()) == [3, 3, 3]
    # Assigning again adds nothing; the queue per annotator follows the plan.
    assert review.assign(db, ["ann", "bob", "cy"], overlap=0.5, seed=7)["assigned"] == 0
    assert {i.sample_id for i in review.queue(db, "ann")} == \
        {s for s, v in plan.items() if "ann" in v}
    # Same seed on a fresh database -> same plan.
    db.execute("DELETE FROM review_assignments")
    review.assign(db, ["ann", "bob", "cy"], overlap=0.5, seed=7)
    again: dict = {}
    for row in db.query("SELECT sample_id, annotator FROM review_assignments"):
        again.setdefault(row["sample_id"], []).append(row["annotator"])
    assert again == plan
    with pytest.raises(CuratorError):
        review.assign(db, ["ann"], overlap=0.2)
    with pytest.raises(CuratorError):
        review.assign(db, ["ann", "ann"])


def test_label_validation(db, tmp_path):
    sample = failing(db, tmp_path, 1)[0]
    with pytest.raises(CuratorError, match="at most 2"):
        review.label(db, sample, "ann", pairs=[("1", "a"), ("2", "b"), ("3", "c")])
    with pytest.raises(NotFoundError):
        review.label(db, sample, "ann", pairs=[("42", "no such category")])
    with pytest.raises(CuratorError, match="takes no categories"):
        review.label(db, sample, "ann", pairs=[("1", "x")], verdict="sample-correct")
    with pytest.raises(CuratorError, match="1-2 categories"):
        review.label(db, sample, "ann")
    with pytest.raises(NotFoundError):
        review.label(db, 9999, "ann", pairs=[("1", "x")])
    saved = review.label(db, sample, "ann", pairs=[("10/algebraic-calculation", "adds 2"),
                                                   ("12", "wrong constant")])
    assert saved["pairs"] == [
        {"category": "10", "dl": "algebraic-calculation", "reason": "adds 2"},
        {"category": "12", "dl": None, "reason": "wrong constant"}]
    assert saved["taxonomy_version"] == 1
    verdict = review.label(db, sample, "bob", verdict="benchmark-defect", note="test is wrong")
    assert verdict["verdict"] == "benchmark-defect" and verdict["pairs"] == []


def test_every_label_audited_and_undoable(db, tmp_path):
    a, b = failing(db, tmp_path, 2)
    review.label(db, a, "tester", pairs=[("8", "calls .size wrong")])
    review.label(db, a, "tester", pairs=[("10", "off by one")])
    review.label(db, b, "tester", verdict="sample-correct")
    history = db.history("review_label", f"{a}/tester")
    assert [h["action"] for h in history] == ["label", "label"]
    assert json.loads(history[1]["before"])["pairs"][0]["category"] == "8"

    undone = review.undo(db)
    assert undone["sample_id"] == b and undone["restored"] is None
    assert review.queue(db, "tester")[1].label is None
    undone = review.undo(db)
    assert undone["sample_id"] == a and undone["restored"]["pairs"][0]["category"] == "8"
    undone = review.undo(db)
    assert undone["restored"] is None
    assert db.one("SELECT COUNT(*) AS n FROM review_labels")["n"] == 0
    assert review.undo(db) is None
    assert [h["action"] for h in db.history("review_label", f"{a}/tester")] == \
        ["label", "label", "undo", "undo"]
    # Someone else's actions are theirs to undo.
    other = Store(db.path, "someone")
    review.label(other, a, "someone", pairs=[("1", "x")])
    assert review.undo(db) is None
    assert review.undo(other)["annotator"] == "someone"
    other.close()


def test_stats_agreement_on_constructed_example(db, tmp_path):
    ids = failing(db, tmp_path, 6)
    # ann: 8 8 10 10 2 sample-correct / bob: 8 10 10 10 2 benchmark-defect
    # -> alpha = 60/104 = 0.5769, kappa = 5/9 = 0.5556 (see test_review_agreement.py).
    ann = [("8", "shape-dimension"), ("8", None), ("10", None), ("10", None), ("2", None),
           "sample-correct"]
    bob = [("8", "dl-api-usage"), ("10", None), ("10", "algebraic-calculation"), ("10", None),
           ("2", "not-dl"), "benchmark-defect"]
    for sample_id, a, b in zip(ids, ann, bob):
        for name, value in (("ann", a), ("bob", b)):
            if isinstance(value, str):
                review.label(db, sample_id, name, verdict=value)
            else:
                spec = value[0] + (f"/{value[1]}" if value[1] else "")
                review.label(db, sample_id, name, pairs=[(spec, "because")])
    review.label(db, ids[0], "cy", pairs=[("8", "agrees with both")])
    data = review.stats(db)
    agreement = data["agreement"]
    assert agreement["items"] == 6
    # Adding cy's agreeing label on item 1 changes alpha: recompute by hand.
    # values: 8 x4, 10 x5, 2 x2, sc, bd -> n = 13; item 1 contributes 6 agreeing pairs.
    # disagreeing ordered pairs: 4 -> alpha = 1 - 12 * 4 / (169 - (16+25+4+1+1)) = 1 - 48/122
    assert agreement["krippendorff_alpha"] == round(1 - 48 / 122, 4)
    kappas = {tuple(k["annotators"]): k for k in agreement["cohen_kappa"]}
    assert kappas[("ann", "bob")] == {"annotators": ["ann", "bob"], "items": 6,
                                      "kappa": round(5 / 9, 4)}
    assert kappas[("ann", "cy")]["items"] == 1
    assert [d["sample_id"] for d in data["disagreements"]] == [ids[1], ids[5]]
    assert set(data["disagreements"][0]["labels"]) == {"ann", "bob"}
    # Counts use agreed items only until disagreements are adjudicated.
    cats = data["categories"]
    assert cats["top_level"]["8"] == 1 and cats["top_level"]["10"] == 2
    assert cats["top_level"]["2"] == 1 and cats["unresolved"] == 2
    assert cats["dl_specific"]["shape-dimension"] == 1  # item 1: ann's label (first name)
    assert data["progress"]["ann"]["labelled"] == 6 and data["labelled"] == 6

    review.adjudicate(db, ids[1], accept="bob")
    review.adjudicate(db, ids[5], verdict="benchmark-defect", note="tests contradict prompt")
    data = review.stats(db)
    assert data["adjudicated"] == 2 and data["categories"]["unresolved"] == 0
    assert data["categories"]["top_level"]["10"] == 3
    assert data["categories"]["verdicts"]["benchmark-defect"] == 1
    assert all(d["adjudicated"] for d in data["disagreements"])
    final = db.one("SELECT * FROM review_final WHERE sample_id = ?", (ids[5],))
    assert final["adjudicator"] == "tester" and final["note"] == "tests contradict prompt"
    # Adjudication is undoable like any label.
    assert review.undo(db)["action"] == "adjudicate"
    assert db.one("SELECT COUNT(*) AS n FROM review_final")["n"] == 1


def test_progress_per_annotator(db, tmp_path):
    ids = failing(db, tmp_path, 4)
    review.assign(db, ["ann", "bob"], overlap=0.0, seed=1)
    mine = [i.sample_id for i in review.queue(db, "ann")]
    review.label(db, mine[0], "ann", pairs=[("5", "empty input")])
    progress = review.progress(db)
    assert progress["ann"] == {"assigned": 2, "labelled": 1, "remaining": 1,
                               "labelled_today": 1}
    assert progress["bob"]["remaining"] == 2
    assert [i.sample_id for i in review.queue(db, "ann", pending_only=True)] == mine[1:]
    assert len(ids) == 4


def test_cli_review_flow(ws, db, tmp_path):
    ids = failing(db, tmp_path, 3)
    runner = CliRunner()
    base = ["--workspace", str(ws.root)]
    out = runner.invoke(main, base + ["review", "assign", "--annotators", "ann,bob",
                                      "--overlap", "1", "--json"])
    assert json.loads(out.stdout)["double"] == 3
    out = runner.invoke(main, base + ["--user", "ann", "review", "label", str(ids[0]),
                                      "--category", "8/dl-api-usage", "--reason", "no .sizes",
                                      "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["pairs"][0]["dl"] == "dl-api-usage"
    runner.invoke(main, base + ["--user", "bob", "review", "label", str(ids[0]),
                                "--category", "10", "--reason", "adds 2"])
    out = runner.invoke(main, base + ["review", "label", str(ids[1]), "--category", "8",
                                      "--category", "10", "--reason", "only one"])
    assert out.exit_code == 1 and "one --reason per --category" in out.stderr
    out = runner.invoke(main, base + ["review", "stats", "--json"])
    stats = json.loads(out.stdout)
    assert stats["disagreements"][0]["sample_id"] == ids[0]
    out = runner.invoke(main, base + ["review", "adjudicate", "--json"])
    assert [d["sample_id"] for d in json.loads(out.stdout)] == [ids[0]]
    out = runner.invoke(main, base + ["review", "adjudicate", str(ids[0]), "--accept", "bob"])
    assert out.exit_code == 0 and "final: 10" in out.stdout
    out = runner.invoke(main, base + ["--user", "ann", "review", "undo", "--json"])
    assert json.loads(out.stdout)["undone"]["sample_id"] == ids[0]
    out = runner.invoke(main, base + ["--user", "ann", "review", "undo"])
    assert "nothing to undo" in out.stdout
    out = runner.invoke(main, base + ["review", "queue", "--annotator", "bob", "--json"])
    assert [i["sample_id"] for i in json.loads(out.stdout)] == ids
    text = runner.invoke(main, base + ["review", "stats"]).stdout
    assert "Krippendorff" in text
