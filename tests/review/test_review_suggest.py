"""Suggested review categories on real failure logs produced by the engine.

The samples below run on copies of the seed problems through the sandboxed engine; the
rules read the logs those runs stored. A model's suggestions come from a chat-completions
server on 127.0.0.1 (with a 429 and a 500 first).
"""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest
from click.testing import CliRunner
from llm_support import ChatServer
from samples_support import add_samples, make_problems, write_jsonl

from curator import llm, sync
from curator import workspace as workspace_mod
from curator.cli import main
from curator.evaluation import evaluate
from curator.evaluation import samples as sample_files
from curator.execution.engine import Engine
from curator.execution.job import RunResult
from curator.review import annotations
from curator.review import suggest as suggestions
from curator.review.queue import item as queue_item
from curator.store import Store
from curator.store.runs import record

SYNTAX = '''import torch


def normalize_batch(images, mean, std):
    mean_t = torch.as_tensor(mean, dtype=images.dtype).view(1, -1, 1, 1
    return (images - mean_t) / torch.as_tensor(std).view(1, -1, 1, 1)
'''
MISSING_ATTRIBUTE = '''import torch


def normalize_batch(images, mean, std):
    if images.dim() != 4:
        raise ValueError("images must be 4-d")
    return torch.normalize_channels(images, torch.as_tensor(mean), torch.as_tensor(std))
'''
UNDEFINED_NAME = '''import torch


def box_iou(boxes1, boxes2):
    area1 = _box_area(boxes1)
    area2 = _box_area(boxes2)
    top_left = torch.maximum(boxes1[:, None, :2], boxes2[None, :, :2])
    bottom_right = torch.minimum(boxes1[:, None, 2:], boxes2[None, :, 2:])
    wh = (bottom_right - top_left).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    return inter / (area1[:, None] + area2[None, :] - inter)
'''
SHAPE_MISMATCH = '''import torch


def normalize_batch(images, mean, std):
    if images.dim() != 4:
        raise ValueError("images must be 4-d")
    mean_t = torch.as_tensor(mean, dtype=images.dtype)
    std_t = torch.as_tensor(std, dtype=images.dtype)
    return (images - mean_t) / std_t
'''
IMPORT_TIME_ATTRIBUTE = '''import torch

_EPS = torch.tiny_eps


def normalize_batch(images, mean, std):
    return (images - torch.as_tensor(mean)) / (torch.as_tensor(std) + _EPS)
'''
ROWS = [{"task_id": "normalize_image_batch", "solution": SYNTAX, "sample_index": 0},
        {"task_id": "normalize_image_batch", "solution": MISSING_ATTRIBUTE, "sample_index": 1},
        {"task_id": "pairwise_box_iou", "solution": UNDEFINED_NAME, "sample_index": 0},
        {"task_id": "normalize_image_batch", "solution": SHAPE_MISMATCH, "sample_index": 2},
        {"task_id": "normalize_image_batch", "solution": IMPORT_TIME_ATTRIBUTE,
         "sample_index": 3}]


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory, seed_dir):
    """A workspace of the seed problems whose four failing samples ran through the engine."""
    root = tmp_path_factory.mktemp("suggest")
    ws = workspace_mod.init(root / "ws")
    shutil.rmtree(ws.problems_dir)
    shutil.copytree(seed_dir, ws.problems_dir)
    with Store(ws.db_path, "tester") as store:
        assert not sync.load(store, ws.problems_dir).errors
        ids = sample_files.import_files(store, [write_jsonl(root / "s.jsonl", ROWS)],
                                        model="m1").sample_ids
        with Engine(workers=2) as engine:
            report = evaluate.evaluate(store, ws, engine=engine)
        assert report.evaluated == len(ROWS)
    return ws, dict(zip(["syntax", "attribute", "name", "shape", "import_time"], ids))


@pytest.fixture
def db(evaluated):
    ws, _ = evaluated
    store = Store(ws.db_path, "ana")
    yield store
    store.close()


def _first(store: Store, sample_id: int) -> suggestions.Suggestion:
    return suggestions.rule_suggestions(queue_item(store, sample_id))[0]


