"""Shared helpers for the execution tests: engines started once per module, tiny jobs."""

from __future__ import annotations

import os
import sys
import textwrap

import pytest

from curator.execution import sandbox
from curator.execution.engine import Engine
from curator.execution.job import Job, Limits

STRONG_OK, STRONG_WHY = sandbox.probe()
# Fails when bwrap is unusable, unless CURATOR_ALLOW_SKIP=1 (tests/requirements_support.py).
needs_bwrap = pytest.mark.requires_bwrap
SECRET_VAR = "CURATOR_TEST_SECRET_TOKEN"
SECRET_VALUE = "hunter2-must-not-leak"

GOOD_SOLUTION = "def add(a, b):\n    return a + b\n"
ADD_TESTS = textwrap.dedent("""\
    from solution import add


    def test_small():
        assert add(1, 2) == 3


    def test_negative():
        assert add(-1, -2) == -3
    """)


def job(solution: str, tests: str = ADD_TESTS, timeout: float = 20.0, **limits) -> Job:
    return Job(problem_id="p", solution=textwrap.dedent(solution), tests=textwrap.dedent(tests),
               limits=Limits(timeout_s=timeout, **limits))


def run_one(engine: Engine, solution: str, tests: str = ADD_TESTS, timeout: float = 20.0,
            **limits):
    results = list(engine.run([job(solution, tests, timeout, **limits)]))
    assert len(results) == 1
    return results[0]


def write_repo(root, files: dict[str, str]):
    """A generated repository (no git): each path's text, folders made as needed."""
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


def repo_job(root, path: str, text: str, tests: str, symbol: str, reference: bool = False,
             timeout: float = 120.0, problem_id: str | None = None,
             python: str | None = None) -> Job:
    """A run of `text` as the repository's file `path` (target `symbol`), judged by the
    node id `tests`, in `python` (this interpreter unless said)."""
    return Job(problem_id=problem_id or symbol, solution=text, repo_dir=str(root),
               overlay={path: text}, node_ids=[tests], symbol=symbol,
               python=python or sys.executable, reference=reference,
               limits=Limits(timeout_s=timeout))


def start_engine(isolation: str, workers: int = 2, eager: bool = True) -> Engine:
    """An engine whose workers started with a secret in the parent's environment (eager:
    each slot's worker of plain runs starts at once; else when a plain job first comes)."""
    os.environ[SECRET_VAR] = SECRET_VALUE
    try:
        engine = Engine(workers=workers, isolation=isolation, eager=eager)
        engine.start()
        engine.pool.wait_ready()
    finally:
        os.environ.pop(SECRET_VAR, None)
    return engine


# The engines of engine_fixture, one per (isolation, workers) for the whole pytest
# process, closed at its end (tests/conftest.py). Each module started its own: a warm
# worker importing torch, 10-14 s of setup on the loaded 2-core machine, 27 of them in
# tests/adversarial alone under `pytest -n 3` (280 s of its 2456 s). An engine serves
# any number of jobs and replaces a worker a run ended, as a real one does for a whole
# batch; no test of these modules asks for a fresh one (those start their own).
_SHARED: dict[tuple[str, int], Engine] = {}


def shared_engine(isolation: str, workers: int = 1, eager: bool = True) -> Engine:
    """The process's started engine of this isolation level and size (eager as the first
    module to ask wanted it: a later module's first plain job starts the plain worker)."""
    engine = _SHARED.get((isolation, workers))
    if engine is None:
        engine = _SHARED[isolation, workers] = start_engine(isolation, workers=workers,
                                                             eager=eager)
    return engine


def close_shared_engines() -> None:
    while _SHARED:
        _SHARED.popitem()[1].close()


def engine_fixture(params=("strong", "weak"), workers: int = 1, eager: bool = True):
    """A module-scoped fixture yielding a started engine per isolation level (of one
    worker unless asked: a batch's jobs then run one after the other on the same warm
    worker, as most runs of a real engine do; eager=False for a module of repository
    runs only, whose plain worker would start for nothing). The engine is the pytest
    process's shared one (`shared_engine`)."""
    marks = {"strong": [needs_bwrap], "weak": []}

    @pytest.fixture(scope="module", params=[pytest.param(p, marks=marks[p]) for p in params])
    def _engine(request):
        engine = shared_engine(request.param, workers=workers, eager=eager)
        assert engine.isolation == request.param
        return engine

    return _engine


def plain_workers_at_close(monkeypatch, module) -> list[int]:
    """Makes each Engine `module` starts say, as it closes, how many workers of plain runs
    it has running (a batch of repository runs needs none); the list they are added to."""
    left_running: list[int] = []

    class Watched(Engine):
        def close(self):
            left_running.append(len(self.pool.worker_pids()))
            super().close()

    monkeypatch.setattr(module, "Engine", Watched)
    return left_running


def processes_matching(needle: bytes) -> list[int]:
    """Host pids whose command line or name contains `needle` (a /proc scan, no psutil)."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/cmdline", "rb") as fh:
                cmdline = fh.read()
            with open(f"/proc/{entry.name}/comm", "rb") as fh:
                comm = fh.read()
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                state = fh.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if state != b"Z" and (needle in cmdline or needle in comm):
            found.append(int(entry.name))
    return found
