"""The Discover tab of the Candidates screen: GitHub repositories by topic and stars.

The same core function as `curator discover` (`repos.discover.discover`) runs in a thread
task with progress; `q` queues the highlighted repository for `curator mine --queued`.
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import DataTable, Input, Static

from curator.repos import discover as discovery
from curator.tui.messages import DataChanged, run_guarded
from curator.tui.tasks import TaskEnded, run_task
from curator.tui.widgets.task_bar import TaskBar


def parse_query(text: str) -> dict:
    """`pytorch deep-learning --min-stars 500 --language Python --limit 30` -> arguments."""
    words = text.split()
    args = {"topics": [], "min_stars": None, "language": None, "limit": 30}
    i = 0
    while i < len(words):
        word = words[i]
        value = words[i + 1] if i + 1 < len(words) else None
        if word in ("--min-stars", "--limit") and value is not None:
            try:
                args["min_stars" if word == "--min-stars" else "limit"] = int(value)
            except ValueError:
                raise ValueError(f"{word} takes a number, not {value!r}") from None
            i += 2
        elif word == "--language" and value is not None:
            args["language"] = value
            i += 2
        else:
            args["topics"].append(word.removeprefix("topic:"))
            i += 1
    return args


class DiscoverPane(Vertical):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "queue", "Queue for mining", id="discover.queue",
                tooltip="Queue the highlighted repository for `curator mine --queued`"),
    ]

    def __init__(self) -> None:
        super().__init__(id="discover-pane")
        self.repositories: list[discovery.Repository] = []
        self._search_task = None

    def compose(self) -> ComposeResult:
        yield Input(placeholder="topics, e.g. pytorch deep-learning --min-stars 500 "
                                "--language Python (Enter searches GitHub)",
                    id="discover-query", compact=True)
        yield Static("GITHUB_TOKEN is sent when set; without it 60 requests an hour.",
                     id="discover-status", classes="status-line", markup=False)
        table = DataTable(id="discover-table", cursor_type="row", zebra_stripes=True)
        table.border_title = "Repositories (q queues for mining)"
        yield table
        yield TaskBar(id="discover-task")

    def on_mount(self) -> None:
        self.query_one("#discover-table", DataTable).add_columns(
            "repository", "stars", "licence", "last push", "tests", "queued")
        self.query_one("#discover-task").display = False

    @on(Input.Submitted, "#discover-query")
    def _search(self, event: Input.Submitted) -> None:
        event.stop()
        try:
            args = parse_query(event.value)
        except ValueError as exc:
            self.notify(str(exc), severity="warning")
            return
        if not args["topics"]:
            self.notify("Give at least one topic", severity="warning")
            return
        api_url = self.app.workspace.config.discover.api_url
        self._search_task = run_task(
            self, lambda ctx: discovery.discover(
                args["topics"], args["min_stars"], args["language"], args["limit"],
                api_url, progress=ctx.progress, cancelled=ctx.cancelled),
            group="discover", label="searching GitHub…",
            bar=self.query_one("#discover-task", TaskBar), error_title="Discover failed")

    def on_task_ended(self, event: TaskEnded) -> None:
        if event.task is not self._search_task:
            return
        self.query_one("#discover-task").display = False
        if event.status != "done":
            return
        report: discovery.DiscoverReport = event.result
        self.repositories = report.repositories
        self._fill()
        notes = " · ".join(report.notes())
        self.query_one("#discover-status", Static).update(
            f"{len(report.repositories)} of {report.total_count} repositories · "
            f"{report.requests} requests, {report.rate_limit.remaining} left"
            + (f" · {notes}" if notes else ""))

    def _fill(self, queued: set[str] | None = None) -> None:
        queued = queued if queued is not None else {
            r["url"].rstrip("/").split("/", 3)[-1] for r in discovery.queued(self.app.store)}
        table = self.query_one("#discover-table", DataTable)
        row = table.cursor_row
        table.clear()
        marks = {True: "yes", False: "no", None: "?"}
        for repo in self.repositories:
            table.add_row(repo.full_name, str(repo.stars), repo.license or "?",
                          (repo.pushed_at or "")[:10], marks[repo.has_tests],
                          "yes" if repo.full_name in queued else "")
        if self.repositories:
            table.move_cursor(row=min(row, len(self.repositories) - 1))

    def action_queue(self) -> None:
        table = self.query_one("#discover-table", DataTable)
        if not self.repositories or not table.has_focus:
            return
        repo = self.repositories[table.cursor_row]
        web = discovery.web_url(self.app.workspace.config.discover.api_url)
        if run_guarded(self, f"Could not queue {repo.full_name}",
                       lambda: discovery.queue_for_mining(self.app.store, [repo.full_name],
                                                          web)) is None:
            return
        self.post_message(DataChanged())
        self.notify(f"Queued {repo.full_name}: `curator mine --queued` mines it")
        self._fill()
