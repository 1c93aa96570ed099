"""Re-mining after the upstream licence changed: the repository, the re-pinned
candidates and the mined commit all carry the new licence, and the change is audited."""

from __future__ import annotations

from mining_support import commit, make_dl_repo, mining_workspace, write

from curator.mining.mine import mine
from curator.store import Store, mined_commits
from curator.store import candidates as candidate_store

APACHE = "                                 Apache License\n" \
         "                           Version 2.0, January 2004\n"


def test_a_new_licence_is_recorded_and_audited(tmp_path):
    repo = make_dl_repo(tmp_path / "upstream")
    write(repo["path"], {"LICENSE": APACHE})
    third = commit(repo["path"], "relicense")
    ws = mining_workspace(tmp_path / "ws")
    with Store(ws.db_path, "miner") as store:
        mine(store, ws, str(repo["path"]), rev=repo["second"])
        (row,) = store.query("SELECT * FROM repos")
        assert row["license"] == "MIT"
        report = mine(store, ws, str(repo["path"]), rev=third)
        assert report.license == "Apache-2.0" and report.updated > 0
        (row,) = store.query("SELECT * FROM repos")
        assert row["license"] == "Apache-2.0"
        assert mined_commits.latest(store, row["id"]) == third
        changes = store.query("SELECT before, after FROM audit WHERE entity = 'repo' AND "
                              "action = 'update' AND field = 'license' ORDER BY id")
        assert [(c["before"], c["after"]) for c in changes] == [
            ("unknown", "MIT"), ("MIT", "Apache-2.0")]   # registered, then each change
        rows = candidate_store.list_rows(store, status="all")
        assert {r["license"] for r in rows if r["commit_sha"] == third} == {"Apache-2.0"}
        licences = {r["commit_sha"]: r["license"] for r in store.query(
            "SELECT commit_sha, license FROM mined_commits")}
        assert licences == {repo["second"]: "MIT", third: "Apache-2.0"}
