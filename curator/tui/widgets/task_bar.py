"""A one-line progress bar for long work in a thread worker (mining, checks, builds).

The worker calls `bar.progress` (safe from any thread): it posts a TaskProgress message, and
a newer one replaces an older one still in the queue, so a fast loop cannot flood the UI.
curator.tui.tasks.run_task starts the bar and hands it the work's progress.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Label, ProgressBar

from curator.tui.messages import TaskProgress


class TaskBar(Horizontal):
    DEFAULT_CSS = """
    TaskBar {
        height: 1;
        padding: 0 1;
        background: $panel;
        ProgressBar { width: 28; }
        #task-label { width: 1fr; padding-left: 1; color: $text-muted; }
    }
    """

    def compose(self) -> ComposeResult:
        yield ProgressBar(id="task-progress", show_eta=False)
        yield Label("", id="task-label")

    def progress(self, done: int, total: int, label: str = "") -> None:
        """The progress(done, total, label) callback the core functions take."""
        self.post_message(TaskProgress(done, total, label))

    def start(self, label: str) -> None:
        self.query_one(ProgressBar).update(total=None, progress=0)
        self.query_one("#task-label", Label).update(label)

    def finish(self, label: str) -> None:
        bar = self.query_one(ProgressBar)
        bar.update(total=1, progress=1)
        self.query_one("#task-label", Label).update(label)

    def on_task_progress(self, event: TaskProgress) -> None:
        event.stop()
        bar = self.query_one(ProgressBar)
        if event.total:
            bar.update(total=event.total, progress=event.done)
        else:   # a phase without a count (fetching, scoring): an indeterminate bar
            bar.update(total=None, progress=0)
        self.query_one("#task-label", Label).update(event.text())
