"""Whether a built environment imports the repository's package."""

from __future__ import annotations

import os
import subprocess


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

