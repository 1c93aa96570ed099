"""Whether a built environment imports the repository's package (and its frameworks).

Importing the package runs the repository's code (mined, nobody here reviewed it), so the
check runs like a run does: in the sandbox (bwrap: no network, everything read-only but a
private /tmp, no capabilities) when isolation is strong. Under weak isolation it runs
unsandboxed only with the consent runs need ([execution] allow_weak); otherwise it is
refused, and says why.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from curator.execution import sandbox, trust


def _argv(python: str, code: str, checkout: Path | None, settings) -> tuple[list[str], dict,
                                                                            str] | str:
    """(argv, env, cwd) for running `python -c code` as an import check, or why it may
    not run here."""
    isolation, why = trust.level(settings)
    if isolation == "weak":
        if not trust.allowed(settings):
            return (f"not checked: isolation is weak ({why}) and the import runs the "
                    "repository's code; install bubblewrap or set [execution] allow_weak "
                    "= true")
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
        env["PYTHONNOUSERSITE"] = "1"
        return [python, "-c", code], env, str(checkout or "/")
    binds = [(str(checkout), str(checkout))] if checkout is not None else []
    spec = sandbox.SandboxSpec(python=python, ro_binds=binds)
    argv = spec.argv([python, "-c", code])
    # Nothing to switch users for: no capability at all inside (bwrap keeps some for the
    # run workers, which drop to nobody themselves).
    out: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg == "--cap-add":
            skip = True
            continue
        out.append(arg)
    if checkout is not None:
        out[out.index("--chdir") + 1] = str(checkout)
    return out, sandbox.base_env("/tmp", python=python), "/"


def _import(python: str, module: str, checkout: Path | None, settings,
            timeout: float) -> tuple[bool, str]:
    prefix = f"import sys; sys.path.insert(0, {str(checkout)!r}); " if checkout else ""
    how = _argv(python, prefix + f"import {module}", checkout, settings)
    if isinstance(how, str):
        return False, f"import {module}: {how}"
    argv, env, cwd = how
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              check=False, cwd=cwd, env=env, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"import {module}: {exc}"
    if done.returncode != 0:
        return False, f"import {module}: {failure_line(done.stderr)}"
    return True, ""


def failure_line(stderr: str) -> str:
    """The last line of a failed import's traceback, and the module not found that caused
    it when the error raised is another one (`except ImportError: raise ImportError("These
    classes require PyTorch")` over deepchem's missing `tqdm`): the missing module is what
    can be installed."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    if not lines:
        return "failed"
    last = lines[-1][:300]
    causes = [line for line in lines[:-1] if line.startswith("ModuleNotFoundError: ")]
    if causes and not last.startswith("ModuleNotFoundError: "):
        return f"{last} (after {causes[-1][:200]})"
    return last


def check_import(row: dict, settings=None, checkout: Path | None = None) -> tuple[bool, str]:
    """Whether the environment's interpreter imports the repository's package (in the
    sandbox; `settings`: the [execution] table), from `checkout` when given, as runs do
    (a repository built in place by its recipe is not installed in the environment)."""
    package = row.get("package")
    python = row.get("python") or ""
    if not os.path.exists(python):
        return False, f"{python} is missing; rebuild with `curator repo env`"
    if not package:
        return False, "no importable package found in the repository"
    ok, reason = _import(python, package, checkout, settings, 300)
    return (True, f"imports {package}") if ok else (False, reason)


def check_env(python: str, checkout: Path, frameworks: list[str], package: str | None,
              settings=None) -> tuple[bool, str]:
    """Whether a new environment imports its frameworks, then the repository's package
    (from the checkout, as runs do), in the sandbox: (True, "") or (False, the failing
    import and its error's last line)."""
    modules = [*frameworks, *([package] if package else [])]
    for module in dict.fromkeys(modules):
        ok, reason = _import(python, module, checkout, settings, 600)
        if not ok:
            return False, reason
    return True, ""


def check_module(python: str, module: str, settings=None) -> tuple[bool, str]:
    """Whether the environment imports an installed module (no checkout on its path)."""
    return _import(python, module, None, settings, 600)
