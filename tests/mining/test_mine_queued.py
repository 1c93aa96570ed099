"""`curator mine --queued` mines what `discover --mine` queued: the success path, with real
git repositories served from tmp_path over file:// (bare, as a hosting site keeps them)."""

from __future__ import annotations

import json
import subprocess

from click.testing import CliRunner
from mining_support import git, make_dl_repo, mining_workspace

from curator.cli import main
from curator.repos import discover as discovery
from curator.store import Store


def invoke(ws, *args):
    return CliRunner().invoke(main, ["--workspace", str(ws.root), *args])


def bare_copy(source, target) -> str:
    target.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(source), str(target)], check=True)
    return git(target, "rev-parse", "HEAD").strip()


def test_queued_repositories_are_mined_then_leave_the_queue(tmp_path):
    ws = mining_workspace(tmp_path / "ws")
    upstream = make_dl_repo(tmp_path / "upstream")
    web = tmp_path / "web"
    heads = {name: bare_copy(upstream["path"], web / name)
             for name in ("org0/net0.git", "org1/net1.git")}
    with Store(ws.db_path, "tester") as store:
        discovery.queue_for_mining(store, ["org0/net0.git", "org1/net1.git"],
                                   web_url=web.as_uri())
        queued = [r["url"] for r in discovery.queued(store)]
    assert queued == [f"{web.as_uri()}/org0/net0.git", f"{web.as_uri()}/org1/net1.git"]

    result = invoke(ws, "mine", "--queued", "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["mined"]
    assert [r["url"] for r in rows] == queued
    assert all("error" not in r for r in rows)
    assert [r["commit"] for r in rows] == [heads["org0/net0.git"], heads["org1/net1.git"]]
    assert all(r["candidates"] >= 3 for r in rows)
    with Store(ws.db_path, "tester") as store:
        by_repo = store.query("SELECT r.url, COUNT(c.id) AS n, MIN(c.commit_sha) AS sha "
                              "FROM candidates c JOIN repos r ON r.id = c.repo_id "
                              "GROUP BY r.url ORDER BY r.url")
        assert discovery.queued(store) == []
    assert [(r["url"], r["n"]) for r in by_repo] == [(u, rows[i]["candidates"])
                                                     for i, u in enumerate(queued)]
    assert {r["sha"] for r in by_repo} == set(heads.values())
    # the queue is empty now: nothing left to mine
    again = invoke(ws, "mine", "--queued")
    assert again.exit_code == 0 and again.output.strip().startswith("nothing queued")
