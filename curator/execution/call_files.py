"""Files a call writes where the judge could have written them come back to the judge as
data (issues 21 and 22).

The solution process writes its own run folder only (`sandbox.confine_writes`), so a
correct `save()` into the test's working folder or its tmp_path failed (recommenders'
`RBM.save`: TensorFlow's SaveV2 into `./rbm_model.ckpt`, read back by the repository's
own `RBM.load` in the judge). Now the judge names, with each top-level call, the folders
of its own run folder the call could write in-process (`call_folders`: its working
folder, the temporary folders it opened to the solution process, and the folders the
call's arguments name or hold a path in); the solution process reads and writes each
through an overlay whose upper layer is its own (`sandbox.CallMounts`); after the call
it sends what it wrote there (`harvest`, the frame `F` before its reply) and the judge
writes it into its own folders itself (`JudgeWrites`), under rules the solution cannot
change: a new file, or one the judge wrote from this solution's files in this run;
never a file or folder it did not make, never anything importable (a module, bytecode,
an extension, a .pth, package metadata, a folder that would be a namespace package in a
folder on its sys.path), never through a link or into another mount, within the run's
file size limit. What it refuses is recorded in the run (`RunResult.env["files_refused"]`).
"""

from __future__ import annotations

import errno
import importlib.machinery
import os
import pathlib
import resource
import stat
import sys

MAX_CALL_FILES = 4096          # entries a call sends back at most
MAX_CALL_FOLDERS = 16          # as sandbox.MAX_CALL_FOLDERS
MAX_TOTAL_BYTES = 512 << 20    # a call's files together, and at most the file size limit
MAX_PATH_TEXT = 4096
_OPENED: list[str] = []        # judge: temporary folders opened to the solution process
_ROOT: list[str] = []          # judge: its run folder (TMPDIR), real path
IMPORTABLE_SUFFIXES = tuple({*importlib.machinery.all_suffixes(), ".py", ".pyc", ".pyo",
                             ".pyw", ".pyd", ".so", ".pth", ".egg-link", ".egg"})
METADATA_SUFFIXES = (".dist-info", ".egg-info", ".egg")
# configuration files a library or pytest reads from the working folder (the judge's HOME
# is its run folder too, and every dotfile there is refused)
CONFIG_NAMES = frozenset({"matplotlibrc", "pytest.ini", "tox.ini", "setup.cfg",
                          "pyproject.toml", "conftest.py", "sitecustomize.py"})


def set_root(path: str) -> None:
    _ROOT[:] = [os.path.realpath(path)] if path else []


def opened(path) -> None:
    """A temporary folder the judge opened to the solution process (tmp_path, mkdtemp)."""
    try:
        real = os.path.realpath(os.fspath(path))
    except (TypeError, ValueError):
        return
    if real not in _OPENED:
        _OPENED.append(real)


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def call_folders(sent) -> list[str]:
    """The judge's folders a call may write into, as it would in-process (real paths of
    existing folders inside the judge's run folder), at most MAX_CALL_FOLDERS: its
    working folder, each folder an argument (or an item of a list, tuple or dict
    argument) names, or names a file in, and the temporary folders it opened (the
    newest first)."""
    if not _ROOT:
        return []
    root = _ROOT[0]
    try:
        candidates = [os.getcwd()]
    except OSError:
        candidates = []
    candidates += _argument_folders(sent)
    _OPENED[:] = [p for p in _OPENED if os.path.isdir(p)]   # those the test removed go
    candidates += reversed(_OPENED)   # the newest first
    folders: list[str] = []
    for path in candidates:
        real = os.path.realpath(path)
        if _inside(real, root) and real not in folders and os.path.isdir(real):
            folders.append(real)
        if len(folders) >= MAX_CALL_FOLDERS:
            break
    return folders


