"""Only curator/tui/ may import textual: every other module imports without loading it.

A fresh interpreter imports the core modules one after another and checks sys.modules
after each; the first module after which textual is present is the one that pulls it in
(everything imported before it was clean). That module is then imported again alone in a
second interpreter, so the failure names it with certainty. One interpreter for all
modules keeps this test at a second or two instead of one start-up per module.
"""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import curator

ROOT = Path(curator.__file__).resolve().parents[1]

SCAN = """
import importlib, json, sys
loaded_by, errors = None, {}
for name in json.loads(sys.argv[1]):
    try:
        importlib.import_module(name)
    except Exception as exc:
        errors[name] = f"{type(exc).__name__}: {exc}"
    if any(m == "textual" or m.startswith("textual.") for m in sys.modules):
        loaded_by = name
        break
print(json.dumps({"loaded_by": loaded_by, "errors": errors}))
"""

ALONE = """
import importlib, sys
importlib.import_module(sys.argv[1])
print(sorted(m for m in sys.modules if m == "textual" or m.startswith("textual."))[:3])
"""

SKIP = {"curator.__main__"}   # running it starts the CLI


def core_modules() -> list[str]:
    names = ["curator"]
    for info in pkgutil.walk_packages(curator.__path__, prefix="curator."):
        if info.name == "curator.tui" or info.name.startswith(("curator.tui.",
                                                               "curator._migrations")):
            continue
        if info.name not in SKIP:
            names.append(info.name)
    return sorted(names)


def run(code: str, *args: str) -> str:
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True,
                          text=True, timeout=300, cwd=ROOT, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout.strip()


def test_core_modules_are_found():
    names = core_modules()
    assert {"curator.store", "curator.sync", "curator.synthetic", "curator.cli"} <= set(names)
    assert not any(n.startswith("curator.tui") for n in names)


def test_no_core_module_loads_textual():
    result = json.loads(run(SCAN, json.dumps(core_modules())))
    assert not result["errors"], f"core modules that fail to import: {result['errors']}"
    culprit = result["loaded_by"]
    if culprit is not None:
        loaded = run(ALONE, culprit)
        raise AssertionError(f"{culprit} loads textual ({loaded}); only curator/tui/ may")


def test_the_check_would_catch_the_app():
    # the same scan over the app's module must find textual, or the test proves nothing
    result = json.loads(run(SCAN, json.dumps(["curator.store", "curator.tui.app"])))
    assert result["loaded_by"] == "curator.tui.app"
