"""Repo-backed runs: the pinned checkout, the patched module, and the interpreter.

`prepare(workspace, problem, solution_text)` returns `(repo_dir, overlay, python)`:
- repo_dir: a checkout of the problem's pinned commit in db/repos/worktrees/, written from
  git objects once and reused (paths whose objects the clone lacks are listed, not
  fatal). Only `curator repo env` writes into it (a compiled extension, put back from
  its cache when the checkout was written anew); the engine lays `overlay` over it for
  one run.
- overlay: {relative path: text} — the upstream module with the target symbol replaced by
  the solution's definition (curator.pysource.patch).
- python: the interpreter configured for the repository (`curator repo set-python`),
  else the curator's own.
"""

from __future__ import annotations

from pathlib import Path

from curator.errors import CuratorError
from curator.problem import Problem
from curator.pysource.patch import MissingSymbol, PatchError, replace_symbol
from curator.repos import extbuild, identity
from curator.repos.gitcache import CachedRepo, cache_for
from curator.store import Store, repo_envs
from curator.workspace import Workspace

__all__ = ["MissingSymbol", "PatchError", "pinned_checkout", "prepare"]


def _source(problem: Problem) -> tuple[str, str, str, str]:
    source = problem.source or {}
    url, commit, path = source.get("repo"), source.get("commit"), source.get("path")
    if not (url and commit and path):
        raise CuratorError(f"problem {problem.id}: a repo-backed run needs [source] repo, "
                           "commit and path")
    return url, commit, path, source.get("symbol") or problem.entry_point


def pinned_checkout(workspace: Workspace, url: str, commit: str, store: Store | None = None):
    """(cached repo, worktree path) for a commit, cloning or fetching only when missing.

    With `store`, URL may be a repository's name too, and a repository registered from a
    local folder is cloned from that folder.
    """
    row = identity.record_for(store, url) if store is not None else None
    key = row["url"] if row else url
    cache = CachedRepo(url=(row or {}).get("source") or key,
                       path=cache_for(workspace.repos_dir, key).path)
    if not cache.exists():
        cache.ensure(fetch=False)
    if not cache.has_commit(commit):
        cache.ensure(fetch=True)
        if not cache.has_commit(commit):
            cache.fetch(commit)
        if not cache.has_commit(commit):
            raise CuratorError(f"commit {commit[:12]} is not in {url} any more")
    return cache, cache.worktree(commit)


def worktree_path(workspace: Workspace, url: str, commit: str) -> Path | None:
    """The checkout of COMMIT that runs use, when it has been written (else None)."""
    cache = cache_for(workspace.repos_dir, url)
    return cache.worktree_path(commit) if cache.has_worktree(commit) else None


def missing_paths(workspace: Workspace, url: str, commit: str,
                  store: Store | None = None) -> list[str]:
    """Paths the checkout of COMMIT lacks because the clone lacks their git objects."""
    row = identity.record_for(store, url) if store is not None else None
    key = row["url"] if row else url
    return cache_for(workspace.repos_dir, key).missing_paths(commit)


def prepare(workspace: Workspace, problem: Problem, solution_text: str,
            store: Store | None = None) -> tuple[str, dict[str, str], str]:
    """The checkout, overlay and interpreter to run `solution_text` against the problem.

    Raises MissingSymbol when the solution does not define the entry point (nothing to
    run); a solution with a syntax error is patched in as it is, so the run reports it.
    """
    url, commit, path, symbol = _source(problem)
    if store is None:
        with Store(workspace.db_path, "curator") as own:
            return prepare(workspace, problem, solution_text, own)
    cache, worktree = pinned_checkout(workspace, url, commit, store)
    try:
        original = cache.read_file(commit, path).decode("utf-8-sig")
    except UnicodeDecodeError:
        raise PatchError(f"{path} at {commit[:12]} is not UTF-8") from None
    patched = replace_symbol(original, symbol, solution_text, path=path)
    python = identity.python_for(store, url)
    restore_build(store, url, commit, python, worktree)
    return str(worktree), {path: patched}, python


def restore_build(store: Store, url: str, commit: str, python: str, worktree) -> list[str]:
    """The compiled extension of the environment that runs this checkout put back where
    the checkout lacks it (written anew from git objects): runs import the repository
    from the checkout. Never a build: that is `curator repo env`'s, once per commit."""
    record = identity.record_for(store, url)
    env = repo_envs.get(store, record["id"]) if record is not None else None
    if env is None or env["python"] != python:
        return []
    return extbuild.restore_for_run(env["path"], commit, Path(worktree))
