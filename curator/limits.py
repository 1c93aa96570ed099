"""The limits and checks every reader applies to untrusted input, in one place.

Every file the curator reads (problem.toml, sample JSONL, DL-Bench JSON/CSV/tarballs,
release bundles, label and taxonomy exchange files, curator.toml) goes through these
helpers, so one rule holds everywhere: a value is parsed safely (no RecursionError,
no OverflowError, no UnicodeEncodeError later), checked against a typed schema before
anything is written, and a bad item is reported in one line and skipped.

The limits are configurable in curator.toml:

    [limits]
    file_bytes = 268435456            # one input file (or one archive member read whole)
    archive_total_bytes = 536870912   # all members of one archive, uncompressed
    archive_member_bytes = 134217728  # one archive member, uncompressed
    depth = 64                        # nesting of JSON / TOML values
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from curator.errors import CuratorError

MiB = 1 << 20
GiB = 1 << 30
INT_MIN, INT_MAX = -(1 << 63), (1 << 63) - 1     # what SQLite stores as an INTEGER
_SURROGATE = re.compile("[\ud800-\udfff]")


_POSITIVE = {"min": 1, "max": INT_MAX}   # what curator.config holds a [limits] key to


@dataclass(frozen=True)
class Limits:
    """The [limits] table of curator.toml (curator.config reads it; these are the defaults)."""

    file_bytes: int = field(default=256 * MiB, metadata=_POSITIVE)
    archive_total_bytes: int = field(default=512 * MiB, metadata=_POSITIVE)
    archive_member_bytes: int = field(default=128 * MiB, metadata=_POSITIVE)
    depth: int = field(default=64, metadata=_POSITIVE)


DEFAULT = Limits()


class InputError(CuratorError, ValueError):
    """One bad input item: `FILE[:LINE]: what is wrong`."""

    def __init__(self, file: str | Path, message: str, line: int | None = None):
        self.file = str(file)
        self.line = line
        self.message = message
        super().__init__(f"{self.where}: {message}")

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file

    def to_json(self) -> dict:
        return {"file": self.file, "line": self.line, "message": self.message}


# -- bytes and text -----------------------------------------------------------------------

def read_bytes(path: str | Path, limit: int = DEFAULT.file_bytes) -> bytes:
    """A whole file, refused (InputError) when larger than `limit` or unreadable."""
    path = Path(path)
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise InputError(path, f"larger than the limit of {limit} bytes "
                               "(raise [limits] file_bytes in curator.toml)")
    return data


def decode(data: bytes, path: str | Path, bom: bool = True) -> str:
    try:
        return data.decode("utf-8-sig" if bom else "utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not valid UTF-8 (byte {exc.start})") from None


def read_text(path: str | Path, limit: int = DEFAULT.file_bytes, bom: bool = True) -> str:
    return decode(read_bytes(path, limit), path, bom)


def text_problem(value: str) -> str | None:
    """Why a string cannot be stored as UTF-8 text (a lone surrogate), else None."""
    match = _SURROGATE.search(value)
    if match:
        return f"lone surrogate \\u{ord(match.group()):04x} at character {match.start()}"
    return None


def csv_rows(text: str, limit: int = DEFAULT.archive_member_bytes
             ) -> Iterable[tuple[int, list[str] | str]]:
    """(line number, cells or why the row cannot be read) for every CSV record.

    Fields up to `limit` characters are read (the csv module's default is 131,072); a
    malformed record, or one with a longer field, is reported and the reader goes on with
    the next one. (The csv module's own limit is global to the process, so it is only ever
    raised here; `limit` is checked on each record.)
    """
    wanted = min(limit, 2**31 - 1)
    if csv.field_size_limit() < wanted:
        csv.field_size_limit(wanted)
    reader = csv.reader(io.StringIO(text, newline=""))
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            yield start, f"unreadable CSV row: {exc}"
            continue
        longest = max(map(len, row), default=0)
        if longest > limit:
            yield start, f"a field of {longest} characters (the limit is {limit})"
            continue
        yield start, row


def shown(key: Any, width: int = 40) -> str:
    """A key or name from the input, safe to print on one line (escaped, shortened)."""
    text = json.dumps(key if isinstance(key, str) else str(key))[1:-1]
    return text if len(text) <= width else text[:width - 3] + "..."


def one_line(message: str) -> str:
    """A message from any source folded onto one line."""
    return " ".join(str(message).split())


# -- values ---------------------------------------------------------------------------

def value_problem(value: Any, depth: int = DEFAULT.depth) -> str | None:
    """Why a parsed JSON/TOML value is unsafe to keep (too deep, an integer out of range,
    NaN or infinity, a lone surrogate), else None. Iterative: no recursion to exhaust."""
    stack = [(value, 0, "")]
    while stack:
        item, level, path = stack.pop()
        where = f" in {path}" if path else ""
        if level > depth:
            return f"nested deeper than {depth} levels"
        if isinstance(item, bool) or item is None:
            continue
        if isinstance(item, int):
            if not INT_MIN <= item <= INT_MAX:
                return f"integer out of range{where}"
        elif isinstance(item, float):
            if not math.isfinite(item):
                return f"{item} is not allowed{where} (numbers must be finite)"
        elif isinstance(item, str):
            problem = text_problem(item)
            if problem:
                return f"{problem}{where}"
        elif isinstance(item, dict):
            for key, sub in item.items():
                if isinstance(key, str):
                    problem = text_problem(key)
                    if problem:
                        return f"a key with a {problem}{where}"
                stack.append((sub, level + 1, f"{path}.{shown(key)}" if path else shown(key)))
        elif isinstance(item, list):
            for index, sub in enumerate(item):
                stack.append((sub, level + 1, f"{path}[{index}]"))
    return None


def _no_constant(name: str):
    raise ValueError(f"{name} is not allowed (numbers must be finite)")


def _int(text: str) -> int:
    # Far out of range: refused before int() spends time on it (value_problem says where
    # an integer just past the 64-bit range is).
    if len(text.lstrip("-")) > 400:
        raise ValueError("integer out of range")
    return int(text)


class JSONError(ValueError):
    """Invalid or unsafe JSON; `line` is where in the text, when known."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.line = line


def loads_json(text: str, depth: int = DEFAULT.depth) -> Any:
    """json.loads that refuses NaN/Infinity, huge integers, deep nesting and lone
    surrogates; raises ValueError with a complete one-line message (never RecursionError)."""
    try:
        value = json.loads(text, parse_constant=_no_constant, parse_int=_int)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}" if exc.lineno > 1 else \
            f"column {exc.colno}"
        raise JSONError(f"invalid JSON: {exc.msg} ({where})", exc.lineno) from None
    except RecursionError:
        raise JSONError(f"invalid JSON: nested deeper than {depth} levels") from None
    except ValueError as exc:
        raise JSONError(f"invalid JSON: {exc}") from None
    problem = value_problem(value, depth)
    if problem:
        raise JSONError(f"invalid JSON: {problem}")
    return value


