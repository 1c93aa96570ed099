"""Shared fixtures: a temporary workspace holding a copy of the seed benchmark.

The tool's tests never read the live problems/ folder (a maintainer may be halfway through
editing it): they use a frozen copy, tests/fixtures/seed_problems/, taken from the
committed tree. The benchmark's own health is `curator release check`.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from curator import sync
from curator import workspace as workspace_mod
from curator.store import Store

REPO_ROOT = Path(__file__).resolve().parents[1]
SEED_DIR = REPO_ROOT / "tests" / "fixtures" / "seed_problems"


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch):
    # Tests must not pick up a developer's workspace or identity by accident.
    monkeypatch.delenv("CURATOR_WORKSPACE", raising=False)
    monkeypatch.setenv("CURATOR_USER", "tester")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "tester")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "tester@localhost")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "tester")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "tester@localhost")
    # Engines the tests do not size run one worker: `make test` already keeps every core
    # busy with pytest processes, and each further warm worker costs seconds of CPU to
    # start (a repository's run started two, one per slot, for a triage's three runs).
    # Tests of several workers ask for them.
    monkeypatch.setenv("CURATOR_WORKERS", "1")


@pytest.fixture(scope="session", autouse=True)
def _shared_engines():
    """Closes the engines tests/execution_support.py's fixtures shared, at the end of
    the pytest process (imported only where a test module imported it)."""
    yield
    support = sys.modules.get("execution_support")
    if support is not None:
        support.close_shared_engines()


@pytest.fixture(scope="session")
def seed_dir() -> Path:
    return SEED_DIR


@pytest.fixture
def empty_workspace(tmp_path) -> workspace_mod.Workspace:
    return workspace_mod.init(tmp_path / "ws")


@pytest.fixture
def workspace(tmp_path) -> workspace_mod.Workspace:
    """A workspace with a copy of the seed problems, loaded into a fresh database."""
    ws = workspace_mod.init(tmp_path / "ws")
    shutil.rmtree(ws.problems_dir)
    shutil.copytree(SEED_DIR, ws.problems_dir)
    with Store(ws.db_path, "tester") as store:
        report = sync.load(store, ws.problems_dir)
        assert not report.errors, report.errors
    return ws


@pytest.fixture
def store(workspace):
    s = Store(workspace.db_path, "tester")
    yield s
    s.close()
