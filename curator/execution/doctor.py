"""What isolation runs get on this machine, and what is missing for the strong level."""

from __future__ import annotations

import os
import resource
import sys

from curator.execution import cgroups, sandbox


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
    uid = sandbox.run_uid()
    if os.geteuid() == 0:
        grant = sandbox.needs_read_grant(level)
        checks.append({"check": "unprivileged runs", "ok": True,
                       "detail": "runs switch from root to nobody" + (
                           ", keeping only the right to read files: nobody cannot read "
                           "the interpreter outside a sandbox" if grant else "")})
    else:
        checks.append({"check": "unprivileged runs", "ok": True,
                       "detail": f"runs use your uid {os.getuid()}"})
    try:
        os.close(os.pidfd_open(os.getpid()))  # waiting for a run with a deadline
        checks.append({"check": "pidfd", "ok": True, "detail": "available"})
    except (AttributeError, OSError) as exc:
        checks.append({"check": "pidfd", "ok": False, "detail": str(exc)})
        missing.append("pidfd_open (Linux >= 5.3)")
    checks += protections(level, uid)
    if level == "weak":
        missing += WEAK_GAPS
    limits = {name: resource.getrlimit(getattr(resource, name))[1]
              for name in ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_NPROC", "RLIMIT_FSIZE",
                           "RLIMIT_NOFILE")}
    checks.append({"check": "rlimits", "ok": True,
                   "detail": "address space, CPU, processes, file size, open files"})
    return {
        "protections": {c["check"]: c["ok"] for c in checks},
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


# What weak isolation (no sandbox) cannot protect, said plainly.
WEAK_GAPS = [
    "weak isolation: runs see the whole file system you can read (the database, other "
    "checkouts, /srv, /var/lib) and can write wherever their uid may",
    "weak isolation: runs share your network, /tmp and /dev/shm with the host",
]


def protections(level: str, uid: int | None) -> list[dict]:
    """Which protections runs get here, one check each (see the README's guarantees)."""
    strong = level == "strong"
    root = os.geteuid() == 0
    out = [
        {"check": "unforgeable verdict", "ok": True,
         "detail": "pytest, the tests and the verdict run in a judge process where no "
                   "solution code runs; the solution runs in a process of its own, and "
                   "arguments and results cross one channel as data; a message out of "
                   "protocol or a value that cannot be rebuilt honestly is `tampered`"},
        {"check": "tests hidden from the solution", "ok": True,
         "detail": "self-contained problems: tests compiled from memory, the run folder "
                   "holds a placeholder; repo-backed problems: the upstream test files "
                   "are in the checkout and readable"},
        {"check": "deny-by-default file system", "ok": strong,
         "detail": "runs see /usr, a few /etc files, the interpreters, their run folder "
                   "and a private /tmp" if strong else
                   "no sandbox: runs see everything your user can read"},
        {"check": "private IPC per run", "ok": strong or root,
         "detail": "a fresh IPC namespace per run" if strong or root else
                   "SysV IPC is shared with the host (needs root or bubblewrap)"},
        {"check": "keyrings emptied per run", "ok": sandbox.SYS_KEYCTL.get(
            os.uname().machine) is not None,
         "detail": "the run uid's keyrings are cleared before each run"},
        solution_writes(level),
        call_layers(level),
        {"check": "private /tmp and /dev/shm wiped per run", "ok": strong,
         "detail": "size-capped tmpfs, emptied after every run" if strong else
                   "a private temp folder per worker; /dev/shm is the host's"},
        {"check": "process and memory limit per worker slot", "ok": cgroups.available(),
         "detail": "a pids and memory cgroup per slot (shared memory counted)"
         if cgroups.available() else
         "no writable cgroup: RLIMIT_NPROC on the run uid, which every run of that uid "
         "on this host shares; shared memory is bounded only by the /dev/shm size"},
    ]
    return out


def solution_writes(level: str) -> dict:
    """Whether a run's solution process can write its own folder only
    (`sandbox.confine_writes`), probed where runs happen at this level."""
    ok = sandbox.confinement_works(level)
    if ok:
        detail = ("everything but its run folder is read-only to the solution process "
                  "(its own mount namespace)")
    elif os.geteuid() == 0:
        detail = ("the kernel refused a mount namespace: the solution process can write "
                  "what its uid may (never the judge's: another uid)")
    else:
        detail = ("the kernel refused a user namespace: the solution process has the "
                  "judge's uid and can write its files; untrusted code needs --allow-weak")
    return {"check": "solution writes its own folder only", "ok": ok, "detail": detail}


def call_layers(level: str) -> dict:
    """Whether what a call writes where the judge could have (its working folder,
    tmp_path, a folder an argument names) reaches the judge as data
    (`sandbox.call_layers_work`): without the layers such writes are refused, and a
    correct solution that saves a checkpoint the test reads back fails."""
    ok = sandbox.call_layers_work(level)
    detail = ("a call's writes to the judge's folders land in the solution's own layers "
              "and come back as data (the judge writes new files only)" if ok else
              "the kernel refused the nested namespace or overlay: a call's writes outside "
              "the solution's own folder are refused (a solution that saves a file the "
              "test reads back fails)")
    return {"check": "a call's files come back to the judge", "ok": ok, "detail": detail}
