"""Prompts drafted by a model (a chat-completions server on 127.0.0.1): stored beside the
docstring draft, recorded in the problem's history, refused when they copy the reference."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from llm_support import ChatServer
from mining_support import make_dl_repo, mine_first_commit, mining_workspace

from curator.cli import main
from curator.mining import prompt_drafts
from curator.store import Store
from curator.store import problems as problem_store

GOOD = ("Generate a Python function called `soft_dice_loss` that takes logits and binary "
        "targets of the same shape (N, ...) and returns the mean soft Dice loss over the "
        "batch, with sigmoid probabilities and smoothing `eps` (default 1.0; must be "
        "positive). Raise ValueError on a shape mismatch or an empty batch.")


def copy_of_body(body: dict) -> str:
    """A 'prompt' that pastes the reference's lines (as a model that gives up would)."""
    code = body["messages"][-1]["content"].split("Code:\n```python\n")[1].split("```")[0]
    lines = [line.strip() for line in code.splitlines() if "=" in line]
    return "Do exactly this:\n\n" + "\n".join(lines) + "\n"


def invoke(ws, *args):
    return CliRunner().invoke(main, ["--workspace", str(ws.root), *args])


@pytest.fixture
def server():
    with ChatServer(lambda body: f"```markdown\n{GOOD}\n```") as srv:
        yield srv


def test_draft_stored_beside_docstring_draft_with_model_and_template_hash(workspace, server):
    server.script = [(429, {"retry-after-ms": "10"}), (500, {"retry-after-ms": "10"})]
    result = invoke(workspace, "problems", "draft-prompt", "soft_dice_loss", "--model",
                    "drafter", "--base-url", server.url, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["source"] == "model:drafter" and data["text"] == GOOD + "\n"
    assert data["template_sha256"] == prompt_drafts.template_sha256()
    ask = server.requests[-1]["body"]["messages"][-1]["content"]
    assert "def soft_dice_loss(logits: torch.Tensor, targets: torch.Tensor" in ask
    assert "probs = torch.sigmoid(logits).flatten(1)" in ask          # the function's code
    with Store(workspace.db_path, "tester") as store:
        drafts = prompt_drafts.drafts_of(store, "soft_dice_loss")
        assert [d["source"] for d in drafts] == ["docstring", "model:drafter"]
        prompt = problem_store.get(store, "soft_dice_loss").prompt
        assert drafts[0]["text"] == prompt                 # prompt.md is left as it was
        history = [h for h in store.history("problem", "soft_dice_loss")
                   if h["action"] == "draft_prompt"]
        assert len(history) == 1
        after = history[0]["after"]
        after = json.loads(after) if isinstance(after, str) else after
        assert after == {"model": "drafter", "template_sha256": data["template_sha256"]}
    listed = json.loads(invoke(workspace, "problems", "drafts", "soft_dice_loss",
                               "--json").stdout)
    assert [d["source"] for d in listed["drafts"]] == ["docstring", "model:drafter"]
    used = invoke(workspace, "problems", "drafts", "soft_dice_loss", "--use", "model:drafter")
    assert used.exit_code == 0, used.output
    on_disk = (workspace.problems_dir / "soft_dice_loss" / "prompt.md").read_text()
    assert on_disk == GOOD + "\n"


def test_draft_that_copies_the_reference_is_refused_with_the_reason(workspace):
    with ChatServer(copy_of_body) as server:
        result = invoke(workspace, "problems", "draft-prompt", "soft_dice_loss",
                        "--draft-with", "copier", "--base-url", server.url)
    assert result.exit_code == 1
    assert "refused" in result.output and "consecutive lines of the reference" in result.output
    with Store(workspace.db_path, "tester") as store:
        assert prompt_drafts.drafts_of(store, "soft_dice_loss") == []
        actions = [h["action"] for h in store.history("problem", "soft_dice_loss")]
        assert "draft_prompt_refused" in actions and "draft_prompt" not in actions


def test_copy_check_ignores_trivial_lines_and_counts_runs():
    body = ["    x = a + b", "    y = x * 2", "    return y"]
    assert prompt_drafts.copied_lines("Add a and b, double it, return it.", body) == []
    assert len(prompt_drafts.copied_lines("x = a + b\ny = x * 2\nreturn y", body)) == 2
    three = ["    x = a + b", "    y = x * 2", "    z = y - 1"]
    assert len(prompt_drafts.copied_lines("`x = a + b`\ny = x * 2\n  z = y - 1", three)) == 3


def test_accept_with_draft_never_sends_path_or_repository(tmp_path, server):
    repo = make_dl_repo(tmp_path / "upstream" / "dlrepo")
    ws = mining_workspace(tmp_path / "ws")
    with Store(ws.db_path, "miner") as store:
        ids = mine_first_commit(store, ws, repo)
    result = invoke(ws, "candidates", "accept", str(ids["FocalLoss.forward"]), "--draft-with",
                    "drafter", "--base-url", server.url, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["draft"]["source"] == "model:drafter"
    sent = json.dumps(server.requests[-1]["body"])
    assert "pkg/boxes.py" not in sent and "dlrepo" not in sent
    assert "class FocalLoss" in sent and "def forward(" in sent       # class context
    with Store(ws.db_path, "tester") as store:
        drafts = prompt_drafts.drafts_of(store, data["problem_id"])
        assert [d["source"] for d in drafts] == ["docstring", "model:drafter"]
