"""A virtual table of problem rows: renders only the visible lines, so 10,000 rows are cheap.

Textual's DataTable measures every cell of every row when rows change (about 1.5 s for
10,000 rows here), which breaks the 100 ms filter budget. This widget keeps plain dicts,
sorts them in Python and draws the visible slice with the line API (the same reason
harlequin uses a "fast" data table).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip


@dataclass
class Column:
    key: str
    label: str
    width: int          # preferred width
    min_width: int      # shrinks to this before the table scrolls sideways
    flex: bool = False  # takes the space left over
    middle: bool = False   # cut in the middle (ids: both ends tell them apart)


OUTCOME_CLASSES = {
    "passed": "problem-table--good",
    "failed": "problem-table--bad", "error": "problem-table--bad",
    "timeout": "problem-table--warn", "oom": "problem-table--warn",
    "crashed": "problem-table--warn", "tampered": "problem-table--bad",
}


def fit_middle(text: str, width: int) -> str:
    """`text` padded, or cut in the middle with an ellipsis, to exactly `width` cells."""
    if width <= 0:
        return ""
    if cell_len(text) <= width:
        return set_cell_size(text, width)
    if width < 5:
        return fit(text, width)
    head = width // 2
    tail = width - 1 - head
    return text[:head] + "…" + (text[-tail:] if tail else "")


def fit(text: str, width: int) -> str:
    """`text` padded or cut (with an ellipsis) to exactly `width` cells."""
    if width <= 0:
        return ""
    if cell_len(text) > width:
        return set_cell_size(text, width - 1) + "…"
    return set_cell_size(text, width)


class ProblemTable(ScrollView, can_focus=True):
    """Rows of problems; Enter opens the one under the cursor."""

    HELP = """\
## Problems table

