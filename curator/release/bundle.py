"""Building a release bundle: a folder and a byte-reproducible NAME-X.Y.Z.tar.gz.

Contents (docs/ARCHITECTURE.md#file-formats): problems.jsonl, dlbench.csv (the DL-Bench CSV form with its label
spellings), taxonomy.json, annotations.jsonl, results.jsonl, README.md (the datasheet),
LICENSES/, envs/ (the lock of each upstream repository's environment), manifest.json
(sha256 and size of every other file).

Nothing in a bundle depends on the clock, the machine or the order rows were read: the
same database always gives the same bytes. Building records the release and marks the
included problems `released` (audited), and writes their problem.toml.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from curator import __version__, taxonomy
from curator.archives import tar_gz_bytes
from curator.dlbench import fileformat, label_map
from curator.errors import CuratorError, ReleaseError
from curator.evaluation.outcomes import sample_runs
from curator.labels import AXES
from curator.panel import rounds
from curator.problem import Problem
from curator.problem_files import TOML, toml_text
from curator.progress import CancelCheck, Progress, checkpoint
from curator.release import datasheet, gates
from curator.release.reader import MANIFEST, PROBLEMS, is_archive_name
from curator.release.rows import jsonl_line, problem_row, validity_figures
from curator.repos.gitcache import cache_for, repo_name
from curator.repos.licenses import LICENSE_FILES
from curator.store import Store, now, repo_envs
from curator.store import problem_imports as import_store
from curator.store import problems as problem_store
from curator.store import releases as release_store
from curator.store import review_labels as label_store
from curator.store import runs as run_store
from curator.store import samples as sample_store
from curator.validity import validate as validity
from curator.workspace import Workspace

SCHEMA_VERSION = 1
DEFAULT_NAME = "dl-bench"
CSV_NAME = "dlbench.csv"
TAXONOMY = "taxonomy.json"
ANNOTATIONS = "annotations.jsonl"
RESULTS = "results.jsonl"
README = "README.md"
LICENSES = "LICENSES"
ENVS = "envs"   # envs/<repo>.lock.txt: the environment each upstream repository's tests ran in
VERSION_PATTERN = re.compile(r"^\d+\.\d+\.\d+$")
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")



def archive_name(name: str, version: str) -> str:
    return f"{name}-{version}.tar.gz"


def default_name(workspace: Workspace) -> str:
    return workspace.config.release.name or DEFAULT_NAME


def built_releases(store: Store, name: str | None = None) -> list[dict]:
    """Releases built in this workspace, newest first: name, version, out_dir, archive."""
    rows = release_store.listing(store, name)
    for row in rows:
        row["archive"] = str(Path(row["out_dir"]) / archive_name(row["name"], row["version"])) \
            if row["out_dir"] else ""
    return rows


def next_version(store: Store, name: str) -> str:
    """The version to propose for the next build: 1.0.0, then the newest one's minor + 1."""
    versions = []
    for row in built_releases(store, name):
        if VERSION_PATTERN.match(row["version"]):
            versions.append(tuple(int(p) for p in row["version"].split(".")[:3]))
    if not versions:
        return "1.0.0"
    major, minor, _ = max(versions)
    return f"{major}.{minor + 1}.0"


@dataclass
class Contents:
    """Everything a bundle holds, in memory: relative path -> bytes, plus what it says."""
    name: str
    version: str
    files: dict[str, bytes]
    rows: list[dict]
    manifest: dict
    failing: list[gates.Failure] = field(default_factory=list)

    @property
    def archive(self) -> bytes:
        return tar_gz_bytes(f"{self.name}-{self.version}", self.files)


def _dump_json(value) -> bytes:
    return (json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False) + "\n").encode()


def _jsonl(rows: list[dict]) -> bytes:
    return "".join(jsonl_line(r) for r in rows).encode("utf-8")


def _loads(value, default=None):
    if value is None:
        return default
    if isinstance(value, (dict, list)):
        return value
    try:
        return json.loads(value)
    except (TypeError, ValueError):
        return default


# -- taxonomy.json ---------------------------------------------------------------------

