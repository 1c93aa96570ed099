"""Only curator/tui/ may import textual: every other module imports without loading it.

Each module is imported in a fresh interpreter (several run at once), so one module's
imports cannot hide another's.
"""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import curator

CHECK = (
    "import importlib, sys\n"
    "importlib.import_module(sys.argv[1])\n"
    "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))\n"
    "print(bad[0] if bad else '')\n"
)


def core_modules() -> list[str]:
    names = ["curator"]
    for info in pkgutil.walk_packages(curator.__path__, prefix="curator."):
        if info.name == "curator.tui" or info.name.startswith("curator.tui."):
            continue
        if info.name.startswith("curator._migrations"):
            continue
        names.append(info.name)
    return sorted(names)


def test_core_modules_are_found():
    names = core_modules()
    assert {"curator.store", "curator.sync", "curator.synthetic", "curator.cli"} <= set(names)
    assert not any(n.startswith("curator.tui") for n in names)


def test_no_core_module_loads_textual():
    def check(name: str) -> tuple[str, str, str]:
        proc = subprocess.run([sys.executable, "-c", CHECK, name], capture_output=True,
                              text=True, timeout=120, cwd=Path(curator.__file__).parents[1])
        return name, proc.stdout.strip(), proc.stderr.strip()

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(check, core_modules()))
    failed_imports = [(n, err.splitlines()[-1]) for n, out, err in results if err and not out
                      and "Error" in err]
    offenders = [(n, out) for n, out, _ in results if out]
    assert not failed_imports, failed_imports
    assert not offenders, f"modules outside curator/tui load textual: {offenders}"