def _argument_folders(sent) -> list[str]:
    values = []
    if isinstance(sent, tuple) and len(sent) == 3:
        _, args, kwargs = sent
        values = [*args, *kwargs.values()] if isinstance(kwargs, dict) else list(args)
    found = []
    for value in values[:64]:
        items = [value]
        if isinstance(value, (list, tuple)):
            items = list(value[:64])
        elif isinstance(value, dict):
            items = list(value.values())[:64]
        for item in items:
            path = _path_of(item)
            if path is None:
                continue
            path = os.path.abspath(path)
            if os.path.isdir(path):
                found.append(path)
            elif os.path.isdir(os.path.dirname(path)):
                found.append(os.path.dirname(path))
    return found


PATH_TYPES = (pathlib.PosixPath, pathlib.PurePosixPath)
LOCAL_PATH_MODULES = ("py._path.local", "_pytest._py.path")   # tmpdir's py.path.local


def _path_of(item) -> str | None:
    """The path an argument names: a str, or a path of pathlib's or py.path's own class
    (nothing else is asked anything: a solution object's `__fspath__` would run its
    code)."""
    kind = type(item)
    if kind is str:
        text = item
    elif kind in PATH_TYPES:
        text = str(item)
    elif kind.__module__ in LOCAL_PATH_MODULES and kind.__name__ == "LocalPath":
        text = item.__dict__.get("strpath")
    else:
        return None
    if not isinstance(text, str) or not text or len(text) > MAX_PATH_TEXT or "\0" in text \
            or "\n" in text:
        return None
    return text


# -- the solution process: what it wrote in its layers ----------------------------------


def layered(mounted: list[tuple[int, str]], kept: list) -> list[tuple[int, str, dict]]:
    """(folder index, upper layer, {relative path: its state}) of what a folder's layer
    holds when the call starts: what the judge kept of the solution's earlier files."""
    found = []
    for index, upper in mounted:
        states = {}
        names = kept[index] if index < len(kept) and isinstance(kept[index], list) else []
        for rel in names:
            if isinstance(rel, str):
                try:
                    states[rel] = _state(os.lstat(os.path.join(upper, rel)))
                except (OSError, ValueError):
                    continue
        found.append((index, upper, states))
    return found


def _state(info: os.stat_result) -> tuple:
    return (info.st_mode, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def harvest(layers: list[tuple[int, str, dict]]) -> list[tuple[int, str, str, bytes]]:
    """(folder index, relative path, kind, content) of what the call wrote in each upper
    layer (what was there when it started and is as it was is not sent again): "file"
    (its bytes), "dir", "gone" (a whiteout: it removed the judge's entry), "big" (past
    the size limit) or "other" (a link, a device, a pipe)."""
    limit = _file_limit()
    budget = [min(limit, MAX_TOTAL_BYTES)]
    entries: list[tuple[int, str, str, bytes]] = []
    for index, upper, states in layers:
        _walk(index, upper, "", entries, budget, limit, states)
    return entries


def _walk(index, folder, prefix, entries, budget, limit, states) -> None:
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return
    for name in names:
        if len(entries) >= MAX_CALL_FILES:
            return
        path, rel = os.path.join(folder, name), prefix + name
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode):
            if rel not in states:
                entries.append((index, rel, "dir", b""))
            _walk(index, path, rel + "/", entries, budget, limit, states)
        elif states.get(rel) == _state(info):
            continue   # the judge has it as it is
        elif stat.S_ISCHR(info.st_mode) and info.st_rdev == 0:
            entries.append((index, rel, "gone", b""))
        elif stat.S_ISREG(info.st_mode):
            if info.st_size > min(limit, budget[0]):
                entries.append((index, rel, "big", b""))
                continue
            try:
                fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
                try:
                    data = read_at_most(fd, min(limit, budget[0]) + 1)
                finally:
                    os.close(fd)
            except OSError:
                continue
            if len(data) > min(limit, budget[0]):
                entries.append((index, rel, "big", b""))
                continue
            budget[0] -= len(data)
            entries.append((index, rel, "file", data))
        else:
            entries.append((index, rel, "other", b""))


