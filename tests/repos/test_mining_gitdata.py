"""Real git data: missing objects, and repositories named portably (OWNER/NAME, URL)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from mining_support import commit, git, mining_workspace, write

from curator.cli import main
from curator.errors import CuratorError
from curator.mining import promote
from curator.mining.mine import mine
from curator.problem_files import read_problem
from curator.repos import identity
from curator.store import Store
from curator.store import candidates as candidate_store

FILES = {
    "pkg/__init__.py": "",
    "pkg/kept.py": "def kept(x):\n    return x + 1\n",
    "pkg/gone.py": "def gone(x):\n    return x * 2\n",
    "tests/test_pkg.py": ("from pkg.kept import kept\nfrom pkg.gone import gone\n\n\n"
                          "def test_kept():\n    assert kept(1) == 2\n\n\n"
                          "def test_gone():\n    assert gone(1) == 2\n"),
}


@pytest.fixture
def ws(tmp_path):
    return mining_workspace(tmp_path / "ws")


def make_repo(root, remote=None):
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, FILES)
    sha = commit(root, "first")
    if remote:
        git(root, "remote", "add", "origin", remote)
    return sha


def test_a_missing_blob_is_skipped_with_its_reason_not_a_crash(tmp_path, ws):
    repo = tmp_path / "damaged"
    make_repo(repo)
    blob = git(repo, "rev-parse", "HEAD:pkg/gone.py")
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    with Store(ws.db_path, "miner") as store:
        report = mine(store, ws, str(repo))
        names = {r["qualname"] for r in candidate_store.list_rows(store)}
    assert report.skipped == {"missing_object": 1} and not report.ok
    assert report.skipped_files == [{"path": "pkg/gone.py", "reason": "missing_object",
                                     "detail": f"object {blob} is not in the repository"}]
    assert names == {"kept"}  # everything readable is still mined
    result = CliRunner().invoke(main, ["--workspace", str(ws.root), "mine", str(repo),
                                       "--json", "--all-candidates"])
    assert result.exit_code == 1, result.output
    assert json.loads(result.output)["skipped"] == {"missing_object": 1}


def test_local_clone_is_named_by_its_remote_url_and_problems_carry_the_url(tmp_path, ws):
    repo = tmp_path / "checkout"
    make_repo(repo, remote="https://github.com/acme/widgets.git")
    with Store(ws.db_path, "miner") as store:
        report = mine(store, ws, str(repo))
        assert (report.repo, report.name) == ("https://github.com/acme/widgets", "acme/widgets")
        assert not report.warnings
        row = identity.find(store, "acme/widgets")
        assert row["url"] == "https://github.com/acme/widgets"
        assert row["source"] == str(repo)  # cloned from the local folder, no network
        assert identity.find(store, str(repo))["id"] == row["id"]   # also found by the folder
        kept = candidate_store.list_rows(store)[0]
        result = promote.accept(store, ws, kept["id"])
    problem, _ = read_problem(ws.problems_dir / result["problem_id"])
    assert problem.source["repo"] == "https://github.com/acme/widgets"
    assert str(tmp_path) not in (ws.problems_dir / result["problem_id"] /
                                 "problem.toml").read_text()


def test_name_option_names_a_folder_without_remote(tmp_path, ws):
    repo = tmp_path / "repo"   # the folder name says nothing
    make_repo(repo)
    result = CliRunner().invoke(main, ["--workspace", str(ws.root), "mine", str(repo),
                                       "--name", "kornia/kornia", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert (data["repo"], data["name"], data["warnings"]) == ("kornia/kornia",
                                                              "kornia/kornia", [])
    with Store(ws.db_path, "miner") as store:
        row = identity.find(store, "kornia/kornia")
        assert row["source"] == str(repo)
        accepted = promote.accept(store, ws, candidate_store.list_rows(store)[0]["id"])
    problem, _ = read_problem(ws.problems_dir / accepted["problem_id"])
    assert problem.source["repo"] == "kornia/kornia"
    # the same folder mined again without --name finds the same record by its source
    with Store(ws.db_path, "miner") as store:
        again = mine(store, ws, str(repo), name="kornia/kornia")
        assert again.already_mined and again.name == "kornia/kornia"


def test_without_remote_or_name_the_folder_name_is_used_with_a_warning(tmp_path, ws):
    repo = tmp_path / "plain"
    make_repo(repo)
    with Store(ws.db_path, "miner") as store:
        report = mine(store, ws, str(repo))
    assert report.name == "plain"
    assert report.warnings == [f"{repo} has no remote URL: it is named 'plain'; "
                               "give --name OWNER/NAME"]


@pytest.mark.parametrize("name", ["", "a/b/c", "bad name", "../x"])
def test_bad_names_fail_with_one_line(tmp_path, name):
    with pytest.raises(CuratorError, match="OWNER/NAME"):
        identity.identify(str(tmp_path), name)


def test_register_source_is_a_core_function_of_source_and_name(tmp_path, ws):
    repo = tmp_path / "clone"
    make_repo(repo, remote="git@github.com:acme/gadgets.git")
    with Store(ws.db_path, "miner") as store:
        row = identity.register_source(store, ws.repos_dir, str(repo))
        assert (row["url"], row["name"], row["source"]) == (
            "git@github.com:acme/gadgets", "acme/gadgets", str(repo))
        renamed = identity.register_source(store, ws.repos_dir, str(repo), "acme/renamed")
        assert renamed["id"] == row["id"] and renamed["name"] == "acme/renamed"
