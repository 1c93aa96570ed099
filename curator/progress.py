"""How long operations report progress and learn that they should stop.

Every long operation (mining, runs, evaluation, imports, checks, builds) takes
`progress(done, total, what)` and `cancelled()`; the CLI renders the first with
rich.progress, the app with a worker's progress bar. When `cancelled()` turns true the
operation stops at its next safe point and raises `curator.errors.Cancelled` (after
rolling back whatever it would have written); `checkpoint` is that check.
"""

from __future__ import annotations

from collections.abc import Callable

from curator.errors import Cancelled

Progress = Callable[[int, int, str], None]
CancelCheck = Callable[[], bool]


def checkpoint(cancelled: CancelCheck | None, what: str) -> None:
    """Raise Cancelled("<what> cancelled") when the cancel check says so."""
    if cancelled is not None and cancelled():
        raise Cancelled(f"{what} cancelled")
