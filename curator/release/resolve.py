"""Resolving imported DL-Bench problems into pinned, runnable repo-backed drafts.

DL-Bench never pinned a commit and does not ship its reference code. For the imported
problems of one repository, `resolve`:

1. registers the repository from SOURCE (a URL, a local clone or a bare mirror; a local
   source never touches the network) under NAME;
2. pins a commit: `--rev NAME=REV`, else the last commit on the default branch before
   `--as-of DATE` (first-parent history, 00:00 UTC of that day), else the branch head;
   the date is stored on the repository so its environment can be resolved as of then;
3. finds the ground-truth file at that commit (`blob/<ref>/` prefixes and a doubled
   repository folder are undone; a file that moved is found by the symbol it defines,
   when exactly one module does), then the symbol: a function, `Class.method`, or a
   "function" that is really the method of exactly one class in the file;
4. takes the reference solution from that code (the imports it uses plus the definition,
   inside its class header for methods), checked by patching it back into the module;
5. keeps the test targets that exist at the commit, as pytest node ids (file, class,
   function, method; parametrised ids by their base name);
6. stores the problem as a repo-backed draft. A problem it cannot resolve keeps its
   draft and gets a reason: file missing at the commit, symbol missing, or test target
   missing.

Problems that are no longer drafts are left alone.
"""

from __future__ import annotations

import ast
import difflib
import json
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import PurePosixPath

from curator import sync
from curator.errors import CuratorError
from curator.mining import licenses
from curator.mining import repos as repo_store
from curator.mining.gitcache import (CachedRepo, GitError, is_url, normalise_source,
                                      repo_name, run_git)
from curator.mining.modules import (collect_references, dedent_block, dotted_path,
                                    package_of, parse_module, resolve_relative, start_line,
                                    split_lines)
from curator.mining.patch import PatchError, replace_symbol
from curator.mining.promote import format_code
from curator.problem import Problem
from curator.release import dlbench
from curator.store import Store, now
from curator.store import problems as problem_store
from curator.workspace import Workspace

Progress = Callable[[int, int, str], None]
DLBENCH_ORIGINS = ("dlbench-txt", "dlbench-csv")
# Flags of the import that a resolution settles.
SETTLED = {"commit_unpinned", "solution_missing", "path_missing"}
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


class Unresolved(Exception):
    """Why one problem cannot be resolved (the message is the reason)."""


@dataclass
class ResolveReport:
    resolved: list[dict] = field(default_factory=list)     # {"id", "repo", "commit"}
    unresolved: list[dict] = field(default_factory=list)   # {"id", "reason"}
    repos: list[dict] = field(default_factory=list)        # {"name", "url", "commit", "as_of"}
    notes: list[dict] = field(default_factory=list)        # {"id", "note"}

    def to_json(self) -> dict:
        return {"resolved": self.resolved, "unresolved": self.unresolved,
                "repos": self.repos, "notes": self.notes}


def parse_assignments(values: list[str] | tuple[str, ...], what: str) -> dict[str, str]:
    """`NAME=VALUE` options -> {NAME: VALUE} (a one-line error for anything else)."""
    out: dict[str, str] = {}
    for value in values or ():
        name, sep, rest = value.partition("=")
        if not sep or not name.strip() or not rest.strip():
            raise CuratorError(f"{what} {value!r} must be NAME={what.lstrip('-').upper()}")
        out[name.strip()] = rest.strip()
    return out


def check_date(value: str) -> str:
    try:
        return date.fromisoformat(value.strip()).isoformat()
    except ValueError:
        raise CuratorError(f"--as-of {value!r} must be a date, YYYY-MM-DD") from None


def commit_as_of(cache: CachedRepo, day: str) -> str:
    """The last commit on the default branch (first parents) before DAY 00:00 UTC."""
    out = run_git(["rev-list", "-1", "--first-parent", f"--before={day} 00:00:00 +0000",
                   "HEAD"], cwd=cache.path).strip()
    if not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", out):
        raise GitError(f"{cache.url}: no commit on the default branch before {day}")
    return out