def test_rules_on_engine_failure_logs(db, evaluated):
    _, ids = evaluated
    syntax = suggestions.rule_suggestions(queue_item(db, ids["syntax"]))
    assert (syntax[0].category, syntax[0].dl) == ("2", "not-dl")
    assert "never closed" in syntax[0].evidence
    attribute = _first(db, ids["attribute"])
    assert (attribute.category, attribute.dl) == ("8", "dl-api-usage")
    assert attribute.evidence == \
        "AttributeError: module 'torch' has no attribute 'normalize_channels'"
    name = suggestions.rule_suggestions(queue_item(db, ids["name"]))
    assert [s.category for s in name][:2] == ["7", "11"]
    assert "'_box_area' is not defined" in name[0].evidence
    shape = suggestions.rule_suggestions(queue_item(db, ids["shape"]))
    assert [(s.category, s.dl) for s in shape][:2] == \
        [("10", "shape-in-operation"), ("1", "shape-dimension")]
    assert "must match the size of tensor b" in shape[0].evidence
    assert all(len(suggestions.rule_suggestions(queue_item(db, i))) <= 3 for i in ids.values())


def test_rules_read_the_error_inside_the_engines_import_error(db, evaluated):
    """The engine reports a solution that fails while importing as "ImportError: the
    solution did not import: <the error>"; the rules judge the error inside, not a
    missing module (7, 15)."""
    _, ids = evaluated
    syntax = suggestions.rule_suggestions(queue_item(db, ids["syntax"]))
    assert "the solution did not import" in queue_item(db, ids["syntax"]).test_output
    assert syntax[0].category == "2"
    assert not {"7", "15"} & {s.category for s in syntax}, syntax
    at_import = suggestions.rule_suggestions(queue_item(db, ids["import_time"]))
    assert "the solution did not import: AttributeError" in \
        queue_item(db, ids["import_time"]).test_output
    assert (at_import[0].category, at_import[0].dl) == ("8", "dl-api-usage"), at_import
    assert "module 'torch' has no attribute 'tiny_eps'" in at_import[0].evidence
    assert not {"7", "15"} & {s.category for s in at_import}, at_import


