"""problems.jsonl rows: a problem as a release row and back, the content hash, the schema.

Row fields (docs/ARCHITECTURE.md#file-formats), in this order:
  task_id            "<bundle name>/<problem id>"
  entry_point, kind  "name" | "Class.method";  "function" | "method"
  instruct_prompt    the natural-language prompt (prompt.md)
  code_prompt        the code a completion continues (curator.evaluation.extract.code_prompt)
  canonical_solution the reference solution, a complete module
  test               test_solution.py, or null for repo-backed problems
  test_node_ids      pytest node ids in the upstream repository, or null
  stage, task, data  label slugs
  framework          e.g. "pytorch"
  libs               top-level modules the canonical solution imports
  source             provenance ({repo, commit, path, symbol, lines, license}) or null
                     for original work of the benchmark (licensed as the bundle)
  validity           test strength found by `curator validate` on this solution and
                     these tests ({discriminates, stub_failed_share, non_exercising_tests,
                     stable, flaky_tests, mutation_score, mutants, killed, survivors}),
                     or null when not validated; optional (older bundles have none) and
                     not part of content_sha256 (it describes the tests, not the problem)
  content_sha256     sha256 of the row's canonical JSON without task_id, validity and itself
"""

from __future__ import annotations

import hashlib
import json

from curator.evaluation.extract import code_prompt
from curator.labels import VOCAB
from curator.limits import schema_errors
from curator.problem import ID_PATTERN, KINDS, SOURCE_KEYS, SOURCE_SCHEMA, Problem
from curator.release.codeinfo import imported_libs

FIELDS = ("task_id", "entry_point", "kind", "instruct_prompt", "code_prompt",
          "canonical_solution", "test", "test_node_ids", "stage", "task", "data", "framework",
          "libs", "source", "content_sha256")
OPTIONAL = ("validity",)
VALIDITY_KEYS = ("discriminates", "stub_failed_share", "non_exercising_tests", "stable",
                 "flaky_tests", "mutation_score", "mutants", "killed", "survivors")
_TYPES = {
    "task_id": str, "entry_point": str, "kind": str, "instruct_prompt": str,
    "code_prompt": str, "canonical_solution": str, "test": (str, type(None)),
    "test_node_ids": (list, type(None)), "stage": str, "task": str, "data": str,
    "framework": str, "libs": list, "source": (dict, type(None)), "content_sha256": str,
    "validity": (dict, type(None)),
}


def canonical_json(value) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def jsonl_line(row: dict) -> str:
    """One JSONL line: keys in the row's order, UTF-8 text, no spaces."""
    return json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n"


def content_sha256(row: dict) -> str:
    body = {k: v for k, v in row.items()
            if k not in ("task_id", "content_sha256", *OPTIONAL)}
    return hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()


def normal_source(source: dict | None) -> dict | None:
    """Provenance with its keys in a fixed order (the canonical [source] order)."""
    if not source:
        return None
    ordered = {k: source[k] for k in SOURCE_KEYS if k in source}
    ordered.update({k: source[k] for k in sorted(source) if k not in SOURCE_KEYS})
    return ordered


def validity_figures(found) -> dict | None:
    """A problem's `validity` field from its stored validation (a
    curator.validity.validate.Validity, or None when it has none)."""
    if found is None or found.discriminates is None:
        return None
    data = found.to_json()
    return {key: data[key] for key in VALIDITY_KEYS}


def problem_row(problem: Problem, name: str, validity: dict | None = None) -> dict:
    row = {
        "task_id": f"{name}/{problem.id}",
        "entry_point": problem.entry_point,
        "kind": problem.kind,
        "instruct_prompt": problem.prompt,
        "code_prompt": code_prompt(problem.prompt, problem.entry_point, problem.solution),
        "canonical_solution": problem.solution,
        "test": problem.tests,
        "test_node_ids": list(problem.test_node_ids) if problem.test_node_ids else None,
        "stage": problem.stage,
        "task": problem.task,
        "data": problem.data,
        "framework": problem.framework,
        "libs": imported_libs(problem.solution),
        "source": normal_source(problem.source),
        "validity": validity,
    }
    row["content_sha256"] = content_sha256(row)
    return row


def problem_id(task_id: str) -> str:
    return task_id.rsplit("/", 1)[-1]


def row_problem(row: dict, title: str = "", status: str = "ready") -> Problem:
    """The problem a release row describes (the inverse of `problem_row`)."""
    return Problem(
        id=problem_id(row["task_id"]), entry_point=row["entry_point"], kind=row["kind"],
        title=title, stage=row["stage"], task=row["task"], data=row["data"],
        framework=row["framework"], status=status, source=row["source"] or None,
        test_node_ids=row["test_node_ids"] or None, prompt=row["instruct_prompt"],
        solution=row["canonical_solution"], tests=row["test"])


def row_errors(row, name: str | None = None) -> list[str]:
    """Every way a problems.jsonl row breaks the schema ([] when it is fine)."""
    if not isinstance(row, dict):
        return ["a row must be a JSON object"]
    errors = []
    missing = [k for k in FIELDS if k not in row]
    if missing:
        errors.append(f"missing field(s): {', '.join(missing)}")
    extra = sorted(set(row) - set(FIELDS) - set(OPTIONAL))
    if extra:
        errors.append(f"unknown field(s): {', '.join(extra)}")
    for key, kind in _TYPES.items():
        if key in row and not isinstance(row[key], kind):
            errors.append(f"{key} has the wrong type ({type(row[key]).__name__})")
    if errors:
        return errors
    prefix, _, pid = row["task_id"].rpartition("/")
    if not ID_PATTERN.match(pid):
        errors.append(f"task_id {row['task_id']!r}: id must match {ID_PATTERN.pattern}")
    if name is not None and prefix != name:
        errors.append(f"task_id {row['task_id']!r} does not start with the bundle name {name!r}")
    if row["kind"] not in KINDS:
        errors.append(f"kind {row['kind']!r} must be one of {', '.join(KINDS)}")
    for axis, allowed in VOCAB.items():
        if row[axis] and row[axis] not in allowed:
            errors.append(f"{axis} {row[axis]!r} is not a label slug")
    if row["test"] is None and not row["test_node_ids"]:
        errors.append("no tests: both test and test_node_ids are empty")
    if row["test_node_ids"] is not None and not all(
            isinstance(n, str) and n for n in row["test_node_ids"]):
        errors.append("test_node_ids must hold non-empty strings")
    if not all(isinstance(lib, str) for lib in row["libs"]):
        errors.append("libs must hold strings")
    if row["source"] is not None:
        errors += schema_errors(row["source"], SOURCE_SCHEMA, "source", unknown=True)
    if content_sha256(row) != row["content_sha256"]:
        errors.append("content_sha256 does not match the row's content")
    return errors
