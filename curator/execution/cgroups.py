"""A pids (and memory) cgroup per worker slot, so one run's limits never touch another's.

RLIMIT_NPROC counts every process of a uid on the host: runs all dropped to `nobody`
would share it, and a fork flood in one run would make another run's fork fail. A cgroup
per worker slot limits the processes (pids.max) and the memory, shared memory included
(memory.max / memory.limit_in_bytes count tmpfs and SysV pages), of the run in that slot
only. The engine creates the groups beside its own, moves each worker in before it
starts, and sets the limits of each job before sending it. cgroup v2 (unified) and v1
(one hierarchy per controller) are both understood; without a writable hierarchy the
slot falls back to RLIMIT_NPROC and says so (`curator doctor`).
"""

from __future__ import annotations

import os
import re
import secrets
import time
from pathlib import Path

from curator.processes import pid_alive

ROOT = Path("/sys/fs/cgroup")
PREFIX = "curator-"
_NAME = re.compile(rf"{PREFIX}(\d+)-\d+-[0-9a-f]+")
REMOVE_WAIT_S = 2.0      # a worker that was just killed leaves its group a moment later


def _own_paths() -> dict[str, str]:
    """controller ("" for v2) -> this process's cgroup path."""
    found = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        for controller in parts[1].split(",") if parts[1] else [""]:
            found[controller] = parts[2]
    return found


def _parent(controller: str) -> Path | None:
    """The folder under which we may create groups for this controller, or None."""
    own = _own_paths()
    if controller and (ROOT / controller / "tasks").exists():  # v1
        base = ROOT / controller / own.get(controller, "/").lstrip("/")
    elif (ROOT / "cgroup.controllers").exists():  # v2
        base = ROOT / own.get("", "/").lstrip("/")
        try:
            enabled = (base / "cgroup.subtree_control").read_text().split()
        except OSError:
            return None
        if controller not in enabled:
            return None
    else:
        return None
    return base if base.is_dir() and os.access(base, os.W_OK) else None


class SlotGroup:
    """The cgroups of one worker slot (pids, and memory when available)."""

    def __init__(self, name: str):
        self.dirs: dict[str, Path] = {}
        for controller in ("pids", "memory"):
            parent = _parent(controller)
            if parent is None:
                continue
            folder = parent / name
            try:
                folder.mkdir(exist_ok=True)
            except OSError:
                continue
            self.dirs[controller] = folder

    @classmethod
    def create(cls, slot: int) -> SlotGroup | None:
        group = cls(f"{PREFIX}{os.getpid()}-{slot}-{secrets.token_hex(3)}")
        if "pids" not in group.dirs:
            group.remove()
            return None
        return group

    @property
    def procs_files(self) -> list[str]:
        return [str(d / "cgroup.procs") for d in self.dirs.values()]

    def wrap(self, command: list[str]) -> list[str]:
        """`command`, started already inside the groups (no fork can escape the move)."""
        joins = " && ".join(f'echo $$ > "${i + 1}"' for i in range(len(self.procs_files)))
        count = len(self.procs_files)
        return ["/bin/sh", "-c", f'{joins} && shift {count} && exec "$@"', "curator-slot",
                *self.procs_files, *command]

    def _write(self, controller: str, name: str, value: str) -> bool:
        folder = self.dirs.get(controller)
        if folder is None:
            return False
        try:
            (folder / name).write_text(value)
            return True
        except OSError:
            return False

    def _read_int(self, controller: str, *names: str) -> int | None:
        folder = self.dirs.get(controller)
        for name in names:
            try:
                return int((folder / name).read_text().split()[0])
            except (OSError, ValueError, IndexError, TypeError):
                continue
        return None

    def limit(self, processes: int, memory_mb: int) -> None:
        """Limits for the next run: what the worker holds now plus the run's own share."""
        current = self._read_int("pids", "pids.current") or 0
        self._write("pids", "pids.max", str(current + processes))
        used = self._read_int("memory", "memory.current", "memory.usage_in_bytes")
        if used is not None:
            value = str(used + (memory_mb << 20))
            if not self._write("memory", "memory.max", value):
                self._write("memory", "memory.limit_in_bytes", value)

    def release(self) -> None:
        """No limits between runs (the worker itself must never be the one refused)."""
        self._write("pids", "pids.max", "max")
        if not self._write("memory", "memory.max", "max"):
            self._write("memory", "memory.limit_in_bytes", "-1")

    def remove(self, wait_s: float = REMOVE_WAIT_S) -> None:
        """Remove the groups; a group still holding an exiting process is retried a moment."""
        deadline = time.monotonic() + wait_s
        for folder in self.dirs.values():
            while not _rmdir(folder) and time.monotonic() < deadline:
                time.sleep(0.05)
        self.dirs.clear()


def _rmdir(folder: Path) -> bool:
    try:
        folder.rmdir()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


def sweep() -> list[Path]:
    """Remove the empty slot groups left by engines that are gone (a killed process never
    closed its pool): the groups named after a pid that no longer lives. Returns them."""
    removed = []
    for controller in ("pids", "memory"):
        parent = _parent(controller)
        if parent is None:
            continue
        try:
            folders = [f for f in parent.iterdir() if f.is_dir()]
        except OSError:
            continue
        for folder in folders:
            match = _NAME.fullmatch(folder.name)
            if match and not pid_alive(int(match.group(1))) and _rmdir(folder):
                removed.append(folder)
    return removed


def available() -> bool:
    return _parent("pids") is not None
