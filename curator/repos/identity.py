"""Mined repositories in the database: find or create, the interpreter for runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from curator.errors import CuratorError, NotFoundError
from curator.repos.gitcache import (
    CachedRepo,
    GitError,
    cache_for,
    cache_key,
    is_url,
    normalise_source,
    remote_url,
    repo_name,
    run_git,
)
from curator.store import Store
from curator.store import repos as repo_rows

NAME_PATTERN = re.compile(r"^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)?$")


def get_or_create(store: Store, url: str) -> dict:
    row = repo_rows.by_url(store, url)
    if row is not None:
        return row
    # Another process may add it after the read above (same URL, same row): insert ignores.
    repo_rows.insert(store, url, repo_name(url), cache_key(url))
    return repo_rows.by_url(store, url)


def register(store: Store, repos_dir: str | Path, url: str, source: str | None = None,
             name: str | None = None) -> tuple[dict, CachedRepo]:
    """Record a repository and make sure its cache exists, cloned from SOURCE.

    `url` is the repository's identity (what problems name in [source] repo); `source`
    is where to clone it from (a URL, a local clone or a bare mirror; default `url`). A
    local source never touches the network: the cache's `origin` points at it, so later
    fetches for missing commits read it too. `name` (default owner/name of the URL) is
    what `repo set-python NAME` and friends find it by.
    """
    url = url.rstrip("/")
    source = normalise_source(source) if source else url
    if not is_url(source) and not Path(source).is_dir():
        raise GitError(f"{source}: not a URL and no such folder")
    row = get_or_create(store, url)
    cache = cache_for(repos_dir, url)
    if not cache.exists():
        CachedRepo(url=source, path=cache.path).ensure(fetch=False)
    elif source != url:
        run_git(["remote", "set-url", "origin", source], cwd=cache.path)
    changes = {}
    if name and name != row["name"]:
        changes["name"] = name
    if (source if source != url else None) != row.get("source"):
        changes["source"] = source if source != url else None
    return repo_rows.update(store, row, changes), cache


@dataclass(frozen=True)
class Identity:
    """How a repository is known: `url` is what problems name in [source] repo (a URL, or
    OWNER/NAME when it has none), `name` its short OWNER/NAME, `source` where to clone it
    from when that is a local folder (None: clone `url`)."""

    url: str
    name: str
    source: str | None = None
    named_by_folder: bool = False   # no remote URL and no --name: only a folder name


def identify(source: str, name: str | None = None) -> Identity:
    """The portable identity of SOURCE (a URL or a local clone / bare mirror).

    A local folder is named after its `origin` remote URL (read from its config file,
    without running git); `name` (OWNER/NAME) overrides the name, and stands in for the
    URL when the folder has no remote. A local path is never the identity unless there
    is nothing else to go by (then the name is the folder's, and `named_by_folder` says
    so, for a warning).
    """
    if name is not None:
        name = name.strip().strip("/")
        if not NAME_PATTERN.match(name) or any(p in (".", "..") for p in name.split("/")):
            raise CuratorError(f"repository name {name!r} must look like OWNER/NAME")
    location = normalise_source(source)
    if is_url(location):
        return Identity(location, name or repo_name(location))
    if not Path(location).is_dir():
        raise GitError(f"{source}: not a URL and no such folder")
    remote = remote_url(location)
    if remote:
        return Identity(remote.rstrip("/").removesuffix(".git"), name or repo_name(remote),
                        location)
    if name:
        return Identity(name, name, location)
    return Identity(location, repo_name(location), None, named_by_folder=True)


def register_source(store: Store, repos_dir: str | Path, source: str,
                    name: str | None = None) -> dict:
    """Record the repository at SOURCE under its portable identity (see `identify`)."""
    identity = identify(source, name)
    row, _ = register(store, repos_dir, identity.url, source=identity.source,
                      name=identity.name)
    return row


def portable_name(row: dict) -> str:
    """What a problem's [source] repo says: the URL, or the name when `url` is a path."""
    url = row.get("repo_url", row.get("url")) or ""
    if is_url(url) or not url.startswith("/"):
        return url
    return row.get("repo_name", row.get("name")) or Path(url).name


def set_as_of(store: Store, repo_id: int, as_of: str | None) -> None:
    """Remember the date a repository's commit was pinned as of (None: pinned by revision)."""
    row = repo_rows.by_id(store, repo_id)
    if row is not None:
        repo_rows.update(store, row, {"as_of": as_of})


def find(store: Store, ident: str) -> dict:
    """A repository by id, URL or path as mined, or unique short name."""
    ident = str(ident).strip()
    if ident.isdigit():
        row = repo_rows.by_id(store, int(ident))
        if row:
            return row
    row = repo_rows.by_url(store, ident.rstrip("/"))
    if row:
        return row
    if not is_url(ident) and Path(ident).expanduser().exists():
        path = str(Path(ident).expanduser().resolve())
        # mined under its path, or registered from this local folder under its URL/name
        row = repo_rows.by_url(store, path) or repo_rows.by_source(store, path)
        if row:
            return row
    rows = repo_rows.by_name(store, ident, suffix=True)
    if len(rows) == 1:
        return rows[0]
    if len(rows) > 1:
        raise CuratorError(f"repository {ident!r} is ambiguous: "
                           f"{', '.join(r['url'] for r in rows)}; give the URL or id")
    raise NotFoundError(f"repository {ident!r} not found; mine it first (curator mine URL)")


def list_rows(store: Store) -> list[dict]:
    return repo_rows.list_with_counts(store)


def check_python(path: str) -> str:
    """The interpreter's version line, or a CuratorError saying why it cannot be used."""
    if not os.path.isfile(path) or not os.access(path, os.X_OK):
        raise CuratorError(f"{path}: not an executable file")
    try:
        out = subprocess.run([path, "-c", "import sys; print(sys.version.split()[0])"],
                             capture_output=True, text=True, timeout=30, check=False,
                             stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CuratorError(f"{path}: cannot run it as Python: {exc}") from None
    if out.returncode != 0 or not out.stdout.strip():
        raise CuratorError(f"{path}: does not run as Python (exit {out.returncode})")
    return out.stdout.strip()


def set_python(store: Store, ident: str, python: str | None) -> dict:
    """Set (or with None, clear) the interpreter that runs this repository's tests."""
    row = find(store, ident)
    value = None
    if python:
        value = os.path.abspath(os.path.expanduser(python))
        check_python(value)
    return repo_rows.update(store, row, {"python": value})


def record_for(store: Store, ident: str) -> dict | None:
    """The repository a problem's [source] repo names: by URL, else by unique name."""
    row = repo_rows.by_url(store, ident)
    if row is None:
        rows = repo_rows.by_name(store, ident)
        row = rows[0] if len(rows) == 1 else None
    return row


def python_for(store: Store, url: str) -> str:
    """The configured interpreter for a repository, else the curator's own."""
    row = record_for(store, url)
    return (row or {}).get("python") or sys.executable
