"""A new problem from a template: the four files of problems/<id>/ and a draft row.

`curator problems new ID` and the app's "New problem" (n on the Problems screen) both call
`create`. The template is honest about being unfinished: the prompt says what to describe,
the reference raises NotImplementedError and the single test fails until it is written,
so a new problem cannot pass a run (or become ready) before someone fills it in.
"""

from __future__ import annotations

import re
from pathlib import Path

from curator.errors import CuratorError
from curator.problem import ID_PATTERN, KINDS, Problem, validate
from curator.store import Store
from curator.store import problems as problem_store
from curator.sync import dump_one


def default_entry_point(problem_id: str, kind: str = "function") -> str:
    """A Python name from the id: `soft-dice_loss` -> `soft_dice_loss`.

    For a method: `SoftDiceLoss.forward`."""
    name = re.sub(r"\W", "_", problem_id.replace("-", "_"))
    if not name or name[0].isdigit():
        name = f"f_{name}"
    if kind == "method":
        cls = "".join(part.capitalize() for part in name.split("_") if part) or "Model"
        if cls[0].isdigit():
            cls = f"C{cls}"
        return f"{cls}.forward"
    return name


def default_title(problem_id: str) -> str:
    words = re.split(r"[_-]+", problem_id)
    return " ".join(w for w in words if w).capitalize()


def _signature(problem: Problem) -> tuple[str, str]:
    """(code block for the prompt, reference module) for the entry point."""
    name = problem.function_name
    if problem.kind == "method":
        cls = problem.class_name
        prompt_code = (f"class {cls}(torch.nn.Module):\n"
                       f"    def {name}(self, x: torch.Tensor) -> torch.Tensor:\n"
                       "        ...\n")
        solution = ("import torch\n\n\n"
                    f"class {cls}(torch.nn.Module):\n"
                    f"    def {name}(self, x: torch.Tensor) -> torch.Tensor:\n"
                    "        raise NotImplementedError(\"write the reference solution\")\n")
    else:
        prompt_code = f"def {name}(x: torch.Tensor) -> torch.Tensor:\n    ...\n"
        solution = ("import torch\n\n\n"
                    f"def {name}(x: torch.Tensor) -> torch.Tensor:\n"
                    "    raise NotImplementedError(\"write the reference solution\")\n")
    return prompt_code, solution


def template(problem_id: str, entry_point: str | None = None,
             kind: str = "function") -> Problem:
    """The draft problem the template gives (not stored)."""
    if kind not in KINDS:
        raise CuratorError(f"kind {kind!r} must be one of {', '.join(KINDS)}")
    if not ID_PATTERN.match(problem_id or ""):
        raise CuratorError(f"id {problem_id!r} must match {ID_PATTERN.pattern} "
                           "(lower-case letters, digits, _ and -)")
    entry_point = entry_point or default_entry_point(problem_id, kind)
    if kind == "function" and "." in entry_point:
        kind = "method"   # `Class.method` says what it is
    problem = Problem(id=problem_id, entry_point=entry_point, kind=kind,
                      title=default_title(problem_id), status="draft")
    errors = validate(problem)
    if errors and not (len(errors) == 1 and errors[0].startswith("no tests")):
        raise CuratorError(f"problem {problem_id}: {'; '.join(errors)}")
    prompt_code, solution = _signature(problem)
    name = problem.function_name
    importable = problem.class_name or name
    problem.prompt = (
        f"# {problem.title}\n\n"
        f"Describe what `{name}` must do: its inputs (types, shapes, dtypes), what it "
        "returns,\nand the edge cases and errors the tests check.\n\n"
        f"```python\n{prompt_code}```\n")
    problem.solution = solution
    problem.tests = (
        "import pytest\n"
        "import torch\n\n"
        f"from solution import {importable}\n\n\n"
        f"def test_{name}_is_written():\n"
        "    # Replace with at least three tests, each checking a value the prompt fixes.\n"
        f"    pytest.fail(\"write the tests for {entry_point}\")\n")
    return problem


def create(store: Store, problems_dir: str | Path, problem_id: str,
           entry_point: str | None = None, kind: str = "function") -> Problem:
    """Write problems/<id>/ from the template and store it as a draft (audited)."""
    problem = template(problem_id, entry_point, kind)
    folder = Path(problems_dir) / problem_id
    if problem_store.exists(store, problem_id):
        raise CuratorError(f"problem {problem_id} already exists (open it, or pick another id)")
    if folder.exists():
        raise CuratorError(f"{folder}: a folder of that name already exists; pick another id")
    problem_store.save(store, problem)
    dump_one(store, problem, problems_dir)
    return problem_store.get(store, problem_id)
