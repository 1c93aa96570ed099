"""Workspace discovery and who is acting."""

from __future__ import annotations

import pytest

from curator.errors import WorkspaceError
from curator.workspace import actor, discover, init


def test_explicit_workspace_wins(tmp_path):
    a, b = init(tmp_path / "a"), init(tmp_path / "b")
    ws = discover(workspace=a.root, cwd=b.root / "problems",
                  env={"CURATOR_WORKSPACE": str(b.root)})
    assert ws.root == a.root and ws.db_path == a.root / "db" / "curator.sqlite"


def test_environment_variable_beats_current_directory(tmp_path):
    a, b = init(tmp_path / "a"), init(tmp_path / "b")
    assert discover(cwd=b.root, env={"CURATOR_WORKSPACE": str(a.root)}).root == a.root


def test_nearest_ancestor_with_problems_folder(tmp_path):
    outer = init(tmp_path / "outer")
    inner = init(outer.root / "problems" / "nested")
    deep = inner.root / "db" / "x" / "y"
    deep.mkdir(parents=True)
    assert discover(cwd=deep, env={}).root == inner.root
    assert discover(cwd=outer.root / "db", env={}).root == outer.root


def test_db_option_overrides_database_path(tmp_path):
    ws = init(tmp_path / "w")
    assert discover(workspace=ws.root, db=tmp_path / "other.sqlite").db_path == \
        tmp_path / "other.sqlite"


def test_no_workspace_is_a_clear_error(tmp_path):
    with pytest.raises(WorkspaceError, match="no workspace"):
        discover(cwd=tmp_path, env={})
    with pytest.raises(WorkspaceError, match="does not exist"):
        discover(workspace=tmp_path / "missing")


def test_actor_order():
    assert actor("cli", env={"CURATOR_USER": "env"}) == "cli"
    assert actor(None, env={"CURATOR_USER": "env"}) == "env"
    assert actor(None, env={})  # the login name


def test_bad_config_file_names_the_file(tmp_path):
    ws = init(tmp_path / "w")
    (ws.root / "curator.toml").write_text("[keymap\n")
    with pytest.raises(WorkspaceError, match="curator.toml"):
        discover(workspace=ws.root)
