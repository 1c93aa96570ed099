"""Label rounds through the CLI: three annotators, twelve problems, majority and ties.

The agreement figures are computed independently here with the `krippendorff` package
and scikit-learn, from the votes as the test gives them.
"""

from __future__ import annotations

import json
import tomllib

import krippendorff
import numpy as np
import pytest
from click.testing import CliRunner
from sklearn.metrics import cohen_kappa_score

from curator.cli import main
from curator.store import Store

ANNOTATORS = ("ana", "ben", "cy")

# Per problem (in id order), per annotator (ana, ben, cy): stage, task, data.
STAGE = [("model", "model", "model"), ("prepost", "prepost", "inference"),
         ("evaluation", "evaluation", "evaluation"), ("training", "training", "training"),
         ("model", "training", "model"), ("evaluation", "evaluation", "evaluation"),
         ("prepost", "prepost", "prepost"), ("inference", "inference", "prepost"),
         ("model", "model", "model"), ("evaluation", "model", "evaluation"),
         ("prepost", "prepost", "prepost"), ("training", "training", "model")]
# Problem 4 (index 4) is a three-way tie on task.
TASK = [("classification",) * 3, ("detection", "detection", "general"),
        ("regression",) * 3, ("general",) * 3,
        ("classification", "regression", "general"), ("segmentation",) * 3,
        ("general", "general", "classification"), ("segmentation",) * 3,
        ("classification",) * 3, ("timeseries", "timeseries", "regression"),
        ("general",) * 3, ("recommendation", "recommendation", "general")]
DATA = [("image", "image", "image"), ("image", "image", "other"), ("tabular",) * 3,
        ("other",) * 3, ("image", "image", "text"), ("image",) * 3, ("text",) * 3,
        ("image", "other", "image"), ("image",) * 3, ("tabular",) * 3, ("text",) * 3,
        ("tabular", "tabular", "tabular")]
VOTES = {"stage": STAGE, "task": TASK, "data": DATA}


def invoke(ws, *args, user=None):
    base = ["--workspace", str(ws.root)] + (["--user", user] if user else [])
    result = CliRunner().invoke(main, [*base, *args])
    return result


def ok(ws, *args, user=None) -> dict:
    result = invoke(ws, *args, "--json", user=user)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def expected_alpha(rows) -> float:
    values = sorted({v for row in rows for v in row})
    code = {v: i for i, v in enumerate(values)}
    data = np.array([[code[row[a]] for row in rows] for a in range(3)], dtype=float)
    return krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")


def toml_of(ws, pid) -> dict:
    return tomllib.loads((ws.problems_dir / pid / "problem.toml").read_text(encoding="utf-8"))


@pytest.fixture
def twelve(workspace):
    ids = sorted(p.name for p in workspace.problems_dir.iterdir())[:12]
    assigned = ok(workspace, "labels", "assign", "--annotators", ",".join(ANNOTATORS),
                  "--per-item", "3", "--problems", ",".join(ids))
    assert assigned["assigned"] == 12
    assert assigned["annotators"] == {"ana": 12, "ben": 12, "cy": 12}
    return ids


def vote_all(ws, ids):
    for i, pid in enumerate(ids):
        for a, name in enumerate(ANNOTATORS):
            ok(ws, "labels", "vote", pid, "--stage", STAGE[i][a], "--task", TASK[i][a],
               "--data", DATA[i][a], user=name)


def test_three_annotators_twelve_problems_agreement(workspace, twelve):
    before = ok(workspace, "labels", "stats")
    assert before["items"] == 12 and before["complete"] == 0
    assert before["annotators"]["ana"] == {"assigned": 12, "done": 0}
    vote_all(workspace, twelve)
    stats = ok(workspace, "labels", "stats")
    assert stats["items"] == 12 and stats["complete"] == 12
    assert stats["annotators"] == {a: {"assigned": 12, "done": 12} for a in ANNOTATORS}
    for axis, rows in VOTES.items():
        dim = stats["dimensions"][axis]
        assert dim["items"] == 12
        assert dim["alpha"] == pytest.approx(expected_alpha(rows), abs=5e-5)
        for x, y in (("ana", "ben"), ("ana", "cy"), ("ben", "cy")):
            a, b = ANNOTATORS.index(x), ANNOTATORS.index(y)
            kappa = cohen_kappa_score([r[a] for r in rows], [r[b] for r in rows])
            assert dim["kappa"][f"{x}|{y}"] == pytest.approx(kappa, abs=5e-5)
    # the confusion table counts pairs of votes on one problem: (prepost, prepost,
    # inference) and (inference, inference, prepost) give two prepost/inference pairs each
    confusion = stats["dimensions"]["stage"]["confusion"]
    assert confusion["inference"]["prepost"] == confusion["prepost"]["inference"] == 4
    assert sum(confusion["model"].values()) == sum(
        confusion[x].get("model", 0) for x in confusion)


