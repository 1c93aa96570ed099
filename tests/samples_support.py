"""Small hand-made problems for the sample, report and review tests (no torch needed)."""

from __future__ import annotations

import json
from pathlib import Path

from curator.problem import Problem
from curator.store import Store
from curator.store import problems as problem_store

ADD_PROMPT = """# Add one

Return `x + 1`.

```python
def add_one(x: int) -> int:
    ...
```
"""

ADD_SOLUTION = """import math


def add_one(x: int) -> int:
    return x + 1
"""

ADD_TESTS = """from solution import add_one


def test_small():
    assert add_one(1) == 2


def test_negative():
    assert add_one(-5) == -4


def test_zero():
    assert add_one(0) == 1
"""

COUNTER_PROMPT = """# Counter

```python
class Counter:
    def __init__(self, start: int = 0) -> None: ...
    def bump(self, by: int = 1) -> int: ...
```
"""

COUNTER_SOLUTION = """class Counter:
    def __init__(self, start: int = 0) -> None:
        self.value = start

    def bump(self, by: int = 1) -> int:
        self.value += by
        return self.value
"""

COUNTER_TESTS = """from solution import Counter


def test_bump():
    c = Counter()
    assert c.bump() == 1
    assert c.bump(2) == 3


def test_start():
    assert Counter(5).bump() == 6


def test_independent():
    a, b = Counter(), Counter()
    a.bump()
    assert b.bump() == 1
"""

DOUBLE_PROMPT = """# Double

```python
def double(x: int) -> int:
    ...
```
"""

DOUBLE_SOLUTION = "def double(x: int) -> int:\n    return 2 * x\n"

DOUBLE_TESTS = """from solution import double


def test_double():
    assert double(2) == 4


def test_zero():
    assert double(0) == 0


def test_negative():
    assert double(-3) == -6
"""


def make_problems(store: Store) -> dict[str, Problem]:
    problems = [
        Problem(id="add_one", entry_point="add_one", title="Add one", stage="prepost",
                task="classification", data="image", status="ready", prompt=ADD_PROMPT,
                solution=ADD_SOLUTION, tests=ADD_TESTS,
                source={"repo": "https://github.com/example/mathlib"}),
        Problem(id="counter_bump", entry_point="Counter.bump", kind="method", title="Counter",
                stage="model", task="general", data="other", status="ready",
                prompt=COUNTER_PROMPT, solution=COUNTER_SOLUTION, tests=COUNTER_TESTS,
                source={"repo": "https://github.com/example/counters"}),
        Problem(id="double_it", entry_point="double", title="Double", stage="prepost",
                task="regression", data="tabular", status="ready", prompt=DOUBLE_PROMPT,
                solution=DOUBLE_SOLUTION, tests=DOUBLE_TESTS),
    ]
    for problem in problems:
        problem_store.save(store, problem)
    return {p.id: p for p in problems}


def write_jsonl(path: Path, rows: list) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def record_run(store: Store, problem_id: str, outcome: str, sample_id: int | None = None,
               tests: list[dict] | None = None, stdout: str = "", stderr: str = "",
               reason: str = "") -> int:
    """Store a run outcome through the engine's own `record` (as a finished run would)."""
    import hashlib

    from curator.execution.job import RunResult
    from curator.store.runs import record

    if sample_id is not None:
        code = store.one("SELECT code FROM samples WHERE id = ?", (sample_id,))["code"] or ""
    else:
        code = store.one("SELECT solution FROM problems WHERE id = ?", (problem_id,))["solution"]
    if tests is None:
        tests = [{"id": "test_solution.py::test_a", "outcome": "passed"},
                 {"id": "test_solution.py::test_b",
                  "outcome": "passed" if outcome == "passed" else "failed"}]
    result = RunResult(job_id=f"job-{problem_id}-{sample_id}", problem_id=problem_id,
                       outcome=outcome, tests=tests, duration_s=0.01, stdout=stdout,
                       stderr=stderr, reason=reason,
                       env={"python": "3.11", "torch": "2.13.0", "isolation": "weak"})
    return record(store, result, "sample" if sample_id is not None else "reference",
                  hashlib.sha256(code.encode()).hexdigest(), sample_id=sample_id)


def add_samples(store: Store, tmp_path: Path, rows: list[dict], model: str = "m1",
                name: str = "samples.jsonl") -> list[int]:
    from curator.evaluation import samples as sample_files

    report = sample_files.import_files(store, [write_jsonl(tmp_path / name, rows)], model=model)
    assert report.errors == [], report.errors
    return report.sample_ids
