"""The per-test outcomes of one run: a test id and its outcome on each row.

Test ids are long (`tests/x/test_y.py::TestZ::test_w[param]`), so the id column takes
what the outcome column leaves and ids are cut in the middle (both ends tell them apart),
as the problems table does: the outcome stays visible however narrow the pane is.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from curator.display import visible
from curator.tui.widgets.problem_table import fit_middle

OUTCOME_WIDTH = len("deselected")   # the longest per-test outcome
MIN_ID_WIDTH = 8


class OutcomesTable(DataTable):
    """DataTable of (test id, outcome) rows whose id column fits the width it is given."""

    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("cursor_type", "row")
        super().__init__(**kwargs)
        self.tests: list[tuple[str, str]] = []
        self._id_width = 0

    def on_mount(self) -> None:
        self._render_rows()

    def on_resize(self) -> None:
        if self.id_width() != self._id_width:
            self._render_rows()

    def id_width(self) -> int:
        # each column has one cell of padding either side; leave room for a scrollbar
        usable = self.scrollable_content_region.width or self.size.width
        outcome = max([OUTCOME_WIDTH, *(len(o) for _t, o in self.tests)])
        return max(MIN_ID_WIDTH, usable - outcome - 2 * self.cell_padding - 2 - 1)

    def set_tests(self, tests: list[dict]) -> None:
        """Show these per-test results (dicts with "id" and "outcome")."""
        self.tests = [(visible(t.get("id"), False), visible(t.get("outcome"), False))
                      for t in tests if isinstance(t, dict)]
        self._render_rows()

    def _render_rows(self) -> None:
        width = self.id_width()
        self._id_width = width
        cursor = self.cursor_row
        self.clear(columns=True)
        self.add_column("test", width=width, key="test")
        self.add_column("outcome", key="outcome")
        for test_id, outcome in self.tests:
            self.add_row(Text(fit_middle(test_id, width).rstrip()), Text(outcome))
        if self.tests and cursor is not None:
            self.move_cursor(row=min(cursor, len(self.tests) - 1))