One row per problem. Move with the arrow keys, PageUp/PageDown, Home/End; **Enter**
opens the problem. Click a column header (or press **s**) to sort by it; **S** reverses
the order. The *run* column is the outcome of the latest run of the reference solution.
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select", "Open", id="table.open"),
        Binding("s", "sort_next", "Sort", tooltip="Sort by the next column",
                id="table.sort"),
        Binding("S", "sort_reverse", "Reverse", show=False,
                tooltip="Reverse the sort order", id="table.reverse"),
        Binding("up", "cursor_up", "Up", show=False, id="table.up"),
        Binding("down", "cursor_down", "Down", show=False, id="table.down"),
        Binding("pageup", "page_up", "Page up", show=False, id="table.page_up"),
        Binding("pagedown", "page_down", "Page down", show=False, id="table.page_down"),
        Binding("home", "first", "First", show=False, id="table.first"),
        Binding("end", "last", "Last", show=False, id="table.last"),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "problem-table--header", "problem-table--sorted", "problem-table--cursor",
        "problem-table--good", "problem-table--bad", "problem-table--warn",
        "problem-table--muted",
    }

    DEFAULT_CSS = """
    ProblemTable {
        background: $surface;
        height: 1fr;
        & > .problem-table--header { text-style: bold; background: $panel; }
        & > .problem-table--sorted { text-style: bold underline; background: $panel; }
        & > .problem-table--cursor {
            background: $block-cursor-blurred-background;
            color: $block-cursor-blurred-foreground;
        }
        &:focus > .problem-table--cursor {
            background: $block-cursor-background;
            color: $block-cursor-foreground;
            text-style: $block-cursor-text-style;
        }
        & > .problem-table--good { color: $success; }
        & > .problem-table--bad { color: $error; }
        & > .problem-table--warn { color: $warning; }
        & > .problem-table--muted { color: $text-muted; }
    }
    """

    COLUMNS: ClassVar[tuple[Column, ...]] = (
        Column("id", "id", 30, 14, middle=True),
        Column("title", "title", 30, 14, flex=True),
        Column("stage", "stage", 10, 7),
        Column("task", "task", 14, 7),
        Column("data", "data", 7, 5),
        Column("status", "status", 8, 6),
        Column("outcome", "run", 8, 8),   # never cut: "timeout", "no_code", "tampered"
    )

    cursor: reactive[int] = reactive(0, always_update=True)

    @dataclass
    class Selected(Message):
        """Enter (or a double click) on a row."""
        table: ProblemTable
        problem_id: str

    @dataclass
    class CursorMoved(Message):
        table: ProblemTable
        index: int

    @dataclass
    class Sorted(Message):
        table: ProblemTable
        key: str
        reverse: bool

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._rows: list[dict] = []
        self.sort_key = "id"
        self.sort_reverse = False
        self._widths: list[int] = [c.width for c in self.COLUMNS]

    # -- data -------------------------------------------------------------------

    @property
    def rows(self) -> list[dict]:
        return self._rows

    @property
    def row_count(self) -> int:
        return len(self._rows)

    @property
    def current(self) -> dict | None:
        if 0 <= self.cursor < len(self._rows):
            return self._rows[self.cursor]
        return None

    def set_rows(self, rows: list[dict]) -> None:
        """Show `rows` (sorted by the current sort); the cursor stays on the same problem."""
        keep = self.current["id"] if self.current else None
        self._rows = self._sorted(rows)
        index = 0
        if keep is not None:
            index = next((i for i, r in enumerate(self._rows) if r["id"] == keep), 0)
        self._layout()
        self.cursor = min(index, max(len(self._rows) - 1, 0))
        self.refresh()

    def sort_by(self, key: str, reverse: bool | None = None) -> None:
        if reverse is None:
            reverse = (not self.sort_reverse) if key == self.sort_key else False
        self.sort_key, self.sort_reverse = key, reverse
        self.set_rows(self._rows)
        self.post_message(self.Sorted(self, key, reverse))

    def move_to(self, problem_id: str) -> bool:
        for index, row in enumerate(self._rows):
            if row["id"] == problem_id:
                self.cursor = index
                return True
        return False

    def _sorted(self, rows: list[dict]) -> list[dict]:
        key = self.sort_key
        ordered = sorted(rows, key=lambda r: r["id"])
        if key != "id":
            ordered.sort(key=lambda r: (not r.get(key), str(r.get(key) or "").lower()))
        if self.sort_reverse:
            ordered.reverse()
        return ordered

    # -- geometry ------------------------------------------------------------------

    def _layout(self) -> None:
        """Column widths for the current size; virtual size for scrolling."""
        available = max(self.scrollable_content_region.width, 1)
        widths = [c.width for c in self.COLUMNS]
        if self._rows:   # the id column needs no more than the longest id
            longest = max(len(r["id"]) for r in self._rows)
            widths[0] = max(min(widths[0], longest), self.COLUMNS[0].min_width)
        separators = len(widths) - 1
        used = sum(widths) + separators
        flex = [i for i, c in enumerate(self.COLUMNS) if c.flex]
        if used < available and flex:
            widths[flex[0]] += available - used
        else:
            # shrink the widest shrinkable columns, one cell at a time, down to their minimums
            while sum(widths) + separators > available:
                candidates = [i for i, c in enumerate(self.COLUMNS) if widths[i] > c.min_width]
                if not candidates:
                    break
                widest = max(candidates, key=lambda i: widths[i] - self.COLUMNS[i].min_width)
                widths[widest] -= 1
        self._widths = widths
        total = sum(widths) + separators
        self.virtual_size = Size(total, len(self._rows) + 1)

    def on_resize(self, event: events.Resize) -> None:
        self._layout()

    @property
    def _page(self) -> int:
        return max(self.scrollable_content_region.height - 1, 1)

    # -- rendering ----------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        base = self.rich_style
        if y == 0:
            strip = self._header_strip(base)
        else:
            index = scroll_y + y - 1
            if index >= len(self._rows):
                return Strip.blank(width, base)
            strip = self._row_strip(index, base)
        return strip.crop_extend(scroll_x, scroll_x + width, base)

    def _header_strip(self, base: Style) -> Strip:
        header = base + self.get_component_rich_style("problem-table--header")
        sorted_style = base + self.get_component_rich_style("problem-table--sorted")
        segments = []
        for column, width in zip(self.COLUMNS, self._widths):
            label = column.label
            style = header
            if column.key == self.sort_key:
                label += " ▼" if self.sort_reverse else " ▲"
                style = sorted_style
            segments.append(Segment(fit(label, width), style))
            segments.append(Segment(" ", header))
        segments.pop()
        return Strip(segments)

    def _row_strip(self, index: int, base: Style) -> Strip:
        row = self._rows[index]
        is_cursor = index == self.cursor
        style = base + self.get_component_rich_style("problem-table--cursor") if is_cursor \
            else base
        segments = []
        for column, width in zip(self.COLUMNS, self._widths):
            value = row.get(column.key) or ""
            cell_style = style
            if column.key == "outcome" and not is_cursor:
                component = OUTCOME_CLASSES.get(value, "problem-table--muted")
                cell_style = style + self.get_component_rich_style(component)
            if column.key == "outcome" and not value:
                value = "–"
            cut = fit_middle if column.middle else fit
            segments.append(Segment(cut(str(value), width), cell_style))
            segments.append(Segment(" ", style))
        segments.pop()
        return Strip(segments)

    # -- cursor and scrolling -----------------------------------------------------

    def validate_cursor(self, value: int) -> int:
        return max(0, min(value, len(self._rows) - 1)) if self._rows else 0

    def watch_cursor(self, old: int, new: int) -> None:
        top = round(self.scroll_offset.y)
        if new < top:
            self.scroll_to(y=new, animate=False)
        elif new >= top + self._page:
            self.scroll_to(y=new - self._page + 1, animate=False)
        self.refresh()
        self.post_message(self.CursorMoved(self, new))

    def action_cursor_up(self) -> None:
        self.cursor -= 1

    def action_cursor_down(self) -> None:
        self.cursor += 1

    def action_page_up(self) -> None:
        self.cursor -= self._page

    def action_page_down(self) -> None:
        self.cursor += self._page

    def action_first(self) -> None:
        self.cursor = 0

    def action_last(self) -> None:
        self.cursor = len(self._rows) - 1

    def action_select(self) -> None:
        if self.current:
            self.post_message(self.Selected(self, self.current["id"]))

    def action_sort_next(self) -> None:
        keys = [c.key for c in self.COLUMNS]
        self.sort_by(keys[(keys.index(self.sort_key) + 1) % len(keys)], reverse=False)

    def action_sort_reverse(self) -> None:
        self.sort_by(self.sort_key, reverse=not self.sort_reverse)

    def _column_at(self, x: int) -> Column | None:
        x += round(self.scroll_offset.x)
        start = 0
        for column, width in zip(self.COLUMNS, self._widths):
            if start <= x < start + width + 1:
                return column
            start += width + 1
        return None

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        if offset.y == 0:
            column = self._column_at(offset.x)
            if column is not None:
                self.sort_by(column.key)
            return
        index = round(self.scroll_offset.y) + offset.y - 1
        if 0 <= index < len(self._rows):
            self.cursor = index
            if event.chain >= 2:
                self.action_select()
