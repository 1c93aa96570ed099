"""Weak isolation and untrusted code: who must say yes before it runs without the sandbox.

Under weak isolation (no working bubblewrap) a run can read whatever the user can, write
where they may and reach the network. That is acceptable for a reference the user wrote,
not for code nobody here reviewed: LLM samples, and mined or imported problems (their
reference and the repository's own code and tests come from upstream). Such runs need
consent: `--allow-weak` or `[execution] allow_weak = true` in the CLI, a question once
per session in the app. Strong isolation needs nobody's consent.
"""

from __future__ import annotations

from collections.abc import Iterable

from curator.errors import CuratorError

ALLOW_KEY = "allow_weak"   # [execution] allow_weak = true


class WeakIsolationRefused(CuratorError):
    """Untrusted code would run under weak isolation and nobody allowed it."""

    def __init__(self, what: list[str]):
        self.what = what
        shown = ", ".join(what[:3]) + (f" and {len(what) - 3} more" if len(what) > 3 else "")
        super().__init__(
            f"isolation is weak (no working bubblewrap), so untrusted code ({shown}) would "
            "run able to read your files and reach the network; install bubblewrap (see "
            "`curator doctor`), or pass --allow-weak (or set [execution] allow_weak = true "
            "in curator.toml) to run it anyway")


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
    "sample 12") would run under weak isolation without consent."""
    what = list(dict.fromkeys(untrusted))
    if isolation == "weak" and what and not allow_weak:
        raise WeakIsolationRefused(what)