def test_cli_suggest_json_is_exact(evaluated):
    ws, ids = evaluated
    result = CliRunner().invoke(main, ["--workspace", str(ws.root), "review", "suggest",
                                       str(ids["attribute"]), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert list(data) == ["suggestions"]
    (entry,) = data["suggestions"]
    assert entry["sample_id"] == ids["attribute"]
    assert entry["problem_id"] == "normalize_image_batch"
    assert list(entry) == ["sample_id", "problem_id", "categories"]
    assert entry["categories"][0] == {
        "id": 8, "sub": "incorrect API usage",
        "evidence": "AttributeError: module 'torch' has no attribute 'normalize_channels'"}
    every = json.loads(CliRunner().invoke(main, ["--workspace", str(ws.root), "review",
                                                 "suggest", "--json"]).stdout)
    assert sorted(e["sample_id"] for e in every["suggestions"]) == sorted(ids.values())
    outside = CliRunner().invoke(main, ["--workspace", str(ws.root), "review", "suggest",
                                        "99999"])
    assert outside.exit_code == 1 and "not in the review queue" in outside.output


def test_suggestions_are_not_labels_until_accepted_and_precision_counts(db, evaluated):
    ws, ids = evaluated
    suggestions.suggest(db)
    assert annotations.get(db, ids["attribute"], "ana") is None   # suggested, not labelled
    accepted = annotations.accept_suggestion(db, ids["attribute"], "ana")
    assert accepted["pairs"][0]["category"] == "8"
    assert accepted["pairs"][0]["dl"] == "dl-api-usage"
    annotations.label(db, ids["shape"], "ana", pairs=[("1/shape-dimension", "wrong axis")])
    annotations.label(db, ids["name"], "ana", pairs=[("11", "meant another helper")])
    used = {r["sample_id"]: r for r in db.query("SELECT * FROM review_suggestion_uses")}
    assert used[ids["attribute"]]["accepted"] == 1 and used[ids["attribute"]]["by_key"] == 1
    assert used[ids["shape"]]["accepted"] == 0 and used[ids["shape"]]["chosen"] == "1"
    result = CliRunner().invoke(main, ["--workspace", str(ws.root), "review", "stats",
                                       "--json"])
    stats = json.loads(result.stdout)["suggestions"]
    assert stats["decided"] == 3 and stats["accepted"] == 1 and stats["overridden"] == 2
    assert stats["precision"] == round(1 / 3, 4) and stats["top3"] == 1.0
    text = CliRunner().invoke(main, ["--workspace", str(ws.root), "review", "stats"]).output
    assert "first taken on 1 of 3" in text


def test_model_suggestions_follow_the_rules_and_are_paid_once(db, evaluated):
    _, ids = evaluated

    def answer(body: dict) -> str:
        assert "normalize_channels" in body["messages"][-1]["content"]   # the sample's code
        return json.dumps({"categories": [
            {"id": 8, "sub": "dl-api-usage", "evidence": "model: same as the rules"},
            {"id": "6.0", "sub": "Type mismatch", "evidence": "model: a list, not a tensor"},
            {"id": 99, "sub": "x", "evidence": "not a category"}]})

    with ChatServer(answer) as server:
        server.script = [(429, {"retry-after-ms": "10"}), (500, {"retry-after-ms": "10"})]
        client = llm.ChatClient(server.url, max_retries=3)
        (entry,) = suggestions.suggest(db, [ids["attribute"]], client, "judge-model")
        assert [(s.category, s.source) for s in entry.categories] == \
            [("8", "rules"), ("1", "rules"), ("6", "model:judge-model")]
        assert entry.categories[2].dl == "type-mismatch"
        assert client.retries == 2 and len(server.requests) == 3
        suggestions.suggest(db, [ids["attribute"]], client, "judge-model")
        assert len(server.requests) == 3          # the stored answer was reused


def test_rules_without_a_log_line():
    bare = suggestions.ReviewItem(1, "p", "m", "t", 0, "timeout", reason="timed out after 3s")
    assert [s.category for s in suggestions.rule_suggestions(bare)] == ["13"]
    nothing = suggestions.ReviewItem(2, "p", "m", "t", 0, "failed")
    assert suggestions.rule_suggestions(nothing) == []


def test_samples_judged_elsewhere_get_suggestions_too(empty_workspace, tmp_path):
    """A sample whose failure came with DL-Bench's own report (runs.external, no reference
    run here) is in the queue, and `review suggest` reads that report's log."""
    log = ("E       AttributeError: module 'torch' has no attribute 'interp'\n\n"
           "solution.py:3: AttributeError\n")
    with Store(empty_workspace.db_path, "tester") as store:
        make_problems(store)
        (sample_id,) = add_samples(store, tmp_path, [
            {"task_id": "add_one", "solution": "import torch\n\ndef add_one(x):\n"
                                               "    return torch.interp(x, 1)\n"}])
        code = store.one("SELECT code FROM samples WHERE id = ?", (sample_id,))["code"]
        record(store, RunResult(job_id="dlbench-1", problem_id="add_one", outcome="failed",
                                tests=[{"id": "test_solution.py::test_a",
                                        "outcome": "failed"}],
                                duration_s=0.0, stdout=log),
               "sample", hashlib.sha256(code.encode()).hexdigest(), sample_id=sample_id,
               external="dlbench-taxonomy")
    result = CliRunner().invoke(main, ["--workspace", str(empty_workspace.root), "review",
                                       "suggest", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"suggestions": [{
        "sample_id": sample_id, "problem_id": "add_one",
        "categories": [{"id": 8, "sub": "incorrect API usage",
                        "evidence": "AttributeError: module 'torch' has no attribute "
                                    "'interp'"},
                       {"id": 1, "sub": "not DL-related",
                        "evidence": "AttributeError: module 'torch' has no attribute "
                                    "'interp'"}]}]}
