"""Weak isolation in the app: the top bar says so on every screen (also at 80x24), and
running untrusted code (a mined or imported problem's reference, sample evaluation) asks
once per session; a no runs nothing; references the user wrote are never asked about."""

from __future__ import annotations

import pytest
from execution_support import needs_bwrap
from samples_support import ADD_SOLUTION, make_problems, write_jsonl
from textual.widgets import Button
from tui_support import *  # noqa: F403  (fixtures: app_for, no_blink, synth_workspace)
from tui_support import open_problem, settle

from curator import workspace as workspace_mod
from curator.evaluation import samples as sample_files
from curator.store import Store
from curator.tui.screens.dialogs import ChoiceModal
from curator.tui.weak_consent import CANCEL, RUN
from curator.tui.widgets.nav_bar import NavBar


def weak_workspace(root, extra: str = ""):
    ws = workspace_mod.init(root)
    (ws.root / "curator.toml").write_text(f'[execution]\nisolation = "weak"\n{extra}')
    with Store(ws.db_path, "tester") as store:
        make_problems(store)   # add_one, counter_bump: from a repository; double_it: not
    return workspace_mod.discover(ws.root)


def top_bar(app) -> str:
    return app.screen.query_one(NavBar).render().plain


def reference_runs(app, pid: str) -> int:
    return app.store.one("SELECT COUNT(*) AS n FROM runs WHERE problem_id = ? AND "
                         "sample_id IS NULL", (pid,))["n"]


async def answer(pilot, choice: str) -> None:
    assert isinstance(pilot.app.screen, ChoiceModal), pilot.app.screen
    assert pilot.app.screen.title_text == "Weak isolation"
    pilot.app.screen.query_one(f"#{choice}", Button).press()
    await settle(pilot)


async def press_then_answer(pilot, key: str, choice: str, asks: str = "") -> None:
    """Press `key`, see the weak-isolation question (naming `asks`), answer `choice`."""
    await pilot.press(key)
    await settle(pilot)
    assert isinstance(pilot.app.screen, ChoiceModal), pilot.app.screen
    assert asks in pilot.app.screen.question
    await answer(pilot, choice)


async def press_unasked(pilot, key: str) -> None:
    """Press `key`: nothing is asked."""
    await pilot.press(key)
    await settle(pilot)
    assert not isinstance(pilot.app.screen, ChoiceModal)


@pytest.mark.parametrize("size", [(80, 24), (120, 30)])
async def test_the_top_bar_says_weak_isolation_on_every_screen(tmp_path, app_for, size):
    app = app_for(weak_workspace(tmp_path / "ws"))
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        for key in ("f2", "f3", "f4", "f5", "f6"):
            await pilot.press(key)
            await settle(pilot)
            bar = top_bar(app)
            assert "WEAK ISOLATION" in bar, (key, bar)
            assert "F6 Release" in bar     # the screens stay in sight too


@needs_bwrap
async def test_strong_isolation_shows_nothing_and_asks_nothing(empty_workspace, app_for):
    with Store(empty_workspace.db_path, "tester") as store:
        make_problems(store)
    app = app_for(empty_workspace)
    async with app.run_test(size=(120, 30)) as pilot:
        await open_problem(pilot, "counter_bump")
        assert "ISOLATION" not in top_bar(app)
        await press_unasked(pilot, "ctrl+r")
        assert reference_runs(app, "counter_bump") == 1


async def test_a_mined_problem_asks_once_per_session_the_users_own_never(tmp_path, app_for):
    app = app_for(weak_workspace(tmp_path / "ws"))
    async with app.run_test(size=(120, 30)) as pilot:
        await open_problem(pilot, "double_it")     # written here: runs without a question
        await press_unasked(pilot, "ctrl+r")
        assert reference_runs(app, "double_it") == 1

        await open_problem(pilot, "counter_bump")  # from a repository: asks
        # no: nothing runs, and it asks again
        await press_then_answer(pilot, "ctrl+r", CANCEL, asks="counter_bump")
        assert reference_runs(app, "counter_bump") == 0 and not app.weak_allowed
        await press_then_answer(pilot, "ctrl+r", RUN, asks="counter_bump")
        assert reference_runs(app, "counter_bump") == 1
        assert app.store.one("SELECT outcome FROM runs WHERE problem_id = 'counter_bump'"
                             )["outcome"] == "passed"
        await press_unasked(pilot, "ctrl+r")       # yes holds for the session
        assert reference_runs(app, "counter_bump") == 2


async def test_evaluating_samples_asks_first_and_the_setting_answers_it(tmp_path, app_for):
    ws = weak_workspace(tmp_path / "ws")
    rows = [{"task_id": "add_one", "solution": ADD_SOLUTION}]
    with Store(ws.db_path, "tester") as store:
        sample_files.import_files(store, [write_jsonl(tmp_path / "s.jsonl", rows)], model="m")
    app = app_for(ws)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        await settle(pilot)
        await press_then_answer(pilot, "e", CANCEL, asks="1 sample(s)")
        assert app.store.query("SELECT id FROM runs") == []
        await press_then_answer(pilot, "e", RUN, asks="1 sample(s)")
        outcomes = app.store.query("SELECT outcome FROM runs WHERE sample_id IS NOT NULL")
        assert [r["outcome"] for r in outcomes] == ["passed"]

    # [execution] allow_weak = true is the answer: nothing asked
    ws2 = weak_workspace(tmp_path / "ws2", "allow_weak = true\n")
    with Store(ws2.db_path, "tester") as store:
        sample_files.import_files(store, [write_jsonl(tmp_path / "s.jsonl", rows)], model="m")
    app2 = app_for(ws2)
    async with app2.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        await settle(pilot)
        await press_unasked(pilot, "e")
        assert app2.store.one("SELECT COUNT(*) AS n FROM runs WHERE sample_id IS NOT NULL"
                              )["n"] == 1


@needs_bwrap
async def test_an_ordinary_user_is_asked_before_a_mined_problem_runs_in_the_sandbox(
        empty_workspace, app_for, monkeypatch):
    from curator.execution import trust

    monkeypatch.setattr(trust, "shared_uid", lambda: True)
    monkeypatch.setattr(trust, "writes_confined", lambda: True)
    with Store(empty_workspace.db_path, "tester") as store:
        make_problems(store)
    app = app_for(empty_workspace)
    async with app.run_test(size=(120, 30)) as pilot:
        await open_problem(pilot, "double_it")     # written here: runs without a question
        await press_unasked(pilot, "ctrl+r")
        await open_problem(pilot, "counter_bump")
        # the solution process can write its own folder only: nothing to ask
        await press_unasked(pilot, "ctrl+r")
        assert reference_runs(app, "counter_bump") == 1
        # a kernel without user namespaces for it: the judge's files are within reach
        monkeypatch.setattr(trust, "writes_confined", lambda: False)
        await pilot.press("ctrl+r")
        await settle(pilot)
        modal = pilot.app.screen
        assert isinstance(modal, ChoiceModal) and modal.title_text == "Shared uid"
        assert "counter_bump" in modal.question and "judge's uid" in modal.question
        modal.query_one(f"#{RUN}", Button).press()
        await settle(pilot)
        assert reference_runs(app, "counter_bump") == 2
        await press_unasked(pilot, "ctrl+r")       # the yes holds for the session
        assert reference_runs(app, "counter_bump") == 3