def test_resolve_majority_tie_and_adjudication(workspace, twelve):
    vote_all(workspace, twelve)
    result = ok(workspace, "labels", "resolve")
    decided = {(r["problem_id"], r["axis"]): r for r in result["resolved"]}
    # 12 x 3 dimensions, less the one three-way tie
    assert len(decided) == 35
    assert result["ties"] == [{"problem_id": twelve[4], "axis": "task",
                               "votes": {"classification": 1, "general": 1,
                                         "regression": 1}}]
    assert result["too_few"] == []
    two_of_three = decided[(twelve[1], "stage")]
    assert (two_of_three["value"], two_of_three["method"], two_of_three["votes"],
            two_of_three["of"]) == ("prepost", "majority", 2, 3)
    assert decided[(twelve[0], "stage")]["votes"] == 3
    # the majority is written to the files and the database
    assert toml_of(workspace, twelve[1])["stage"] == "prepost"
    assert toml_of(workspace, twelve[4])["stage"] == "model"
    assert toml_of(workspace, twelve[9])["data"] == "tabular"
    with Store(workspace.db_path, "x") as store:
        audit = store.query("SELECT * FROM audit WHERE entity = 'label_decision' "
                            "AND entity_id = ? AND field = 'stage'", (twelve[1],))
        problem_row = store.one("SELECT stage FROM problems WHERE id = ?", (twelve[11],))
    assert problem_row["stage"] == "training"
    [after] = [json.loads(a["after"]) for a in audit]
    assert {k: after[k] for k in ("value", "method", "votes", "of", "by")} == \
        {"value": "prepost", "method": "majority", "votes": 2, "of": 3, "by": "tester"}
    # resolving again changes nothing
    assert ok(workspace, "labels", "resolve")["resolved"] == []

    # the tie goes to adjudication, by someone else
    adj = ok(workspace, "labels", "adjudicate", twelve[4], "--task", "general",
             user="lead")
    assert adj["decided"]["task"] == {"value": "general", "method": "adjudicated",
                                      "votes": 1, "of": 3, "by": "lead"}
    assert toml_of(workspace, twelve[4])["task"] == "general"
    assert ok(workspace, "labels", "resolve")["ties"] == []
    # a later vote change re-decides a majority but never overrides the adjudication
    ok(workspace, "labels", "vote", twelve[4], "--stage", "model", "--task", "regression",
       "--data", "image", user="cy")
    assert ok(workspace, "labels", "resolve")["resolved"] == [
        {"problem_id": twelve[4], "axis": "data", "value": "image", "method": "majority",
         "votes": 3, "of": 3}]
    assert toml_of(workspace, twelve[4])["task"] == "general"
    with Store(workspace.db_path, "x") as store:
        rows = store.query("SELECT actor, action, after FROM audit WHERE entity = "
                           "'label_decision' AND entity_id = ? AND field = 'task'",
                           (twelve[4],))
    assert [(r["actor"], r["action"], json.loads(r["after"])["method"]) for r in rows] == [
        ("lead", "adjudicate", "adjudicated")]


def test_too_few_votes_wait_and_single_annotator(workspace):
    ids = sorted(p.name for p in workspace.problems_dir.iterdir())
    ok(workspace, "labels", "assign", "--annotators", "ana,ben", "--per-item", "2",
       "--problems", ids[0], "--dimensions", "stage")
    ok(workspace, "labels", "assign", "--annotators", "cy", "--per-item", "1",
       "--problems", ids[1], "--dimensions", "data")
    ok(workspace, "labels", "vote", ids[0], "--stage", "training", user="ana")
    ok(workspace, "labels", "vote", ids[1], "--data", "text", user="cy")
    result = ok(workspace, "labels", "resolve")
    assert result["too_few"] == [{"problem_id": ids[0], "axis": "stage", "votes": 1,
                                  "needed": 2}]
    assert result["resolved"] == [{"problem_id": ids[1], "axis": "data", "value": "text",
                                   "method": "single", "votes": 1, "of": 1}]
    assert toml_of(workspace, ids[1])["data"] == "text"
    assert toml_of(workspace, ids[0])["stage"] != "training"
    # a two-way split of two votes is a tie
    ok(workspace, "labels", "vote", ids[0], "--stage", "model", user="ben")
    assert ok(workspace, "labels", "resolve")["ties"] == [
        {"problem_id": ids[0], "axis": "stage", "votes": {"model": 1, "training": 1}}]


