"""Whether a process is alive: the one liveness check, for lock holders, evaluation claims
and the engine's per-slot cgroups (docs/ARCHITECTURE.md#one-definition-each)."""

from __future__ import annotations

import os


def pid_alive(pid: int) -> bool:
    """Whether a process of this host has that pid (one of another user counts)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
