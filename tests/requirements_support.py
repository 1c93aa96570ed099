"""When a test's system requirement (bubblewrap, ray) is missing: fail, unless allowed.

A skipped sandbox test reads like a pass, so a machine without a usable bwrap or without
ray fails those tests, in CI and elsewhere, with a message saying what is missing. Set
CURATOR_ALLOW_SKIP=1 to skip them instead (a laptop without bubblewrap, say).
"""

from __future__ import annotations

import functools
import importlib.util
import os

import pytest

from curator.execution import sandbox

ALLOW_SKIP = "CURATOR_ALLOW_SKIP"


def skips_allowed() -> bool:
    return os.environ.get(ALLOW_SKIP, "") == "1"


def unavailable(what: str, why: str, *, module_level: bool = False):
    """Skip (when CURATOR_ALLOW_SKIP=1) or fail because `what` cannot be used here."""
    where = " in CI" if os.environ.get("CI", "").lower() in ("1", "true", "yes") else ""
    if skips_allowed():
        pytest.skip(f"{what} unavailable: {why}", allow_module_level=module_level)
    pytest.fail(f"{what} unavailable{where}: {why} (set {ALLOW_SKIP}=1 to skip instead)",
                pytrace=False)


def installed_or_fail(name: str) -> None:
    """`import_or_fail` for a module the tests only run in the sandbox: found, not
    imported. Collection imports every test module in every pytest-xdist worker, and
    importing TensorFlow there cost each worker seconds and about a GiB for nothing."""
    try:
        found = importlib.util.find_spec(name) is not None
    except (ImportError, ValueError) as exc:
        unavailable(name, str(exc), module_level=True)
        return
    if not found:
        unavailable(name, f"No module named {name!r}", module_level=True)


def import_or_fail(name: str):
    """`pytest.importorskip`, but failing unless skips are allowed."""
    try:
        return __import__(name)
    except ImportError as exc:
        unavailable(name, str(exc), module_level=True)


@functools.cache
def bwrap_status() -> tuple[bool, str]:
    """(usable, why) for bubblewrap on this machine, probed once."""
    return sandbox.probe()


# Hooks, imported by tests/conftest.py: tests marked requires_bwrap fail or skip here.

def pytest_configure(config):
    # Also listed in pyproject.toml; registered here for suites run without it (pytester).
    config.addinivalue_line("markers", "requires_bwrap: needs a working bubblewrap sandbox "
                            f"(fails when missing unless {ALLOW_SKIP}=1)")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    if item.get_closest_marker("requires_bwrap") is not None:
        usable, why = bwrap_status()
        if not usable:
            unavailable("bubblewrap", why)
