"""curator.toml, typed: one frozen dataclass per table, read and checked once.

`load(path)` reads the file into a `Config`; a key no table knows, a value of the wrong
type or out of range, or an unknown table is refused in one line with the file and line:

    curator.toml:7: unknown [mining] key 'max_depth' (known: call_depth, exclude, ...)

Every table is optional and every key has a default, so `Config()` is a workspace without
the file. Code reads `workspace.config.mining.call_depth`, never the raw TOML.

Adding a table is a dataclass (its fields are the keys, with defaults and, in `key(...)`,
choices or a range) and one field of that type on `Config`:

    @dataclass(frozen=True)
    class ExampleConfig:
        retries: int = key(3, min=0)

    class Config:
        ...
        example: ExampleConfig = ExampleConfig()

A key's type is its annotation: str, int, float (an integer is taken too), bool,
tuple[str, ...] (a TOML list), dict[str, str] / dict[str, dict[str, str]] (an open
table), or one of them `| None` (unset). `key(..., parse=f)` hands the checked value to
`f`, which raises ValueError with what is wrong.
"""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from curator.errors import CuratorError, WorkspaceError
from curator.limits import INT_MAX, Limits, loads_toml, read_text, shown

NAME = "curator.toml"
MAX_BYTES = 1 << 20


class ConfigError(WorkspaceError):
    """curator.toml cannot be used: `FILE[:LINE]: what is wrong`."""


def key(default: Any = None, *, choices: tuple | None = None, min: float | None = None,
        max: float | None = None, parse: Callable[[Any], Any] | None = None) -> Any:
    """A table key with its default and what its value may be."""
    meta = {"choices": choices, "min": min, "max": max, "parse": parse}
    if isinstance(default, (dict, list)):
        return field(default_factory=lambda: type(default)(default), metadata=meta)
    return field(default=default, metadata=meta)


# -- the tables ---------------------------------------------------------------------------

@dataclass(frozen=True)
class ExecutionConfig:
    """[execution]: where and how runs execute (None: the engine's own default)."""

    backend: str | None = key(None, choices=("local", "ray"))
    address: str | None = None
    workers: int | None = key(None, min=1)
    isolation: str = key("auto", choices=("auto", "strong", "weak"))
    # consent to run untrusted code (samples, mined or imported problems) under weak
    # isolation (curator.execution.trust); the CLI's --allow-weak says it per command
    allow_weak: bool = False
    preload: tuple[str, ...] = ()
    timeout_s: float | None = key(None, min=0.001)
    first_timeout_s: float | None = key(None, min=0.001)   # a reference never timed here
    timeout_floor_s: float | None = key(None, min=0)
    timeout_factor: float | None = key(None, min=0)
    memory_mb: int | None = key(None, min=1, max=INT_MAX)
    processes: int | None = key(None, min=1, max=INT_MAX)
    file_mb: int | None = key(None, min=1, max=INT_MAX)
    open_files: int | None = key(None, min=1, max=INT_MAX)
    output_kb: int | None = key(None, min=1, max=INT_MAX)

    def run_limits(self) -> dict[str, int]:
        """The resource limits set here (curator.execution.job.Limits fields)."""
        names = ("memory_mb", "processes", "file_mb", "open_files", "output_kb")
        return {name: getattr(self, name) for name in names if getattr(self, name) is not None}


# A pattern without "/" matches any folder name on the path; one with "/" is matched
# against the whole path (fnmatch syntax).
DEFAULT_EXCLUDE = (
    "vendor", "vendored", "_vendor", "third_party", "thirdparty", "3rdparty", "external",
    "extern", "build", "dist", "docs", "doc", "examples", "example", "site-packages",
    "node_modules", ".*", "__pycache__", "*.egg-info", "setup.py", "noxfile.py",
)


@dataclass(frozen=True)
class MiningConfig:
    """[mining]: what mining reads and how far it follows calls."""

    exclude: tuple[str, ...] = DEFAULT_EXCLUDE    # replaces the defaults
    extra_exclude: tuple[str, ...] = ()           # added to them
    max_file_bytes: int = key(1_000_000, min=1, max=INT_MAX)
    with_tests: bool = True
    call_depth: int = key(3, min=0, max=1000)     # calls followed from a tested function
    indirect_tests: int = key(20, min=0, max=INT_MAX)   # node ids from testing callers


@dataclass(frozen=True)
class ReleaseConfig:
    """[release]: the bundle's name, description and licence, and the gate thresholds."""

    name: str | None = None
    description: str = ""
    license: str | None = None
    min_tests: int | None = key(None, min=0, max=INT_MAX)
    near_duplicate_threshold: float | None = key(None, min=0)   # above 1: gate off
    min_mutation_score: float | None = key(None, min=0, max=1)  # None: the gate is off


@dataclass(frozen=True)
class DlbenchConfig:
    """[dlbench]: label spellings (axis -> spelling -> slug) and repository URLs."""

    spellings: dict[str, dict[str, str]] = key({})
    repos: dict[str, str] = key({})


