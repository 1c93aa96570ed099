"""The log level a call across the boundary runs at (boundary._LogsOf, in the solution
process): the judge's root level while the call runs, the solution's own afterwards, and
loggers' cached answers that stay true are not thrown away (setLevel clears the cache of
every logger, and torch alone has hundreds)."""

from __future__ import annotations

import logging

import pytest

from curator.execution import boundary


class Frames:
    """What the solution process would send the judge beside the reply."""

    def __init__(self):
        self.sent = []

    def send_aside(self, kind, value):
        self.sent.append((kind, value))


@pytest.fixture
def root_level():
    root = logging.getLogger()
    saved = root.level
    root.setLevel(logging.WARNING)
    yield root
    root.setLevel(saved)


def test_a_call_at_the_same_level_keeps_the_loggers_caches(root_level):
    logger = logging.getLogger("curator-test.cached")
    assert not logger.isEnabledFor(logging.INFO)
    assert logger._cache == {logging.INFO: False}
    with boundary._LogsOf(None, logging.WARNING):
        assert not logger.isEnabledFor(logging.INFO)
    assert logger._cache == {logging.INFO: False}


def test_a_call_at_another_level_runs_at_it_and_ends_at_the_solutions_own(root_level):
    logger = logging.getLogger("curator-test.levels")
    assert not logger.isEnabledFor(logging.INFO)
    frames = Frames()
    with boundary._LogsOf(frames, logging.INFO):
        assert root_level.level == logging.INFO
        assert logger.isEnabledFor(logging.INFO)
        logger.info("kept for the judge")
    assert root_level.level == logging.WARNING
    assert not logger.isEnabledFor(logging.INFO)
    [(kind, records)] = frames.sent
    assert kind == b"L"
    assert [(name, level, text) for name, level, text, *_ in records] == [
        ("curator-test.levels", logging.INFO, "kept for the judge")]