def taxonomy_document(store: Store) -> dict:
    """The label vocabularies (with DL-Bench spellings) and the bug taxonomy in use."""
    labels = {axis: [] for axis in AXES}
    for row in store.labels():
        labels[row["axis"]].append({
            "slug": row["slug"], "name": row["name"], "definition": row["definition"],
            "dlbench": label_map.EXPORT_SPELLINGS[row["axis"]].get(row["slug"], row["name"])})
    doc: dict = {"labels": labels}
    doc["bug_taxonomy"] = taxonomy.current(store).to_json()
    return doc


# -- annotations.jsonl -----------------------------------------------------------------

def _label_history(store: Store, ids: set[str]) -> dict[str, list[dict]]:
    history: dict[str, list[dict]] = {}
    for row in problem_store.label_changes(store):
        pid = row["entity_id"]
        if pid not in ids:
            continue
        if row["action"] == "create":
            after = _loads(row["after"], {}) or {}
            for axis in AXES:
                if after.get(axis):
                    history.setdefault(pid, []).append(
                        {"axis": axis, "value": after[axis], "by": row["actor"], "at": row["at"]})
        else:
            value = _loads(row["after"], row["after"]) if row["after"] else ""
            history.setdefault(pid, []).append(
                {"axis": row["field"], "value": value, "by": row["actor"], "at": row["at"]})
    return history


def _sample_keys(store: Store, ids: set[str]) -> dict[int, dict]:
    return {row["id"]: row for row in sample_store.identities(store) if row["problem_id"] in ids}


def _decided(problem: Problem, history: list[dict], panel: dict | None) -> dict:
    """How each label of a problem was decided: by its panel (majority k/n, adjudicated,
    single annotator) or, outside a label round or when the label was changed since the
    panel's decision, by the one person who set it last."""
    decided = {axis: {k: v for k, v in how.items() if k != "value"}
               for axis, how in (panel or {}).get("decided", {}).items()
               if how["value"] == getattr(problem, axis)}
    for axis in AXES:
        if axis in decided or not getattr(problem, axis):
            continue
        setters = [h["by"] for h in history if h["axis"] == axis]
        decided[axis] = {"method": "single", "votes": None, "of": None,
                         "by": setters[-1] if setters else None}
    return {axis: decided[axis] for axis in AXES if axis in decided}


def annotations(store: Store, name: str, problems: list[Problem]) -> list[dict]:
    """One `labels` row per problem (with who set each label when, and how each was
    decided), then review labels."""
    ids = {p.id for p in problems}
    history = _label_history(store, ids)
    panels = rounds.provenance(store, ids)
    rows = [{"type": "labels", "task_id": f"{name}/{p.id}", "title": p.title,
             "stage": p.stage, "task": p.task, "data": p.data,
             "history": history.get(p.id, []),
             "decided": _decided(p, history.get(p.id, []), panels.get(p.id)),
             "votes": panels.get(p.id, {}).get("votes", [])} for p in problems]
    samples = _sample_keys(store, ids)
    reviews = []
    if samples:
        for row in label_store.all_labels(store):
            sample = samples.get(row["sample_id"])
            if sample is None:
                continue
            reviews.append({"type": "review", "task_id": f"{name}/{sample['problem_id']}",
                            "sample": sample["content_hash"], "model": sample["model"],
                            "annotator": row["annotator"], "verdict": row["verdict"],
                            "pairs": _loads(row["pairs"], []), "note": row["note"],
                            "taxonomy_version": row["taxonomy_version"]})
    if samples:
        for row in label_store.all_final(store).values():
            sample = samples.get(row["sample_id"])
            if sample is None:
                continue
            reviews.append({"type": "review_final",
                            "task_id": f"{name}/{sample['problem_id']}",
                            "sample": sample["content_hash"], "model": sample["model"],
                            "adjudicator": row["adjudicator"], "verdict": row["verdict"],
                            "pairs": _loads(row["pairs"], []), "note": row["note"],
                            "taxonomy_version": row["taxonomy_version"]})
    reviews.sort(key=lambda r: (r["task_id"], r["sample"], r["type"],
                                r.get("annotator") or r.get("adjudicator") or ""))
    return rows + reviews


# -- results.jsonl ---------------------------------------------------------------------

_RUN_FIELDS = ("outcome", "tests", "duration_s", "timeout_s", "env", "reason")


def _run_record(row: dict) -> dict:
    out = {}
    for key in _RUN_FIELDS:
        if key in row:
            value = row[key]
            if key in ("tests", "env"):
                value = _loads(value, [] if key == "tests" else {})
            out[key] = value
    return out