def read_at_most(fd: int, size: int) -> bytes:
    """Up to `size` bytes of the descriptor (fewer at its end)."""
    chunks, left = [], size
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _file_limit() -> int:
    soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    return MAX_TOTAL_BYTES if soft == resource.RLIM_INFINITY else int(soft)


# -- the judge: writing them into its own folders -----------------------------------------


def well_formed(entries) -> bool:
    return isinstance(entries, list) and len(entries) <= MAX_CALL_FILES and all(
        isinstance(e, tuple) and len(e) == 4 and type(e[0]) is int and
        isinstance(e[1], str) and e[2] in ("file", "dir", "gone", "big", "other") and
        isinstance(e[3], bytes) for e in entries)


class JudgeWrites:
    """The judge's writes of a solution's files: which it made (so it may replace or
    remove those, and nothing else), and what it refused."""

    def __init__(self):
        # path -> what it wrote there (`_identity`: a file the test wrote since, or
        # removed and made again under that name, is the test's)
        self.made: dict[str, tuple[int, int, int]] = {}
        self.refused: list[str] = []
        self.searched: set[str] = set()   # the judge's sys.path, real paths (per batch)

    def kept(self, folder: str) -> list[str]:
        """What the judge wrote in `folder` (files and folders, relative) and still has
        as it wrote it: the solution's layer of that folder keeps those."""
        found = []
        for path, identity in list(self.made.items()):
            if not path.startswith(folder.rstrip("/") + "/"):
                continue
            try:
                info = os.lstat(path)
            except OSError:
                continue
            now = _identity(info) if len(identity) == 3 else (info.st_dev, info.st_ino)
            if now == identity:
                found.append(os.path.relpath(path, folder))
            if len(found) >= MAX_CALL_FILES:
                break
        return found

    def apply(self, folders: list[str], entries) -> list[str]:
        """Write `entries` (well_formed, indices into `folders`); the refusals, one line
        each."""
        refused = []
        total = 0
        limit = min(_file_limit(), MAX_TOTAL_BYTES)
        self.searched = _search_path()
        for index, rel, kind, data in entries:
            total += len(data)
            where = os.path.join(folders[index], rel)
            if total > limit:
                why = "past the run's file size limit"
            else:
                try:
                    why = self._one(folders[index], rel, kind, data)
                except OSError as exc:
                    why = exc.strerror or type(exc).__name__
                except ValueError:   # a name the file system cannot take (a surrogate)
                    why = "not a plain relative path"
            if why:
                refused.append("%s: %s" % (where, why))
        self.refused += refused
        return refused

    def _one(self, folder: str, rel: str, kind: str, data: bytes) -> str | None:
        parts = rel.split("/")
        if any(p in ("", ".", "..") or "\0" in p for p in parts) or len(rel) > MAX_PATH_TEXT:
            return "not a plain relative path"
        if kind == "big":
            return "larger than the run's file size limit"
        if kind == "other":
            return "a link or special file"
        why = _importable(folder, parts, kind, self.searched)
        if why:
            return why
        folder_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        fds = [folder_fd]
        try:
            device = os.fstat(folder_fd).st_dev
            folders = parts if kind == "dir" else parts[:-1]
            at = folder_fd
            for name in folders:
                try:
                    if kind == "gone":
                        at = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW,
                                     dir_fd=at)
                    else:
                        at = _folder_at(name, at, self.made,
                                        os.path.join(folder, *folders[:len(fds)]))
                except (NotADirectoryError, FileExistsError):
                    return "a link or a file on the way"
                except OSError as exc:
                    if exc.errno == errno.ELOOP:
                        return "a link or a file on the way"
                    raise
                fds.append(at)
                info = os.fstat(at)
                if info.st_dev != device:
                    return "another mount on the way"
                # new files go at the top of a folder the call was given, or into
                # folders made of the solution's: never into a folder the test has
                # (its data: a file its code makes when missing is the test's to make)
                inner = os.path.join(folder, *folders[:len(fds) - 1])
                last = kind == "dir" and len(fds) - 1 == len(folders)
                if kind != "gone" and not last and \
                        self.made.get(inner) != (info.st_dev, info.st_ino):
                    return "inside a folder the test has (a call writes new files at the " \
                           "top of a folder it was given, or in folders it made)"
            if kind == "dir":
                return None
            path = os.path.join(folder, rel)
            if kind == "gone":
                try:
                    info = os.stat(parts[-1], dir_fd=at, follow_symlinks=False)
                except FileNotFoundError:
                    return None
                if self.made.get(path) != _identity(info):
                    return "would remove a file the judge did not get from the solution"
                os.unlink(parts[-1], dir_fd=at)
                self.made.pop(path, None)
                return None
            return self._write(at, parts[-1], path, data)
        finally:
            for fd in fds:
                os.close(fd)

    def _write(self, at: int, name: str, path: str, data: bytes) -> str | None:
        flags = os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
        try:
            fd = os.open(name, flags | os.O_CREAT | os.O_EXCL, 0o644, dir_fd=at)
        except FileExistsError:
            try:
                fd = os.open(name, flags, dir_fd=at)
            except OSError:
                return "would replace what the judge did not get from the solution"
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or self.made.get(path) != _identity(info):
                os.close(fd)
                return "would replace a file the judge did not get from the solution"
            os.ftruncate(fd, 0)
        self.made.pop(path, None)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            self.made[path] = _identity(os.fstat(fd))
        finally:
            os.close(fd)
        return None


