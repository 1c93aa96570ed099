"""Importing the original DL-Bench release as draft problems.

A folder or tarball of `.txt` files, the CSV form, or one such file: each
record becomes a draft repo-backed problem with its source repo, path and symbol and its
test node ids; nothing is dropped: a record without a prompt, function name, test target,
repo or path is a draft flagged with what is missing (MISSING_FLAGS). The original never
pinned a commit, so none is set and the problem is flagged `commit_unpinned` (the
provenance gate keeps it out of releases until `curator dlbench resolve` pins one); the
reference code is not part of that release either (`solution_missing`).
Problem ids come from the file names, sanitised and made unique. Labels are mapped from
DL-Bench spellings; unknown spellings are reported and the raw values kept with the
import record (table problem_imports), never dropped silently.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from curator import sync
from curator.archives import ArchiveError, iter_members
from curator.dlbench import fileformat, label_map
from curator.errors import ReleaseError
from curator.limits import DEFAULT, InputError, Limits, read_bytes
from curator.problem import Problem, validate
from curator.progress import CancelCheck, Progress, checkpoint
from curator.store import Store
from curator.store import problem_imports as import_store
from curator.store import problems as problem_store
from curator.workspace import Workspace

TAR_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")


@dataclass
class ImportReport:
    problems: list[dict] = field(default_factory=list)       # {"id", "file", "flags", ...}
    skipped: list[dict] = field(default_factory=list)        # {"file", "reason"}
    unknown_labels: list[dict] = field(default_factory=list)  # {"file", "problem_id", ...}
    notes: list[dict] = field(default_factory=list)          # {"file", "note"}
    dry_run: bool = False

    @property
    def flags(self) -> dict[str, int]:
        """flag -> how many imported problems carry it."""
        counts: dict[str, int] = {}
        for item in self.problems:
            for flag in item.get("flags", ()):
                counts[flag] = counts.get(flag, 0) + 1
        return dict(sorted(counts.items()))

    @property
    def drafts(self) -> int:
        """Problems that lack something a person must supply (a MISSING_FLAGS flag)."""
        return sum(1 for item in self.problems
                   if set(item.get("flags", ())) & set(MISSING_FLAGS))

    @property
    def unmapped(self) -> dict[str, dict[str, int]]:
        """axis -> {label as spelled -> count} for spellings no vocabulary entry matched."""
        out: dict[str, dict[str, int]] = {}
        for item in self.unknown_labels:
            spelled = out.setdefault(item["axis"], {})
            spelled[item["value"]] = spelled.get(item["value"], 0) + 1
        return {axis: dict(sorted(v.items())) for axis, v in sorted(out.items())}

    def to_json(self) -> dict:
        return {"imported": len(self.problems), "drafts": self.drafts, "flags": self.flags,
                "unmapped": self.unmapped, "problems": self.problems,
                "skipped": self.skipped, "unknown_labels": self.unknown_labels,
                "notes": self.notes, "dry_run": self.dry_run}


# -- reading DL-Bench files ------------------------------------------------------------

def _is_tar(path: Path) -> bool:
    return path.name.lower().endswith(TAR_SUFFIXES)


def _wanted(name: str) -> bool:
    base = PurePosixPath(name).name
    return (base.lower().endswith((".txt", ".csv")) and not base.startswith(("._", "."))
            and "__MACOSX" not in PurePosixPath(name).parts)


def read_sources(path: Path, limits: Limits = DEFAULT) -> Iterator[tuple[str, bytes]]:
    """(name relative to PATH, bytes) of every .txt/.csv file in a folder, tarball or file.

    Tarballs are read as a stream within the [limits] caps (see tarball.iter_members);
    every file within the member cap."""
    if path.is_dir():
        total = 0
        for item in sorted(path.rglob("*")):
            if item.is_file() and _wanted(item.name):
                data = _read_capped(item, limits)
                total += len(data)
                if total > limits.archive_total_bytes:
                    raise ReleaseError(f"{path}: files add up to more than "
                                       f"{limits.archive_total_bytes} bytes ([limits] "
                                       "archive_total_bytes in curator.toml)")
                yield item.relative_to(path).as_posix(), data
    elif path.is_file() and _is_tar(path):
        try:
            found = [(m.name, data) for m, data in iter_members(path, limits, _wanted)
                     if data is not None]
        except ArchiveError as exc:
            raise ReleaseError(f"{path}: {exc}") from None
        yield from sorted(found, key=lambda item: item[0])
    elif path.is_file():
        yield path.name, _read_capped(path, limits)
    else:
        raise ReleaseError(f"{path}: no such file or folder")


def _read_capped(path: Path, limits: Limits) -> bytes:
    try:
        return read_bytes(path, limits.archive_member_bytes)
    except InputError as exc:
        raise ReleaseError(str(exc).replace("file_bytes", "archive_member_bytes")) from None


def records(path: Path, report: ImportReport,
            limits: Limits = DEFAULT) -> list[tuple[fileformat.Record, str]]:
    """Every DL-Bench record under PATH with its origin kind (dlbench-txt | dlbench-csv)."""
    out = []
    seen: dict[str, str] = {}
    for name, data in read_sources(path, limits):
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            report.skipped.append({"file": name, "reason": f"not UTF-8 (byte {exc.start})"})
            continue
        if name.lower().endswith(".csv"):
            parsed, errors = fileformat.parse_csv(text, name, limits.archive_member_bytes)
            report.skipped.extend(errors)
            found = [(r, "dlbench-csv") for r in parsed]
        else:
            found = [(fileformat.parse_txt(text, PurePosixPath(name).name), "dlbench-txt")]
        for record, origin in found:
            key = record.origin
            if key in seen:
                report.skipped.append({"file": name, "reason": f"duplicate file name {key!r} "
                                       f"(also in {seen[key]})"})
                continue
            seen[key] = name
            for note in record.notes:
                report.notes.append({"file": name, "note": note})
            out.append((record, origin))
    return out


# -- ids -------------------------------------------------------------------------------

def sanitise_id(name: str) -> str:
    """A problem id from a file name: `classes-Kornia RGB2Gray1.txt` -> `classes-kornia_rgb2gray1`."""
    stem = PurePosixPath(name).name
    if stem.lower().endswith((".txt", ".csv", ".json")):
        stem = stem.rsplit(".", 1)[0]
    text = re.sub(r"[^a-z0-9_-]+", "_", stem.lower())
    text = re.sub(r"_{2,}", "_", text)
    text = re.sub(r"^[^a-z0-9]+", "", text).rstrip("_-")
    return text[:64].rstrip("_-") or "dlbench"


def unique_id(base: str, taken: set[str]) -> str:
    if base not in taken:
        return base
    number = 2
    while True:
        suffix = f"-{number}"
        candidate = base[:64 - len(suffix)].rstrip("_-") + suffix
        if candidate not in taken:
            return candidate
        number += 1


# -- DL-Bench records -> problems ------------------------------------------------------

@dataclass
class Converted:
    problem: Problem
    flags: list[str]
    unknown: list[dict]


# (`class_missing` is not one of them: resolve finds the class, or says why it cannot.)
# Flags that say a problem lacks something `dlbench resolve` needs (it stays a draft
# until a person supplies it); "drafts" in the import report counts these problems.
MISSING_FLAGS = ("prompt_missing", "function_missing", "function_invalid", "class_invalid",
                 "tests_missing", "repo_missing", "path_missing")
_PROMPT_DEF = re.compile(r"^\s*(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(", re.MULTILINE)


def _function_from_prompt(prompt: str) -> str | None:
    """The first `def name(` in the prompt (files that name no function often show it)."""
    match = _PROMPT_DEF.search(prompt)
    return match.group(1) if match else None


def convert(record: fileformat.Record, problem_id: str, table: dict,
            repos: dict[str, str]) -> Converted | str:
    """A draft problem for one record (flags say what is missing), or why it cannot be one.

    Nothing a file says is dropped: a missing prompt, function name, test target, repo or
    path gives a draft with a `*_missing` flag, and the raw record is kept with the import.
    """
    f = record.fields
    flags: list[str] = []
    prompt = f.get("prompt", "").strip()
    if not prompt:
        flags.append("prompt_missing")
    function_value = f.get("function", "").strip()
    function = fileformat.identifier(function_value)
    if not function:
        flags.append("function_invalid" if function_value else "function_missing")
        function = _function_from_prompt(prompt)
        if function:
            flags.append("function_from_prompt")
        else:
            function = "unknown_function"
    class_value = f.get("class", "").strip()
    class_name = fileformat.identifier(class_value) if class_value else None
    if class_value and not class_name:
        flags.append("class_invalid")
    # A class file (`classes-…`) that names no class is still a method problem: the class
    # is found from the ground-truth file by `dlbench resolve` (flag class_missing).
    method = bool(class_name) or (record.is_class and not class_value)
    if method and not class_name:
        flags.append("class_missing")
    nodes = fileformat.node_ids(f.get("test_cases", ""))
    if not nodes:
        flags.append("tests_missing")
    repo_value = f.get("repo", "").strip()
    ground = fileformat.parse_ground_truth(f.get("ground_truth", ""))
    repo = ground.repo_url
    framework = "pytorch"
    if not repo and repo_value:
        known = repos.get(repo_value.lower()) or repos.get(repo_value)
        builtin = fileformat.KNOWN_REPOS.get(repo_value.lower())
        if known:
            repo = known
        elif builtin:
            repo = builtin[0]
        else:
            repo = repo_value
            flags.append("repo_unresolved")
    elif not repo:
        flags.append("repo_missing")
    for url, fw in fileformat.KNOWN_REPOS.values():
        if url == repo:
            framework = fw
            break
    labels = label_map.resolve_labels(record, table)
    if labels.swapped:
        flags.append("labels_swapped")
    if labels.data_repeats_stage:
        flags.append("data_repeats_stage")
    entry_point = f"{class_name}.{function}" if class_name else function
    source: dict = {"repo": repo} if repo else {}
    if fileformat.is_commit(ground.ref):
        source["commit"] = ground.ref
    else:
        flags.append("commit_unpinned")
    if ground.path:
        source["path"] = ground.path
    else:
        flags.append("path_missing")
    source["symbol"] = entry_point
    if ground.lines:
        source["lines"] = ground.lines
    flags += ["license_unknown", "solution_missing"]
    if labels.unknown:
        flags.append("labels_unknown")
    problem = Problem(
        id=problem_id, entry_point=entry_point, kind="method" if method else "function",
        title=f"{entry_point} ({fileformat.repo_short_name(repo)})" if repo else entry_point,
        stage=labels.stage or "", task=labels.task or "", data=labels.data or "",
        framework=framework, status="draft", source=source, test_node_ids=nodes,
        prompt=prompt + "\n" if prompt else "", solution="", tests=None)
    errors = validate(problem)
    if errors:
        return "; ".join(errors)
    return Converted(problem, flags, labels.unknown)


def record_import(store: Store, problem_id: str, origin: str, key: str, flags: list[str],
                   raw: dict) -> None:
    import_store.record(store, problem_id, origin, key, flags, raw)
    store.audit("problem", problem_id, "import", "origin", None,
                {"origin": origin, "key": key, "flags": flags})


def import_dlbench(store: Store, workspace: Workspace, path: str | Path,
                   dry_run: bool = False, progress: Progress | None = None,
                   cancelled: CancelCheck | None = None) -> ImportReport:
    """Import the DL-Bench release at PATH as draft problems (files written too)."""
    path = Path(path)
    report = ImportReport(dry_run=dry_run)
    config = workspace.config.dlbench
    table = label_map.spelling_map(config.spellings)
    repos = dict(config.repos)
    found = records(path, report, workspace.limits)
    already = import_store.problems_by_key(store, import_store.DLBENCH_ORIGINS)
    taken = problem_store.all_ids(store)
    made: list[tuple[Converted, fileformat.Record, str]] = []
    for record, origin in found:
        if record.origin in already:
            report.skipped.append({"file": record.origin,
                                   "reason": f"already imported as {already[record.origin]}"})
            continue
        pid = unique_id(sanitise_id(record.origin), taken)
        result = convert(record, pid, table, repos)
        if isinstance(result, str):
            report.skipped.append({"file": record.origin, "reason": result})
            continue
        taken.add(pid)
        made.append((result, record, origin))
        for item in result.unknown:
            report.unknown_labels.append({"file": record.origin, "problem_id": pid, **item})
        report.problems.append({"id": pid, "file": record.origin,
                                "entry_point": result.problem.entry_point,
                                "kind": result.problem.kind, "flags": result.flags})
    if dry_run or not made:
        return report
    with store.transaction():
        for index, (converted, record, origin) in enumerate(made, 1):
            checkpoint(cancelled, "import")
            problem_store.save(store, converted.problem)
            raw = {"fields": record.fields, "unknown_labels": converted.unknown}
            record_import(store, converted.problem.id, origin, record.origin,
                           converted.flags, raw)
            if progress:
                progress(index, len(made), converted.problem.id)
    sync.dump(store, workspace.problems_dir, [c.problem.id for c, _r, _o in made])
    return report
