"""Accepting and rejecting candidates: draft repo-backed problems, suggestions, the CLI."""

from __future__ import annotations

import ast
import json

import pytest
from click.testing import CliRunner
from mining_support import make_dl_repo, mine_first_commit, mining_workspace

from curator import sync
from curator.cli import main
from curator.errors import CuratorError
from curator.mining import promote
from curator.mining.mine import mine
from curator.problem_files import read_problem
from curator.store import Store
from curator.store import candidates as candidate_store
from curator.store import problems as problem_store


@pytest.fixture(scope="module")
def dl_repo(tmp_path_factory):
    return make_dl_repo(tmp_path_factory.mktemp("upstream") / "dlrepo")


@pytest.fixture
def mined(tmp_path, dl_repo):
    ws = mining_workspace(tmp_path / "ws")
    with Store(ws.db_path, "miner") as store:
        ids = mine_first_commit(store, ws, dl_repo)
        yield ws, store, ids


def invoke(ws, *args):
    return CliRunner().invoke(main, ["--workspace", str(ws.root), *args])


def test_accept_method_creates_draft_repo_backed_problem(mined, dl_repo):
    ws, store, ids = mined
    result = promote.accept(store, ws, ids["FocalLoss.forward"])
    pid = result["problem_id"]
    assert pid == "dlrepo_focal_loss_forward"
    problem = problem_store.get(store, pid)
    assert (problem.kind, problem.entry_point, problem.status) == ("method", "FocalLoss.forward",
                                                                   "draft")
    assert (problem.stage, problem.task, problem.data) == ("", "", "")  # suggestions only
    # no remote URL: the name stands in for it, never the local path
    assert problem.source == {"repo": "dlrepo", "commit": dl_repo["first"],
                              "path": "pkg/boxes.py", "symbol": "FocalLoss.forward",
                              "lines": problem.source["lines"], "license": "MIT"}
    assert problem.test_node_ids == [
        "tests/test_boxes.py::TestFocal::test_gamma_zero_is_bce",
        "tests/test_boxes.py::TestFocal::test_positive",
        "tests/test_boxes.py::TestFocal::test_zero_when_confident"]
    assert problem.tests is None and problem.repo_backed
    solution = problem.solution
    ast.parse(solution)
    for line in ("import torch", "from torch import nn", "import torch.nn.functional as F",
                 "from pkg.common import EPS", "class FocalLoss(nn.Module):",
                 "    def forward(self, logits, targets):"):
        assert line in solution.splitlines(), line
    assert solution.index("from __future__ import annotations") == 0
    assert '"""Mean focal loss of logits against 0/1 targets."""' in solution
    assert "def forward(self, logits, targets):" in problem.prompt
    assert "Mean focal loss of logits against 0/1 targets." in problem.prompt
    folder = ws.problems_dir / pid
    assert {p.name for p in folder.iterdir()} == {"problem.toml", "prompt.md", "solution.py"}
    from_files, _ = read_problem(folder)
    assert from_files.to_dict() == problem.to_dict()
    assert sync.load(store, ws.problems_dir).loaded == []  # files and database agree
    suggestions = candidate_store.suggestions_for(store, pid)
    assert ("stage", "model") in {(s["axis"], s["slug"]) for s in suggestions}
    assert all(s["rule"] and s["evidence"] for s in suggestions)
    assert result["suggested"]["stage"] == "model"
    row = candidate_store.get(store, ids["FocalLoss.forward"])
    assert (row["status"], row["problem_id"]) == ("accepted", pid)
    actions = {a["action"] for a in store.history("candidate", row["id"])}
    assert {"create", "accept"} <= actions
    assert store.history("problem", pid)[0]["action"] == "create"


def test_accept_function_with_custom_id_and_errors(mined):
    ws, store, ids = mined
    result = promote.accept(store, ws, ids["box_area"], "box-area")
    problem = problem_store.get(store, "box-area")
    assert result["problem_id"] == "box-area" and problem.kind == "function"
    assert problem.entry_point == "box_area"
    assert problem.solution.startswith("from __future__ import annotations\n")
    assert "import torch" in problem.solution.splitlines()
    with pytest.raises(CuratorError, match="already problem box-area"):
        promote.accept(store, ws, ids["box_area"])
    with pytest.raises(CuratorError, match="already exists"):
        promote.accept(store, ws, ids["accuracy"], "box-area")
    with pytest.raises(CuratorError, match="must match"):
        promote.accept(store, ws, ids["accuracy"], "Bad Id")
    with pytest.raises(CuratorError, match="not found"):
        promote.accept(store, ws, 9999)


