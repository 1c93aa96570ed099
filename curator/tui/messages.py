"""The messages screens and widgets send up to the App, and the progress message of tasks.

Screens never import the App (an import-linter contract holds them to it): they post one of
these, it bubbles from the widget through its screen to the App, and the App's handler acts
(open a problem, count a change, show the error modal).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from textual.dom import DOMNode
from textual.message import Message

T = TypeVar("T")


@dataclass
class OpenProblem(Message):
    """Show this problem (the App asks about unsaved edits of the one open now), on the
    tab `tab` (e.g. "labels") when given."""

    problem_id: str
    tab: str | None = None


@dataclass
class DataChanged(Message):
    """Problems, runs, samples or labels changed: every screen reloads when it resumes.

    The App counts these in `data_version`. A screen that already shows the change records
    `seen_after(app.data_version)`, the version the App reaches when it handles this one.
    """

    @staticmethod
    def seen_after(version: int) -> int:
        return version + 1


@dataclass
class ShowError(Message):
    """The error modal: a one-line message (an exception's is worked out by the App)."""

    title: str
    error: BaseException | str
    details: str = ""


@dataclass
class TaskProgress(Message):
    """Progress of work in a thread (posted from any thread; a newer one replaces an older
    one still in the queue, toolong's `can_replace`, so a fast loop cannot flood the UI)."""

    done: int
    total: int
    label: str

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, TaskProgress)

    def text(self) -> str:
        """'done/total label', or the label alone for a phase without a count."""
        return f"{self.done}/{self.total} {self.label}" if self.total else self.label


def run_guarded(node: DOMNode, title: str, func: Callable[[], T]) -> T | None:
    """Call func; a failure opens the error modal (via the App) instead of killing the app."""
    try:
        return func()
    except Exception as exc:   # noqa: BLE001 - reported to the person, not swallowed
        node.post_message(ShowError(title, exc))
        return None


@dataclass
class AskWeakConsent(Message):
    """Untrusted code (named in `untrusted`: problem ids, "3 sample(s)") is about to run.

    When isolation is weak and nobody has allowed it this session, the App asks once; then
    (or at once, when there is nothing to ask) it calls `then(allow_weak)` with the value
    for the core's `allow_weak`, or `declined()` when the person says no."""

    untrusted: list[str]
    then: Callable[[bool | None], None]
    declined: Callable[[], None] | None = None