def test_vote_checks_and_undo(workspace, twelve):
    pid = twelve[0]
    missing = invoke(workspace, "labels", "vote", pid, "--stage", "model", user="ana")
    assert missing.exit_code == 1
    assert missing.output.strip() == (f"error: problem {pid}: ana is to vote stage, task, "
                                      "data; give --task and --data too")
    bad = invoke(workspace, "labels", "vote", pid, "--stage", "modle", "--task", "general",
                 "--data", "image", user="ana")
    assert bad.exit_code == 1 and "'modle' is not a stage label" in bad.output
    assert invoke(workspace, "labels", "vote", "no_such", "--stage", "model",
                  user="ana").output.strip() == "error: problem 'no_such' not found"
    ok(workspace, "labels", "vote", pid, "--stage", "model", "--task", "general", "--data",
       "image", user="ana")
    ok(workspace, "labels", "vote", pid, "--stage", "training", "--task", "general",
       "--data", "image", "--note", "a loop", user="ana")
    # undo is per person: ben has nothing to undo
    assert ok(workspace, "labels", "undo", user="ben") == {"undone": None}
    first = ok(workspace, "labels", "undo", user="ana")["undone"]
    assert first["restored"]["stage"] == "model"
    second = ok(workspace, "labels", "undo", user="ana")["undone"]
    assert second["restored"] is None
    assert ok(workspace, "labels", "undo", user="ana") == {"undone": None}
    with Store(workspace.db_path, "x") as store:
        assert store.query("SELECT * FROM label_votes") == []
    # the vocabulary listing still works as before
    rows = ok(workspace, "labels")
    assert {r["axis"] for r in rows} == {"stage", "task", "data"}


def test_user_may_follow_the_command(workspace, twelve):
    # The form: `curator labels vote ID --stage S ... --user ana`.
    pid = twelve[1]
    voted = ok(workspace, "labels", "vote", pid, "--stage", "model", "--task", "general",
               "--data", "image", "--user", "ben", user="tester")
    assert voted["annotator"] == "ben"
    assert ok(workspace, "labels", "undo", "--user", "ben")["undone"]["restored"] is None
    with Store(workspace.db_path, "x") as store:
        assert store.query("SELECT * FROM label_votes") == []


def test_assign_is_balanced_and_checks_its_input(workspace):
    result = ok(workspace, "labels", "assign", "--annotators", "ana,ben,cy,dee",
                "--per-item", "3", "--status", "draft")
    counts = list(result["annotators"].values())
    assert sum(counts) == 3 * result["assigned"] and max(counts) - min(counts) <= 1
    again = ok(workspace, "labels", "assign", "--annotators", "ana,ben,cy,dee",
               "--per-item", "3", "--status", "draft")
    assert again["assigned"] == 0 and again["already_assigned"] == result["assigned"]
    too_many = invoke(workspace, "labels", "assign", "--annotators", "ana,ben",
                      "--per-item", "3")
    assert too_many.exit_code == 1 and "--per-item must be between 1 and" in too_many.output
    dims = invoke(workspace, "labels", "assign", "--annotators", "ana", "--per-item", "1",
                  "--dimensions", "stage,colour")
    assert dims.exit_code == 1 and "unknown dimension(s) colour" in dims.output


