"""Resolving imported DL-Bench problems into pinned, runnable repo-backed drafts.

DL-Bench never pinned a commit and does not ship its reference code. For the imported
problems of one repository, `resolve`:

1. registers the repository from SOURCE (a URL, a local clone or a bare mirror; a local
   source never touches the network) under NAME;
2. pins a commit: `--rev NAME=REV`, else the last commit on the default branch before
   `--as-of DATE` (first-parent history, 00:00 UTC of that day), else the branch head;
   the date is stored on the repository so its environment can be resolved as of then;
3. finds the ground-truth file at that commit (curator.dlbench.upstream) (`blob/<ref>/` prefixes and a doubled
   repository folder are undone; a file that moved is found by the symbol it defines,
   when exactly one module does), then the symbol: a function, `Class.method`, or a
   "function" that is really the method of exactly one class in the file;
4. takes the reference solution from that code (the imports it uses plus the definition,
   inside its class header for methods), checked by patching it back into the module;
5. keeps the test targets that exist at the commit, as pytest node ids (file, class,
   function, method; parametrised ids by their base name);
6. gives a prompt without a parsable signature of the entry point (most of DL-Bench's
   are prose only) a ```python block with the reference's signature after the prose
   (decorators, the `def` line, `...`; inside its class header for a method), so the
   release's `code_prompt` exists; a prompt that has one is kept byte for byte. What was
   appended is recorded (`appended`), so resolving again at another commit replaces that
   block instead of keeping the old commit's signature (an edited block is kept);
7. stores the problem as a repo-backed draft. A problem it cannot resolve keeps its
   draft and gets a reason: file missing at the commit, symbol missing, or test target
   missing.

Problems that are no longer drafts are left alone.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from datetime import date

from curator import sync
from curator.dlbench import fileformat
from curator.dlbench.upstream import (
    Snapshot,
    Unresolved,
    locate,
    reference_solution,
    signature_block,
    test_node_ids,
    tests_calling,
    tests_named_for,
)
from curator.errors import CuratorError
from curator.evaluation.extract import signature_problem
from curator.problem import Problem
from curator.progress import CancelCheck, Progress, checkpoint
from curator.pysource.modules import start_line
from curator.pysource.patch import PatchError, replace_symbol
from curator.repos import identity
from curator.repos.gitcache import (
    CachedRepo,
    GitError,
    is_url,
    normalise_source,
    repo_name,
    run_git,
)
from curator.store import Store, mined_commits
from curator.store import problem_imports as import_store
from curator.store import problems as problem_store
from curator.store import repos as registered_repos
from curator.workspace import Workspace

# Flags of the import that a resolution settles.
SETTLED = {"commit_unpinned", "solution_missing", "path_missing", "class_missing"}


@dataclass
class ResolveReport:
    resolved: list[dict] = field(default_factory=list)     # {"id", "repo", "commit"}
    unresolved: list[dict] = field(default_factory=list)   # {"id", "reason"}
    repos: list[dict] = field(default_factory=list)        # {"name", "url", "commit", "as_of"}
    notes: list[dict] = field(default_factory=list)        # {"id", "note"}

    def to_json(self) -> dict:
        return {"resolved": self.resolved, "unresolved": self.unresolved,
                "repos": self.repos, "notes": self.notes}


def parse_assignments(values: list[str] | tuple[str, ...], what: str,
                      metavar: str) -> dict[str, str]:
    """`NAME=VALUE` options -> {NAME: VALUE} (a one-line error for anything else)."""
    out: dict[str, str] = {}
    for value in values or ():
        name, sep, rest = value.partition("=")
        if not sep or not name.strip() or not rest.strip():
            raise CuratorError(f"{what} {value!r} must be {metavar}")
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
             fileformat.repo_short_name(url).lower()}
    if raw_repo:
        names.add(raw_repo.strip().lower())
    return names


def _url_for(name: str, source: str) -> str:
    """The identity of a repository no imported problem names yet."""
    if is_url(source):
        return source.rstrip("/")
    if "/" in name:
        return f"https://github.com/{name}"
    known = fileformat.KNOWN_REPOS.get(name.lower())
    return known[0] if known else normalise_source(source)


def imported_drafts(store: Store) -> list[tuple[Problem, dict]]:
    """(problem, import row) of every DL-Bench problem that is still a draft."""
    rows = import_store.rows_for(store, import_store.DLBENCH_ORIGINS)
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


def with_signature(prompt: str, entry_point: str, block: str) -> str:
    """PROMPT with BLOCK appended as a ```python block when it has no parsable signature of
    ENTRY_POINT (the `code_prompt` release gate needs one); a prompt that has one is
    returned as it is. The prose stays verbatim above the block; when it leaves a code
    fence open (DL-Bench has ``` followed by a quote), a closing fence comes first."""
    if signature_problem(prompt, entry_point) is None:
        return prompt
    glue = "" if not prompt else "\n" if prompt.endswith("\n") else "\n\n"
    for close in ("", "```\n\n"):
        augmented = f"{prompt}{glue}{close}```python\n{block}```\n"
        if signature_problem(augmented, entry_point) is None:
            return augmented
    return prompt


def resolve_problem(snapshot: Snapshot, problem: Problem, url: str, license_id: str
                    ) -> tuple[Problem, dict]:
    """The resolved draft and its resolution record; raises Unresolved with the reason."""
    # without test_cases the symbol is looked for first: its tests may be found by name
    path, qualname, node, cls, notes = locate(snapshot, problem)
    nodes, dropped, test_notes = test_node_ids(snapshot, list(problem.test_node_ids))
    notes += test_notes
    if not nodes:
        # the tests named for it, said so (a maintainer reviews them)
        nodes = tests_named_for(snapshot, qualname, path,
                                module_too=not problem.test_node_ids)
        given = " ".join(dropped) or "none"
        if nodes:
            notes.append(f"tests {' '.join(nodes)} found by name (the release gives "
                         f"{given})")
        elif not problem.test_node_ids:
            # the release gives none: the repository's tests that use it, said so
            nodes = tests_calling(snapshot, qualname, path)
            if nodes:
                notes.append(f"tests {' '.join(nodes)} found by their use of "
                             f"{qualname.partition('.')[0]} (the release gives none)")
    if not nodes and not problem.test_node_ids:
        raise Unresolved(f"test target missing: the release gives no test_cases ({qualname} "
                         f"found in {path})")
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
    prompt = with_signature(problem.prompt, qualname, signature_block(node, cls))
    appended = prompt[len(problem.prompt):] if prompt.startswith(problem.prompt) else ""
    resolved = Problem(
        id=problem.id, entry_point=qualname, kind=kind, title=problem.title,
        stage=problem.stage, task=problem.task, data=problem.data,
        framework=problem.framework, status="draft", source=source, test_node_ids=nodes,
        prompt=prompt, solution=solution, tests=None)
    record = {"repo": url, "commit": snapshot.commit, "path": path, "symbol": qualname,
              "dropped_tests": dropped, "notes": notes, "appended": appended}
    return resolved, record


# -- the whole run -----------------------------------------------------------------------

def _release_view(problem: Problem) -> dict:
    return {"path": (problem.source or {}).get("path"), "entry_point": problem.entry_point,
            "kind": problem.kind, "test_node_ids": list(problem.test_node_ids or [])}


def _earlier(imp: dict) -> dict:
    try:
        resolution = json.loads(imp.get("resolution") or "{}")
    except ValueError:
        return {}
    return resolution if isinstance(resolution, dict) else {}


def appended_before(imp: dict) -> str:
    """The signature block an earlier resolution appended to the prompt ("" if none)."""
    appended = _earlier(imp).get("appended")
    return appended if isinstance(appended, str) else ""


def as_released(problem: Problem, imp: dict) -> Problem:
    """The problem with the path, symbol, tests and prompt the release gave, not an
    earlier resolution's (so resolving again at another commit starts from the same
    place): the signature block an earlier resolution appended comes off the prompt while
    it is still as appended."""
    appended = appended_before(imp)
    if appended and problem.prompt.endswith(appended):
        problem = replace(problem, prompt=problem.prompt[:-len(appended)])
    before = _earlier(imp).get("release")
    if not isinstance(before, dict):
        return problem
    source = dict(problem.source or {})
    if before.get("path"):
        source["path"] = before["path"]
    source["symbol"] = before.get("entry_point") or problem.entry_point
    return replace(problem, source=source,
                   entry_point=before.get("entry_point") or problem.entry_point,
                   kind=before.get("kind") or problem.kind,
                   test_node_ids=list(before.get("test_node_ids") or []))


def _update_import(store: Store, problem_id: str, flags: list[str], resolution: dict) -> None:
    import_store.set_resolution(store, problem_id, flags, resolution)
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
            cancelled: CancelCheck | None = None,
            only_urls: set[str] | None = None) -> ResolveReport:
    """Resolve the imported DL-Bench drafts of each repository (see the module docstring).

    sources: NAME -> SOURCE to register; repositories registered before (by an earlier
    resolve or by mining) are used as they are. Without either, a problem is unresolved
    ("repository not registered"): nothing is cloned behind the person's back.
    only_urls: resolve only the drafts of these repositories.
    """
    sources, revs = dict(sources or {}), dict(revs or {})
    if as_of is not None:
        as_of = check_date(as_of)
    report = ResolveReport()
    drafts = imported_drafts(store)
    if only_urls is not None:   # `dlbench rebuild --only`: the other repositories stay as they are
        drafts = [(p, r) for p, r in drafts if str((p.source or {}).get("repo") or "")
                  in only_urls]
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

    for name, url in sorted(named.items()):
        if url not in groups:
            report.notes.append({"id": "", "note": f"no imported draft is from {name} "
                                                   f"({url}); nothing to resolve there"})
    done = 0
    total = len(drafts)
    by_url = {url: name for name, url in named.items()}
    for url in sorted(groups, key=lambda u: (u == "", u)):
        items = groups[url]
        name = by_url.get(url)
        registered = registered_repos.by_url(store, url) if url else None
        if registered is None and (name is None or name not in sources):
            reason = ("no repository: the release names none" if not url else
                      f"repository not registered: give --repo NAME=SOURCE for {url}")
            for problem, _row in items:
                report.unresolved.append({"id": problem.id, "reason": reason})
            done += len(items)
            continue
        try:
            row, cache = identity.register(store, workspace.repos_dir, url,
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
        identity.set_as_of(store, row["id"], pinned_as_of)
        snapshot = Snapshot(cache, commit)
        license_id = snapshot.license()
        report.repos.append({"name": row["name"], "url": url, "commit": commit,
                             "as_of": pinned_as_of, "license": license_id})
        changed: list[str] = []
        with store.transaction():
            mined_commits.record(store, row["id"], commit,
                                 rev or (f"as-of {as_of}" if as_of else None), license_id,
                                 {"dlbench_problems": len(items)})
            for problem, imp in items:
                checkpoint(cancelled, "resolve")
                done += 1
                released = as_released(problem, imp)
                try:
                    resolved, record = resolve_problem(snapshot, released, url, license_id)
                except Unresolved as exc:
                    reason = str(exc)
                    report.unresolved.append({"id": problem.id, "reason": reason})
                    # the stored prompt keeps its block: so does the record
                    _update_import(store, problem.id, _new_flags(imp["flags"], False, False,
                                                                 False),
                                   {"reason": reason, "release": _release_view(released),
                                    "appended": appended_before(imp)})
                else:
                    problem_store.save(store, resolved)
                    record["release"] = _release_view(released)
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

