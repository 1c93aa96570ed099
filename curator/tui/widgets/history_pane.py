"""History tab: the audit log of one problem, with the before/after of the selected change."""

from __future__ import annotations

import difflib
import json

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, TextArea

from curator.panel import rounds


def _text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        try:
            decoded = json.loads(value)
        except ValueError:
            return value
        if isinstance(decoded, (dict, list)):
            return json.dumps(decoded, indent=2, ensure_ascii=False)
        return value
    return str(value)


def change_text(row: dict) -> str:
    """What one audit row changed, as a unified diff (or the created record)."""
    before, after = _text(row.get("before")), _text(row.get("after"))
    if not before:
        return after
    diff = difflib.unified_diff(before.splitlines(), after.splitlines(),
                                "before", "after", lineterm="")
    return "\n".join(diff) or after


class HistoryPane(Vertical):
    HELP = """\
## History

Every change to this problem from the audit log: when, who, what, which field. Select a
row to see the change as a diff below. The log is append-only; nothing here edits it.
While a label round has you vote this problem blind, the labels in the log read
`blind`; they show once you have voted.
"""

    def __init__(self, problem_id: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.problem_id = problem_id
        self.rows: list[dict] = []

    def compose(self) -> ComposeResult:
        table = DataTable(id="history-table", cursor_type="row")
        table.border_title = "Audit log"
        yield table
        detail = TextArea("", id="history-detail", read_only=True, soft_wrap=False)
        detail.border_title = "Change"
        yield detail

    def on_mount(self) -> None:
        self.refresh_rows()

    def refresh_rows(self) -> None:
        # blind in a label round: the labels in the log are hidden until this person votes
        self.rows = list(reversed(rounds.history_for(self.app.store, self.problem_id,
                                                     self.app.actor)))
        table = self.query_one(DataTable)
        if not table.columns:
            table.add_columns("when", "who", "action", "field")
        table.clear()
        for row in self.rows:
            table.add_row(row["at"][:19].replace("T", " "), row["actor"], row["action"],
                          row["field"] or "", key=str(row["id"]))
        self.query_one(TextArea).load_text(change_text(self.rows[0]) if self.rows else "")

    @on(DataTable.RowHighlighted)
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        row = next((r for r in self.rows if str(r["id"]) == event.row_key.value), None)
        if row is not None:
            self.query_one(TextArea).load_text(change_text(row))
