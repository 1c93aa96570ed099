"""Private writable views of read-only folders, one per run process (strong isolation).

A run's process (the judge, the solution process), still root inside the sandbox, mounts
an overlay before it drops to its uid: the read-only folder below, a private folder of
the run above, at a fixed path of the run. It reads the folder as it is and writes into
its own layer; the worker unmounts the view and wipes the layer after the run, so nothing
one run writes reaches another (or the folder below).

Two uses:

- the checkout (`repo_view`): a repository test that writes beside its own file or into
  a folder of the checkout (``Path(__file__).parent / "out.txt"``, a download into
  ``data/``) worked on a copy and failed on the read-only mount (EROFS), and triage
  counted it `fails_upstream`. The view's folders are the run's uid's (a `skeleton` of
  them, made once per worker, lies between the checkout and the run's layer); the
  checkout's files stay the owner's, so a test creates, renames and deletes files
  anywhere in it, and only writing into an existing file is refused.
- the run cache (`cache_view`): a process's cache folder (XDG_CACHE_HOME: torch's C++
  extensions, inductor's, numba's) over its environment's persistent cache, so code
  compiled on the fly (nncf's extension, kornia's torch.compile) is built once per
  environment, not in every run. Only the worker writes that cache (`harvest`), from the
  layer of a finished reference run's process, into the cache of that kind of process
  (judge or solution): a solution's process never writes anything a judge loads.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import stat
from pathlib import Path

MNT_DETACH = 2
OPAQUE = "trusted.overlay.opaque"
HIDDEN_NAMES = (".git",)            # as the folder of links to the checkout left it out
HARVEST_MAX_BYTES = 1 << 30         # what one run may add to its environment's cache
NEVER_KEPT = ("lock",)              # torch's FileBaton of a build a killed run left behind


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _mount_overlay(lowers: list[Path], upper: Path, work: Path, target: Path) -> None:
    if any(c in str(p) for p in (*lowers, upper, work) for c in ",:\\"):
        raise OSError(22, f"an overlay cannot name {lowers[-1]}")
    options = f"lowerdir={':'.join(map(str, lowers))},upperdir={upper},workdir={work}"
    if _libc().mount(b"overlay", str(target).encode(), b"overlay", 0,
                     options.encode()) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"overlay on {target}: {os.strerror(errno)}")


def unmount(target: Path) -> None:
    """Detach the view at `target` (nothing when there is none)."""
    _libc().umount2(str(target).encode(), MNT_DETACH)


def layers_of(rundir: Path) -> Path:
    """Where a run folder's views keep their private layers: beside it, root's alone."""
    return Path(f"{rundir}.layers")


def _owned(path: Path, uid: int | None, mode: int) -> None:
    os.chmod(path, mode)
    if uid is not None and os.geteuid() == 0:
        os.chown(path, uid, uid)


def skeleton(checkout: Path, folder: Path, uid: int | None) -> Path | None:
    """The checkout's folders, empty, the run uid's (made once per worker, in its own
    folder): the middle layer of each run's view of it. An overlay folder takes its
    owner and mode from the topmost layer that has it; the checkout's belong to its
    owner, so without these a run could write nowhere in its view. Its `.git` is an empty
    opaque folder, as the folder of links left the checkout's out. None when it cannot
    be made here."""
    try:
        folder.mkdir(mode=0o755)
        for here, folders, _ in os.walk(checkout):
            rel = Path(here).relative_to(checkout)
            if rel == Path("."):
                folders[:] = [f for f in folders if f not in HIDDEN_NAMES]
            for name in folders:
                made = folder / rel / name
                made.mkdir()
                _owned(made, uid,
                       (os.lstat(Path(here) / name).st_mode & 0o777 | 0o700) & ~0o022)
        for name in HIDDEN_NAMES:
            if os.path.lexists(checkout / name):
                hidden = folder / name
                hidden.mkdir(mode=0o700)
                os.setxattr(hidden, OPAQUE, b"y")
        return folder
    except OSError:
        shutil.rmtree(folder, ignore_errors=True)
        return None


def _view(lowers: list[Path], target: Path, layer: Path, uid: int | None) -> None:
    upper, work = layer / "upper", layer / "work"
    layer.mkdir(mode=0o700)
    upper.mkdir()
    work.mkdir(mode=0o700)
    _owned(upper, uid, 0o755)   # the view's top folder takes its owner and mode
    target.mkdir(exist_ok=True)
    _mount_overlay(lowers, upper, work, target)


def repo_view(checkout: Path, folders: Path, target: Path, layers: Path,
              uid: int | None) -> bool:
    """The checkout at `target`, writable by `uid` (see the module) over its `skeleton`
    `folders`; False when this process cannot mount (the caller then keeps its folder of
    links)."""
    try:
        _view([folders, checkout], target, layers / "repo", uid)
        return True
    except OSError:
        _undo(target, layers / "repo")
        return False


def cache_view(cache: Path, target: Path, layers: Path, uid: int | None) -> bool:
    """The environment's cache of this kind of process at `target`, writes kept in the
    run's layer; False when there is none or this process cannot mount."""
    if not cache.is_dir():
        return False
    try:
        _view([cache], target, layers / "cache", uid)
        return True
    except OSError:
        _undo(target, layers / "cache")
        return False


