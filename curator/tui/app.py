"""The curator app (placeholder until the app issue lands: a table of the problems)."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import DataTable, Footer, Header

from curator import sync
from curator.store import Store
from curator.store import problems as problem_store
from curator.workspace import Workspace


class CuratorApp(App):
    TITLE = "DL-Bench Curator"
    BINDINGS = [("q", "quit", "Quit")]

    def __init__(self, workspace: Workspace, actor: str):
        super().__init__()
        self.workspace = workspace
        self.store = Store(workspace.db_path, actor)

    def compose(self) -> ComposeResult:
        yield Header()
        yield DataTable(id="problems", cursor_type="row")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("id", "title", "stage", "task", "data", "status")
        for row in problem_store.list_rows(self.store):
            table.add_row(row["id"], row["title"], row["stage"], row["task"], row["data"],
                          row["status"], key=row["id"])
        self.sub_title = f"{table.row_count} problems — {self.workspace.root}"


def run_app(workspace: Workspace, actor: str) -> None:
    store = Store(workspace.db_path, actor)
    if not problem_store.list_rows(store):
        sync.load(store, workspace.problems_dir)
    store.close()
    CuratorApp(workspace, actor).run()
