"""Samples judged elsewhere: DL-Bench's bug-taxonomy data (Generated + Result folders).

`Taxonomy-Data/` holds, per problem `<name>` of the DL-Bench release:
- `Generated/processed_<name>.py`: the model's code (becomes the sample);
- `Result/processed_<name>.txt`: DL-Bench's test report. Sections, each a line
  `Title:` followed by its text: `output file`, `function`, `Error Cases`,
  `Pass or Failed: 0|1`, `Related Failed Test Cases` (a Python set of test ids, some
  with pytest's `FAILED` decorations), `All Test Cases On Generated code` (the pytest
  output of the sample), `Final Test Result` and `Initial Result` (the reference's runs);
- `Original/processed_<name>.py`: the reference as DL-Bench ran it (not needed here).

Each sample gets one run recorded as judged elsewhere (`runs.external`): outcome passed
(Pass 1), error (Pass 0 and no test failed: collection, import or syntax errors), or
failed; its tests, pytest output and the error cases become the run's detail. Such a run
is never repeated by `samples eval`, and the review queue takes it even when the
reference was never run here (DL-Bench's own report shows the reference's run). A Result
that cannot be read is reported with its file and the sample stays pending.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from curator.errors import CuratorError
from curator.evaluation import samples as sample_files
from curator.execution.job import RunResult
from curator.progress import checkpoint
from curator.store import Store, problem_imports
from curator.store import problems as problem_store
from curator.store import runs as run_store

SOURCE = "dlbench-taxonomy"
PREFIX = "processed_"
OUTPUT_CAP = 200_000          # characters of pytest output kept per run
Progress = Callable[[int, int, str], None]

_SECTION = re.compile(r"^(output file|function|Error Cases|Pass or Failed|"
                      r"Related Failed Test Cases|All Test Cases On Generated code|"
                      r"Final Test Result|Initial Result):[ \t]*(.*)$", re.MULTILINE)
_TEST_LINE = re.compile(r"^(\S+::\S+) (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b",
                        re.MULTILINE)
_SUMMARY = re.compile(r"^=+ (.*?) in [\d.]+s(?: \([^)]*\))? =+\s*$", re.MULTILINE)
_OUTCOMES = {"PASSED": "passed", "FAILED": "failed", "ERROR": "error", "SKIPPED": "skipped",
             "XFAIL": "xfailed", "XPASS": "xpassed"}


@dataclass
class TestReport:
    """One Result/processed_<name>.txt, read."""
    passed: bool
    outcome: str                                        # passed | failed | error
    failed_tests: list[str] = field(default_factory=list)
    tests: list[dict] = field(default_factory=list)     # [{"id", "outcome"}]
    output: str = ""                                    # pytest output of the sample
    error_cases: str = ""
    summary: str = ""                                   # pytest's last line, e.g. "3 failed"
    reference_output: str = ""


def _failed_ids(text: str) -> list[str]:
    text = text.strip()
    if not text or text in ("set()", "{}"):
        return []
    try:
        items = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        items = re.findall(r"'([^']*)'", text)
    out: dict[str, None] = {}
    for item in items if isinstance(items, (set, list, tuple)) else []:
        item = re.sub(r"^(FAILED|ERROR)\s+", "", str(item).strip())
        item = re.sub(r"\s+(FAILED|ERROR|PASSED)(\s+\[\s*\d+%\])?$", "", item)
        item = item.split(" - ", 1)[0].strip()
        if item:
            out.setdefault(item, None)
    return sorted(out)


def parse_result(text: str, where: str) -> TestReport:
    """Read one DL-Bench test report; raises CuratorError (naming WHERE) when it is not one."""
    sections: dict[str, str] = {}
    matches = list(_SECTION.finditer(text))
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        body = (match.group(2) + "\n" + text[match.end():end]).strip()
        sections.setdefault(match.group(1), body)
    flag = sections.get("Pass or Failed", "").split()
    if not flag or flag[0] not in ("0", "1"):
        raise CuratorError(f"{where}: no 'Pass or Failed: 0|1' line; not a DL-Bench test report")
    output = sections.get("All Test Cases On Generated code", "")
    tests: dict[str, str] = {}
    for node, word in _TEST_LINE.findall(output):
        tests.setdefault(node, _OUTCOMES[word])
    summaries = _SUMMARY.findall(output)
    summary = summaries[-1].strip() if summaries else ""
    failed = _failed_ids(sections.get("Related Failed Test Cases", ""))
    passed = flag[0] == "1"
    if passed:
        outcome = "passed"
    elif re.search(r"\b\d+ failed\b", summary) or "failed" in tests.values() or failed:
        outcome = "failed"
    else:   # nothing failed, yet it did not pass: it errored (collection, import, syntax)
        outcome = "error"
    for node in failed:
        tests.setdefault(node, "failed")
    return TestReport(
        passed=passed, outcome=outcome, failed_tests=failed,
        tests=[{"id": k, "outcome": v} for k, v in tests.items()],
        output=output[:OUTPUT_CAP], error_cases=sections.get("Error Cases", "")[:OUTPUT_CAP],
        summary=summary, reference_output=sections.get("Initial Result", "")[:OUTPUT_CAP])


@dataclass
class ExternalImport:
    imported: int = 0
    duplicates: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    pending: int = 0                     # imported without a readable Result
    sample_ids: list[int] = field(default_factory=list)
    errors: list[dict] = field(default_factory=list)      # {"file", "line", "message"}
    files: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"files": self.files, "format": SOURCE, "imported": self.imported,
                "duplicates": self.duplicates, "outcomes": dict(sorted(self.outcomes.items())),
                "pending": self.pending, "sample_ids": self.sample_ids, "errors": self.errors}


def taxonomy_root(path: Path) -> Path:
    """DIR itself when it holds Generated/, else DIR/Taxonomy-Data."""
    for candidate in (path, path / "Taxonomy-Data"):
        if (candidate / "Generated").is_dir():
            return candidate
    raise CuratorError(f"{path}: no Generated/ folder (expected DL-Bench's Taxonomy-Data)")


def _problem_for(store: Store, name: str) -> tuple[str, bool] | None:
    """(problem id, exact) for DL-Bench file `<name>.txt`, else the problem with id `<name>`.

    The taxonomy names a few files differently from the release: `class-x` for
    `classes-x`, or `classes-x` for a function file `x` (exact is then False).
    """
    bare = re.sub(r"^class(?:es)?-", "", name)
    for key in dict.fromkeys((name, f"classes-{bare}", bare)):
        found = problem_imports.problem_for_key(
            store, problem_imports.DLBENCH_ORIGINS, f"{key}.txt")
        if found is not None:
            return found, key.lower() == name.lower()
    if problem_store.exists(store, name.lower()):
        return name.lower(), True
    return None


def _record_run(store: Store, sample_id: int, problem_id: str, code: str | None,
                report: TestReport, origin: str) -> int:
    reason = (f"judged elsewhere ({SOURCE}): Pass or Failed: {int(report.passed)}"
              + (f"; {report.summary}" if report.summary else ""))
    result = RunResult(job_id=f"{SOURCE}:{sample_id}", problem_id=problem_id,
                       outcome=report.outcome, tests=report.tests, stdout=report.output,
                       stderr=report.error_cases, reason=reason,
                       env={"isolation": "external", "source": SOURCE, "report": origin})
    return run_store.record(store, result, "sample", run_store.solution_hash(code or ""),
                            sample_id=sample_id, external=SOURCE)


def import_taxonomy(store: Store, path: str | Path, model: str, technique: str | None = None,
                    progress: Progress | None = None,
                    cancelled: Callable[[], bool] | None = None) -> ExternalImport:
    """Import every Generated/processed_<name>.py with its Result as a judged sample."""
    if not (model or "").strip():
        raise CuratorError("--model is required for --format dlbench-taxonomy")
    root = taxonomy_root(Path(path))
    out = ExternalImport(files=[str(root)])
    generated = sorted(p for p in (root / "Generated").iterdir()
                       if p.is_file() and p.suffix == ".py" and p.name.startswith(PREFIX))
    index = sample_files.ProblemIndex(problem_store.all_problems(store))
    with store.transaction():
        owners: dict[str, tuple[Path, bool]] = {}
        for file in generated:
            found = _problem_for(store, file.stem[len(PREFIX):])
            if found and (found[0] not in owners or found[1] and not owners[found[0]][1]):
                owners[found[0]] = (file, found[1])
        for number, file in enumerate(generated, 1):
            checkpoint(cancelled, "import")
            name = file.stem[len(PREFIX):]
            where = str(file)
            found = _problem_for(store, name)
            if found is None:
                out.errors.append({"file": where, "line": None, "message":
                                   f"no imported DL-Bench problem {name!r} (`curator dlbench import` first)"})
                continue
            pid = found[0]
            if owners[pid][0] != file:
                # Two files for one problem (`class-x` and `x`): the one named exactly
                # as the release file is that problem's; the other is left out, said so.
                out.errors.append({"file": where, "line": None, "message":
                                   f"problem {pid} is {owners[pid][0].name}'s; not imported"})
                continue
            try:
                text = file.read_text(encoding="utf-8-sig")
            except (OSError, UnicodeDecodeError) as exc:
                out.errors.append({"file": where, "line": None, "message": f"cannot read: {exc}"})
                continue
            result_file = root / "Result" / f"{file.stem}.txt"
            report = None
            try:
                report = parse_result(result_file.read_text(encoding="utf-8", errors="replace"),
                                      str(result_file))
            except OSError:
                out.errors.append({"file": str(result_file), "line": None,
                                   "message": "missing: the sample is imported without an "
                                              "outcome (samples eval runs it here)"})
            except CuratorError as exc:
                out.errors.append({"file": str(result_file), "line": None, "message": str(exc)})
            problem = index.problems[pid]
            code, method = sample_files._code_for(problem, "solution", text)
            sample = sample_files.NewSample(pid, model.strip(), (technique or "").strip(), None,
                                            0, "solution", text, code, method, where)
            sample_id = sample_files.insert(store, sample)
            if sample_id is None:
                out.duplicates += 1
                continue
            out.imported += 1
            out.sample_ids.append(sample_id)
            if report is None:
                out.pending += 1
            else:
                _record_run(store, sample_id, pid, code, report, str(result_file))
                out.outcomes[report.outcome] = out.outcomes.get(report.outcome, 0) + 1
            if progress:
                progress(number, len(generated), name)
    return out
