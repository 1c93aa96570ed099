"""`curator dlbench rebuild`: resolve, environment and triage per repository, resumable,
with exactly the JSON the command promises."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from repo_support import offline_index  # noqa: F401  (fixture)
from test_dlbench_resolve import (  # noqa: F401  (fixtures)
    imported,
    imported_once,
    upstream,
    upstream_once,
)

from curator.cli import main
from curator.repos import recipes
from curator.store import Store

REPO_KEYS = {"name", "problems", "resolved", "env", "green", "green_ids", "triaged",
             "not_green"}
CAUSES = {"needs_gpu", "needs_network", "flaky", "fails_upstream"}


def rebuild(base, *args):
    out = CliRunner().invoke(main, [*base, "dlbench", "rebuild", *args, "--json"])
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def test_an_unregistered_repository_is_reported_not_cloned(imported):  # noqa: F811
    ws, base = imported
    data = rebuild(base)
    assert set(data) == {"repos", "totals"}
    (repo,) = data["repos"]
    assert set(repo) == REPO_KEYS and set(repo["triaged"]) == CAUSES
    assert repo["name"] == "geomlib" and repo["problems"] == 8 and repo["resolved"] == 0
    assert repo["env"].startswith("repository not registered")
    assert {i["id"] for i in repo["not_green"]} and repo["green"] == 0
    assert data["totals"] == {"problems": 8, "resolved": 0, "green": 0}
    bad = CliRunner().invoke(main, [*base, "dlbench", "rebuild", "--only", "nosuch"])
    assert bad.exit_code != 0 and "nosuch: no imported DL-Bench problem" in bad.output


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_rebuild_resolves_builds_triages_and_resumes(imported, upstream,  # noqa: F811
                                                     offline_index):  # noqa: F811
    ws, base = imported
    # geomlib declares nothing; its recipe (a maintainer's decision) adds numpy
    recipes.save(ws, recipes.Recipe(repo="https://git.invalid/team/geomlib",
                                    extras=["numpy"]))
    # no --as-of: the local index holds today's pytest, not one as of a past date
    data = rebuild(base, "--repo", f"geomlib={upstream['mirror']}")
    (repo,) = data["repos"]
    assert set(repo) == REPO_KEYS and repo["name"] == "geomlib"
    assert repo["env"] == "ok", repo
    assert repo["problems"] == 8 and 0 < repo["resolved"] < 8
    assert repo["green"] == len(repo["green_ids"]) > 0, repo["not_green"]
    assert repo["green"] + len(repo["not_green"]) == repo["problems"]
    assert data["totals"] == {"problems": 8, "resolved": repo["resolved"],
                              "green": repo["green"]}
    recipe = recipes.load(ws, "https://git.invalid/team/geomlib")
    assert recipe is not None and recipe.extras == ["numpy"]
    with Store(ws.db_path, "tester") as store:
        before = store.one("SELECT COUNT(*) AS n FROM runs")["n"]
    again = rebuild(base, "--only", "geomlib")
    with Store(ws.db_path, "tester") as store:
        assert store.one("SELECT COUNT(*) AS n FROM runs")["n"] == before   # resumed
    assert again["repos"][0]["green_ids"] == repo["green_ids"]
