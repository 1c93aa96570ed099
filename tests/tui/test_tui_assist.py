"""Model-assisted curation in the app: the accept dialog's model draft, both drafts side by
side, and the Discover tab of the Candidates screen (servers on 127.0.0.1)."""

from __future__ import annotations

import pytest
from github_support import GitHubServer, fake_repos
from llm_support import ChatServer
from mining_support import make_dl_repo, mine_first_commit, mining_workspace
from textual.widgets import DataTable, Input, TextArea
from tui_support import *  # fixtures: app_for, no_blink, synth_workspace
from tui_support import open_problem, settle, wait_for

from curator import workspace as workspace_mod
from curator.repos import discover as discovery
from curator.store import Store
from curator.tui.screens.accept_dialog import AcceptModal
from curator.tui.screens.candidates import CandidatesScreen
from curator.tui.screens.drafts import DraftsScreen

DRAFT = "Generate a Python function called `forward` that computes the focal loss."


@pytest.fixture
def llm_server():
    with ChatServer(lambda body: DRAFT) as server:
        yield server


def configured(root, **tables) -> workspace_mod.Workspace:
    text = "".join(f"[{name}]\n" + "".join(f'{k} = "{v}"\n' for k, v in values.items())
                   for name, values in tables.items())
    (root / "curator.toml").write_text(text, encoding="utf-8")
    return workspace_mod.discover(root)


async def test_accept_dialog_drafts_with_the_model_and_shows_both(tmp_path, llm_server,
                                                                   app_for):
    repo = make_dl_repo(tmp_path / "upstream" / "dlrepo")
    ws = mining_workspace(tmp_path / "ws")
    with Store(ws.db_path, "miner") as store:
        ids = mine_first_commit(store, ws, repo)
    ws = configured(ws.root, llm={"base_url": llm_server.url, "model": "drafter"})
    app = app_for(ws)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("f4")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CandidatesScreen)
        row = next(i for i, r in enumerate(screen.rows) if r["id"] == ids["FocalLoss.forward"])
        screen.query_one("#cand-table", DataTable).move_cursor(row=row)
        await pilot.press("a")
        await settle(pilot)
        assert isinstance(app.screen, AcceptModal)
        app.screen.query_one(Input).value = "focal_forward"
        await pilot.press("ctrl+d")
        # pushed first, mounted (and its drafts read) a moment later on a loaded machine
        await wait_for(pilot, lambda: isinstance(app.screen, DraftsScreen)
                       and bool(app.screen.drafts))
        await settle(pilot)
        drafts = app.screen
        assert drafts.problem_id == "focal_forward"
        left = drafts.query_one("#draft-left", TextArea).text
        right = drafts.query_one("#draft-right", TextArea)
        assert "Implement the method `forward`" in left          # the docstring draft
        assert right.text == DRAFT + "\n"                         # the model's, beside it
        assert "model:drafter" in right.border_title
        right.focus()
        right.insert(" Edited.", right.document.end)
        await pilot.press("ctrl+s")
        await settle(pilot)
        prompt = (ws.problems_dir / "focal_forward" / "prompt.md").read_text()
        assert prompt.startswith(DRAFT) and "Edited." in prompt
        sent = str(llm_server.requests[-1]["body"])
        assert "pkg/boxes.py" not in sent and "dlrepo" not in sent


async def test_problem_screen_opens_the_drafts(workspace, app_for):
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await open_problem(pilot, "soft_dice_loss")
        await pilot.press("ctrl+o")
        await settle(pilot)
        assert isinstance(app.screen, DraftsScreen)
        assert "no model draft yet" in str(app.screen.query_one("#drafts-status").render())


@pytest.mark.parametrize("size", [(100, 30), (80, 24)])
async def test_discover_tab_lists_and_queues(empty_workspace, app_for, monkeypatch, size):
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    with GitHubServer(fake_repos(4)) as gh:
        gh.layout = {"org1/net1": "none"}
        ws = configured(empty_workspace.root, discover={"api_url": gh.url})
        app = app_for(ws)
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            await pilot.press("f4")
            await settle(pilot)
            await pilot.press("alt+2")
            await settle(pilot)
            pane = app.screen.query_one("#discover-pane")
            query = pane.query_one("#discover-query", Input)
            assert query.has_focus
            await pilot.press(*"pytorch --min-stars 500", "enter")
            await wait_for(pilot, lambda: len(pane.repositories) == 4)
            await settle(pilot)
            table = pane.query_one("#discover-table", DataTable)
            assert table.row_count == 4
            assert [str(c) for c in table.get_row_at(1)][:5] == \
                ["org1/net1", "9900", "Apache-2.0", "2026-11-02", "no"]
            status = str(pane.query_one("#discover-status").render())
            assert "anonymous" in status and "4 of 4" in status
            # the whole note is on screen (it wraps), up to what is left of the limit
            on_screen = " ".join(" ".join(strip.text.split()) for strip in
                                 app.screen._compositor.render_strips())
            assert "10 searches a minute)" in on_screen and "left now" in on_screen, \
                on_screen
            table.focus()
            await pilot.press("a")          # a candidate key: not on this tab
            await pilot.press("q")
            await settle(pilot)
            # queued where the searched server keeps it, as `curator discover --mine` does
            queued = [r["url"] for r in discovery.queued(app.store)]
            assert queued == [f"{gh.url}/org0/net0"]
            assert [str(c) for c in table.get_row_at(0)][5] == "yes"
        search = next(r for r in gh.requests if r["path"] == "/search/repositories")
        assert search["query"]["q"] == "topic:pytorch stars:>=500"
