"""Cancelling mining: Ctrl-C in the CLI and cancel in the app stop the work within about a
second and leave the database as it was."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from mining_support import make_slow_repo, mining_workspace
from textual.widgets import Input
from tui_support import *  # noqa: F403 (fixtures: app_for, no_blink, synth_workspace)

from curator.store import Store
from curator.tui.messages import TaskProgress
from curator.tui.screens.candidates import CandidatesScreen

# Generous for a loaded 2-core machine; the figure the tests measure is printed on failure.
STOP_WITHIN = 3.0


@pytest.fixture(scope="module")
def slow_repo(tmp_path_factory):
    return make_slow_repo(tmp_path_factory.mktemp("slow") / "slowrepo")


def untouched(ws) -> None:
    with Store(ws.db_path, "checker") as store:
        for table in ("repos", "candidates", "mined_commits"):
            assert store.one(f"SELECT COUNT(*) AS n FROM {table}")["n"] == 0, table


def test_ctrl_c_stops_the_cli_and_writes_nothing(tmp_path, slow_repo):
    ws = mining_workspace(tmp_path / "ws")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "curator", "--workspace", str(ws.root), "mine",
         str(slow_repo), "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    # wait until the clone is in place, so the interrupt lands in parsing or linking
    deadline = time.monotonic() + 60
    while not any(ws.repos_dir.glob("*.git/HEAD")) and time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    time.sleep(0.5)
    assert proc.poll() is None, "mining finished before it could be interrupted"
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    took = time.monotonic() - sent
    assert took < STOP_WITHIN, f"stopped {took:.2f} s after Ctrl-C"
    assert proc.returncode == 130, (proc.returncode, err)
    assert out == b""   # --json prints nothing for a run that did not finish
    assert err.decode().strip() == "error: mining cancelled; nothing was written"
    untouched(ws)


async def test_cancel_in_the_app_stops_the_worker_thread(tmp_path, slow_repo, app_for):
    ws = mining_workspace(tmp_path / "ws")
    labels: list[str] = []

    def hook(message) -> None:
        if isinstance(message, TaskProgress):
            labels.append(message.label)

    app = app_for(ws)
    async with app.run_test(size=(100, 30), message_hook=hook) as pilot:
        await pilot.press("f4")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CandidatesScreen)
        await pilot.press("m")
        await pilot.pause()
        app.screen.query_one(Input).value = str(slow_repo)
        await pilot.press("enter")
        deadline = time.monotonic() + 60
        while not any(label.startswith("parse") for label in labels):
            assert time.monotonic() < deadline and screen._mining is not None
            await pilot.pause(0.05)
        assert labels[0] == "fetch"
        await pilot.press("ctrl+g")
        sent = time.monotonic()
        # _mining is cleared by the message the mining function posts as it returns (its
        # `finally`), so this waits for the work itself to end, not for the worker state
        while screen._mining is not None:
            assert time.monotonic() - sent < 30
            await pilot.pause(0.05)
        took = time.monotonic() - sent
        assert took < STOP_WITHIN, f"the worker ran {took:.2f} s after cancel"
        label = str(screen.query_one("#task-label").render())
        assert label == "mining cancelled; nothing was written"
        assert any(label.startswith("parse") for label in labels)
    untouched(ws)