def _undo(target: Path, layer: Path) -> None:
    unmount(target)
    shutil.rmtree(layer, ignore_errors=True)
    try:
        target.rmdir()
    except OSError:
        pass


def close(rundir: Path) -> None:
    """Unmount a run folder's views and remove their layers (the worker, after the run)."""
    for name in ("repo", ".cache"):
        unmount(rundir / name)
    shutil.rmtree(layers_of(rundir), ignore_errors=True)


def harvest(rundir: Path, cache: Path, uid: int | None) -> int:
    """Add what a finished trusted run's process compiled (its cache view's layer) to the
    environment's cache of that kind of process; the bytes added.

    Only regular files and folders that process made (owned by `uid`) are kept, never
    writable by another uid, each file written under a new name and renamed into place
    (a second worker of the environment may add the same file meanwhile); a lock file
    of an interrupted build is not, and one run adds at most HARVEST_MAX_BYTES."""
    upper = layers_of(rundir) / "cache" / "upper"
    if not upper.is_dir() or not cache.is_dir():
        return 0
    added = 0
    for here, folders, files in os.walk(upper):
        rel = Path(here).relative_to(upper)
        kept = []
        for name in folders:
            info = os.lstat(Path(here) / name)
            if uid is not None and info.st_uid != uid:
                continue
            made = cache / rel / name
            try:
                made.mkdir()
            except FileExistsError:
                pass   # kept before, or by a second worker of the environment meanwhile
            except OSError:
                continue
            if not made.is_dir():
                continue
            try:
                _owned(made, uid, (info.st_mode & 0o777 | 0o700) & ~0o022)
            except OSError:
                continue
            kept.append(name)
        folders[:] = kept
        for name in files:
            source = Path(here) / name
            info = os.lstat(source)
            if name in NEVER_KEPT or not stat.S_ISREG(info.st_mode) or \
                    (uid is not None and info.st_uid != uid):
                continue   # a whiteout (a deleted file), a link, another uid's
            if added + info.st_size > HARVEST_MAX_BYTES:
                return added
            target = cache / rel / name
            partial = target.with_name(f".{name}.{os.getpid()}.part")
            try:
                # the bytes and times only: never the overlay's own (trusted.overlay.*)
                # attributes of a file copied up, which a later view would read
                shutil.copyfile(source, partial, follow_symlinks=False)
                os.utime(partial, ns=(info.st_atime_ns, info.st_mtime_ns))
                _owned(partial, uid, info.st_mode & 0o755)
                os.replace(partial, target)
            except OSError:
                try:
                    partial.unlink()
                except OSError:
                    pass
                continue
            added += info.st_size
    return added
