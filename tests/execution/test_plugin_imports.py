"""A repository environment's pytest session is run once per process, not once per warm
worker: its first worker says which modules the session imported, and later workers of
the same environment, in any engine, import those instead of running the session again
(about a second and a half of CPU per worker)."""

from __future__ import annotations

import pytest
from execution_support import repo_job, write_repo
from repo_support import pytest_plugin, symlinked_venv

from curator.execution import pool as pool_mod
from curator.execution.engine import Engine

# A plugin whose terminal summary imports a module late, as hypothesis's does.
PLUGIN = '''def pytest_terminal_summary(terminalreporter):
    import latebird  # noqa: F401
'''
OPS = "def double(x):\n    return 2 * x\n"
# The judge forks from the warm worker: the late module is there before any test needs it.
TESTS = '''import sys

from pkg.ops import double


def test_double():
    assert double(2) == 4


def test_the_late_module_was_imported_by_the_worker():
    assert "latebird" in sys.modules
'''


def plugin_venv(folder):
    python = symlinked_venv(folder)
    (site,) = folder.glob("lib/python*/site-packages")
    pytest_plugin(site, "birdplug", PLUGIN, {"latebird": "SONG = 'tweet'\n"})
    return python


def sessions(engine: Engine) -> list[str | None]:
    return [w.versions.get("plugin_session") for by_key in engine.pool._repo_workers.values()
            for w in by_key.values()]


@pytest.mark.timeout(300)
def test_the_second_worker_of_an_environment_imports_what_the_first_found(tmp_path,
                                                                          monkeypatch):
    monkeypatch.setattr(pool_mod, "_PLUGIN_IMPORTS", {})
    python = str(plugin_venv(tmp_path / "venv"))
    root = write_repo(tmp_path / "repo", {"pkg/__init__.py": "", "pkg/ops.py": OPS,
                                          "tests/test_ops.py": TESTS})
    for expected in ("ran", "given"):   # two engines, one after the other
        job = repo_job(root, "pkg/ops.py", OPS, "tests/test_ops.py", "double",
                       python=python)
        with Engine(workers=1, isolation="weak", eager=False) as engine:
            (result,) = engine.run([job])
            assert sessions(engine) == [expected]
        assert result.outcome == "passed", (result.outcome, result.reason, result.tests)
        assert len(result.tests) == 2
    (names,) = pool_mod._PLUGIN_IMPORTS.values()
    assert "latebird" in names


def test_a_list_too_long_for_a_command_line_is_not_kept(monkeypatch):
    monkeypatch.setattr(pool_mod, "_PLUGIN_IMPORTS", {})
    many = [f"module_{i:06d}" for i in range(pool_mod.PLUGIN_IMPORTS_MAX_BYTES // 8)]
    pool_mod.remember_plugin_imports(("py", "lock", ()), many)
    assert pool_mod.known_plugin_imports(("py", "lock", ())) is None
    pool_mod.remember_plugin_imports(("py", "lock", ()), ["a", "b"])
    pool_mod.remember_plugin_imports(("py", "lock", ()), ["c"])   # the first one stays
    assert pool_mod.known_plugin_imports(("py", "lock", ())) == ["a", "b"]
    assert pool_mod.known_plugin_imports(("py", "other", ())) is None