def _identity(info: os.stat_result) -> tuple[int, int, int]:
    """A file as the judge left it: a change of its content or metadata changes ctime."""
    return (info.st_dev, info.st_ino, info.st_ctime_ns)


def _folder_at(name: str, at: int, made: dict, path: str) -> int:
    """The folder `name` in the folder open at `at`, made if missing (then recorded in
    `made` by its `path`, as (st_dev, st_ino)); never a link."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    try:
        return os.open(name, flags, dir_fd=at)
    except FileNotFoundError:
        os.mkdir(name, 0o755, dir_fd=at)
        fd = os.open(name, flags, dir_fd=at)
        info = os.fstat(fd)
        made[path] = (info.st_dev, info.st_ino)
        return fd


def _search_path() -> set[str]:
    found = set()
    for entry in sys.path:
        try:
            found.add(os.path.realpath(entry or os.getcwd()))
        except (OSError, TypeError, ValueError):
            continue
    return found


def _importable(folder: str, parts: list[str], kind: str, searched: set[str]) -> str | None:
    """Why the judge must not write this (a name Python could import), or None."""
    names = parts if kind == "dir" else parts[:-1]
    last = parts[-1]
    if "__pycache__" in parts:
        return "bytecode"
    if any(p.startswith(".") for p in parts):
        return "a hidden file or folder (the judge's libraries read their configuration " \
               "from those)"
    if last in CONFIG_NAMES:
        return "a configuration file"
    if any(n.endswith(METADATA_SUFFIXES) for n in parts):
        return "package metadata"
    if kind != "dir" and (last.endswith(IMPORTABLE_SUFFIXES) or ".so." in last):
        return "importable (a module, bytecode, an extension or a .pth)"
    path = os.path.join(folder, *parts)
    if path in searched:
        return "a folder or archive on the judge's sys.path"
    # a new folder right in a folder Python searches is a namespace package of its name
    top = parts[0]
    if (len(names) > 0) and folder in searched and top.isidentifier() and \
            not os.path.isdir(os.path.join(folder, top)):
        return "a package folder on the judge's sys.path"
    return None
