"""The repository cache under db/repos: clone or fetch safely, resolve revisions, read trees.

Every git command runs with hooks, filters, submodules and credential prompts switched
off, so mining code from the internet never executes any of it; files are read from the
commit's tree objects, never from a work tree, so symlinks are never followed.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import git

from curator.errors import CuratorError

# `-c` options put in front of every git command we run.
SAFE_CONFIG = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "submodule.recurse=false",
    "filter.lfs.smudge=",
    "filter.lfs.process=",
    "filter.lfs.clean=",
    "filter.lfs.required=false",
    "credential.interactive=false",
    "http.lowSpeedLimit=1000",
    "http.lowSpeedTime=60",
)

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_SCP = re.compile(r"^[\w.-]+@[\w.-]+:")
_HEX = re.compile(r"^[0-9a-fA-F]{4,64}$")

MODE_SYMLINK = "120000"


class GitError(CuratorError):
    """A clone, fetch or revision lookup failed (one line, names the repository)."""


def git_env(network: bool = False) -> dict:
    """Overrides for git's environment: no prompts, so a URL needing credentials fails fast.

    Commands that do not talk to a remote also ignore the person's global and system git
    config, so no filter driver, hook or submodule setting from there can run when a
    work tree is checked out. Clone and fetch keep it (proxies, URL rewrites, credential
    helpers) but check nothing out. (GitPython merges these into a copy of os.environ.)
    """
    env = {"GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "", "SSH_ASKPASS": "",
           "GIT_LFS_SKIP_SMUDGE": "1", "GCM_INTERACTIVE": "never", "LC_ALL": "C"}
    env["GIT_SSH_COMMAND"] = os.environ.get(
        "GIT_SSH_COMMAND", "ssh -o BatchMode=yes -o ConnectTimeout=20")
    if not network:
        env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    return env


def is_url(source: str) -> bool:
    return bool(_URL.match(source) or _SCP.match(source))


def normalise_source(source: str) -> str:
    """The canonical spelling of SOURCE: URLs as given (minus a trailing /), paths absolute."""
    source = source.strip()
    if not source:
        raise GitError("empty repository source")
    if is_url(source):
        return source.rstrip("/")
    path = Path(source).expanduser()
    if not path.exists():
        raise GitError(f"{source}: not a URL and no such folder")
    return str(path.resolve())


def repo_name(url: str) -> str:
    """A short display name: owner/name for hosted repos, the folder name for paths."""
    text = url.rstrip("/")
    text = text.removesuffix(".git")
    if is_url(url):
        text = re.sub(r"^[A-Za-z][A-Za-z0-9+.-]*://", "", text)
        text = re.sub(r"^[^@/]*@", "", text)
        parts = [p for p in re.split(r"[/:]", text) if p]
        if len(parts) >= 3:
            return "/".join(parts[-2:])
        return parts[-1] if parts else "repo"
    return Path(text).name or "repo"


_SECTION = re.compile(r'^\s*\[\s*remote\s+"([^"]*)"\s*\]\s*$')
_URL_LINE = re.compile(r"^\s*url\s*=\s*(.+?)\s*$", re.IGNORECASE)


def remote_url(folder: str | Path) -> str | None:
    """The URL of a local repository's `origin` remote (else its first remote), when it
    is a URL; read from the config file, so no git (and no config of the folder's) runs."""
    folder = Path(folder)
    for config in (folder / ".git" / "config", folder / "config"):
        try:
            text = config.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        urls: dict[str, str] = {}
        remote = None
        for line in text.splitlines():
            section = _SECTION.match(line)
            if section:
                remote = section.group(1)
                continue
            if line.lstrip().startswith("["):
                remote = None
                continue
            found = _URL_LINE.match(line)
            if remote is not None and found and remote not in urls:
                urls[remote] = found.group(1).strip('"')
        for value in ([urls["origin"]] if "origin" in urls else []) + list(urls.values()):
            if is_url(value):
                return value
        return None
    return None


def cache_key(url: str) -> str:
    """Folder name in db/repos for a source: readable name plus a hash of the URL."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", repo_name(url)).strip("-.").lower() or "repo"
    digest = hashlib.sha1(url.encode("utf-8")).hexdigest()[:10]
    return f"{slug[:40]}-{digest}"


def _last_line(text: str) -> str:
    text = (text or "").strip()
    if text.startswith("stderr: '") and text.endswith("'"):  # GitPython's wrapping
        text = text[len("stderr: '"):-1]
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    fatal = [ln for ln in lines if ln.lower().startswith(("fatal:", "error:"))]
    line = (fatal or lines or ["git failed"])[-1]
    return re.sub(r"^(fatal|error):\s*", "", line, flags=re.IGNORECASE)


def run_git(args: list[str], cwd: str | Path | None = None, network: bool = False) -> str:
    """Run git with the safe options; raises GitError with git's own last message."""
    command = ["git"]
    for option in SAFE_CONFIG:
        command += ["-c", option]
    command += args
    try:
        out = git.Git(str(cwd) if cwd else None).execute(
            command, env=git_env(network), istream=subprocess.DEVNULL,
            strip_newline_in_stdout=False)
    except git.GitCommandError as exc:
        stderr = exc.stderr if isinstance(exc.stderr, str) else str(exc.stderr)
        raise GitError(_last_line(stderr)) from None
    return out


@dataclass(frozen=True)
class TreeEntry:
    mode: str
    type: str
    sha: str
    size: int | None
    path: str
    missing: bool = False   # git could not read the object (its size showed as BAD)


@dataclass
class CachedRepo:
    """A bare clone in db/repos/<key>.git of one source."""

    url: str
    path: Path

    @property
    def key(self) -> str:
        return self.path.name.removesuffix(".git")

    # -- cloning and fetching ----------------------------------------------------

    def exists(self) -> bool:
        return (self.path / "HEAD").is_file() and (self.path / "objects").is_dir()

    def ensure(self, fetch: bool = True) -> None:
        """Clone when missing; fetch branches and tags when asked."""
        with self.lock():
            if not self.exists():
                self._clone()
            elif fetch:
                self.fetch()

    def _clone(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".partial")
        if tmp.exists():
            _rmtree(tmp)
        try:
            run_git(["clone", "--bare", "--no-recurse-submodules", "--", self.url, str(tmp)],
                    network=True)
        except GitError as exc:
            if tmp.exists():
                _rmtree(tmp)
            raise GitError(f"cannot clone {self.url}: {exc}") from None
        run_git(["config", "remote.origin.fetch", "+refs/heads/*:refs/heads/*"], cwd=tmp)
        run_git(["config", "--add", "remote.origin.fetch", "+refs/tags/*:refs/tags/*"], cwd=tmp)
        os.replace(tmp, self.path)

    def fetch(self, rev: str | None = None) -> None:
        args = ["fetch", "--prune", "--no-recurse-submodules", "--force", "origin"]
        if rev:
            args.append(rev)
        try:
            run_git(args, cwd=self.path, network=True)
        except GitError as exc:
            raise GitError(f"cannot fetch {self.url}: {exc}") from None

    def point_origin_at(self, source: str) -> None:
        """Fetch from SOURCE from now on (a local clone standing in for the URL)."""
        current = run_git(["config", "--get", "remote.origin.url"], cwd=self.path).strip()
        if current != source:
            run_git(["remote", "set-url", "origin", source], cwd=self.path)

    @contextmanager
    def lock(self) -> Iterator[None]:
        """An exclusive lock per cached repository (clone, fetch, worktree creation)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock_path = self.path.with_name(f".{self.path.name}.lock")
        with open(lock_path, "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    # -- revisions ---------------------------------------------------------------

    def resolve(self, rev: str | None) -> str:
        """REV (default: the default branch) as a full commit SHA."""
        spec = rev or "HEAD"
        sha = self._rev_parse(spec)
        if sha is None and rev and _HEX.match(rev):
            # A commit that is on no branch yet: ask the remote for it directly.
            try:
                self.fetch(rev)
            except GitError:
                pass
            sha = self._rev_parse(spec)
        if sha is None:
            if rev:
                raise GitError(f"revision {rev!r} not found in {self.url}")
            raise GitError(f"{self.url}: has no default branch (empty repository?)")
        return sha

    def _rev_parse(self, spec: str) -> str | None:
        if spec.startswith("-"):
            return None
        try:
            out = run_git(["rev-parse", "--verify", "--quiet", "--end-of-options",
                           f"{spec}^{{commit}}"], cwd=self.path)
        except GitError:
            return None
        sha = out.strip()
        return sha if re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", sha) else None

    def has_commit(self, sha: str) -> bool:
        return self._rev_parse(sha) == sha

    def is_ancestor(self, older: str, newer: str) -> bool:
        if older == newer:
            return True
        try:
            run_git(["merge-base", "--is-ancestor", older, newer], cwd=self.path)
        except GitError:
            return False
        return True

    # -- reading a commit's tree -------------------------------------------------

    def ls_tree(self, sha: str) -> list[TreeEntry]:
        """Every entry of the commit's tree, recursively, with blob sizes."""
        out = run_git(["ls-tree", "-r", "-l", "-z", "--full-tree", sha], cwd=self.path)
        entries = []
        for record in out.split("\0"):
            if not record:
                continue
            meta, _, path = record.partition("\t")
            parts = meta.split()
            if len(parts) < 4:
                continue
            mode, kind, obj, size = parts[:4]
            # git prints "-" for entries without a size and "BAD" when it cannot read
            # the object (missing from a shallow or damaged repository).
            missing = not size.isdigit() and size != "-"
            entries.append(TreeEntry(mode, kind, obj, int(size) if size.isdigit() else None,
                                     path, missing))
        return entries

    def read_blobs(self, shas: list[str]) -> Iterator[bytes | None]:
        """The contents of many blobs, in order, through one pipelined `cat-file --batch`;
        None for an object git cannot read as a blob (missing, or not a blob).

        All requests are written up front (by a thread) so there is no round trip per
        file; that matters on a busy machine, where each round trip waits for a slice.
        """
        command = ["git"]
        for option in SAFE_CONFIG:
            command += ["-c", option]
        env = {**os.environ, **git_env()}
        proc = subprocess.Popen([*command, "cat-file", "--batch"], cwd=self.path,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, env=env)

        def feed() -> None:
            try:
                for sha in shas:
                    proc.stdin.write(sha.encode("ascii") + b"\n")
                proc.stdin.close()
            except (BrokenPipeError, ValueError, OSError):
                pass

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        try:
            out = proc.stdout
            for sha in shas:
                line = out.readline()
                if not line:
                    raise GitError(f"{self.url}: git cat-file stopped before object {sha}")
                header = line.split()
                if len(header) < 3 or not header[2].isdigit():
                    yield None  # "<sha> missing" / "ambiguous": nothing follows
                    continue
                data = out.read(int(header[2]))
                out.read(1)  # the LF after each object
                yield data if header[1] == b"blob" else None
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            proc.stdout.close()
            writer.join(timeout=5)

    @contextmanager
    def reader(self) -> Iterator[BlobReader]:
        repo = git.Repo(str(self.path))
        try:
            yield BlobReader(repo)
        finally:
            repo.close()

    def read_file(self, sha: str, path: str) -> bytes:
        """One regular file of a commit, read from the object store (symlinks refused)."""
        with self.reader() as reader:
            try:
                blob = reader.repo.commit(sha).tree / path
            except (KeyError, ValueError, git.BadName) as exc:
                raise GitError(f"{path} not found at {sha[:12]} in {self.url}") from exc
            if blob.type != "blob" or blob.mode == 0o120000:
                raise GitError(f"{path} at {sha[:12]} in {self.url} is not a regular file")
            return blob.data_stream.read()

    def worktree_path(self, sha: str) -> Path:
        """Where the checkout of the commit is (or will be) written."""
        return self.path.parent / "worktrees" / f"{self.key}-{sha[:12]}"

    def has_worktree(self, sha: str) -> bool:
        return _checkout_at(self.worktree_path(sha)) == sha

    def worktree(self, sha: str) -> Path:
        """A checkout of the commit written from its git objects, created once and reused
        (never modified). An object the clone lacks (a partial or damaged clone) does not
        stop it: the path is left out and listed (`missing_paths`), so only the tests that
        need it fail."""
        target = self.worktree_path(sha)
        mark = _mark_for(target)
        with self.lock():
            if _checkout_at(target) == sha:
                return target
            mark.unlink(missing_ok=True)
            if target.exists():
                _rmtree(target)
            run_git(["worktree", "prune"], cwd=self.path)
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                # A git worktree (tools such as setuptools_scm need one) whose files are
                # written here from the objects, so no missing blob can stop it.
                run_git(["worktree", "add", "--no-checkout", "--detach", "--force",
                         str(target), sha], cwd=self.path)
                missing = self._write_tree(sha, target)
            except GitError as exc:
                _rmtree(target)
                raise GitError(f"cannot check out {sha[:12]} of {self.url}: {exc}") from None
            try:   # an index matching the tree, so `git status` shows what is absent
                run_git(["read-tree", sha], cwd=target)
                run_git(["update-index", "-q", "--refresh"], cwd=target)
            except GitError:
                pass
            mark.write_text(json.dumps({"commit": sha, "missing": missing}, indent=1) + "\n",
                            encoding="utf-8")
        return target

    def _write_tree(self, sha: str, root: Path) -> list[str]:
        root.mkdir(parents=True, exist_ok=True)
        entries = self.ls_tree(sha)
        blobs = [e for e in entries if e.type == "blob" and _safe_path(e.path)]
        missing = [e.path for e in entries if e.type == "blob" and not _safe_path(e.path)]
        links = []
        for entry in entries:
            if entry.type == "commit" and _safe_path(entry.path):   # a submodule: left empty
                (root / entry.path).mkdir(parents=True, exist_ok=True)
        for entry, data in zip(blobs, self.read_blobs([e.sha for e in blobs])):
            if data is None:
                missing.append(entry.path)
                continue
            path = root / entry.path
            path.parent.mkdir(parents=True, exist_ok=True)
            if entry.mode == MODE_SYMLINK:
                links.append((path, data.decode("utf-8", "replace")))
                continue
            path.write_bytes(data)
            if entry.mode == "100755":
                path.chmod(0o755)
        for path, pointee in links:   # as git writes them (never followed here)
            os.symlink(pointee, path)
        return sorted(missing)

    def missing_paths(self, sha: str) -> list[str]:
        """Paths the checkout of SHA lacks (their git objects are not in the clone)."""
        target = self.worktree_path(sha)
        try:
            data = json.loads(_mark_for(target).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        return list(data.get("missing") or []) if data.get("commit") == sha else []


def _mark_for(target: Path) -> Path:
    """Beside a checkout: its commit and the paths it lacks (JSON)."""
    return target.with_name(f".{target.name}.json")


def _safe_path(path: str) -> bool:
    parts = path.split("/")
    return bool(path) and not path.startswith("/") and ".." not in parts and ".git" not in parts


def _checkout_at(path: Path) -> str | None:
    if not (path / ".git").is_file():
        return None
    try:
        return json.loads(_mark_for(path).read_text(encoding="utf-8")).get("commit")
    except (OSError, ValueError, AttributeError):
        return None


class BlobReader:
    """Reads blobs through one persistent `git cat-file --batch` process."""

    def __init__(self, repo: git.Repo):
        self.repo = repo

    def read(self, sha: str) -> bytes:
        return self.repo.odb.stream(bytes.fromhex(sha)).read()


def _rmtree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


def cache_for(repos_dir: str | Path, url: str) -> CachedRepo:
    return CachedRepo(url=url, path=Path(repos_dir) / f"{cache_key(url)}.git")
