"""One way to run a core function in a thread: its own Store, progress, cancel, errors.

    self._task = run_task(self, lambda ctx: mining.mine(ctx.store, ctx.workspace, ...,
                          progress=ctx.progress, cancelled=ctx.cancelled),
                          group="mine", bar=self.query_one(TaskBar), label="mining…",
                          error_title="Mining failed")

The function gets a TaskContext: a Store connection of the thread's own (SQLite connections
stay in their thread; the UI keeps reading through the App's), the workspace, the progress
callback the core functions take (the TaskBar's, or the widget's own) and the cancel check.
It runs in a Textual thread worker; as its very last act it posts TaskEnded to the node
that started it, so "busy" lasts until the work has really ended, not only until cancel
was pressed. A failure (not a cancel) also posts ShowError, which the App shows.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from textual.dom import DOMNode
from textual.message import Message
from textual.worker import Worker, get_current_worker

from curator.errors import Cancelled
from curator.store import Store
from curator.tui.messages import ShowError
from curator.tui.widgets.task_bar import TaskBar
from curator.workspace import Workspace

Progress = Callable[[int, int, str], None]


@dataclass
class TaskContext:
    """What the function run in the thread gets."""

    store: Store
    workspace: Workspace
    progress: Progress
    cancelled: Callable[[], bool]


class Task:
    """A running task: cancel it, and know which TaskEnded is its own."""

    def __init__(self, node: DOMNode, label: str) -> None:
        self.node = node
        self.label = label
        self.worker: Worker | None = None
        self._lock = threading.Lock()
        self._started = False
        self._abandoned = False

    @property
    def is_cancelled(self) -> bool:
        return self.worker is not None and self.worker.is_cancelled

    def cancel(self) -> None:
        """Ask the work to stop (the core's loops see it within milliseconds)."""
        with self._lock:
            if self.worker is not None:
                self.worker.cancel()
            if not self._started and not self._abandoned:
                # cancelled before its thread began: it never will, so end it here
                self._abandoned = True
                self.node.post_message(TaskEnded(self, cancelled=True))

    def _begin(self) -> bool:
        with self._lock:
            if self._abandoned:
                return False
            self._started = True
            return True


@dataclass
class TaskEnded(Message):
    """Posted by a task's thread as its very last act: the work has really ended."""

    bubble = False   # for the node that started the task only

    task: Task
    result: Any = None
    error: BaseException | None = None
    cancelled: bool = False

    @property
    def status(self) -> str:
        """'cancelled', 'failed' or 'done'."""
        return "cancelled" if self.cancelled else "failed" if self.error else "done"


def run_task(node: DOMNode, func: Callable[[TaskContext], Any], *, group: str,
             label: str = "", bar: TaskBar | None = None, progress: Progress | None = None,
             error_title: str | None = None) -> Task:
    """Run func(TaskContext) in a thread worker of `node`; TaskEnded comes back to `node`.

    `bar` (a TaskBar) is shown and started with `label`, and gets the progress; otherwise
    `progress` is the callback. With `error_title`, a failure opens the error modal.
    """
    app = node.app
    workspace: Workspace = app.workspace   # type: ignore[attr-defined]
    actor: str = app.actor                 # type: ignore[attr-defined]
    if bar is not None:
        bar.display = True
        bar.start(label)
        progress = bar.progress
    report: Progress = progress or (lambda done, total, text: None)
    task = Task(node, label)

    def body() -> None:
        if not task._begin():
            return
        worker = get_current_worker()
        ended = TaskEnded(task)
        try:
            store = Store(workspace.db_path, actor)   # this thread's own connection
            try:
                ended.result = func(TaskContext(store, workspace, report,
                                                lambda: worker.is_cancelled))
            finally:
                store.close()
        except Cancelled:
            ended.cancelled = True
        except Exception as exc:  # noqa: BLE001 - shown in the error modal
            if worker.is_cancelled:
                ended.cancelled = True
            else:
                ended.error = exc
                if error_title is not None:
                    node.post_message(ShowError(error_title, exc))
        else:
            ended.cancelled = worker.is_cancelled
        finally:
            node.post_message(ended)

    # not exclusive: the node is busy until TaskEnded, and a task started from that message
    # must not cancel the worker whose body is returning just then
    task.worker = node.run_worker(body, name=label or group, group=group, thread=True,
                                  exclusive=False, exit_on_error=False)
    return task
