"""Snapshots of key screens at 80x24 (pytest-textual-snapshot).

The workspace is synthetic and deterministic, so the pictures change only when the app
does. After an intended change to a screen's look, regenerate with
`pytest tests/test_tui_snapshots.py --snapshot-update` and review the new SVGs.
"""

from __future__ import annotations

from tui_support import *  # fixtures: app_for, no_blink, synth_workspace
from tui_support import settle

SIZE = (80, 24)


def test_problems_screen(snap_compare, synth_workspace, app_for):
    async def run_before(pilot):
        await settle(pilot)

    assert snap_compare(app_for(synth_workspace), terminal_size=SIZE, run_before=run_before)


def test_problems_screen_filtered(snap_compare, synth_workspace, app_for):
    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("slash", *"stage:mod -status:retired")
        await settle(pilot)

    assert snap_compare(app_for(synth_workspace), terminal_size=SIZE, run_before=run_before)


def test_problem_labels_tab(snap_compare, synth_workspace, app_for):
    async def run_before(pilot):
        await settle(pilot)
        pilot.app.open_problem("synth_00003_decode_boxes")
        await settle(pilot)
        await pilot.press("alt+4", "down")
        await settle(pilot)

    assert snap_compare(app_for(synth_workspace), terminal_size=SIZE, run_before=run_before)


def test_unsaved_changes_question(snap_compare, synth_workspace, app_for):
    async def run_before(pilot):
        await settle(pilot)
        pilot.app.open_problem("synth_00003_decode_boxes")
        await settle(pilot)
        await pilot.press(*"Edited. ", "ctrl+q")
        await settle(pilot)

    assert snap_compare(app_for(synth_workspace), terminal_size=SIZE, run_before=run_before)
