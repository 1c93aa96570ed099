"""The problem model: what one benchmark item is, and the checks every problem must pass."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, fields

from curator.labels import VOCAB
from curator.limits import Field, schema_errors, text_problem

ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
SHA_PATTERN = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
KINDS = ("function", "method")
STATUSES = ("draft", "ready", "released", "retired")
SOURCE_KEYS = ("repo", "commit", "path", "symbol", "lines", "license")

# Fields that live in problem.toml, in canonical order.
META_FIELDS = ("id", "title", "entry_point", "kind", "stage", "task", "data", "framework",
               "status")
# The typed schema of problem.toml: every key's type, checked before anything is written.
META_SCHEMA = {key: Field("str", nullable=False) for key in META_FIELDS}
SOURCE_SCHEMA = {"repo": Field("str", nullable=False), "commit": Field("str", nullable=False),
                 "path": Field("str", nullable=False), "symbol": Field("str", nullable=False),
                 "lines": Field("str|int|int-list", nullable=False, min=0),
                 "license": Field("str", nullable=False)}


@dataclass
class Problem:
    id: str
    entry_point: str
    kind: str = "function"
    title: str = ""
    stage: str = ""
    task: str = ""
    data: str = ""
    framework: str = "pytorch"
    status: str = "draft"
    source: dict | None = None
    test_node_ids: list[str] | None = None
    prompt: str = ""
    solution: str = ""
    tests: str | None = None
    extra: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def repo_backed(self) -> bool:
        return bool(self.test_node_ids)

    @property
    def function_name(self) -> str:
        return self.entry_point.split(".")[-1]

    @property
    def class_name(self) -> str | None:
        """The class of a method problem; None for a function, or a draft method whose
        class is not known yet (a bare entry point: DL-Bench class files without `class:`)."""
        if self.kind != "method" or "." not in self.entry_point:
            return None
        return self.entry_point.split(".")[0]

    def to_dict(self) -> dict:
        data = asdict(self)
        data.pop("extra")
        return data

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls) if f.name != "extra")


def validate(problem: Problem) -> list[str]:
    """Every reason this problem is malformed (empty when it is fine)."""
    errors = schema_errors({k: getattr(problem, k) for k in META_FIELDS}, META_SCHEMA)
    if errors:
        return errors
    for name in ("prompt", "solution", "tests", *META_FIELDS):
        value = getattr(problem, name)
        if isinstance(value, str) and text_problem(value):
            errors.append(f"{name}: {text_problem(value)}")
    if not ID_PATTERN.match(problem.id or ""):
        errors.append(f"id {problem.id!r} must match {ID_PATTERN.pattern}")
    if not problem.entry_point or not re.match(
            r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)?$", problem.entry_point):
        errors.append(f"entry_point {problem.entry_point!r} must be a name or Class.method")
    if problem.kind not in KINDS:
        errors.append(f"kind {problem.kind!r} must be one of {', '.join(KINDS)}")
    elif problem.kind == "method" and "." not in problem.entry_point \
            and problem.status != "draft":
        errors.append("kind 'method' needs entry_point 'Class.method' (only a draft may "
                      "leave the class unknown)")
    elif problem.kind == "function" and "." in problem.entry_point:
        errors.append("entry_point 'Class.method' needs kind 'method'")
    for axis, allowed in VOCAB.items():
        value = getattr(problem, axis)
        if value and value not in allowed:
            errors.append(f"unknown {axis} label {value!r} (expected one of {', '.join(allowed)})")
    if problem.status not in STATUSES:
        errors.append(f"status {problem.status!r} must be one of {', '.join(STATUSES)}")
    if problem.source is not None and not isinstance(problem.source, dict):
        errors.append("[source] must be a table")
    elif problem.source is not None:
        unknown = sorted(set(problem.source) - set(SOURCE_KEYS))
        if unknown:
            errors.append(f"unknown [source] key(s): {', '.join(unknown)}")
        errors += schema_errors(problem.source, SOURCE_SCHEMA, "[source]")
        commit = problem.source.get("commit")
        if isinstance(commit, str) and commit and not SHA_PATTERN.match(commit):
            errors.append(f"[source] commit {commit!r} must be a full hex SHA")
    if problem.test_node_ids is not None:
        if not isinstance(problem.test_node_ids, list) or not all(
                isinstance(n, str) and n.strip() for n in problem.test_node_ids):
            errors.append("[tests] node_ids must be a list of non-empty strings")
    if problem.tests is None and not problem.test_node_ids and problem.status != "draft":
        # A draft may lack tests (an import says so with a flag); nothing else may.
        errors.append("no tests: add test_solution.py or [tests] node_ids")
    return errors