# -- which problems belong to which repository ------------------------------------------

def _names_of(url: str, raw_repo: str) -> set[str]:
    names = {url.lower().rstrip("/"), repo_name(url).lower(),
             dlbench.repo_short_name(url).lower()}
    if raw_repo:
        names.add(raw_repo.strip().lower())
    return names


def _url_for(name: str, source: str) -> str:
    """The identity of a repository no imported problem names yet."""
    if is_url(source):
        return source.rstrip("/")
    if "/" in name:
        return f"https://github.com/{name}"
    known = dlbench.KNOWN_REPOS.get(name.lower())
    return known[0] if known else normalise_source(source)


def imported_drafts(store: Store) -> list[tuple[Problem, dict]]:
    """(problem, import row) of every DL-Bench problem that is still a draft."""
    marks = ",".join("?" * len(DLBENCH_ORIGINS))
    rows = store.query(f"SELECT * FROM problem_imports WHERE origin IN ({marks}) "
                       "ORDER BY problem_id", DLBENCH_ORIGINS)
    out = []
    for row in rows:
        if not problem_store.exists(store, row["problem_id"]):
            continue
        problem = problem_store.get(store, row["problem_id"])
        if problem.status == "draft":
            out.append((problem, row))
    return out


def _raw_repo(row: dict) -> str:
    try:
        return str(json.loads(row["raw"]).get("fields", {}).get("repo", "") or "")
    except (ValueError, AttributeError):
        return ""


# -- reading one commit ------------------------------------------------------------------

class Snapshot:
    """The files of one commit, read lazily from the cache's object store."""

    def __init__(self, cache: CachedRepo, commit: str):
        self.cache, self.commit = cache, commit
        self.blobs = {e.path: e.sha for e in cache.ls_tree(commit)
                      if e.type == "blob" and e.mode in ("100644", "100755")}
        self._text: dict[str, str | None] = {}
        self._trees: dict[str, ast.Module | None] = {}
        self._defs: dict[str, list[str]] | None = None

    def text(self, path: str) -> str | None:
        if path not in self._text:
            sha = self.blobs.get(path)
            data = next(self.cache.read_blobs([sha])) if sha else None
            try:
                self._text[path] = data.decode("utf-8-sig") if data is not None else None
            except UnicodeDecodeError:
                self._text[path] = None
        return self._text[path]

    def tree(self, path: str) -> ast.Module | None:
        if path not in self._trees:
            text = self.text(path)
            try:
                self._trees[path] = ast.parse(text, filename=path) if text is not None else None
            except (SyntaxError, ValueError, RecursionError):
                self._trees[path] = None
        return self._trees[path]

    def definitions(self) -> dict[str, list[str]]:
        """Top-level function and class name -> modules (not tests) that define it."""
        if self._defs is None:
            paths = [p for p in sorted(self.blobs) if p.endswith(".py")
                     and not _is_test_path(p)]
            self._defs = {}
            for path, data in zip(paths, self.cache.read_blobs([self.blobs[p] for p in paths]),
                                  strict=True):
                try:
                    text = data.decode("utf-8-sig")
                    self._text.setdefault(path, text)
                    tree = ast.parse(text, filename=path)
                except (UnicodeDecodeError, SyntaxError, ValueError, RecursionError):
                    continue
                for stmt in tree.body:
                    if isinstance(stmt, (*_DEFS, ast.ClassDef)):
                        self._defs.setdefault(stmt.name, []).append(path)
        return self._defs

    def license(self) -> str:
        wanted = [p for p in self.blobs if "/" not in p and (
            licenses.LICENSE_FILES.match(p) or p in ("pyproject.toml", "setup.cfg", "setup.py"))]
        root = {p: text.encode() for p in wanted if (text := self.text(p)) is not None}
        return licenses.detect(root)


