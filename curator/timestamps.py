"""Timestamps: written as ISO 8601 in UTC, read back with one rule for a missing zone.

Every stored time (audit rows, runs, labels, exchange files) is written by `now()`. A
timestamp without a time zone (hand-written, or from another tool) is taken as UTC, never
as this machine's local time, so the same file means the same moment everywhere.
"""

from __future__ import annotations

from datetime import UTC, datetime


def now() -> str:
    """The current moment, ISO 8601 in UTC with microseconds."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


def parse(text: str) -> datetime:
    """An aware datetime for an ISO 8601 timestamp; no zone means UTC.

    Raises ValueError naming the text when it is not a timestamp."""
    try:
        moment = datetime.fromisoformat(text)
    except (TypeError, ValueError):
        raise ValueError(f"bad timestamp {text!r}") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def parse_or_none(text: str | None) -> datetime | None:
    """`parse`, or None for an empty or malformed timestamp."""
    if not text:
        return None
    try:
        return parse(text)
    except ValueError:
        return None
