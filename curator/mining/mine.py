"""`curator mine`: fetch a repository into the cache, index one commit, store candidates."""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from curator.errors import Cancelled
from curator.mining.index import (
    FAILURE_REASONS,
    Candidate,
    IndexResult,
    index_commit,
)
from curator.mining.settings import MiningSettings
from curator.progress import CancelCheck, Progress
from curator.repos import identity
from curator.repos.gitcache import CachedRepo, GitError, cache_for, is_url
from curator.store import Store, mined_commits, now
from curator.store import candidates as candidate_rows
from curator.store import repos as repo_rows
from curator.workspace import Workspace

# Columns refreshed when a known candidate is seen again at a newer commit.
_REFRESHED = ("commit_sha", "path", "qualname", "kind", "signature", "docstring", "source",
              "line_start", "line_end", "decorators", "imports", "needed_imports",
              "class_header", "score", "evidence", "framework", "tests", "suggestions",
              "license", "status", "vanished_commit")


@dataclass
class MineReport:
    repo: str
    name: str
    commit: str
    rev: str | None
    files: int = 0
    parsed: int = 0
    skipped: dict = field(default_factory=dict)
    skipped_files: list = field(default_factory=list)
    functions: int = 0
    candidates: int = 0
    new: int = 0
    updated: int = 0
    vanished: int = 0
    test_modules: int = 0
    tests: int = 0
    license: str = "unknown"
    seconds: float = 0.0
    already_mined: bool = False
    warnings: list = field(default_factory=list)

    @property
    def failed(self) -> int:
        return sum(n for reason, n in self.skipped.items() if reason in FAILURE_REASONS)

    @property
    def ok(self) -> bool:
        return self.failed == 0

    def to_json(self) -> dict:
        return {
            "repo": self.repo, "name": self.name, "commit": self.commit, "rev": self.rev,
            "files": self.files, "parsed": self.parsed, "skipped": dict(self.skipped),
            "skipped_files": self.skipped_files, "failed": self.failed,
            "functions": self.functions, "candidates": self.candidates, "new": self.new,
            "updated": self.updated, "vanished": self.vanished,
            "test_modules": self.test_modules, "tests": self.tests, "license": self.license,
            "already_mined": self.already_mined, "seconds": round(self.seconds, 3),
            "files_per_s": round(self.files / self.seconds, 1) if self.seconds else None,
            "warnings": self.warnings, "ok": self.ok,
        }


def _check_local(url: str) -> None:
    path = Path(url)
    if not path.is_dir():
        raise GitError(f"{url}: not a folder")
    if not ((path / ".git").exists() or ((path / "HEAD").is_file()
                                          and (path / "objects").is_dir())):
        raise GitError(f"{url}: not a git repository")


def mine(store: Store, workspace: Workspace, source: str, rev: str | None = None,
         with_tests: bool | None = None, progress: Progress | None = None,
         cancelled: CancelCheck | None = None, fetch: bool = True,
         name: str | None = None) -> MineReport:
    """Mine one commit (REV, default the default branch) of SOURCE into candidates.

    SOURCE is a URL or a local clone / bare mirror; the repository is recorded under its
    portable identity (`identity.identify`: the remote URL, or NAME). Re-mining a commit
    already mined is a no-op. A commit that descends from the last one mined re-pins
    unreviewed candidates to it, adds new ones and marks vanished ones. Cancelling (the
    `cancelled` callback turning true) raises `Cancelled` and writes nothing.
    """
    started = time.perf_counter()
    settings = MiningSettings.from_config(workspace.config.mining)
    if with_tests is None:
        with_tests = settings.with_tests
    origin = identity.identify(source, name)
    location = origin.source or origin.url
    if not is_url(location):
        _check_local(location)
    url = origin.url
    cache = cache_for(workspace.repos_dir, url)
    if progress:
        progress(0, 0, "fetch")
    if rev and cache.exists() and cache.has_commit(rev):
        fetch = False  # a full SHA already in the cache: nothing to fetch
    CachedRepo(url=location, path=cache.path).ensure(fetch=fetch)
    if origin.source:
        cache.point_origin_at(origin.source)
    commit = cache.resolve(rev)
    report = MineReport(repo=url, name=origin.name, commit=commit, rev=rev)
    if origin.named_by_folder:
        report.warnings.append(f"{location} has no remote URL: it is named "
                               f"{origin.name!r}; give --name OWNER/NAME")
    repo = repo_rows.by_url(store, url)
    if repo is None:
        repo = {"id": None}
    elif not name:
        report.name = repo["name"]

    done = mined_commits.get(store, repo["id"], commit)
    if done is not None and (done["all_candidates"] or with_tests):
        previous = json.loads(done["summary"] or "{}")
        for key in ("files", "parsed", "functions", "candidates", "test_modules", "tests",
                    "skipped_files", "warnings"):
            if key in previous:
                setattr(report, key, previous[key])
        report.skipped = previous.get("skipped", {})
        report.license = done["license"]
        report.already_mined = True
        report.seconds = time.perf_counter() - started
        return report

    result = index_commit(cache, commit, settings, with_tests, progress, cancelled)
    _fill(report, result)
    if result.test_modules == 0:
        report.warnings.append("no test modules found (test_*.py / *_test.py)")
    elif with_tests and not result.candidates:
        report.warnings.append("no function is exercised by the tests found; "
                               "--all-candidates keeps untested ones")
    if cancelled and cancelled():
        raise Cancelled("mining cancelled; nothing was written")
    with store.transaction():
        repo, _ = identity.register(store, workspace.repos_dir, url, source=origin.source,
                                 name=name or (None if repo["id"] else origin.name))
        report.name = repo["name"]
        _store(store, cache, repo, result, report, rev, with_tests)
    report.seconds = time.perf_counter() - started
    return report


