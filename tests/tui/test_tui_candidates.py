"""Candidates screen: mine a repository with progress, accept and reject from the keyboard."""

from __future__ import annotations

import pytest
from mining_support import make_dl_repo, mining_workspace
from textual.widgets import DataTable, Input
from tui_support import *  # fixtures: app_for, no_blink, synth_workspace
from tui_support import settle

from curator.store import problems as problem_store
from curator.tui.screens.candidates import CandidatesScreen
from curator.tui.screens.dialogs import InputModal
from curator.tui.screens.problem import ProblemScreen


@pytest.fixture(scope="module")
def dl_repo(tmp_path_factory):
    return make_dl_repo(tmp_path_factory.mktemp("repo") / "dlrepo")


@pytest.fixture
def mining_ws(tmp_path):
    return mining_workspace(tmp_path / "ws")


async def answer(pilot, text: str) -> None:
    assert isinstance(pilot.app.screen, InputModal)
    pilot.app.screen.query_one(Input).value = text
    await pilot.press("enter")
    await settle(pilot)


async def test_mine_accept_and_reject_from_the_keyboard(mining_ws, dl_repo, app_for):
    app = app_for(mining_ws)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("f4")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CandidatesScreen)
        assert screen.rows == []

        await pilot.press("m")
        await answer(pilot, f"{dl_repo['path']} {dl_repo['first']} --name acme/dlrepo")
        store = app.store
        assert store.one("SELECT name FROM repos")["name"] == "acme/dlrepo"
        mined = store.query("SELECT * FROM candidates WHERE status = 'new' "
                            "ORDER BY score DESC, id")
        assert mined, "mining found nothing"
        assert [r["id"] for r in screen.rows] == [r["id"] for r in mined]
        assert screen.query_one("#cand-table", DataTable).row_count == len(mined)
        n = len(mined)
        summary = lambda: str(screen.query_one("#cand-summary").render())  # noqa: E731
        assert summary() == (f"row 1 of {n} · showing status:new (f changes it) · {n} "
                             f"candidates: {n} new")
        await pilot.press("down")
        await settle(pilot)
        assert summary().startswith(f"row 2 of {n} · showing status:new")
        await pilot.press("up")
        await settle(pilot)

        # accept the top candidate under the id typed into the dialog
        top = screen.current()
        await pilot.press("a")
        await answer(pilot, "mined_top")
        problem = problem_store.get(store, "mined_top")
        assert problem.status == "draft" and problem.test_node_ids == top["tests"]
        assert (mining_ws.problems_dir / "mined_top" / "problem.toml").is_file()
        assert store.one("SELECT status, problem_id FROM candidates WHERE id = ?",
                         (top["id"],)) == {"status": "accepted", "problem_id": "mined_top"}
        assert top["id"] not in [r["id"] for r in screen.rows]

        # reject the next one with a reason; the audit log has who and why
        second = screen.current()
        await pilot.press("r")
        await answer(pilot, "not DL-specific")
        row = store.one("SELECT status, reason FROM candidates WHERE id = ?", (second["id"],))
        assert row == {"status": "rejected", "reason": "not DL-specific"}
        assert store.one("SELECT actor FROM audit WHERE entity = 'candidate' AND "
                         "entity_id = ? AND action = 'reject'",
                         (str(second["id"]),))["actor"] == "tester"

        # f shows other statuses; o opens the problem an accepted candidate became
        await pilot.press("f")   # all
        await settle(pilot)
        assert summary() == (f"row 1 of {n} · showing all statuses (f changes it) · {n} "
                             f"candidates: 1 accepted, {n - 2} new, 1 rejected")
        await pilot.press("f")   # accepted
        await settle(pilot)
        assert [r["id"] for r in screen.rows] == [top["id"]]
        assert summary().startswith("row 1 of 1 · showing status:accepted")
        await pilot.press("o")
        await settle(pilot)
        assert isinstance(app.screen, ProblemScreen)
        assert app.screen.problem_id == "mined_top"


async def test_mining_errors_open_the_error_modal(mining_ws, tmp_path, app_for):
    from curator.tui.screens.dialogs import ErrorModal

    app = app_for(mining_ws)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("f4", "m")
        await settle(pilot)
        await answer(pilot, str(tmp_path / "no-such-repo"))
        assert isinstance(app.screen, ErrorModal)
        assert "no-such-repo" in app.screen.message


async def test_reload_sees_a_cli_mine_and_e_builds_the_repo_environment(
        mining_ws, dl_repo, app_for):
    """ctrl+l shows candidates mined from a shell; e runs the environment build of the
    highlighted candidate's repository (cancelled at once here: building one needs an
    index), and the failure reaches the person as one line."""
    from curator.mining import mine
    from curator.store import Store
    from curator.tui.screens.dialogs import ErrorModal

    app = app_for(mining_ws)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("f4")
        await settle(pilot)
        screen = app.screen
        assert screen.rows == []
        with Store(mining_ws.db_path, "shell") as other:   # as `curator mine` would
            mine.mine(other, mining_ws, str(dl_repo["path"]), dl_repo["first"])
        await pilot.press("ctrl+l")
        await settle(pilot)
        assert screen.rows, "reload did not show the mined candidates"
        calls = []
        import curator.repos.environments as envs

        real = envs.build

        def cancelled_build(store, workspace, ident, **kwargs):
            calls.append(ident)
            return real(store, workspace, ident, progress=kwargs.get("progress"),
                        cancelled=lambda: True)

        envs.build = cancelled_build
        try:
            await pilot.press("e")
            await settle(pilot)
        finally:
            envs.build = real
        assert calls == [screen.current()["repo_name"]]
        assert isinstance(app.screen, ErrorModal)
        assert "cancelled" in app.screen.message