def loads_toml(text: str, depth: int = DEFAULT.depth) -> dict:
    """tomllib.loads that never raises RecursionError; raises ValueError for people."""
    try:
        value = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"malformed TOML: {exc}") from None
    except RecursionError:
        raise ValueError(f"malformed TOML: nested deeper than {depth} levels") from None
    problem = value_problem(value, depth)
    if problem:
        raise ValueError(f"malformed TOML: {problem}")
    return value


# -- typed schemas ----------------------------------------------------------------------

@dataclass(frozen=True)
class Field:
    """The type of one field: "str", "int", "number", "bool", "str-list", "table", "any",
    or several joined by "|" ("str|int")."""
    kind: str
    required: bool = False
    nullable: bool = True
    choices: tuple | None = None
    min: float | None = None
    max: float | None = None
    nonempty: bool = False


_KINDS = {
    "str": "a string", "int": "a whole number", "number": "a number", "bool": "true or false",
    "str-list": "a list of strings", "int-list": "a list of whole numbers", "table": "a table (JSON object)", "list": "a list", "any": "a value",
}


def _type_ok(kind: str, value: Any) -> bool:
    if "|" in kind:
        return any(_type_ok(k, value) for k in kind.split("|"))
    if kind == "str":
        return isinstance(value, str)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "str-list":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    if kind == "int-list":
        return isinstance(value, list) and all(
            isinstance(v, int) and not isinstance(v, bool) for v in value)
    if kind == "table":
        return isinstance(value, dict)
    if kind == "list":
        return isinstance(value, list)
    return kind == "any"


def schema_errors(row: dict, schema: dict[str, Field], what: str = "",
                  unknown: bool = False) -> list[str]:
    """Every way `row` breaks `schema` (empty when it fits). `unknown`: refuse other keys."""
    prefix = f"{what} " if what else ""
    if not isinstance(row, dict):
        return [f"{prefix}must be {_KINDS['table']}".strip()]
    errors = []
    for key, spec in schema.items():
        if key not in row or row[key] is None:
            if spec.required or (key in row and not spec.nullable):
                errors.append(f"{prefix}{key!r} is required" if key not in row
                              else f"{prefix}{key!r} must not be null")
            continue
        value = row[key]
        if not _type_ok(spec.kind, value):
            errors.append(f"{prefix}{key!r} must be {_kind_text(spec.kind)}, "
                          f"got {_describe(value)}")
            continue
        if spec.nonempty and isinstance(value, (str, list)) and not (
                value.strip() if isinstance(value, str) else value):
            errors.append(f"{prefix}{key!r} must not be empty")
        if spec.choices is not None and value not in spec.choices:
            errors.append(f"{prefix}{key!r} must be one of {', '.join(map(str, spec.choices))}"
                          f", got {_describe(value)}")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if isinstance(value, float) and not math.isfinite(value):
                errors.append(f"{prefix}{key!r} must be finite, got {value}")
            elif spec.min is not None and value < spec.min:
                errors.append(f"{prefix}{key!r} must be at least {spec.min}, got {value}")
            elif spec.max is not None and value > spec.max:
                errors.append(f"{prefix}{key!r} must be at most {spec.max}, got {value}")
    if unknown:
        extra = sorted(shown(k) for k in row if k not in schema)
        if extra:
            errors.append(f"{prefix}unknown key(s): {', '.join(extra)}")
    return errors


def _kind_text(kind: str) -> str:
    return " or ".join(_KINDS[k] for k in kind.split("|"))


def _describe(value: Any) -> str:
    kind = type(value).__name__
    if isinstance(value, (dict, list)):
        return f"a {'table' if isinstance(value, dict) else 'list'}"
    if not isinstance(value, (str, int, float, bool)):
        return f"a {kind}"
    text = repr(value)
    if len(text) > 40:
        text = text[:37] + "..."
    return f"{kind} {text}"


def first(errors: Iterable[str]) -> str | None:
    errors = list(errors)
    return "; ".join(errors) if errors else None
