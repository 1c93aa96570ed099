"""Snapshots of every screen at 100x30 and 160x45, and key moments at 80x24
(pytest-textual-snapshot).

The workspace is synthetic and deterministic, so the pictures change only when the app
does. After an intended change to a screen's look, regenerate with
`pytest tests/tui/test_tui_snapshots.py --snapshot-update` and review the new SVGs.
"""

from __future__ import annotations

import pytest
from tui_support import *  # fixtures: app_for, no_blink, synth_workspace
from tui_support import settle, wait_for

from curator.tui.screens.release import ReleaseScreen

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


# Every screen at the two sizes the app is designed for (a laptop terminal, a wide one).
SCREENS = {
    "problems": (),
    "problem": ("open",),
    "stats": ("f3",),
    "candidates": ("f4",),
    "review": ("f5",),
    "release": ("f6",),
}


@pytest.mark.parametrize("size", [(100, 30), (160, 45)], ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("screen", list(SCREENS))
def test_every_screen(snap_compare, synth_workspace, app_for, screen, size):
    async def run_before(pilot):
        await settle(pilot)
        for key in SCREENS[screen]:
            if key == "open":
                pilot.app.open_problem("synth_00003_decode_boxes")
            else:
                await pilot.press(key)
            await settle(pilot)
        await pilot.pause(0.3)
        await wait_for(pilot, lambda: screen_settled(pilot.app))
        await settle(pilot)

    app = app_for(synth_workspace)
    app.animation_level = "none"   # no frame of an animation in the picture
    assert snap_compare(app, terminal_size=size, run_before=run_before)


def screen_settled(app) -> bool:
    """The screen has mounted and its own work (the Release screen's gate check) ended.

    A screen pushed by a key mounts, and starts its worker, a moment after the key; on a
    loaded machine that can fall after a plain settle.
    """
    screen = app.screen
    checked = not isinstance(screen, ReleaseScreen) or screen.report is not None
    return (screen.is_mounted and checked and not getattr(screen, "busy", False)
            and not any(worker.is_running for worker in app.workers))
