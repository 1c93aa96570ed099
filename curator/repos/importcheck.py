"""Whether a built environment imports the repository's package."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def check_import(row: dict) -> tuple[bool, str]:
    """Whether the environment's interpreter imports the repository's package."""
    package = row.get("package")
    python = row.get("python") or ""
    if not os.path.exists(python):
        return False, f"{python} is missing; rebuild with `curator repo env`"
    if not package:
        return False, "no importable package found in the repository"
    try:
        done = subprocess.run([python, "-c", f"import {package}"], capture_output=True,
                              text=True, timeout=300, check=False, cwd="/",
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"import {package}: {exc}"
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        return False, f"import {package}: {lines[-1] if lines else 'failed'}"
    return True, f"imports {package}"



def check_env(python: str, checkout: Path, frameworks: list[str], package: str | None
              ) -> tuple[bool, str]:
    """Whether a new environment imports its frameworks, then the repository's package
    (from the checkout, as runs do): (True, "") or (False, the failing import and its
    error's last line)."""
    modules = [*frameworks, *([package] if package else [])]
    for module in dict.fromkeys(modules):
        code = (f"import sys; sys.path.insert(0, {str(checkout)!r}); import {module}")
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
        env["PYTHONNOUSERSITE"] = "1"
        try:
            done = subprocess.run([python, "-c", code], capture_output=True, text=True,
                                  timeout=600, check=False, cwd=str(checkout), env=env,
                                  stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return False, f"import {module}: {exc}"
        if done.returncode != 0:
            lines = [line for line in done.stderr.splitlines() if line.strip()]
            return False, f"import {module}: {lines[-1].strip()[:300] if lines else 'failed'}"
    return True, ""