def test_undo_takes_back_an_adjudication_and_a_whole_resolve(workspace, twelve):
    vote_all(workspace, twelve)
    with Store(workspace.db_path, "x") as store:
        labels_before = {r["id"]: (r["stage"], r["task"], r["data"]) for r in store.query(
            "SELECT id, stage, task, data FROM problems")}
    resolved = ok(workspace, "labels", "resolve", user="lead")["resolved"]
    assert len(resolved) == 35
    tie = twelve[4]
    ok(workspace, "labels", "adjudicate", tie, "--task", "general", "--stage", "training",
       user="lead")
    assert toml_of(workspace, tie)["task"] == "general"

    # lead's last act is the adjudication: both axes go back (stage to its majority)
    first = ok(workspace, "labels", "undo", user="lead")["undone"]
    assert first["action"] == "adjudicate" and first["problem_id"] == tie
    back = {d["axis"]: d for d in first["decisions"]}
    assert back["task"]["restored"] is None
    assert (back["stage"]["restored"]["value"], back["stage"]["restored"]["method"],
            back["stage"]["label"]) == ("model", "majority", "model")
    assert toml_of(workspace, tie)["task"] == labels_before[tie][1]
    assert toml_of(workspace, tie)["stage"] == "model"
    with Store(workspace.db_path, "x") as store:
        decisions = store.query("SELECT axis, method, decided_by FROM label_decisions "
                                "WHERE problem_id = ? ORDER BY axis", (tie,))
    assert [(d["axis"], d["method"], d["decided_by"]) for d in decisions] == [
        ("data", "majority", "lead"), ("stage", "majority", "lead")]

    # then the resolve, every decision it made, and every label it wrote
    second = ok(workspace, "labels", "undo", user="lead")["undone"]
    assert second["action"] == "resolve" and len(second["decisions"]) == 35
    with Store(workspace.db_path, "x") as store:
        assert store.query("SELECT * FROM label_decisions") == []
        now = {r["id"]: (r["stage"], r["task"], r["data"]) for r in store.query(
            "SELECT id, stage, task, data FROM problems")}
        undo_rows = store.query("SELECT actor, field FROM audit WHERE entity = "
                                "'label_decision' AND action = 'undo'")
        acts = store.query("SELECT id FROM audit WHERE entity = 'label_decision' AND "
                           "action IN ('resolve', 'adjudicate')")
    assert now == labels_before
    assert toml_of(workspace, twelve[1])["stage"] == labels_before[twelve[1]][0]
    # the audit log says so: one undo row per decision row, naming it
    assert len(undo_rows) == 37 and {r["actor"] for r in undo_rows} == {"lead"}
    assert {int(r["field"]) for r in undo_rows} == {a["id"] for a in acts}
    # the votes are untouched; nothing of lead's is left; resolving again re-decides
    assert ok(workspace, "labels", "undo", user="lead") == {"undone": None}
    assert ok(workspace, "labels", "stats")["complete"] == 12
    assert len(ok(workspace, "labels", "resolve")["resolved"]) == 35
    text = invoke(workspace, "labels", "undo", user="tester").output
    assert text.strip().endswith("undid your resolve: 35 decision(s) taken back")


def test_undo_refuses_when_the_label_was_edited_since(workspace):
    ids = sorted(p.name for p in workspace.problems_dir.iterdir())
    ok(workspace, "labels", "adjudicate", ids[0], "--stage", "training", user="lead")
    assert invoke(workspace, "problems", "set", ids[0], "--stage", "model").exit_code == 0
    refused = invoke(workspace, "labels", "undo", user="lead")
    assert refused.exit_code == 1
    assert refused.output.strip() == (f"error: problem {ids[0]}: its stage label was changed "
                                      "to 'model' since your adjudicate; nothing undone")
    assert toml_of(workspace, ids[0])["stage"] == "model"


def test_problems_show_and_list_are_blind_until_you_vote(workspace):
    ids = sorted(p.name for p in workspace.problems_dir.iterdir())
    pid = ids[0]
    truth = toml_of(workspace, pid)
    ok(workspace, "labels", "assign", "--annotators", "ana,ben", "--per-item", "2",
       "--problems", pid)
    shown = ok(workspace, "problems", "show", pid, user="ana")
    assert (shown["stage"], shown["task"], shown["data"]) == ("blind",) * 3
    text = invoke(workspace, "problems", "show", pid, user="ana").output
    assert truth["stage"] not in {w for line in text.splitlines()[:8] for w in line.split()}
    listed = {r["id"]: r for r in ok(workspace, "problems", "list", user="ana")}
    assert listed[pid]["stage"] == "blind" and listed[ids[1]]["stage"] != "blind"
    # a label filter does not tell it apart either
    filtered = ok(workspace, "problems", "list", "--stage", truth["stage"], user="ana")
    assert pid not in {r["id"] for r in filtered}
    # someone not in the round, and ana once she has voted, see it as before
    assert ok(workspace, "problems", "show", pid, user="lead")["stage"] == truth["stage"]
    ok(workspace, "labels", "vote", pid, "--stage", "model", "--task", "general", "--data",
       "image", user="ana")
    assert ok(workspace, "problems", "show", pid, user="ana")["stage"] == truth["stage"]
    filtered = ok(workspace, "problems", "list", "--stage", truth["stage"], user="ana")
    assert pid in {r["id"] for r in filtered}
    assert ok(workspace, "problems", "show", pid, user="ben")["stage"] == "blind"
