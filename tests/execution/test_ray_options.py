"""Choosing the backend (flags and curator.toml), Ray missing, and `curator run --resume`.

No Ray cluster here: these run whether or not Ray is installed.
"""

from __future__ import annotations

import json
import sys

import pytest
from click.testing import CliRunner
from requirements_support import import_or_fail

from curator.cli import main
from curator.config import ExecutionConfig
from curator.errors import CuratorError
from curator.execution.engine import resolve_backend
from curator.workspace import discover

HINT = 'pip install ".[ray]"'


def test_resolve_backend():
    assert resolve_backend(None) == ("local", None)
    assert resolve_backend(ExecutionConfig(), address="10.0.0.1:6379") == (
        "ray", "10.0.0.1:6379")
    conf = ExecutionConfig(backend="ray", address="auto")
    assert resolve_backend(conf) == ("ray", "auto")
    assert resolve_backend(conf, "local") == ("local", None)
    assert resolve_backend(conf, address="h:1") == ("ray", "h:1")
    assert resolve_backend(ExecutionConfig(address="auto")) == ("local", None)
    with pytest.raises(CuratorError, match="unknown execution backend"):
        resolve_backend(None, "slurm")


@pytest.fixture
def no_ray(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)   # `import ray` raises ImportError


def _invoke(ws, *args):
    return CliRunner().invoke(main, ["--workspace", str(ws.root), *args])


def _assert_hint(result):
    assert result.exit_code == 1, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and HINT in lines[0], lines


@pytest.mark.parametrize("args", [["--backend", "ray"], ["--address", "127.0.0.1:1"]])
def test_run_without_ray_says_how_to_install_it(workspace, no_ray, args):
    _assert_hint(_invoke(workspace, "run", "--all", *args))


def test_backend_from_workspace_config(workspace, store, no_ray):
    (workspace.root / "curator.toml").write_text('[execution]\nbackend = "ray"\n')
    assert discover(str(workspace.root)).config.execution.backend == "ray"
    _assert_hint(_invoke(workspace, "run", "--all"))
    from samples_support import add_samples

    problem = store.one("SELECT id, solution FROM problems ORDER BY id LIMIT 1")
    add_samples(store, workspace.root, [{"task_id": problem["id"],
                                        "solution": problem["solution"]}])
    _assert_hint(_invoke(workspace, "samples", "eval"))


def test_run_resume_tops_up_to_repeat(workspace, store):
    ids = [r["id"] for r in store.query("SELECT id FROM problems ORDER BY id LIMIT 3")]
    first = _invoke(workspace, "run", ids[0], ids[1], "--workers", "1", "--json")
    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout)["summary"]["skipped"] == 0
    # an interrupted --repeat 2 run of three problems, finished with --resume
    second = _invoke(workspace, "run", *ids, "--repeat", "2", "--resume", "--workers", "1",
                     "--json")
    assert second.exit_code == 0, second.output
    report = json.loads(second.stdout)
    assert report["summary"]["skipped"] == 2
    assert sorted(r["problem_id"] for r in report["runs"]) == sorted([ids[0], ids[1], ids[2],
                                                                      ids[2]])
    assert "cluster" not in report["summary"]
    third = _invoke(workspace, "run", *ids, "--repeat", "2", "--resume", "--json")
    assert third.exit_code == 0, third.output
    assert json.loads(third.stdout)["summary"]["skipped"] == 6
    assert json.loads(third.stdout)["runs"] == []
    counts = store.query("SELECT problem_id, COUNT(*) AS n FROM runs GROUP BY problem_id")
    assert {r["problem_id"]: r["n"] for r in counts} == {pid: 2 for pid in ids}


def test_unreachable_cluster_fails_fast_in_one_line(workspace):
    import_or_fail("ray")
    import socket

    with socket.socket() as sock:   # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = _invoke(workspace, "run", "--all", "--address", f"127.0.0.1:{port}")
    assert result.exit_code == 1, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and f"cannot connect to Ray at 127.0.0.1:{port}" in lines[0]
