"""How many workers an engine gets when nobody says: CURATOR_WORKERS, else the CPUs."""

from __future__ import annotations

import os

import pytest

from curator.errors import CuratorError
from curator.execution.engine import WORKERS_VAR, Engine, default_workers


def test_the_variable_sets_the_default_and_an_explicit_count_wins(monkeypatch):
    monkeypatch.setenv(WORKERS_VAR, "3")
    assert default_workers() == 3
    assert Engine().workers == 3
    assert Engine(workers=2).workers == 2


def test_without_the_variable_it_is_the_cpus_this_process_may_use(monkeypatch):
    monkeypatch.delenv(WORKERS_VAR, raising=False)
    assert default_workers() == len(os.sched_getaffinity(0))


@pytest.mark.parametrize("value", ["0", "two", "-1", "1.5"])
def test_a_bad_value_is_refused_naming_the_variable(monkeypatch, value):
    monkeypatch.setenv(WORKERS_VAR, value)
    with pytest.raises(CuratorError, match=f"{WORKERS_VAR}='{value}'"):
        default_workers()
