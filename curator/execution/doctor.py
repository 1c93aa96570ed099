"""What isolation runs get on this machine, and what is missing for the strong level."""

from __future__ import annotations

import os
import resource
import sys

from curator.execution import sandbox


def report(requested: str = "auto") -> dict:
    """{"isolation", "bwrap", "missing", "checks", ...} for `curator doctor`."""
    ok, detail = sandbox.probe()
    level = "weak" if requested == "weak" or not ok else "strong"
    missing, checks = [], []
    checks.append({"check": "bubblewrap", "ok": ok, "detail": detail})
    if not ok:
        missing.append(f"{detail}. Without it runs are not cut off from the network, the "
                       "file system (they can write where you can) or your other "
                       "processes.")
    uid = sandbox.run_uid(level)
    if os.geteuid() == 0:
        dropped = uid is not None
        checks.append({"check": "unprivileged runs", "ok": dropped,
                       "detail": "runs switch from root to nobody" if dropped else
                       "runs keep root: nobody cannot read the interpreter outside a "
                       "sandbox, so the process limit cannot apply"})
        if not dropped:
            missing.append("runs keep root (install bubblewrap, or use an interpreter "
                           "that every user can read)")
    else:
        checks.append({"check": "unprivileged runs", "ok": True,
                       "detail": f"runs use your uid {os.getuid()}"})
    try:
        os.close(os.pidfd_open(os.getpid()))  # waiting for a run with a deadline
        checks.append({"check": "pidfd", "ok": True, "detail": "available"})
    except (AttributeError, OSError) as exc:
        checks.append({"check": "pidfd", "ok": False, "detail": str(exc)})
        missing.append("pidfd_open (Linux >= 5.3)")
    limits = {name: resource.getrlimit(getattr(resource, name))[1]
              for name in ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_NPROC", "RLIMIT_FSIZE",
                           "RLIMIT_NOFILE")}
    checks.append({"check": "rlimits", "ok": True,
                   "detail": "address space, CPU, processes, file size, open files"})
    return {
        "isolation": level,
        "requested": requested,
        "bwrap": sandbox.bwrap_path() or None,
        "bwrap_version": sandbox.bwrap_version(),
        "python": sys.version.split()[0],
        "run_uid": uid if uid is not None else os.getuid(),
        "hard_limits": {k: (None if v == resource.RLIM_INFINITY else v)
                        for k, v in limits.items()},
        "checks": checks,
        "missing": missing,
    }