def _is_test_path(path: str) -> bool:
    parts = PurePosixPath(path).parts
    name = parts[-1]
    return any(p in ("tests", "test", "testing") for p in parts[:-1]) or \
        name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"


def close_name(name: str, choices) -> str | None:
    """The one choice that is a near spelling of NAME (DL-Bench has typos like
    `apply_transfrom`, `test_depth_wrapper.py`, `TestDepthTo3`), else None."""
    found = difflib.get_close_matches(name, sorted(set(choices)), n=2, cutoff=0.9)
    if len(found) == 1 or (len(found) == 2 and difflib.SequenceMatcher(
            None, name, found[0]).ratio() > difflib.SequenceMatcher(None, name, found[1]).ratio()):
        return found[0]
    return None


# -- one problem -------------------------------------------------------------------------

def path_candidates(path: str) -> list[str]:
    """The ground-truth path and the spellings DL-Bench's paths may really mean."""
    path = path.strip().lstrip("/")
    out = [path]
    match = re.match(r"^(?:[^/]+/[^/]+/)?(?:blob|tree)/[^/]+/(.+)$", path)
    if match:
        out.append(match.group(1))
    for base in list(out):
        parts = base.split("/")
        out += ["/".join(parts[i:]) for i in range(1, len(parts) - 1)]
    seen: dict[str, None] = {}
    for item in out:
        if item:
            seen.setdefault(item, None)
    return list(seen)


def _find_symbol(tree: ast.Module, entry_point: str) -> tuple[str, ast.AST, ast.ClassDef | None] | None:
    """(qualname, node, class) for `f` or `C.m`; a bare name also matches one class's method."""
    cls_name, _, name = entry_point.rpartition(".")
    for stmt in tree.body:
        if not cls_name and isinstance(stmt, _DEFS) and stmt.name == name:
            return name, stmt, None
        if cls_name and isinstance(stmt, ast.ClassDef) and stmt.name == cls_name:
            for item in stmt.body:
                if isinstance(item, _DEFS) and item.name == name:
                    return f"{cls_name}.{name}", item, stmt
    methods = [(stmt, item) for stmt in tree.body if isinstance(stmt, ast.ClassDef)
               for item in stmt.body if isinstance(item, _DEFS) and item.name == name]
    if len(methods) == 1:
        cls, item = methods[0]
        return f"{cls.name}.{name}", item, cls
    return None


def _near_symbol(tree: ast.Module, entry_point: str) -> str | None:
    cls_name, _, name = entry_point.rpartition(".")
    if not cls_name:
        near = close_name(name, [n.name for n in tree.body if isinstance(n, _DEFS)])
        return near
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef) and stmt.name == cls_name:
            near = close_name(name, [i.name for i in stmt.body if isinstance(i, _DEFS)])
            return f"{cls_name}.{near}" if near else None
    return None


def locate(snapshot: Snapshot, problem: Problem) -> tuple[str, str, ast.AST, ast.ClassDef | None,
                                                         list[str]]:
    """(path, qualname, node, class, notes) of the ground truth at the snapshot's commit."""
    given = (problem.source or {}).get("path") or ""
    entry = problem.entry_point
    notes: list[str] = []
    candidates = [p for p in path_candidates(given) if p in snapshot.blobs] if given else []
    for path in candidates:
        tree = snapshot.tree(path)
        found = _find_symbol(tree, entry) if tree is not None else None
        if found is None and tree is not None:
            near = _near_symbol(tree, entry)
            if near:
                found = _find_symbol(tree, near)
                notes.append(f"symbol {entry} read as {near} (a near spelling)")
        if found:
            if path != given:
                notes.append(f"path {given!r} read as {path!r}")
            return (path, *found, notes)
    # Not where the release says: the one module that defines it now, if exactly one.
    top = entry.split(".")[0]
    homes = [p for p in snapshot.definitions().get(top, [])
             if (tree := snapshot.tree(p)) is not None and _find_symbol(tree, entry)]
    if len(homes) == 1:
        path = homes[0]
        notes.append(f"{entry} found in {path} (the release says {given or 'nothing'})")
        return (path, *_find_symbol(snapshot.tree(path), entry), notes)
    if not given:
        raise Unresolved("file missing at the commit: the release gives no ground-truth path")
    if not candidates:
        raise Unresolved(f"file missing at the commit: {given}")
    raise Unresolved(f"symbol missing at the commit: {entry} in {candidates[0]}")


