"""A pytest plugin the environment brings that stops pytest from starting with the
harness's pytest (neupy's pytest-mpl 0.10 under pytest 9: every run ended before its
first test). The environment check finds it, the recipe records it with its error, and
runs disable it (`-p no:NAME`) while the environment's other plugins keep working."""

from __future__ import annotations

import pytest
from repo_support import (
    make_repo,
    mine_and_accept,
    needs_strong,
    pytest_plugin,
    run_json,
    symlinked_venv,
)

from curator.repos import environments, identity, importcheck, recipes
from curator.store import Store

# Fails at import, as a plugin written for an older pytest does ("cannot import name").
BAD_PLUGIN = 'raise ImportError("cannot import name \'MarkInfo\' from \'_pytest.mark\'")\n'
# A working plugin whose fixture the repository's tests use.
GOOD_PLUGIN = '''import pytest


@pytest.fixture
def factor():
    return 3
'''
OPS = "def scale(x):\n    return 3 * x\n"
TESTS = ("from pkg.ops import scale\n\n\ndef test_scale(factor):\n"
         "    assert scale(2) == 2 * factor\n\n\n"
         "def test_scale_zero():\n    assert scale(0) == 0\n")


def plugin_venv(folder, bad: bool = True):
    python = symlinked_venv(folder)
    (site,) = folder.glob("lib/python*/site-packages")
    pytest_plugin(site, "goodplug", GOOD_PLUGIN)
    if bad:
        pytest_plugin(site, "badplug", BAD_PLUGIN)
    return python


@pytest.mark.timeout(900)
@needs_strong
def test_a_plugin_that_stops_pytest_is_disabled_for_the_runs_and_recorded(tmp_path):
    python = plugin_venv(tmp_path / "venv")
    upstream = make_repo(tmp_path / "scaler", {
        "pkg/__init__.py": "", "pkg/ops.py": OPS, "tests/test_ops.py": TESTS})
    ws, base = mine_and_accept(tmp_path, upstream, "scale", "scale")
    with Store(ws.db_path, "tester") as store:
        row = identity.find(store, str(upstream))
        identity.set_python(store, str(row["id"]), str(python))
    url = row["url"]

    code, report = run_json(base, "scale")
    (result,) = report["runs"]
    assert result["outcome"] != "passed" and not result["tests"], result   # as before

    recipe = recipes.load(ws, url) or recipes.Recipe(repo=url)
    recipe.disable_plugins = {"maintainers": "a maintainer's: kept"}
    target = tmp_path / "env"
    notes = environments.plugins_checked(ws, recipe, str(python), target, "key-1",
                                         settings=ws.config.execution)
    assert len(notes) == 1 and "badplug" in notes[0] and "MarkInfo" in notes[0], notes
    saved = recipes.load(ws, url)
    assert set(saved.disable_plugins) == {"badplug", "maintainers"}
    assert saved.disable_plugins["badplug"].startswith(recipes.PLUGIN_STOPS)
    assert "ImportError" in saved.disable_plugins["badplug"]
    # checked once per build (its key): the same key does not run the check again
    assert environments.plugins_checked(ws, saved, str(python), target, "key-1") == []

    code, report = run_json(base, "scale")
    (result,) = report["runs"]
    assert (result["outcome"], code) == ("passed", 0), (result["reason"], result["stdout"])
    assert sorted(t["id"] for t in result["tests"]) == [
        "tests/test_ops.py::test_scale", "tests/test_ops.py::test_scale_zero"]


@needs_strong
def test_the_plugin_check_names_only_the_plugins_that_stop_pytest(tmp_path):
    found = importcheck.check_plugins(str(plugin_venv(tmp_path / "bad")))
    assert {"goodplug", "badplug"} <= set(found.names)
    assert list(found.broken) == ["badplug"] and found.ok
    assert "MarkInfo" in found.broken["badplug"] and "does not start" in found.error
    fine = importcheck.check_plugins(str(plugin_venv(tmp_path / "fine", bad=False)))
    assert fine.broken == {} and fine.ok and not fine.error and "goodplug" in fine.names


def test_a_later_check_drops_what_loads_now_and_keeps_a_maintainers_entry():
    recipe = recipes.Recipe(repo="r", disable_plugins={
        "old": recipes.PLUGIN_STOPS + "ImportError: x", "mine": "slow to load"})
    assert recipes.with_plugin_check(recipe, {"new": "TypeError: y"})
    assert recipe.disable_plugins == {"mine": "slow to load",
                                      "new": recipes.PLUGIN_STOPS + "TypeError: y"}
    assert not recipes.with_plugin_check(recipe, {"new": "TypeError: y"})
    text = recipes.dump(recipe)
    assert '[disable_plugins]\n"mine" = "slow to load"' in text
    # without any, the text is what it was before the table existed: every environment's
    # key holds its recipe's text, and a new table there rebuilt them all
    recipe.disable_plugins = {}
    assert "disable_plugins" not in recipes.dump(recipe)
    assert recipes.dump(recipe).endswith("[exclude]\n")
