"""LLM samples: import from JSONL or DL-Bench per-problem JSON, list, and look up.

JSONL rows carry `task_id` and one of `solution` (complete code), `completion` (continues
the prompt's code) or `response` (raw model text, code extracted from it); optionally
`model`, `technique`, `temperature`, `sample_index`. DL-Bench LLM-output files are JSON
objects with `result` (raw text), `function_name`, `class`, `repo`, ...

Every row is checked against a typed schema (and the shared limits of curator.limits)
before anything is written; a bad row is reported with file and line and skipped, the
rest import. Rows are committed in chunks of CHUNK_ROWS, so a long import never holds
the write lock for long, and an interrupted import is resumed by running it again (rows
already there are skipped by their identity). A sample's identity is the hash of (model, technique, problem, format, text,
sample index), so importing the same file twice adds nothing. A row without a
`sample_index` gets its position among the file's rows for the same problem, model and
technique.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from curator.errors import NotFoundError
from curator.evaluation import extract
from curator.limits import (
    DEFAULT,
    INT_MAX,
    Field,
    InputError,
    decode,
    loads_json,
    one_line,
    read_bytes,
    schema_errors,
    value_problem,
)
from curator.problem import Problem
from curator.progress import CancelCheck, Progress, checkpoint
from curator.store import Store
from curator.store import problems as problem_store
from curator.store import samples as sample_rows

CODE_FIELDS = ("solution", "completion", "response")
DLBENCH_KEYS = {"result", "function_name"}
CHUNK_ROWS = 2000      # rows per write transaction

# The typed schema of a JSONL row, and of a DL-Bench LLM-output object.
ROW_SCHEMA = {
    "task_id": Field("str|int"), "solution": Field("str"), "completion": Field("str"),
    "response": Field("str"), "model": Field("str"), "technique": Field("str"),
    "temperature": Field("number|str", min=0), "sample_index": Field("int|str", min=0,
                                                                     max=INT_MAX),
}
DLBENCH_SCHEMA = {
    "result": Field("str|str-list"), "function_name": Field("str"), "f_name": Field("str"),
    "class": Field("str"), "repo": Field("str"), "model": Field("str"),
    "technique": Field("str"), "temperature": Field("number|str", min=0),
    "sample_index": Field("int|str", min=0, max=INT_MAX),
}


@dataclass
class Row:
    """One sample as read from a file, before it is matched to a problem."""
    file: str
    line: int | None
    data: dict
    item: int | None = None  # position in a JSON array file


@dataclass
class ImportReport:
    imported: int = 0
    duplicates: int = 0
    no_code: int = 0
    sample_ids: list[int] = field(default_factory=list)
    errors: list[dict] = field(default_factory=list)  # {"file", "line", "message"}
    models: dict[str, int] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)

    def error(self, file: str, line: int | None, message: str) -> None:
        self.errors.append({"file": file, "line": line, "message": one_line(message)})

    def to_json(self) -> dict:
        return {"files": self.files, "imported": self.imported, "duplicates": self.duplicates,
                "no_code": self.no_code, "models": self.models, "sample_ids": self.sample_ids,
                "errors": self.errors}


@dataclass
class NewSample:
    problem_id: str
    model: str
    technique: str
    temperature: float | None
    sample_index: int
    format: str
    raw: str
    code: str | None
    extraction: str
    origin: str

    @property
    def content_hash(self) -> str:
        key = [self.model, self.technique, self.problem_id, self.format, self.raw,
               self.sample_index]
        return hashlib.sha256(json.dumps(key, ensure_ascii=False).encode()).hexdigest()


# -- reading files -------------------------------------------------------------------


def read_rows(path: str | Path, report: ImportReport, limit: int = DEFAULT.file_bytes
              ) -> Iterator[Row]:
    """Rows of one sample file (JSONL, a JSON object, or a JSON array); errors go to report."""
    path = Path(path)
    name = str(path)
    try:
        text = decode(read_bytes(path, limit), path)
    except InputError as exc:
        message = exc.message.removeprefix("cannot read: ")
        report.error(name, None, f"cannot read file: {message}")
        return
    if not text.strip():
        report.error(name, None, "file is empty")
        return
    try:
        whole = json.loads(text)
    except json.JSONDecodeError as exc:
        whole = None
        multi = exc.msg == "Extra data"
        if path.suffix.lower() == ".json" and not multi:
            report.error(name, exc.lineno, f"invalid JSON: {exc.msg} (line {exc.lineno} "
                                           f"column {exc.colno})")
            return
    except (RecursionError, ValueError):
        whole = None
        if path.suffix.lower() == ".json":
            try:
                loads_json(text)
            except ValueError as exc:
                report.error(name, None, str(exc))
            return
    else:
        if isinstance(whole, dict):
            problem = value_problem(whole)
            if problem:
                report.error(name, None, f"invalid JSON: {problem}")
                return
            yield Row(name, 1, whole)
            return
        if isinstance(whole, list):
            for index, item in enumerate(whole):
                problem = value_problem(item)
                if problem:
                    report.error(name, 1, f"item {index}: invalid JSON: {problem}")
                elif isinstance(item, dict):
                    yield Row(name, 1, item, item=index)
                else:
                    report.error(name, 1, f"item {index}: expected a JSON object")
            return
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = loads_json(line)
        except ValueError as exc:
            report.error(name, number, str(exc))
            continue
        if not isinstance(data, dict):
            report.error(name, number, "expected a JSON object")
            continue
        yield Row(name, number, data)


# -- matching rows to problems -----------------------------------------------------------


class ProblemIndex:
    """Finds the problem a row belongs to: by id, release task id, or DL-Bench names."""

    def __init__(self, problems: Iterable[Problem]):
        self.problems = {p.id: p for p in problems}
        self.by_name: dict[tuple[str | None, str], list[Problem]] = {}
        for problem in self.problems.values():
            self.by_name.setdefault((problem.class_name, problem.function_name), []).append(problem)

    def by_task_id(self, task_id: str) -> Problem:
        task_id = str(task_id).strip()
        if task_id in self.problems:
            return self.problems[task_id]
        tail = task_id.rsplit("/", 1)[-1]
        if tail in self.problems:
            return self.problems[tail]
        raise NotFoundError(f"unknown task_id {task_id!r}")

    def for_dlbench(self, data: dict, file: str) -> Problem:
        function = str(data.get("function_name") or data.get("f_name") or "").strip()
        cls = str(data.get("class") or "").strip() or None
        if function.count(".") == 1 and cls is None:
            cls, function = function.split(".")
        candidates = self.by_name.get((cls, function), [])
        if not candidates and cls is None:
            candidates = [p for (c, f), ps in self.by_name.items() if f == function for p in ps]
        if len(candidates) > 1:
            candidates = self._narrow(candidates, data, file)
        if len(candidates) == 1:
            return candidates[0]
        if len(candidates) > 1:
            ids = ", ".join(sorted(p.id for p in candidates))
            raise NotFoundError(f"function {function!r} matches several problems ({ids}); "
                                "rename the file to the problem id")
        by_file = self._by_file_name(file)
        if by_file is not None:
            return by_file
        what = f"{cls}.{function}" if cls else function
        raise NotFoundError(f"no problem has entry point {what!r} or matches the file name")

    def _narrow(self, candidates: list[Problem], data: dict, file: str) -> list[Problem]:
        repo = str(data.get("repo") or "").strip().lower().rstrip("/")
        if repo:
            same = [p for p in candidates if _repo_matches(p, repo)]
            if same:
                candidates = same
        if len(candidates) > 1:
            named = self._by_file_name(file, candidates)
            if named is not None:
                return [named]
        return candidates

    def _by_file_name(self, file: str, pool: Iterable[Problem] | None = None) -> Problem | None:
        stem = _norm(Path(file).stem)
        bare = re.sub(r"\d+$", "", stem)
        pool = list(pool if pool is not None else self.problems.values())
        for problem in pool:
            keys = {_norm(problem.id)}
            repo = (problem.source or {}).get("repo")
            if repo:
                base = _norm(str(repo).rstrip("/").rsplit("/", 1)[-1])
                keys.add(base + _norm(problem.function_name))
                keys.add("classes" + base + _norm(problem.function_name))
            if stem in keys or bare in keys:
                return problem
        return None


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _repo_matches(problem: Problem, repo: str) -> bool:
    source = str((problem.source or {}).get("repo") or "").lower().rstrip("/")
    if not source:
        return False
    return source == repo or source.endswith("/" + repo) or repo.endswith("/" + source) or \
        source.rsplit("/", 1)[-1] == repo.rsplit("/", 1)[-1]


# -- turning rows into samples ---------------------------------------------------------------


def _code_for(problem: Problem, fmt: str, text: str) -> tuple[str | None, str]:
    if fmt == "solution":
        if not text.strip():
            return None, extract.NONE
        return extract.solution_code(text, problem.entry_point)
    if fmt == "completion":
        prefix = extract.code_prompt(problem.prompt, problem.entry_point, problem.solution)
        return extract.completion_code(prefix, text, problem.entry_point)
    result = extract.extract_code(text, problem.entry_point)
    return result.code, result.method


def _optional_float(data: dict, key: str) -> float | None:
    value = data.get(key)
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValueError(f"{key!r} must be a number")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{key!r} must be a number, got {value!r}") from None
    if not math.isfinite(number) or number < 0:
        raise ValueError(f"{key!r} must be a finite number >= 0, got {value!r}")
    return number


def _optional_int(data: dict, key: str) -> int | None:
    value = data.get(key)
    if value is None or value == "":
        return None
    if isinstance(value, bool) or isinstance(value, float) and not value.is_integer():
        raise ValueError(f"{key!r} must be a whole number, got {value!r}")
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"{key!r} must be a whole number, got {value!r}") from None
    if number < 0:
        raise ValueError(f"{key!r} must not be negative")
    if number > INT_MAX:
        raise ValueError(f"{key!r} is out of range")
    return number


def samples_from_row(row: Row, index: ProblemIndex, model: str | None, technique: str | None,
                     ordinals: dict) -> list[NewSample]:
    """The samples one row holds (DL-Bench files may hold several results). Raises ValueError."""
    data = row.data
    dlbench = "task_id" not in data and bool(DLBENCH_KEYS & set(data))
    errors = schema_errors(data, DLBENCH_SCHEMA if dlbench else ROW_SCHEMA)
    if errors:
        raise ValueError("; ".join(errors))
    if dlbench:
        try:
            problem = index.for_dlbench(data, row.file)
        except NotFoundError as exc:
            raise ValueError(str(exc)) from None
        texts = data.get("result")
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            raise ValueError("no code field: 'result' must be the model's text "
                             "(a string or a list of strings)")
        fmt = "dlbench"
    else:
        if "task_id" not in data or data["task_id"] in (None, ""):
            raise ValueError("no task_id")
        try:
            problem = index.by_task_id(data["task_id"])
        except NotFoundError as exc:
            raise ValueError(str(exc)) from None
        fmt = next((f for f in CODE_FIELDS if f in data and data[f] is not None), None)
        if fmt is None:
            raise ValueError("no code field (solution, completion or response)")
        if not isinstance(data[fmt], str):
            raise ValueError(f"{fmt!r} must be a string")
        texts = [data[fmt]]
    row_model = str(data.get("model") or model or "").strip()
    if not row_model:
        raise ValueError("no model: give the row a 'model' field, or name the model of the "
                         "whole file (--model; the Model box in the app)")
    row_technique = str(data.get("technique") or technique or "").strip()
    temperature = _optional_float(data, "temperature")
    given_index = _optional_int(data, "sample_index")
    where = f"{row.file}:{row.line}" + (f"#{row.item}" if row.item is not None else "")
    out = []
    for position, text in enumerate(texts):
        key = (problem.id, row_model, row_technique)
        ordinal = ordinals.get(key, 0)
        ordinals[key] = ordinal + 1
        if given_index is not None:
            sample_index = given_index + position
        else:
            sample_index = ordinal
        code, method = _code_for(problem, "response" if fmt == "dlbench" else fmt, text)
        out.append(NewSample(problem.id, row_model, row_technique, temperature, sample_index,
                             fmt, text, code, method, where))
    return out


def insert(store: Store, sample: NewSample) -> int | None:
    """Insert one sample (inside the caller's transaction); None when it already exists."""
    return sample_rows.insert(
        store, problem_id=sample.problem_id, model=sample.model, technique=sample.technique,
        temperature=sample.temperature, sample_index=sample.sample_index,
        format=sample.format, raw=sample.raw, code=sample.code, extraction=sample.extraction,
        content_hash=sample.content_hash, origin=sample.origin)


def _rows(paths: list[Path], report: ImportReport, limit: int
          ) -> Iterator[tuple[int, Path, Row | None]]:
    """(file number, file, row) for every row; (number, file, None) once a file is done."""
    for number, path in enumerate(paths, 1):
        for row in read_rows(path, report, limit):
            yield number, path, row
        yield number, path, None


def import_files(store: Store, paths: Iterable[str | Path], model: str | None = None,
                 technique: str | None = None, progress: Progress | None = None,
                 cancelled: CancelCheck | None = None, limit: int = DEFAULT.file_bytes
                 ) -> ImportReport:
    """Import sample files, CHUNK_ROWS rows per transaction; see the module docstring.
    `limit` caps the size of one file (curator.toml's [limits] file_bytes)."""
    paths = [Path(p) for p in paths]
    report = ImportReport(files=[str(p) for p in paths])
    index = ProblemIndex(problem_store.all_problems(store))
    ordinals: dict = {}
    chunk: list[NewSample] = []

    def flush() -> None:
        # Rows are checked and converted before the write lock is taken; the lock is
        # held only for the inserts of one chunk.
        if not chunk:
            return
        with store.transaction():
            for sample in chunk:
                sample_id = insert(store, sample)
                if sample_id is None:
                    report.duplicates += 1
                    continue
                report.imported += 1
                report.sample_ids.append(sample_id)
                report.models[sample.model] = report.models.get(sample.model, 0) + 1
                if sample.code is None:
                    report.no_code += 1
        chunk.clear()

    rows_in_chunk = 0
    for number, path, row in _rows(paths, report, limit):
        if row is None:
            ordinals = {}
            if progress:
                progress(number, len(paths), str(path))
            continue
        checkpoint(cancelled, "import")
        try:
            chunk.extend(samples_from_row(row, index, model, technique, ordinals))
        except (ValueError, RecursionError) as exc:
            prefix = f"item {row.item}: " if row.item is not None else ""
            message = str(exc) if isinstance(exc, ValueError) else "code nested too deeply"
            report.error(row.file, row.line, prefix + message)
            continue
        rows_in_chunk += 1
        if rows_in_chunk >= CHUNK_ROWS:
            flush()
            rows_in_chunk = 0
    flush()
    return report