def test_candidate_without_tests_cannot_be_accepted(mined, dl_repo):
    ws, store, _ = mined
    mine(store, ws, str(dl_repo["path"]), rev=dl_repo["first"], with_tests=False)
    row = next(r for r in candidate_store.list_rows(store) if r["qualname"] == "gelu_approx")
    with pytest.raises(CuratorError, match="has no tests"):
        promote.accept(store, ws, row["id"])


def test_reject_needs_a_reason_and_leaves_the_default_list(mined):
    _, store, ids = mined
    with pytest.raises(CuratorError, match="reason"):
        candidate_store.reject(store, ids["accuracy"], "  ")
    row = candidate_store.reject(store, ids["accuracy"], "numpy only, too trivial")
    assert (row["status"], row["reason"]) == ("rejected", "numpy only, too trivial")
    assert "accuracy" not in {r["qualname"] for r in candidate_store.list_rows(store)}
    assert [r["qualname"] for r in candidate_store.list_rows(store, status="rejected")] == [
        "accuracy"]


def test_candidates_cli_list_accept_reject(mined):
    ws, _, ids = mined
    result = invoke(ws, "candidates", "list", "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert len(rows) == 5
    for key in ("id", "repo", "commit", "path", "qualname", "score", "tests", "license"):
        assert key in rows[0]
    assert [r["score"] for r in rows] == sorted((r["score"] for r in rows), reverse=True)
    high = json.loads(invoke(ws, "candidates", "list", "--min-score", "0.6", "--json").output)
    assert high and all(r["score"] >= 0.6 for r in high) and len(high) < len(rows)
    shown = json.loads(invoke(ws, "candidates", "show", str(ids["accuracy"]), "--json").output)
    assert shown["source"].startswith("def accuracy(")
    accepted = invoke(ws, "candidates", "accept", str(ids["accuracy"]), "--id", "acc", "--json")
    assert accepted.exit_code == 0, accepted.output
    assert json.loads(accepted.output)["problem_id"] == "acc"
    assert (ws.problems_dir / "acc" / "problem.toml").is_file()
    assert invoke(ws, "candidates", "reject", str(ids["box_area"])).exit_code == 2
    rejected = invoke(ws, "candidates", "reject", str(ids["box_area"]), "--reason", "dup")
    assert rejected.exit_code == 0 and "rejected" in rejected.output
    missing = invoke(ws, "candidates", "accept", "424242")
    assert missing.exit_code == 1 and missing.stderr.startswith("error: candidate 424242")


def test_repo_set_python_and_list(mined, dl_repo, tmp_path):
    import os
    import sys

    ws, _, _ = mined
    python = os.path.realpath(sys.executable)
    result = invoke(ws, "repo", "set-python", "dlrepo", python, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["python"] == python
    rows = json.loads(invoke(ws, "repo", "list", "--json").output)
    assert rows[0]["python"] == python and rows[0]["license"] == "MIT"
    assert rows[0]["last_commit"] == dl_repo["first"]
    not_python = tmp_path / "nope"
    not_python.write_text("")
    bad = invoke(ws, "repo", "set-python", "dlrepo", str(not_python))
    assert bad.exit_code == 1 and "not an executable" in bad.stderr
    unknown = invoke(ws, "repo", "set-python", "no-such-repo", python)
    assert unknown.exit_code == 1 and "not found" in unknown.stderr
    assert invoke(ws, "repo", "set-python", "dlrepo", "default").exit_code == 0
    assert json.loads(invoke(ws, "repo", "list", "--json").output)[0]["python"] is None


def test_candidates_show_never_cuts_source_lines(mined):
    ws, _, ids = mined
    from curator.store import Store

    with Store(ws.db_path, "tester") as store:
        source = store.one("SELECT source FROM candidates WHERE id = ?",
                           (ids["accuracy"],))["source"]
        long_line = "    # " + "x" * 150 + " end-of-line"
        store.execute("UPDATE candidates SET source = ? WHERE id = ?",
                      (source + long_line + "\n", ids["accuracy"]))
    shown = invoke(ws, "candidates", "show", str(ids["accuracy"]))
    assert shown.exit_code == 0, shown.output
    assert "x" * 150 + " end-of-line" in shown.output