def _fill(report: MineReport, result: IndexResult) -> None:
    report.files, report.parsed = result.files, result.parsed
    report.skipped = dict(sorted(Counter(result.skipped).items()))
    report.skipped_files = result.skipped_files
    report.functions, report.candidates = result.functions, len(result.candidates)
    report.test_modules, report.tests = result.test_modules, result.tests
    report.license = result.license


def _values(candidate: Candidate, commit: str, license: str) -> dict:
    return {
        "commit_sha": commit, "path": candidate.path, "qualname": candidate.qualname,
        "kind": candidate.kind, "signature": candidate.signature,
        "docstring": candidate.docstring, "source": candidate.source,
        "line_start": candidate.start, "line_end": candidate.end,
        "decorators": json.dumps(candidate.decorators),
        "imports": json.dumps(candidate.imports),
        "needed_imports": json.dumps(candidate.needed_imports),
        "class_header": candidate.class_header, "score": candidate.score,
        "evidence": json.dumps(candidate.evidence), "framework": candidate.framework,
        "tests": json.dumps(candidate.tests), "suggestions": json.dumps(candidate.suggestions),
        "license": license,
    }


def _store(store: Store, cache, repo: dict, result: IndexResult, report: MineReport,
           rev: str | None, with_tests: bool) -> None:
    commit = result.commit
    last = mined_commits.latest(store, repo["id"])
    descends = last is None or cache.is_ancestor(last, commit)
    stamp = now()
    with store.transaction():
        existing = {r["ast_hash"]: r for r in candidate_rows.of_repo(store, repo["id"])}
        for candidate in result.candidates:
            if candidate.ast_hash not in existing:
                values = _values(candidate, commit, result.license)
                values.update(repo_id=repo["id"], first_commit=commit,
                              ast_hash=candidate.ast_hash, status="new",
                              created_at=stamp, updated_at=stamp)
                candidate_rows.insert(store, values, repo["url"])
                report.new += 1
        if not descends:
            # An older or unrelated commit: add what is new, re-pin nothing.
            _record_commit(store, repo, result, report, rev, with_tests, stamp)
            return
        for ast_hash, row in existing.items():
            if ast_hash not in result.present:
                if row["vanished_commit"] is None:
                    changes = {"vanished_commit": commit}
                    if row["status"] == "new":
                        changes["status"] = "vanished"
                    candidate_rows.update(store, row, changes, stamp)
                    report.vanished += 1
                continue
            if row["status"] not in ("new", "vanished"):
                continue  # reviewed: stays pinned where the person saw it
            candidate = result.candidate(ast_hash)
            values = _values(candidate, commit, result.license)
            values.update(status="new", vanished_commit=None)
            changes = {k: v for k, v in values.items() if row[k] != v}
            if changes:
                candidate_rows.update(store, row, changes, stamp)
                report.updated += 1
        _record_commit(store, repo, result, report, rev, with_tests, stamp)


def _record_commit(store: Store, repo: dict, result: IndexResult, report: MineReport,
                   rev: str | None, with_tests: bool, stamp: str) -> None:
    summary = report.to_json()
    mined_commits.record(store, repo["id"], result.commit, rev, result.license, summary,
                         all_candidates=not with_tests, mined_at=stamp)
    store.audit("repo", repo["id"], "mine", after={
        "commit": result.commit, "rev": rev, "candidates": report.candidates,
        "new": report.new, "updated": report.updated, "vanished": report.vanished})
    repo_rows.update(store, repo, {"license": result.license})