def results(store: Store, name: str, problems: list[Problem]) -> list[dict]:
    """The latest reference run of each problem's current solution and of each sample."""
    ids = {p.id for p in problems}
    rows = []
    latest = {}
    for pid, runs in run_store.current_reference_runs(store, problems).items():
        counted = [r for r in runs if r["outcome"] != "infra"] or runs
        latest[counted[-1]["id"]] = pid
    full = run_store.stored_rows(store, sorted(latest))
    for run_id, pid in sorted(latest.items(), key=lambda item: item[1]):
        run = full[run_id]
        rows.append({"task_id": f"{name}/{pid}", "solution_kind": "reference",
                     "solution_sha256": run.get("solution_hash"), "sample": None,
                     "model": None, "technique": None, "temperature": None,
                     "sample_index": None, **_run_record(run)})
    samples = _sample_keys(store, ids)
    if samples:
        for sid, run in sample_runs(store, list(samples)).items():
            sample = samples[sid]
            rows.append({"task_id": f"{name}/{sample['problem_id']}", "solution_kind": "sample",
                         "solution_sha256": sample["code_sha256"],
                         "sample": sample["content_hash"], "model": sample["model"],
                         "technique": sample["technique"], "temperature": sample["temperature"],
                         "sample_index": sample["sample_index"], **_run_record(run)})
    rows.sort(key=lambda r: (r["task_id"], r["solution_kind"], r["model"] or "",
                             r["technique"] or "", r["sample_index"] or 0, r["sample"] or ""))
    return rows


# -- envs/ ------------------------------------------------------------------------------


def env_locks(store: Store, problems: list[Problem]) -> dict[str, bytes]:
    """envs/<repo>.lock.txt for each upstream repository with a `repo env` lock: exact
    versions with hashes, from which `curator repo env NAME --lock FILE` rebuilds it."""
    urls = sorted({(p.source or {}).get("repo") for p in problems
                   if p.repo_backed and (p.source or {}).get("repo")})
    out: dict[str, bytes] = {}
    for url in urls:
        row = repo_envs.lock_for_url(store, url)
        if row is None or not row["lock"]:
            continue
        path = f"{ENVS}/{_license_file_name(url)}.lock.txt"
        if path in out:
            path = f"{ENVS}/{_license_file_name(url)}-" \
                   f"{hashlib.sha1(url.encode()).hexdigest()[:8]}.lock.txt"
        header = (f"# {url} at {row['commit_sha']}, python {row['python_version']}\n"
                  f"# rebuild: curator repo env NAME --lock THIS_FILE\n")
        out[path] = (header + row["lock"]).encode("utf-8")
    return out


# -- LICENSES/ -------------------------------------------------------------------------