def _test_names(tree: ast.Module) -> dict[str, set[str] | None]:
    """Top-level test functions (None) and classes (their method names) of a test module."""
    out: dict[str, set[str] | None] = {}
    for stmt in tree.body:
        if isinstance(stmt, _DEFS):
            out[stmt.name] = None
        elif isinstance(stmt, ast.ClassDef):
            out[stmt.name] = {i.name for i in stmt.body if isinstance(i, _DEFS)}
    return out


def test_node_ids(snapshot: Snapshot, targets: list[str]
                  ) -> tuple[list[str], list[str], list[str]]:
    """(node ids that exist at the commit, targets that do not, notes on near spellings)."""
    kept, missing, notes = [], [], []
    for target in targets:
        file, _, rest = target.partition("::")
        file = file.strip().removeprefix("./")
        parts = rest.split("::") if rest else []
        path = next((p for p in path_candidates(file) if p in snapshot.blobs), None)
        if path is None and file.endswith(".py"):
            folder = str(PurePosixPath(file).parent)
            siblings = {PurePosixPath(p).name: p for p in snapshot.blobs
                        if str(PurePosixPath(p).parent) == folder}
            near = close_name(PurePosixPath(file).name, siblings)
            if near:
                path = siblings[near]
                notes.append(f"test file {file} read as {path} (a near spelling)")
        if path is None:
            missing.append(target)
            continue
        ok = True
        if parts:
            tree = snapshot.tree(path)
            names = _test_names(tree) if tree is not None else {}
            base = re.sub(r"\[.*$", "", parts[0])
            if base not in names and (near := close_name(base, names)):
                notes.append(f"test {base} read as {near} (a near spelling)")
                parts[0] = base = near
            if base not in names:
                ok = False
            elif len(parts) > 1:
                methods = names[base]
                ok = methods is not None and re.sub(r"\[.*$", "", parts[1]) in methods
        if ok:
            node = "::".join([path, *parts])
            if node not in kept:
                kept.append(node)
        else:
            missing.append(target)
    return kept, missing, notes


def _render_import(binding, package: str) -> str:
    alias, stmt = binding.alias, binding.statement
    suffix = f" as {alias.asname}" if alias.asname else ""
    if binding.module_import:
        return f"import {alias.name}{suffix}"
    base = resolve_relative(package, stmt.level, stmt.module) if stmt.level else stmt.module
    return f"from {base} import {alias.name}{suffix}"


def reference_solution(path: str, text: str, node: ast.AST, cls: ast.ClassDef | None) -> str:
    """The definition with the imports it uses (inside its class header for a method)."""
    module = parse_module(path, text)
    package = dotted_path(path) if path.endswith("__init__.py") else package_of(path)
    names = set(collect_references(node).names)
    if cls is not None:
        for part in (*cls.bases, *cls.keywords):
            names |= collect_references(part).names
    used = sorted((module.bindings[n] for n in names if n in module.bindings),
                  key=lambda b: (b.statement.lineno, b.statement.col_offset, b.name))
    lines = list(module.future)
    for binding in used:
        line = _render_import(binding, package)
        if line not in lines:
            lines.append(line)
    source_lines = split_lines(text)
    start, end = start_line(node), node.end_lineno or node.lineno
    body = "".join(source_lines[start - 1:end])
    if cls is not None:
        args = [ast.unparse(b) for b in cls.bases] + [ast.unparse(k) for k in cls.keywords]
        header = f"class {cls.name}" + (f"({', '.join(args)})" if args else "") + ":\n"
        if node.col_offset == 4:
            body = header + body
        else:
            method = dedent_block(source_lines[start - 1:end], node.col_offset)
            body = header + textwrap.indent(method, "    ")
    elif node.col_offset:
        raise Unresolved(f"symbol missing at the commit: {node.name} is nested")
    head = "\n".join(lines)
    solution = (head + "\n\n\n" if head else "") + body
    return format_code(solution if solution.endswith("\n") else solution + "\n")


