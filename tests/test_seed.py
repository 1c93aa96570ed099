"""The seed benchmark: coverage of every label and every reference passing its own tests."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys

import pytest

from curator.labels import DATA, STAGES, TASKS
from curator.problem_files import read_problem, scan


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


def test_every_seed_reference_passes_with_plain_pytest(seed_dir, tmp_path):
    """One pytest process over all seed problems, each in its own folder."""
    folders = []
    for folder in sorted(p for p in seed_dir.iterdir() if p.is_dir()):
        read_problem(folder)
        target = tmp_path / folder.name
        target.mkdir()
        shutil.copy(folder / "solution.py", target / "solution.py")
        shutil.copy(folder / "test_solution.py", target / f"test_{folder.name}.py")
        folders.append(target)
    # Each problem imports `solution`, so each runs in its own interpreter.
    failures = []
    for target in folders:
        out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                              "-p", "no:randomly", str(target)], cwd=target,
                             capture_output=True, text=True, timeout=300)
        if out.returncode != 0:
            failures.append(f"{target.name}: {out.stdout[-400:]}")
    assert not failures, "\n".join(failures)