def _license_file_name(repo: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", repo_name(repo)).strip("_.") or "upstream"


def _upstream_license_text(workspace: Workspace, repo: str, commit: str | None) -> str | None:
    """The licence file of `repo` at `commit` from the mining cache, when it is there."""
    if not commit:
        return None
    try:
        cached = cache_for(workspace.repos_dir, repo)
        if not cached.exists or not cached.has_commit(commit):
            return None
        for entry in sorted(cached.ls_tree(commit), key=lambda e: (len(e.path), e.path)):
            if entry.type == "blob" and "/" not in entry.path and LICENSE_FILES.match(entry.path):
                return cached.read_file(commit, entry.path).decode("utf-8", "replace")
    except (CuratorError, OSError, ValueError):  # no cache, no git: the notice still names it
        return None
    return None


def licenses(workspace: Workspace, name: str, license_: str | None,
             problems: list[Problem]) -> dict[str, bytes]:
    """LICENSES/<name>.txt for the original problems, LICENSES/<repo>.txt per upstream."""
    out: dict[str, bytes] = {}
    original = sorted(p.id for p in problems if not p.source)
    if original:
        text = [f"{name}: original problems", "",
                f"The {len(original)} problem(s) below were written for this benchmark and are",
                f"released under {license_ or 'an unknown licence'}.", ""]
        text += [f"- {pid}" for pid in original]
        own = _workspace_license_text(workspace)
        if own:
            text += ["", "-" * 72, "", own.rstrip()]
        out[f"{LICENSES}/{_license_file_name(name)}.txt"] = ("\n".join(text) + "\n").encode()
    upstream: dict[str, list[Problem]] = {}
    for p in problems:
        if p.source and p.source.get("repo"):
            upstream.setdefault(str(p.source["repo"]), []).append(p)
    for repo, members in sorted(upstream.items()):
        spdx = sorted({str(p.source.get("license") or "unknown") for p in members})
        commits = sorted({str(p.source.get("commit") or "unpinned") for p in members})
        text = [f"{repo}", "", f"Licence: {', '.join(spdx)}",
                f"Commit(s): {', '.join(commits)}", "",
                "Problems derived from this repository (code and tests keep its licence):",
                ""]
        text += [f"- {p.id}: {p.source.get('path', '')} {p.source.get('symbol', '')}".rstrip()
                 for p in sorted(members, key=lambda p: p.id)]
        notice = _upstream_license_text(workspace, repo, members[0].source.get("commit"))
        if notice:
            text += ["", "-" * 72, "", notice.rstrip()]
        path = f"{LICENSES}/{_license_file_name(repo)}.txt"
        if path in out:
            path = f"{LICENSES}/{_license_file_name(repo)}-{hashlib.sha1(repo.encode()).hexdigest()[:8]}.txt"
        out[path] = ("\n".join(text) + "\n").encode()
    return out


def _workspace_license_text(workspace: Workspace) -> str | None:
    try:
        names = sorted((p for p in Path(workspace.root).iterdir()
                        if p.is_file() and LICENSE_FILES.match(p.name)),
                       key=lambda p: (len(p.name), p.name))
        return names[0].read_text(encoding="utf-8", errors="replace") if names else None
    except OSError:
        return None


# -- assembling ------------------------------------------------------------------------

def releasable(store: Store) -> list[Problem]:
    return [p for p in problem_store.all_problems(store) if p.status in gates.RELEASABLE]


def _counts(problems: list[Problem], rows: dict[str, list]) -> dict:
    counts: dict = {"problems": len(problems),
                    "function": sum(p.kind == "function" for p in problems),
                    "method": sum(p.kind == "method" for p in problems),
                    "repo_backed": sum(bool(p.test_node_ids) for p in problems),
                    "original": sum(not p.source for p in problems)}
    for axis in AXES:
        tally: dict[str, int] = {}
        for p in problems:
            key = getattr(p, axis) or "unlabelled"
            tally[key] = tally.get(key, 0) + 1
        counts[axis] = dict(sorted(tally.items()))
    for name, items in rows.items():
        counts[name] = len(items)
    return counts


def _filename_map(store: Store, problems: list[Problem]) -> dict[str, str]:
    """The DL-Bench file name of each problem: the original one when it was imported."""
    names = {p.id: f"{p.id}.txt" for p in problems}
    for row in import_store.rows_for(store, import_store.DLBENCH_ORIGINS):
        if row["problem_id"] in names and row["origin_key"].endswith(".txt"):
            names[row["problem_id"]] = row["origin_key"]
    return names


def contents(store: Store, workspace: Workspace, version: str, name: str | None = None,
             allow_failing: bool = False, progress: Progress | None = None,
             cancelled: CancelCheck | None = None) -> Contents:
    """Assemble a bundle in memory (no file is written). Raises when a gate blocks it."""
    name = name or default_name(workspace)
    if not VERSION_PATTERN.match(version or ""):
        raise ReleaseError(f"version {version!r} must look like X.Y.Z (e.g. 1.0.0)")
    if not NAME_PATTERN.match(name):
        raise ReleaseError(f"name {name!r} must match {NAME_PATTERN.pattern}")
    problems = releasable(store)
    if not problems:
        raise ReleaseError("nothing to release: no problem is ready or released "
                           "(set status = \"ready\" in problem.toml)")
    settings = gates.settings_for(workspace)
    report = gates.check(store, workspace, problems, settings, progress=progress,
                         cancelled=cancelled)
    failing = report.failures
    if failing and not allow_failing:
        ids = report.blocking
        first = failing[0]
        raise ReleaseError(
            f"release blocked: {len(ids)} problem(s) fail a gate (e.g. {first.problem_id}: "
            f"{first.gate}: {first.reason}); see `curator release check`, or pass "
            "--allow-failing")
    checkpoint(cancelled, "release build")
    found = validity.current(store, problems)
    rows = [problem_row(p, name, validity_figures(found.get(p.id))) for p in problems]
    names = _filename_map(store, problems)
    csv_rows = [fileformat.export_row(p, names[p.id]) for p in problems]
    ann = annotations(store, name, problems)
    res = results(store, name, problems)
    files: dict[str, bytes] = {
        PROBLEMS: _jsonl(rows),
        CSV_NAME: fileformat.render_csv(csv_rows).encode("utf-8"),
        TAXONOMY: _dump_json(taxonomy_document(store)),
        ANNOTATIONS: _jsonl(ann),
        RESULTS: _jsonl(res),
    }
    files.update(licenses(workspace, name, settings.license, problems))
    files.update(env_locks(store, problems))
    counts = _counts(problems, {"annotations": ann, "results": res})
    files[README] = datasheet.render(datasheet.Facts(
        name=name, version=version, license=settings.license, problems=problems,
        counts=counts, results=res, annotations=ann, settings=settings,
        failing=failing if allow_failing else [],
        agreement=rounds.agreement_by_axis(store, {p.id for p in problems}),
        validity={row["task_id"].rsplit("/", 1)[-1]: row["validity"] for row in rows},
        description=workspace.config.release.description,
        csv_name=CSV_NAME)).encode("utf-8")
    manifest = {
        "name": name,
        "version": version,
        "schema_version": SCHEMA_VERSION,
        "tool": "dl-bench-curator",
        "tool_version": __version__,
        "license": settings.license,
        "gates": settings.to_json(),
        "allow_failing": bool(allow_failing),
        "failing": [{"problem_id": f.problem_id, "gate": f.gate, "reason": f.reason}
                    for f in failing],
        "counts": counts,
        "files": {path: {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
                  for path, data in sorted(files.items())},
    }
    files[MANIFEST] = _dump_json(manifest)
    return Contents(name, version, files, rows, manifest, failing)


# -- writing and recording -------------------------------------------------------------

@dataclass
class BuildReport:
    name: str
    version: str
    out: Path
    archive: Path
    archive_sha256: str
    problems: int
    files: list[str]
    allow_failing: bool
    failing: list[dict]
    released: list[str]           # problems newly marked released
    recorded: bool                # False when this exact release was already recorded

    def to_json(self) -> dict:
        return {"name": self.name, "version": self.version, "out": str(self.out),
                "archive": str(self.archive), "archive_sha256": self.archive_sha256,
                "problems": self.problems, "files": self.files,
                "allow_failing": self.allow_failing, "failing": self.failing,
                "released": self.released, "recorded": self.recorded}


def _prepare_out(out: Path, keep: set[str]) -> None:
    """Make `out` ready for a bundle: empty, or holding an older bundle.

    The folder's files become this build's; of the older bundle only the files its own
    manifest lists and this build does not write again are removed. Archives of every
    version (NAME-X.Y.Z.tar.gz and .sha256) and anything else stay.
    """
    if out.exists() and not out.is_dir():
        raise ReleaseError(f"{out}: exists and is not a folder")
    out.mkdir(parents=True, exist_ok=True)
    entries = list(out.iterdir())
    if not entries:
        return
    if not (out / MANIFEST).is_file():
        raise ReleaseError(f"{out}: folder is not empty and holds no bundle; "
                           "choose an empty or new folder")
    try:
        old = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
        listed = {str(rel) for rel in old.get("files", {})}
    except (OSError, ValueError, AttributeError, RecursionError):
        listed = set()
    for rel in sorted(listed - keep):
        target = out / rel
        if ".." in Path(rel).parts or Path(rel).is_absolute() or is_archive_name(rel):
            continue
        if target.is_file():
            target.unlink()
            parent = target.parent
            while parent != out and parent.is_dir() and not any(parent.iterdir()):
                parent.rmdir()
                parent = parent.parent


def _write(out: Path, contents: Contents, archive: bytes) -> Path:
    _prepare_out(out, set(contents.files))
    for rel, data in sorted(contents.files.items()):
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    path = out / archive_name(contents.name, contents.version)
    path.write_bytes(archive)
    digest = hashlib.sha256(archive).hexdigest()
    (out / (path.name + ".sha256")).write_text(f"{digest}  {path.name}\n", encoding="utf-8")
    return path


def _record(store: Store, workspace: Workspace, contents: Contents, digest: str,
            out: Path) -> tuple[list[str], bool, dict]:
    """Record the release and mark its problems released.

    Returns (newly released ids, whether a release row was added, problem.toml files to
    write once the transaction has committed).
    """
    name, version = contents.name, contents.version
    ids = [row["task_id"].rsplit("/", 1)[-1] for row in contents.rows]
    with store.transaction():
        existing = release_store.get(store, name, version)
        if existing and existing["archive_sha256"] != digest:
            raise ReleaseError(
                f"{name} {version} was already built with different content "
                f"(sha256 {existing['archive_sha256'][:12]}); bump the version")
        recorded = existing is None
        if recorded:
            release_store.insert(
                store, name, version, digest, contents.manifest["allow_failing"],
                contents.files[MANIFEST].decode("utf-8"), str(out),
                [(pid, row["content_sha256"]) for pid, row in zip(ids, contents.rows)])
            store.audit("release", f"{name}-{version}", "build",
                        after={"archive_sha256": digest, "problems": len(contents.rows),
                               "allow_failing": contents.manifest["allow_failing"]})
        statuses = problem_store.statuses(store)
        newly = [pid for pid in ids if statuses.get(pid, "released") != "released"]
        files = _status_files(store, workspace, newly)
        # problem.toml changes with the status; its text in the database follows when the
        # two were in step.
        in_step = {pid: item.new for pid, item in files.items() if item.in_step}
        problem_store.mark_released(store, {pid: in_step.get(pid) for pid in newly}, now())
        for pid in newly:
            store.audit("problem", pid, "update", "status", statuses[pid], "released")
        if recorded:
            for pid in ids:
                store.audit("problem", pid, "release", "version", None, f"{name} {version}")
    return newly, recorded, files


_STATUS_LINE = re.compile(r'^status[ \t]*=[ \t]*"[a-z]*"[ \t]*$', re.MULTILINE)


@dataclass
class _StatusFile:
    path: Path
    text: str           # as on disk now
    new: str            # with status = "released"
    in_step: bool       # the database's copy of the file is this text


def _status_files(store: Store, workspace: Workspace, ids: list[str]) -> dict[str, _StatusFile]:
    """problem.toml of each problem with only its status line changed to released.

    Only that line changes, so edits made to the file since the last `load` are kept.
    """
    raws = problem_store.raw_tomls(store, ids)
    out = {}
    for pid in ids:
        path = workspace.problems_dir / pid / TOML
        if not path.is_file():
            continue
        with open(path, encoding="utf-8", newline="") as fh:
            text = fh.read()
        new, count = _STATUS_LINE.subn('status = "released"', text)
        if count != 1:  # unusual formatting: the canonical file instead
            problem = problem_store.get(store, pid)
            problem.status = "released"
            out[pid] = _StatusFile(path, text, toml_text(problem, None), True)
        else:
            out[pid] = _StatusFile(path, text, new, text == raws.get(pid))
    return out


def _write_status(files: dict[str, _StatusFile]) -> None:
    for item in files.values():
        if item.new != item.text:
            tmp = item.path.with_name(f".{TOML}.tmp")
            with open(tmp, "w", encoding="utf-8", newline="") as fh:
                fh.write(item.new)
            tmp.replace(item.path)


def build(store: Store, workspace: Workspace, version: str, out: str | Path,
          name: str | None = None, allow_failing: bool = False,
          progress: Progress | None = None,
          cancelled: CancelCheck | None = None) -> BuildReport:
    """Build the bundle into `out` (files + NAME-X.Y.Z.tar.gz), record it, mark released."""
    out = Path(out)
    built = contents(store, workspace, version, name, allow_failing, progress, cancelled)
    archive = built.archive
    digest = hashlib.sha256(archive).hexdigest()
    existing = release_store.get(store, built.name, built.version)
    if existing and existing["archive_sha256"] != digest:
        raise ReleaseError(
            f"{built.name} {built.version} was already built with different content "
            f"(sha256 {existing['archive_sha256'][:12]}); bump the version")
    path = _write(out, built, archive)
    newly, recorded, files = _record(store, workspace, built, digest, out.resolve())
    _write_status(files)
    return BuildReport(
        name=built.name, version=built.version, out=out, archive=path, archive_sha256=digest,
        problems=len(built.rows), files=sorted(built.files) + [path.name],
        allow_failing=bool(allow_failing),
        failing=[{"problem_id": f.problem_id, "gate": f.gate, "reason": f.reason}
                 for f in built.failing],
        released=newly, recorded=recorded)
