"""Helpers for the release tests: a workspace whose problems pass every gate."""

from __future__ import annotations

import uuid
from pathlib import Path

from curator.execution.job import RunResult
from curator.problem import Problem
from curator.store import Store, now
from curator.store import problems as problem_store
from curator.store import validations as validation_store
from curator.store.runs import record, solution_hash
from curator.validity.validate import Validity, tests_hash
from curator.workspace import Workspace, discover

ENV = {"python": "3.11.0", "torch": "2.13.0", "isolation": "strong"}


def write_config(ws: Workspace, text: str = '[release]\nlicense = "MIT"\n') -> Workspace:
    (Path(ws.root) / "curator.toml").write_text(text, encoding="utf-8")
    return discover(ws.root)


def record_reference(store: Store, problem: Problem, outcome: str = "passed", tests: int = 5,
                     solution: str | None = None, started_at: str | None = None) -> int:
    """Record a reference run as the engine would (real runs table, no sandbox)."""
    result = RunResult(
        job_id=uuid.uuid4().hex, problem_id=problem.id, outcome=outcome,
        tests=[{"id": f"test_solution.py::test_{i}", "outcome": outcome, "duration_s": 0.01}
               for i in range(tests)],
        duration_s=0.25, env=dict(ENV), timeout_s=10.0,
        reason="" if outcome == "passed" else "assertion failed")
    text = problem.solution if solution is None else solution
    # Started now (the engine's default is "finished now, began duration_s ago", which
    # could predate the problem's own creation a moment earlier in a test).
    return record(store, result, "reference", solution_hash(text),
                  started_at=started_at or now())


def record_validation(store: Store, problem: Problem, **figures) -> Validity:
    """Store a validation of the problem's current solution and tests as `curator
    validate` would (real validations table, no sandbox): by default one whose stub fails
    every test, stable, 9 of 10 mutants killed."""
    values = dict(discriminates=True, stub_failed_share=1.0, non_exercising_tests=[],
                  stable=True, flaky_tests=[], mutation_score=0.9, mutants=10, killed=9,
                  survivors=[{"operator": "constant", "line": 3, "original": "    x = 1",
                              "mutated": "    x = 2"}], baseline_tests=5,
                  reference_outcomes=["passed"] * 3)
    values.update(figures)
    found = Validity(problem.id, **values)
    validation_store.save(store, problem.id, solution_hash(problem.solution),
                          tests_hash(store, problem), 10, 3, found.to_record())
    return found


def make_releasable(ws: Workspace, store: Store) -> Workspace:
    """Licence the workspace, record a passing reference run and a discriminating, stable
    validation for every problem."""
    ws = write_config(ws)
    for problem in problem_store.all_problems(store):
        record_reference(store, problem)
        record_validation(store, problem)
    return ws
