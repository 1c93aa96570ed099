"""Small self-contained problems for the validity tests: one function, tests that never
call it, weak tests and strong tests."""

from __future__ import annotations

from release_support import write_config

from curator.problem import Problem
from curator.store import Store
from curator.store import problems as problem_store

SOLUTION = "def scale(x, k):\n    y = x * k\n    return y + 1\n"
NEVER_CALLED = '''from solution import scale


def test_arithmetic():
    assert 1 + 1 == 2


def test_importable():
    assert callable(scale)
'''
WEAK = '''from solution import scale


def test_gives_an_int():
    assert isinstance(scale(2, 3), int)


def test_importable():
    assert callable(scale)
'''
STRONG = '''from solution import scale


def test_values():
    assert scale(2, 3) == 7
    assert scale(0, 5) == 1
    assert scale(3, 1) == 4
    assert scale(-2, 4) == -7
'''
FLAKY = STRONG + '''

import random


def test_coin():
    assert random.SystemRandom().random() < 0.5
'''
PROMPT = "Scale x by k, plus one.\n\n```python\ndef scale(x, k):\n    ...\n```\n"


def problem(pid: str, tests: str) -> Problem:
    return Problem(id=pid, entry_point="scale", title=pid, stage="prepost", task="general",
                   data="other", status="ready", prompt=PROMPT, solution=SOLUTION,
                   tests=tests)


def workspace_with(empty_workspace, **problems):
    ws = write_config(empty_workspace, '[release]\nlicense = "MIT"\nmin_tests = 1\n')
    with Store(ws.db_path, "tester") as store:
        for pid, tests in problems.items():
            problem_store.save(store, problem(pid, tests))
    return ws
