"""A mined repository with one accepted repo-backed problem, for the repo-run tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from mining_support import commit, git, write

from curator import workspace as workspace_mod
from curator.cli import main
from curator.execution import sandbox
from curator.store import Store
from curator.store import candidates as candidate_store

STRONG_OK, STRONG_WHY = sandbox.probe()
# A machine without a working bwrap fails these tests unless CURATOR_ALLOW_SKIP=1.
needs_strong = pytest.mark.requires_bwrap


def make_repo(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    write(root, files)
    commit(root, "first")
    return root


def mine_and_accept(tmp_path: Path, upstream: Path, qualname: str, problem_id: str,
                    isolation: str = "strong", exclude: list[str] | None = None):
    """A workspace (runs in `isolation`) with upstream mined and `qualname` accepted.

    Weak isolation also says `allow_weak = true`: mined code is untrusted, and without
    that consent its runs are refused."""
    ws = workspace_mod.init(tmp_path / "ws")
    consent = "allow_weak = true\n" if isolation == "weak" else ""
    (ws.root / "curator.toml").write_text(f'[execution]\nisolation = "{isolation}"\n{consent}',
                                          encoding="utf-8")
    runner = CliRunner()
    base = ["--workspace", str(ws.root)]
    mined = runner.invoke(main, [*base, "mine", str(upstream), "--json"])
    assert mined.exit_code == 0, mined.output
    with Store(ws.db_path, "tester") as store:
        rows = [r for r in candidate_store.list_rows(store) if r["qualname"] == qualname]
    args = [*base, "candidates", "accept", str(rows[0]["id"]), "--id", problem_id]
    for item in exclude or ():
        args += ["--exclude", item]
    if exclude:
        args += ["--exclude-reason", "needs the network"]
    accepted = runner.invoke(main, args)
    assert accepted.exit_code == 0, accepted.output
    return workspace_mod.discover(ws.root), base


def symlinked_venv(folder: Path) -> Path:
    """A plain venv (symlinks to the same base python as the curator's own) that sees the
    curator's site-packages through a .pth file, so it has pytest and numpy."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--symlinks", str(folder)],
                   check=True, capture_output=True)
    python = folder / "bin" / "python"
    assert python.is_symlink()
    own_site = [p for p in sys.path if p.endswith("site-packages")][0]
    (site,) = folder.glob("lib/python*/site-packages")
    (site / "curator_site.pth").write_text(own_site + "\n", encoding="utf-8")
    return python


def run_json(base: list[str], *ids: str) -> tuple[int, dict]:
    import json

    out = CliRunner().invoke(main, [*base, "run", *ids, "--json"])
    try:
        return out.exit_code, json.loads(out.stdout)
    except ValueError:
        raise AssertionError(out.output) from None
