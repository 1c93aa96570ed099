"""run_task: a core function in a thread with its own Store connection, progress, cancel
and the error modal; TaskEnded comes back as the thread's last act. And the messages
screens post reach the App's handlers."""

from __future__ import annotations

import threading
import time

from tui_support import *  # noqa: F403 (fixtures: app_for, no_blink, synth_workspace)
from tui_support import settle

from curator.errors import Cancelled, CuratorError
from curator.store import Store
from curator.tui.messages import DataChanged, OpenProblem, ShowError, TaskProgress
from curator.tui.screens.dialogs import ErrorModal
from curator.tui.screens.problem import ProblemScreen
from curator.tui.tasks import TaskEnded, run_task
from curator.tui.widgets.task_bar import TaskBar


def _hook(seen: list):
    def hook(message) -> None:
        if isinstance(message, (TaskEnded, TaskProgress)):
            seen.append(message)
    return hook


async def _until(pilot, condition, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline
        await pilot.pause(0.05)


async def test_a_task_writes_on_its_own_connection_and_reports_progress(workspace, app_for):
    seen: list = []
    app = app_for(workspace)
    async with app.run_test(size=(100, 30), message_hook=_hook(seen)) as pilot:
        await pilot.press("f3")   # Stats: a screen with a TaskBar
        await settle(pilot)
        screen = app.screen
        threads = []

        def work(ctx):
            threads.append((threading.get_ident(), ctx.store is app.store))
            ctx.progress(1, 2, "labels")
            ctx.store.set_label_text("stage", "training", definition="Set in a thread.")
            ctx.progress(2, 2, "labels")
            return "written"

        task = run_task(screen, work, group="test-task", label="writing…",
                        bar=screen.query_one(TaskBar), error_title="Could not write")
        await _until(pilot, lambda: any(isinstance(m, TaskEnded) for m in seen))
        ended = next(m for m in seen if isinstance(m, TaskEnded))
        assert ended.task is task and ended.result == "written" and ended.status == "done"
        assert threads and threads[0][0] != threading.get_ident() and threads[0][1] is False
        assert any(isinstance(m, TaskProgress) and m.label == "labels" for m in seen)
        assert not isinstance(app.screen, ErrorModal)
    with Store(workspace.db_path, "checker") as store:
        assert store.label("stage", "training")["definition"] == "Set in a thread."


async def test_a_failure_opens_the_error_modal_and_ends_the_task(workspace, app_for):
    seen: list = []
    app = app_for(workspace)
    async with app.run_test(size=(100, 30), message_hook=_hook(seen)) as pilot:
        await settle(pilot)

        def work(ctx):
            raise CuratorError("problems/x/problem.toml: broken on purpose")

        task = run_task(app.screen, work, group="test-task", error_title="Could not check")
        await _until(pilot, lambda: isinstance(app.screen, ErrorModal))
        assert app.screen.message == "problems/x/problem.toml: broken on purpose"
        # the modal is shown first; TaskEnded, the thread's last act, may come after it
        await _until(pilot, lambda: any(isinstance(m, TaskEnded) for m in seen))
        ended = next(m for m in seen if isinstance(m, TaskEnded))
        assert ended.task is task and ended.status == "failed" and ended.result is None


async def test_cancel_stops_the_work_and_the_task_ends_cancelled(workspace, app_for):
    seen: list = []
    app = app_for(workspace)
    async with app.run_test(size=(100, 30), message_hook=_hook(seen)) as pilot:
        await settle(pilot)
        started = threading.Event()

        def work(ctx):
            started.set()
            deadline = time.monotonic() + 30
            while not ctx.cancelled():
                assert time.monotonic() < deadline
                time.sleep(0.01)
            raise Cancelled("check cancelled")

        task = run_task(app.screen, work, group="test-task", error_title="Could not check")
        await _until(pilot, started.is_set)
        assert not any(isinstance(m, TaskEnded) for m in seen)   # still running
        task.cancel()
        await _until(pilot, lambda: any(isinstance(m, TaskEnded) for m in seen))
        ended = next(m for m in seen if isinstance(m, TaskEnded))
        assert ended.status == "cancelled" and ended.error is None
        assert not isinstance(app.screen, ErrorModal)   # a cancel is not an error


async def test_messages_reach_the_app(workspace, app_for):
    app = app_for(workspace)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        version = app.data_version
        app.screen.post_message(DataChanged())
        await settle(pilot)
        assert app.data_version == version + 1 == DataChanged.seen_after(version)
        app.screen.post_message(OpenProblem("soft_dice_loss"))
        await settle(pilot)
        assert isinstance(app.screen, ProblemScreen)
        assert app.screen.problem_id == "soft_dice_loss"
        app.screen.post_message(ShowError("Not saved", "a one-line reason", "details"))
        await settle(pilot)
        assert isinstance(app.screen, ErrorModal)
        assert (app.screen.message, app.screen.details) == ("a one-line reason", "details")
