"""Finding and killing every process a run started, including detached ones.

The worker is a child subreaper, so a grandchild that double-forks or calls setsid is
reparented to the worker and stays in its process tree. Inside a private pid namespace
the worker can simply signal everything it can see except itself and the namespace's
init; outside one it walks its descendants in /proc. Runs also carry a marker in their
environment, which lets the engine sweep survivors of a worker that died.
"""

from __future__ import annotations

import os
import signal
import time

MARKER_VAR = "CURATOR_RUN_MARKER"


def _ppid_map() -> dict[int, int]:
    parents = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                stat = fh.read().decode("ascii", "replace")
        except OSError:
            continue
        # The command name may hold spaces and parentheses: split after the last ')'.
        rest = stat[stat.rfind(")") + 2:].split()
        if len(rest) > 1:
            parents[int(entry.name)] = int(rest[1])
    return parents


def descendants(root: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for pid, ppid in _ppid_map().items():
        children.setdefault(ppid, []).append(pid)
    found, stack = set(), [root]
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def with_marker(marker: str) -> set[int]:
    """Processes whose environment carries this marker (readable ones only)."""
    needle = f"{MARKER_VAR}={marker}".encode()
    found = set()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as fh:
                if needle in fh.read().split(b"\0"):
                    found.add(int(entry.name))
        except OSError:
            continue
    return found


def kill_pids(pids: set[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def reap() -> None:
    """Collect every exited child so none is left a zombie."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_tree(root: int, marker: str | None = None, in_own_namespace: bool = False,
              patience_s: float = 30.0, spare: set[int] | None = None) -> bool:
    """SIGKILL every descendant of `root` (and marked process) until none is left.

    `spare`: processes that stay (the worker's solution zygote); their own children go.

    Returns False if some survived `patience_s` (a process stuck in the kernel).
    """
    deadline = time.monotonic() + patience_s
    pause = 0.001
    while True:
        if in_own_namespace and not spare:
            # Everyone visible but init and us belongs to the run; the kernel stops
            # forks racing with this signal.
            try:
                os.kill(-1, signal.SIGKILL)
            except ProcessLookupError:
                pass
        victims = descendants(root)
        if marker:
            victims |= with_marker(marker)
        victims.discard(os.getpid())
        victims -= spare or set()
        reap()
        victims = {p for p in victims if _alive(p)}
        if not victims:
            return True
        if time.monotonic() > deadline:
            return False
        kill_pids(victims)
        time.sleep(pause)
        pause = min(pause * 2, 0.05)
        reap()


def running_descendants(root: int, spare: set[int] | None = None) -> set[int]:
    """Descendants of `root` still running (not zombies), those of `spare` aside."""
    spared = set(spare or ())
    for pid in spare or ():
        spared |= descendants(pid)
    return {p for p in descendants(root) - spared if _alive(p)}


def command_name(pid: int) -> str:
    """A process's command name (`comm`), "" when it is gone."""
    try:
        with open(f"/proc/{pid}/comm", "rb") as fh:
            return fh.read().decode("utf-8", "replace").strip()
    except OSError:
        return ""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read().decode("ascii", "replace")
    except OSError:
        return False
    return state[state.rfind(")") + 2:state.rfind(")") + 3] != "Z"


def own_pid_namespace(host_ns: str | None) -> bool:
    """True when we run in a pid namespace other than the one `host_ns` names."""
    if not host_ns:
        return False
    try:
        return os.readlink("/proc/self/ns/pid") != host_ns
    except OSError:
        return False
