"""The seed benchmark: coverage of every label and every reference passing its own tests."""

from __future__ import annotations

import ast

from curator.labels import DATA, STAGES, TASKS
from curator.problem_files import scan


def test_seed_loads_cleanly_and_covers_every_label(seed_dir):
    result = scan(seed_dir)
    assert not result.errors, [str(e) for e in result.errors]
    problems = [p for p, _, _ in result.problems]
    assert len(problems) >= 20
    assert {p.stage for p in problems} == set(STAGES)
    assert {p.task for p in problems} == set(TASKS)
    assert {p.data for p in problems} == set(DATA)
    for problem in problems:
        assert problem.prompt.strip() and problem.tests
        tests = [n for n in ast.walk(ast.parse(problem.tests))
                 if isinstance(n, ast.FunctionDef) and n.name.startswith("test")]
        assert len(tests) >= 3, problem.id


# That every seed reference passes its own tests is checked through the execution engine:
# tests/execution/test_execution.py::test_cli_run_all_seed_problems_pass (`curator run --all`).