_K_OF_N = re.compile(r"^\s*(\d+)\s+of\s+(\d+)\s*$")


def k_of_n(text: str) -> tuple[int, int]:
    """(K, N) of a rule "K of N" with 1 <= K <= N (ValueError says what is wrong)."""
    match = _K_OF_N.match(str(text))
    if not match:
        raise ValueError(f"accept_when = {text!r} must read \"K of N\", e.g. \"2 of 3\"")
    k, n = int(match.group(1)), int(match.group(2))
    if not 1 <= k <= n:
        raise ValueError(f"accept_when = {text!r} needs 1 <= K <= N")
    return k, n


def _rule(text: str) -> str:
    k_of_n(text)
    return text


@dataclass(frozen=True)
class CandidatesConfig:
    """[candidates]: when a panel's votes promote a candidate."""

    accept_when: str = key("2 of 3", parse=_rule)


@dataclass(frozen=True)
class LlmConfig:
    """[llm]: the OpenAI-compatible endpoint model-assisted curation uses by default."""

    base_url: str | None = None
    model: str | None = None
    api_key_env: str = "OPENAI_API_KEY"   # the variable holding the key, never the key
    timeout_s: float = key(120.0, min=0.001)
    max_retries: int = key(5, min=0, max=100)


@dataclass(frozen=True)
class DiscoverConfig:
    """[discover]: where `curator discover` and the app's Discover tab search."""

    api_url: str = "https://api.github.com"   # a GitHub Enterprise server's /api/v3


@dataclass(frozen=True)
class AppConfig:
    """[app]: the app's look."""

    theme: str | None = None


def _keys(value: dict) -> dict:
    out = {}
    for binding_id, keys in value.items():
        text = ",".join(keys) if isinstance(keys, tuple) else keys
        if not text.strip():
            raise ValueError(f"{binding_id!r} must be a key string like \"ctrl+s\"")
        out[binding_id] = text.strip()
    return out


@dataclass(frozen=True)
class Config:
    """The whole of curator.toml; each field is one table."""

    execution: ExecutionConfig = ExecutionConfig()
    mining: MiningConfig = MiningConfig()
    release: ReleaseConfig = ReleaseConfig()
    dlbench: DlbenchConfig = DlbenchConfig()
    candidates: CandidatesConfig = CandidatesConfig()
    limits: Limits = Limits()
    llm: LlmConfig = LlmConfig()
    discover: DiscoverConfig = DiscoverConfig()
    app: AppConfig = AppConfig()
    # binding id -> keys ("ctrl+s", or a list of them); F1 help lists the ids
    keymap: dict[str, str | tuple[str, ...]] = key({}, parse=_keys)


# -- reading ---------------------------------------------------------------------------------

def load(path: str | Path) -> Config:
    """curator.toml at `path` (Config() when there is none); ConfigError when unusable."""
    path = Path(path)
    if not path.exists():
        return Config()
    try:
        text = read_text(path, MAX_BYTES)
        data = loads_toml(text)
    except CuratorError as exc:
        raise ConfigError(str(exc)) from None
    except ValueError as exc:
        raise ConfigError(f"{path}: invalid config: {exc}") from None
    return from_dict(data, str(path), text)


def from_dict(data: dict, source: str = NAME, text: str = "") -> Config:
    """A Config from parsed TOML; errors name `source` and, from `text`, the line."""
    where = _Locator(source, text)
    known = {f.name: f for f in dataclasses.fields(Config)}
    values = {}
    for name, value in data.items():
        if name not in known:
            raise ConfigError(f"{where(name)}: unknown table [{shown(name)}] "
                              f"(known: {', '.join(sorted(known))})")
        if not isinstance(value, dict):
            raise ConfigError(f"{where(name)}: invalid config: {name} must be a [table]")
        hint = typing.get_type_hints(Config)[name]
        if dataclasses.is_dataclass(hint):
            values[name] = _table(hint, value, name, where)
        else:
            values[name] = _value(known[name], hint, value, (name,), where, f"[{name}]")
    return Config(**values)


def _table(cls: type, data: dict, name: str, where: _Locator) -> Any:
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    hints = typing.get_type_hints(cls)
    values = {}
    for item, value in data.items():
        if item not in fields:
            raise ConfigError(f"{where(name, item)}: unknown [{name}] key {item!r} "
                              f"(known: {', '.join(sorted(fields))})")
        values[item] = _value(fields[item], hints[item], value, (name, item), where,
                              f"[{name}] {item}")
    return cls(**values)


