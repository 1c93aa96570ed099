"""What every command needs: the workspace, the store, the actor, and how to print."""

from __future__ import annotations

import json
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from curator.display import visible
from curator.errors import CuratorError
from curator.store import Store
from curator.workspace import Workspace, actor, discover


@dataclass
class CliContext:
    workspace_opt: str | None = None
    db_opt: str | None = None
    user_opt: str | None = None
    _workspace: Workspace | None = field(default=None, repr=False)
    _store: Store | None = field(default=None, repr=False)

    @property
    def workspace(self) -> Workspace:
        if self._workspace is None:
            self._workspace = discover(self.workspace_opt, self.db_opt)
        return self._workspace

    @property
    def actor(self) -> str:
        return actor(self.user_opt)

    @property
    def store(self) -> Store:
        if self._store is None:
            self._store = Store(self.workspace.db_path, self.actor)
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None


pass_ctx = click.make_pass_decorator(CliContext)


def json_option(func):
    return click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")(
        func)


def user_option(func):
    """`--user` after the command too (`curator labels vote ID ... --user ana`), for the
    commands a person's name is recorded by; it overrides `curator --user`."""
    def remember(ctx: click.Context, _param, value):
        if value:
            ctx.find_object(CliContext).user_opt = value
        return value

    return click.option("--user", expose_value=False, callback=remember, is_eager=True,
                        help="Who is acting (default: curator --user, $CURATOR_USER, "
                             "else the login name).")(func)


def print_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def fail(message: str, code: int = 1) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


@contextmanager
def progress_bar(description: str, enabled: bool = True) -> Iterator[Callable]:
    """A rich progress bar on a terminal; a no-op callback otherwise (or with --json)."""
    if not enabled or not sys.stderr.isatty():
        yield lambda done, total, label="": None
        return
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[label]}"), TimeElapsedColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(description, total=None, label="")

        def update(done: int, total: int, label: str = "") -> None:
            bar.update(task, completed=done, total=total or None, label=label)

        yield update


@contextmanager
def interruptible() -> Iterator[Callable[[], bool]]:
    """A cancel check for core functions that turns true at the first Ctrl-C.

    The core then stops at its next check (milliseconds) and raises Cancelled, so nothing
    half-done is written; a second Ctrl-C interrupts at once, as usual.
    """
    if threading.current_thread() is not threading.main_thread():
        yield lambda: False
        return
    pressed = threading.Event()

    def on_interrupt(signum, frame) -> None:
        pressed.set()
        signal.signal(signal.SIGINT, previous)   # a second Ctrl-C acts as it always does

    previous = signal.signal(signal.SIGINT, on_interrupt)
    try:
        yield pressed.is_set
    finally:
        signal.signal(signal.SIGINT, previous)


# Columns that hold ids: cut in the middle (both ends tell ids apart) to fit the width.
ID_COLUMNS = {"id", "problem", "problem_id", "task_id", "sample", "candidate"}
# Columns never cut or wrapped: an outcome must read whole ("passed", not "passe").
WHOLE_COLUMNS = {"outcome", "status", "run", "kind", "verdict"}


def middle_ellipsis(text: str, width: int) -> str:
    """`text` cut in the middle with an ellipsis to at most `width` characters."""
    if len(text) <= width or width < 5:
        return text
    head = width // 2
    tail = width - 1 - head
    return text[:head] + "…" + (text[-tail:] if tail else "")


def rich_table(columns: list[str], rows: list[list[Any]], title: str | None = None) -> None:
    console = Console()
    cells = [[visible(v) for v in row] for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    # borders and padding: 3 per column plus 1
    over = sum(widths) + 3 * len(columns) + 1 - console.width
    for i, column in enumerate(columns):
        if over > 0 and column in ID_COLUMNS and widths[i] > 14:
            cut = min(over, widths[i] - 14)
            widths[i] -= cut
            over -= cut
            for row in cells:
                row[i] = middle_ellipsis(row[i], widths[i])
    table = Table(title=title, show_lines=False)
    for column in columns:
        table.add_column(column, no_wrap=column in WHOLE_COLUMNS or column in ID_COLUMNS,
                         min_width=len(column) if column in WHOLE_COLUMNS else None)
    for row in cells:  # Text, not markup: cells hold whatever runs printed, shown as is
        table.add_row(*[Text(cell) for cell in row])
    console.print(table)


__all__ = ["CliContext", "CuratorError", "fail", "interruptible", "json_option", "pass_ctx",
           "print_json", "progress_bar", "rich_table"]


def print_errors(errors: list[dict]) -> None:
    """One `error: FILE[:LINE]: message` line per bad row, on stderr."""
    for error in errors:
        where = error["file"] + (f":{error['line']}" if error.get("line") else "")
        click.echo(f"error: {where}: {error['message']}", err=True)