def resolve_problem(snapshot: Snapshot, problem: Problem, url: str, license_id: str
                    ) -> tuple[Problem, dict]:
    """The resolved draft and its resolution record; raises Unresolved with the reason."""
    if not problem.test_node_ids:
        raise Unresolved("test target missing: the release gives no test_cases")
    path, qualname, node, cls, notes = locate(snapshot, problem)
    nodes, dropped, test_notes = test_node_ids(snapshot, list(problem.test_node_ids))
    notes += test_notes
    if not nodes:
        raise Unresolved("test target missing at the commit: " + " ".join(dropped))
    text = snapshot.text(path) or ""
    solution = reference_solution(path, text, node, cls)
    try:
        replace_symbol(text, qualname, solution, path=path)
    except PatchError as exc:
        raise Unresolved(f"symbol missing at the commit: {exc}") from None
    source = {"repo": url, "commit": snapshot.commit, "path": path, "symbol": qualname,
              "lines": f"{start_line(node)}-{node.end_lineno or node.lineno}",
              "license": license_id}
    kind = "method" if "." in qualname else "function"
    resolved = Problem(
        id=problem.id, entry_point=qualname, kind=kind, title=problem.title,
        stage=problem.stage, task=problem.task, data=problem.data,
        framework=problem.framework, status="draft", source=source, test_node_ids=nodes,
        prompt=problem.prompt, solution=solution, tests=None)
    record = {"repo": url, "commit": snapshot.commit, "path": path, "symbol": qualname,
              "dropped_tests": dropped, "notes": notes}
    return resolved, record


# -- the whole run -----------------------------------------------------------------------

def _update_import(store: Store, problem_id: str, flags: list[str], resolution: dict) -> None:
    store.execute("UPDATE problem_imports SET flags = ?, resolution = ? WHERE problem_id = ?",
                  (json.dumps(flags), json.dumps(resolution, ensure_ascii=False), problem_id))
    store.audit("problem", problem_id, "resolve", "resolution", None, resolution)


def _new_flags(old: str, resolved: bool, license_known: bool, dropped: bool) -> list[str]:
    flags = [f for f in json.loads(old or "[]") if f not in ("resolved", "unresolved",
                                                             "tests_dropped")]
    if resolved:
        flags = [f for f in flags if f not in SETTLED
                 and not (license_known and f == "license_unknown")]
        flags.append("resolved")
        if dropped:
            flags.append("tests_dropped")
    else:
        flags.append("unresolved")
    return flags