def _value(spec: dataclasses.Field, hint: Any, value: Any, at: tuple[str, ...],
           where: _Locator, what: str) -> Any:
    value = _checked(hint, value, at, where, what)
    meta = spec.metadata
    if meta.get("choices") and value is not None and value not in meta["choices"]:
        raise ConfigError(f"{where(*at)}: {what} must be one of "
                          f"{', '.join(meta['choices'])}, got {value!r}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        low, high = meta.get("min"), meta.get("max")
        if (low is not None and value < low) or (high is not None and value > high):
            if high == INT_MAX and low is not None:   # SQLite's largest integer: unsaid
                high = None
            bounds = (f"from {low:g} to {high:g}" if low is not None and high is not None
                      else f"at least {low:g}" if low is not None else f"at most {high:g}")
            raise ConfigError(f"{where(*at)}: {what} must be {bounds}, got {value!r}")
    if meta.get("parse") is not None:
        try:
            value = meta["parse"](value)
        except (ValueError, CuratorError) as exc:
            raise ConfigError(f"{where(*at)}: [{at[0]}] {exc}") from None
    return value


def _checked(hint: Any, value: Any, at: tuple[str, ...], where: _Locator, what: str) -> Any:
    if typing.get_origin(hint) is dict and isinstance(value, dict):   # an open table
        inner = typing.get_args(hint)[1]
        return {str(k): _checked(inner, v, (*at, str(k)), where, f"{what} {shown(k)!r}")
                for k, v in value.items()}
    try:
        return _typed(hint, value)
    except ValueError as exc:
        raise ConfigError(f"{where(*at)}: {what} must be {exc}") from None


_NAMES = {str: "a string", int: "a whole number", float: "a number", bool: "true or false"}


def _typed(hint: Any, value: Any) -> Any:
    """`value` as the annotation `hint` wants it; ValueError("<what it must be>")."""
    origin = typing.get_origin(hint)
    if origin in (types.UnionType, typing.Union):
        options = [h for h in typing.get_args(hint) if h is not type(None)]
        for option in options:
            try:
                return _typed(option, value)
            except ValueError:
                continue
        raise ValueError(" or ".join(_describe(o) for o in options) + _got(value))
    if hint is bool:
        if isinstance(value, bool):
            return value
    elif hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif hint is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    elif hint is str:
        if isinstance(value, str):
            return value
    elif origin is tuple:
        if isinstance(value, list):
            item = typing.get_args(hint)[0]
            out = []
            for number, element in enumerate(value, 1):
                try:
                    out.append(_typed(item, element))
                except ValueError:
                    raise ValueError(f"{_describe(hint)} (item {number} is "
                                     f"{_got(element).removeprefix(', got ')})") from None
            return tuple(out)
    raise ValueError(_describe(hint) + _got(value))


def _describe(hint: Any) -> str:
    origin = typing.get_origin(hint)
    if origin is tuple:
        return f"a list of {_plural(typing.get_args(hint)[0])}"
    if origin is dict:
        return f"a table of {_plural(typing.get_args(hint)[1])}"
    if origin in (types.UnionType, typing.Union):
        return " or ".join(_describe(h) for h in typing.get_args(hint) if h is not type(None))
    return _NAMES.get(hint, str(hint))


def _plural(hint: Any) -> str:
    text = _describe(hint)
    return {"a string": "strings", "a whole number": "whole numbers",
            "a number": "numbers"}.get(text, text)


def _got(value: Any) -> str:
    kind = {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "a list", dict: "a table"}.get(type(value), type(value).__name__)
    return f", got {kind}"


# -- where in the file ---------------------------------------------------------------------------

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def _dotted(text: str) -> tuple[str, ...] | None:
    """The parts of a TOML key (`a."b.c".d`), or None when it is not a plain one."""
    parts, rest = [], text.strip()
    while rest:
        if rest[0] in "\"'":
            end = rest.find(rest[0], 1)
            if end < 0:
                return None
            parts.append(rest[1:end])
            rest = rest[end + 1:].strip()
        else:
            piece = re.match(r"[A-Za-z0-9_-]+", rest)
            if piece is None:
                return None
            parts.append(piece.group())
            rest = rest[piece.end():].strip()
        if rest.startswith("."):
            rest = rest[1:].strip()
        elif rest:
            return None
    return tuple(parts)


class _Locator:
    """`source:line` of a table or key in the TOML text (just `source` when not found)."""

    def __init__(self, source: str, text: str) -> None:
        self.source = source
        self.lines = text.splitlines()

    def __call__(self, *at: str) -> str:
        line = self.line(at)
        return f"{self.source}:{line}" if line else self.source

    def line(self, at: tuple[str, ...]) -> int | None:
        table: tuple[str, ...] = ()
        fallback = None
        for number, text in enumerate(self.lines, 1):
            stripped = text.strip()
            if stripped.startswith("["):
                inner = stripped.lstrip("[").split("]")[0]
                table = _dotted(inner) or ()
                if table == at or (fallback is None and table[:len(at)] == at):
                    return number
                if fallback is None and len(at) > 1 and table == at[:-1]:
                    fallback = number
                continue
            if "=" not in stripped or stripped.startswith("#"):
                continue
            name = _dotted(stripped.split("=", 1)[0])
            if name is None:
                continue
            full = table + name
            if full[:len(at)] == at:
                return number
        return fallback
