"""problems/<id>/ folders: read one into a Problem, write one back, byte for byte."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from curator.errors import ProblemFormatError
from curator.limits import InputError, loads_toml, read_text
from curator.problem import META_FIELDS, SOURCE_KEYS, Problem, validate

TOML = "problem.toml"
PROMPT = "prompt.md"
SOLUTION = "solution.py"
TESTS = "test_solution.py"
KNOWN_KEYS = set(META_FIELDS) | {"source", "tests"}


def _read_text(path: Path) -> str:
    # bytes -> str with no newline translation and the BOM kept, so a write gives the
    # same bytes back
    try:
        return read_text(path, bom=False)
    except InputError as exc:
        raise ProblemFormatError(path, exc.message) from None


def parse_toml(text: str, path: Path) -> Problem:
    try:
        meta = loads_toml(text)
    except ValueError as exc:
        raise ProblemFormatError(path, str(exc)) from None
    unknown = sorted(set(meta) - KNOWN_KEYS)
    if unknown:
        raise ProblemFormatError(path, f"unknown key(s): {', '.join(unknown)}")
    for key in META_FIELDS:
        if key in meta and not isinstance(meta[key], str):
            raise ProblemFormatError(path, f"{key} must be a string")
    for key in ("id", "entry_point"):
        if not meta.get(key):
            raise ProblemFormatError(path, f"missing required key {key!r}")
    source = meta.get("source")
    if source is not None and not isinstance(source, dict):
        raise ProblemFormatError(path, "source must be a table ([source])")
    tests = meta.get("tests")
    node_ids = None
    if tests is not None:
        if not isinstance(tests, dict) or set(tests) - {"node_ids"}:
            raise ProblemFormatError(path, "[tests] may only hold node_ids")
        node_ids = tests.get("node_ids")
    if node_ids is not None and (not isinstance(node_ids, list) or not all(
            isinstance(n, str) for n in node_ids)):
        raise ProblemFormatError(path, "[tests] node_ids must be a list of strings")
    kwargs = {k: meta[k] for k in META_FIELDS if k in meta}
    problem = Problem(**kwargs, source=source, test_node_ids=node_ids)
    if source is not None:
        # Wrong types in [source] (a table, a date) are refused here, before any write.
        errors = [e for e in validate(problem) if "[source]" in e]
        if errors:
            raise ProblemFormatError(path, "; ".join(errors))
    return problem


def read_problem(folder: str | os.PathLike) -> tuple[Problem, str]:
    """Read problems/<id>/; returns the problem and problem.toml's exact text."""
    folder = Path(folder)
    toml_path = folder / TOML
    if not toml_path.is_file():
        raise ProblemFormatError(toml_path, "missing problem.toml")
    raw = _read_text(toml_path)
    problem = parse_toml(raw, toml_path)
    if problem.id != folder.name:
        raise ProblemFormatError(
            toml_path, f"id {problem.id!r} does not match its folder name {folder.name!r}")
    for name in (PROMPT, SOLUTION):
        if not (folder / name).is_file():
            raise ProblemFormatError(folder / name, f"missing {name}")
    problem.prompt = _read_text(folder / PROMPT)
    problem.solution = _read_text(folder / SOLUTION)
    tests_path = folder / TESTS
    problem.tests = _read_text(tests_path) if tests_path.is_file() else None
    errors = validate(problem)
    if errors:
        raise ProblemFormatError(toml_path, "; ".join(errors))
    return problem, raw


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n",
            "\f": "\\f", "\r": "\\r"}


def _toml_str(value: str) -> str:
    """A TOML basic string: quotes, backslashes and every control character escaped."""
    out = []
    for char in value:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04X}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'



def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return _toml_str(value)
    if isinstance(value, list):
        if not value:
            return "[]"
        return "[\n" + "".join(f"    {_toml_value(v)},\n" for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} to problem.toml")


def render_toml(problem: Problem) -> str:
    """The canonical problem.toml for a problem."""
    lines = [f"{key} = {_toml_str(getattr(problem, key))}" for key in META_FIELDS]
    if problem.source:
        lines.append("")
        lines.append("[source]")
        ordered = [k for k in SOURCE_KEYS if k in problem.source]
        ordered += sorted(k for k in problem.source if k not in SOURCE_KEYS)
        for key in ordered:
            lines.append(f"{key} = {_toml_value(problem.source[key])}")
    if problem.test_node_ids is not None:
        lines.append("")
        lines.append("[tests]")
        lines.append(f"node_ids = {_toml_value(problem.test_node_ids)}")
    return "\n".join(lines) + "\n"


def toml_text(problem: Problem, raw: str | None) -> str:
    """The last-read text when it still says the same thing, else the canonical text."""
    if raw is not None:
        try:
            again = parse_toml(raw, Path(TOML))
        except ProblemFormatError:
            again = None
        if again is not None and all(
                getattr(again, k) == getattr(problem, k)
                for k in (*META_FIELDS, "source", "test_node_ids")):
            return raw
    return render_toml(problem)


def _write_if_changed(path: Path, text: str) -> bool:
    data = text.encode("utf-8")   # bytes: no newline translation, whatever the platform
    try:
        if path.read_bytes() == data:
            return False
    except OSError:
        pass
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
    return True


def write_problem(problem: Problem, problems_dir: str | os.PathLike,
                  raw_toml: str | None = None) -> tuple[bool, str]:
    """Write problems/<id>/; returns (whether any file changed, the problem.toml text)."""
    folder = Path(problems_dir) / problem.id
    folder.mkdir(parents=True, exist_ok=True)
    toml = toml_text(problem, raw_toml)
    changed = _write_if_changed(folder / TOML, toml)
    changed |= _write_if_changed(folder / PROMPT, problem.prompt)
    changed |= _write_if_changed(folder / SOLUTION, problem.solution)
    tests_path = folder / TESTS
    if problem.tests is not None:
        changed |= _write_if_changed(tests_path, problem.tests)
    elif tests_path.exists():
        tests_path.unlink()
        changed = True
    return changed, toml


@dataclass
class ScanResult:
    problems: list[tuple[Problem, str, Path]]
    errors: list[ProblemFormatError]


def scan(problems_dir: str | os.PathLike) -> ScanResult:
    """Read every problem folder; malformed ones become errors, the rest still load."""
    problems_dir = Path(problems_dir)
    found, errors = [], []
    if not problems_dir.is_dir():
        return ScanResult([], [ProblemFormatError(problems_dir, "problems folder not found")])
    for folder in sorted(p for p in problems_dir.iterdir() if p.is_dir()):
        if folder.name.startswith((".", "_")):
            continue
        try:
            problem, raw = read_problem(folder)
        except ProblemFormatError as exc:
            errors.append(exc)
            continue
        # read_problem holds each id to its folder's name, so no two can share an id
        found.append((problem, raw, folder))
    return ScanResult(found, errors)
