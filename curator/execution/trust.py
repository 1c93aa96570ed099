"""Weak isolation and untrusted code: who must say yes before it runs without the sandbox.

Under weak isolation (no working bubblewrap) a run can read whatever the user can, write
where they may and reach the network. That is acceptable for a reference the user wrote,
not for code nobody here reviewed: LLM samples, and mined or imported problems (their
reference and the repository's own code and tests come from upstream). Such runs need
consent: `--allow-weak` or `[execution] allow_weak = true` in the CLI, a question once
per session in the app. Strong isolation started by root needs nobody's consent.

Started by an ordinary user, even the strong sandbox's runs keep that user's uid: the
judge and the solution process are then one uid, and file permissions do not keep the
solution out of what the judge owns (its run folder, the harness module each judge
imports). What does is the solution process's own mount namespace, in which everything
but its run folder is read-only (`sandbox.confine_writes`, made before the candidate is
imported, as root too). Where the kernel refuses it (no user namespaces) the solution
could write the judge's files, as one did in the judge's run folder before the
confinement, and untrusted code then needs the same consent (SHARED_UID); root gives
the solution a uid of its own besides, so it never does.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from curator.errors import CuratorError

ALLOW_KEY = "allow_weak"   # [execution] allow_weak = true


WEAK, SHARED_UID = "weak", "shared_uid"   # why consent is needed (`consent_needed`)


class WeakIsolationRefused(CuratorError):
    """Untrusted code would run under weak isolation, or with the judge's uid, and nobody
    allowed it."""

    def __init__(self, what: list[str], why: str = WEAK):
        self.what = what
        self.why = why
        shown = ", ".join(what[:3]) + (f" and {len(what) - 3} more" if len(what) > 3 else "")
        anyway = ("pass --allow-weak (or set [execution] allow_weak = true in curator.toml) "
                  "to run it anyway")
        if why == SHARED_UID:
            super().__init__(
                f"curator runs as an ordinary user (uid {os.geteuid()}), so untrusted code "
                f"({shown}) would run with the judge's uid and could write the judge's "
                f"files (this kernel refuses the user namespace that would make them "
                f"read-only to it); run curator as root (runs then drop to a uid of their "
                f"own), or {anyway}")
            return
        super().__init__(
            f"isolation is weak (no working bubblewrap), so untrusted code ({shown}) would "
            "run able to read your files and reach the network; install bubblewrap (see "
            f"`curator doctor`), or {anyway}")


def shared_uid() -> bool:
    """Whether runs keep the uid of whoever started them (anyone but root): the solution
    process then has the judge's uid (`curator.execution.sandbox.run_uid`)."""
    return os.geteuid() != 0


def writes_confined() -> bool:
    """Whether the solution process of a sandboxed run can confine its writes to its own
    folder here (`sandbox.confinement_works`: probed once, in the sandbox)."""
    from curator.execution.sandbox import confinement_works

    return confinement_works("strong")


def consent_needed(isolation: str) -> str | None:
    """Why untrusted code needs consent to run at this isolation level (WEAK,
    SHARED_UID: one uid and no confinement of the solution's writes), or None when it
    does not."""
    if isolation == "weak":
        return WEAK
    return SHARED_UID if shared_uid() and not writes_confined() else None


def untrusted_reference(problem) -> bool:
    """Whether a problem's reference run executes code nobody here wrote: a problem mined
    or imported from a repository (its [source] names one) runs that repository's code."""
    return bool((problem.source or {}).get("repo"))


def level(settings) -> tuple[str, str]:
    """("strong"|"weak", why) for runs here under [execution] isolation (auto, strong or
    weak; `settings` is the [execution] table, curator.config.ExecutionConfig); strong
    requested but missing counts as weak (nothing will run then)."""
    from curator.execution.sandbox import resolve_isolation

    try:
        return resolve_isolation(getattr(settings, "isolation", None) or "auto")
    except CuratorError as exc:
        return "weak", str(exc)


def allowed(settings, allow_weak: bool | None = None) -> bool:
    """The consent in force: the caller's answer, else [execution] allow_weak (`settings`
    is the [execution] table, curator.config.ExecutionConfig)."""
    if allow_weak is not None:
        return bool(allow_weak)
    return getattr(settings, ALLOW_KEY, False) is True


def check(isolation: str, untrusted: Iterable[str], allow_weak: bool) -> None:
    """Raise WeakIsolationRefused when untrusted code (named by `untrusted`: problem ids,
    "sample 12") would run under weak isolation, or with the judge's uid, without
    consent."""
    what = list(dict.fromkeys(untrusted))
    why = consent_needed(isolation)
    if why and what and not allow_weak:
        raise WeakIsolationRefused(what, why)
