"""Release screen: the gates report and a bundle built from the app."""

from __future__ import annotations

import json

from release_support import make_releasable
from textual.widgets import DataTable, Input
from tui_support import *  # fixtures: app_for, no_blink, synth_workspace
from tui_support import settle

from curator.store import Store
from curator.tui.screens.dialogs import ChoiceModal, InputModal
from curator.tui.screens.release import ReleaseScreen


async def answer(pilot, text: str) -> None:
    assert isinstance(pilot.app.screen, InputModal)
    pilot.app.screen.query_one(Input).value = text
    await pilot.press("enter")
    await settle(pilot)


async def test_gates_block_then_build_a_bundle(workspace, tmp_path, app_for):
    app = app_for(workspace)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("f6")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ReleaseScreen)
        # no licence and no runs yet: every ready problem is blocked
        assert screen.report["blocking"]
        failing = {(f["problem_id"], f["gate"]) for f in screen.failures}
        assert screen.query_one("#release-failing", DataTable).row_count == len(failing)
        assert any(gate == "reference_passes" for _, gate in failing)
        await pilot.press("b")
        # the version box proposes the next version; Enter accepts it
        assert app.screen.query_one(Input).value == "1.0.0"
        await pilot.press("enter")
        await settle(pilot)
        await answer(pilot, str(tmp_path / "out"))
        # refused: problems fail a gate; the question is in app terms, no CLI flags
        assert isinstance(app.screen, ChoiceModal)
        assert "fail a gate" in app.screen.question and "--" not in app.screen.question
        await pilot.press("enter")   # Cancel has the focus
        await settle(pilot)
        assert not (tmp_path / "out" / "manifest.json").exists()

    with Store(workspace.db_path, "tester") as store:
        ws = make_releasable(workspace, store)
    app = app_for(ws)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("f6")
        await settle(pilot)
        screen = app.screen
        assert screen.report["blocking"] == []
        await pilot.press("b")
        await answer(pilot, "1.0.0")
        await answer(pilot, str(tmp_path / "out"))
        assert isinstance(app.screen, ReleaseScreen)
        # where it went stays on screen, not only in a toast
        output = str(screen.query_one("#release-output").render())
        assert str(tmp_path / "out") in output and "-1.0.0.tar.gz" in output
        # verify it from the app: files only, then the report in the Bundles tab
        await pilot.press("v")
        await settle(pilot)
        assert app.screen.query_one(Input).value.endswith("-1.0.0.tar.gz")
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("enter")   # "Check files"
        await settle(pilot)
        output = str(screen.query_one("#release-output").render())
        assert "Verified" in output and ", ok" in output
        # the next build proposes 1.1.0
        await pilot.press("b")
        await settle(pilot)
        assert app.screen.query_one(Input).value == "1.1.0"
        await pilot.press("escape")
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["version"] == "1.0.0"
    assert list((tmp_path / "out").glob("*-1.0.0.tar.gz"))
    assert app.store.one("SELECT COUNT(*) AS n FROM problems WHERE status = 'released'")["n"]
