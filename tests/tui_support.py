"""Helpers for the app's Pilot tests. A test module takes the fixtures with a star import
(so parameters named like them are not flagged as redefinitions) and the helpers by name:

    from tui_support import *  # noqa: F403  (fixtures: app_for, no_blink, synth_workspace)
    from tui_support import open_problem, settle
"""

from __future__ import annotations

import pytest
from textual.widgets import Input, TextArea

from curator import synthetic
from curator import workspace as workspace_mod
from curator.store import Store
from curator.tui.app import CuratorApp

__all__ = ["app_for", "no_blink", "synth_workspace"]   # the fixtures


@pytest.fixture(autouse=True)
def no_blink(monkeypatch):
    """Cursors do not blink in tests, so snapshots are stable."""
    for widget in (TextArea, Input):
        monkeypatch.setattr(widget.__dict__["cursor_blink"], "_default", False)


@pytest.fixture
def app_for():
    """app_for(workspace) -> a CuratorApp on that workspace acting as 'tester'."""
    stores = []

    def make(ws, actor: str = "tester") -> CuratorApp:
        store = Store(ws.db_path, actor)
        stores.append(store)
        return CuratorApp(ws, actor, store=store)

    yield make
    for store in stores:
        store.close()


@pytest.fixture
def synth_workspace(tmp_path) -> workspace_mod.Workspace:
    """30 deterministic synthetic problems: stable content for snapshots."""
    return synthetic.create_workspace(tmp_path / "synth", 30, seed=7, write_files=True,
                                      actor="tester")


async def settle(pilot) -> None:
    """Wait for the app's workers and pending messages instead of sleeping."""
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def wait_for(pilot, condition, tries: int = 1200) -> None:
    """Let the app run until condition() holds (a minute at most, then fail)."""
    for _ in range(tries):
        if condition():
            return
        await pilot.pause(0.05)
    raise AssertionError("condition never held")


async def open_problem(pilot, problem_id: str):
    """Open a problem from the Problems screen, the way a person does (filter, Enter)."""
    from curator.tui.screens.problem import ProblemScreen

    await settle(pilot)
    pilot.app.open_problem(problem_id)
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, ProblemScreen), screen
    assert screen.problem_id == problem_id
    return screen