def resolve(store: Store, workspace: Workspace, sources: dict[str, str] | None = None,
            as_of: str | None = None, revs: dict[str, str] | None = None,
            progress: Progress | None = None,
            cancelled: Callable[[], bool] | None = None) -> ResolveReport:
    """Resolve the imported DL-Bench drafts of each repository (see the module docstring).

    sources: NAME -> SOURCE to register; repositories registered before (by an earlier
    resolve or by mining) are used as they are. Without either, a problem is unresolved
    ("repository not registered"): nothing is cloned behind the person's back.
    """
    sources, revs = dict(sources or {}), dict(revs or {})
    if as_of is not None:
        as_of = check_date(as_of)
    report = ResolveReport()
    drafts = imported_drafts(store)
    groups: dict[str, list[tuple[Problem, dict]]] = {}
    for problem, row in drafts:
        url = str((problem.source or {}).get("repo") or "")
        groups.setdefault(url, []).append((problem, row))

    # NAME -> the url of its problems (or SOURCE itself when no problem names it).
    named: dict[str, str] = {}
    for name in sorted(set(sources) | set(revs)):
        urls = {url for url, items in groups.items() if url and any(
            name.lower() in _names_of(url, _raw_repo(row)) for _p, row in items)}
        if len(urls) > 1:
            raise CuratorError(f"repository name {name!r} matches several repositories: "
                               f"{', '.join(sorted(urls))}; use OWNER/NAME")
        if urls:
            named[name] = urls.pop()
        elif name in sources:
            named[name] = _url_for(name, sources[name])
    unknown_revs = sorted(set(revs) - set(named))
    if unknown_revs:
        raise CuratorError(f"--rev {unknown_revs[0]}: no imported problem is from that "
                           "repository")

    done = 0
    total = len(drafts)
    by_url = {url: name for name, url in named.items()}
    for url in sorted(groups, key=lambda u: (u == "", u)):
        items = groups[url]
        name = by_url.get(url)
        registered = store.one("SELECT * FROM repos WHERE url = ?", (url,)) if url else None
        if name is None and registered is None:
            reason = ("no repository: the release names none" if not url else
                      f"repository not registered: give --repo NAME=SOURCE for {url}")
            for problem, _row in items:
                report.unresolved.append({"id": problem.id, "reason": reason})
            done += len(items)
            continue
        try:
            row, cache = repo_store.register(store, workspace.repos_dir, url,
                                             sources.get(name) if name else None,
                                             name=name if name and name in sources else None)
            rev = revs.get(name) if name else None
            if rev:
                commit = cache.resolve(rev)
            elif as_of:
                commit = commit_as_of(cache, as_of)
            else:
                commit = cache.resolve(None)
        except GitError as exc:
            for problem, _row in items:
                report.unresolved.append({"id": problem.id, "reason": f"repository: {exc}"})
            done += len(items)
            continue
        pinned_as_of = None if rev else as_of
        repo_store.set_as_of(store, row["id"], pinned_as_of)
        snapshot = Snapshot(cache, commit)
        license_id = snapshot.license()
        report.repos.append({"name": row["name"], "url": url, "commit": commit,
                             "as_of": pinned_as_of, "license": license_id})
        changed: list[str] = []
        with store.transaction():
            store.execute(
                "INSERT OR REPLACE INTO mined_commits (repo_id, commit_sha, rev, license, "
                "summary, mined_at, actor) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (row["id"], commit, rev or (f"as-of {as_of}" if as_of else None), license_id,
                 json.dumps({"dlbench_problems": len(items)}), now(), store.actor))
            for problem, imp in items:
                if cancelled and cancelled():
                    raise KeyboardInterrupt("resolve cancelled")
                done += 1
                try:
                    resolved, record = resolve_problem(snapshot, problem, url, license_id)
                except Unresolved as exc:
                    reason = str(exc)
                    report.unresolved.append({"id": problem.id, "reason": reason})
                    _update_import(store, problem.id, _new_flags(imp["flags"], False, False,
                                                                 False), {"reason": reason})
                else:
                    problem_store.save(store, resolved)
                    _update_import(store, problem.id, _new_flags(
                        imp["flags"], True, license_id != "unknown",
                        bool(record["dropped_tests"])), record)
                    report.resolved.append({"id": problem.id, "repo": row["name"],
                                            "commit": commit})
                    for note in record["notes"]:
                        report.notes.append({"id": problem.id, "note": note})
                    changed.append(problem.id)
                if progress:
                    progress(done, total, problem.id)
        if changed:
            sync.dump(store, workspace.problems_dir, changed)
    return report
