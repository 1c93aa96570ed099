"""The bundle records how each label was decided, and the datasheet its agreement."""

from __future__ import annotations

import json

import krippendorff
import numpy as np
import pytest
from release_support import make_releasable

from curator import sync
from curator.panel import rounds
from curator.release import bundle
from curator.store import Store
from curator.store import problems as problem_store

# three problems, three annotators (ana, ben, cy): stage, task, data votes
VOTES = {
    0: [("model", "segmentation", "image"), ("model", "segmentation", "image"),
        ("training", "segmentation", "image")],
    1: [("prepost", "detection", "image"), ("prepost", "general", "image"),
        ("prepost", "classification", "image")],
    2: [("evaluation", "regression", "tabular"), ("inference", "regression", "tabular"),
        ("evaluation", "regression", "other")],
}


def test_bundle_says_how_each_label_was_decided(workspace, store, tmp_path):
    ws = make_releasable(workspace, store)
    ids = sorted(p.name for p in ws.problems_dir.iterdir())
    panel, outside = ids[:3], ids[3]
    rounds.assign(store, ["ana", "ben", "cy"], 3, problems=panel)
    for index, votes in VOTES.items():
        for name, (stage, task, data) in zip(("ana", "ben", "cy"), votes):
            with Store(ws.db_path, name) as own:
                rounds.vote(own, panel[index], name, stage, task, data)
    resolved = rounds.resolve(store, ws.problems_dir)
    assert [(t["problem_id"], t["axis"]) for t in resolved["ties"]] == [(panel[1], "task")]
    with Store(ws.db_path, "lead") as lead:
        rounds.adjudicate(lead, panel[1], ws.problems_dir, task="detection")

    report = bundle.build(store, ws, "1.0.0", tmp_path / "out", name="seed")
    rows = {r["task_id"].split("/")[1]: r for r in
            (json.loads(line) for line in
             (report.out / "annotations.jsonl").read_text(encoding="utf-8").splitlines())
            if r["type"] == "labels"}
    first = rows[panel[0]]
    assert (first["stage"], first["decided"]["stage"]) == (
        "model", {"method": "majority", "votes": 2, "of": 3, "by": "tester"})
    assert first["decided"]["task"] == {"method": "majority", "votes": 3, "of": 3,
                                        "by": "tester"}
    assert first["votes"] == [
        {"annotator": "ana", "stage": "model", "task": "segmentation", "data": "image"},
        {"annotator": "ben", "stage": "model", "task": "segmentation", "data": "image"},
        {"annotator": "cy", "stage": "training", "task": "segmentation", "data": "image"}]
    second = rows[panel[1]]
    assert (second["task"], second["decided"]["task"]) == (
        "detection", {"method": "adjudicated", "votes": 1, "of": 3, "by": "lead"})
    # outside the round: the one person who set it (the loader of the seed)
    assert rows[outside]["decided"]["stage"] == {"method": "single", "votes": None,
                                                 "of": None, "by": "tester"}
    assert rows[outside]["votes"] == []

    readme = (report.out / "README.md").read_text(encoding="utf-8")
    assert "## Label agreement" in readme
    line = next(x for x in readme.splitlines() if x.startswith("| Pipeline stage |")
                and "majority" not in x and x.count("|") == 9)
    cells = [c.strip() for c in line.strip("|").split("|")]
    stage = [[v[0] for v in VOTES[i]] for i in range(3)]
    code = {s: n for n, s in enumerate(sorted({s for row in stage for s in row}))}
    expected = krippendorff.alpha(
        reliability_data=np.array([[code[row[a]] for row in stage] for a in range(3)],
                                  dtype=float), level_of_measurement="nominal")
    assert float(cells[1]) == pytest.approx(expected, abs=5e-4)
    # problems voted, annotators, kappa range, then majority / adjudicated / single
    assert cells[2:4] == ["3", "3"]
    assert cells[5:] == ["3", "0", str(len(ids) - 3)]


def test_a_label_edited_after_its_decision_is_not_credited_to_the_panel(
        workspace, store, tmp_path):
    # the panel decided stage = model (2 of 3); then someone set it to evaluation by hand:
    # the bundle must not say a majority decided a value nobody voted
    ws = make_releasable(workspace, store)
    pid = sorted(p.name for p in ws.problems_dir.iterdir())[0]
    rounds.assign(store, ["ana", "ben", "cy"], 3, problems=[pid])
    for name, (stage, task, data) in zip(("ana", "ben", "cy"), VOTES[0]):
        with Store(ws.db_path, name) as own:
            rounds.vote(own, pid, name, stage, task, data)
    rounds.resolve(store, ws.problems_dir)
    with Store(ws.db_path, "zed") as zed:
        problem = problem_store.get(zed, pid)
        problem.stage = "evaluation"
        sync.save_and_write(zed, problem, ws.problems_dir)

    report = bundle.build(store, ws, "1.0.0", tmp_path / "out", name="seed")
    [row] = [r for r in (json.loads(line) for line in (report.out / "annotations.jsonl")
                         .read_text(encoding="utf-8").splitlines())
             if r["type"] == "labels" and r["task_id"] == f"seed/{pid}"]
    assert row["stage"] == "evaluation"
    assert row["decided"]["stage"] == {"method": "single", "votes": None, "of": None,
                                       "by": "zed"}
    # the axes the edit left alone keep the panel's decision
    assert row["decided"]["task"] == {"method": "majority", "votes": 3, "of": 3,
                                      "by": "tester"}
    readme = (report.out / "README.md").read_text(encoding="utf-8")
    line = next(x for x in readme.splitlines() if x.startswith("| Pipeline stage |")
                and x.count("|") == 9)
    assert [c.strip() for c in line.strip("|").split("|")][5:7] == ["0", "0"]
