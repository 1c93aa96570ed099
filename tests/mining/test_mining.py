"""Mining: candidates, their tests as node ids, pinning, idempotence, bad input, safety."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import threading

import pytest
from mining_support import BOXES, commit, git, make_dl_repo, mining_workspace, write

from curator import workspace as workspace_mod
from curator.errors import Cancelled, CuratorError
from curator.mining.mine import mine
from curator.repos import licenses
from curator.repos.gitcache import cache_for
from curator.store import Store
from curator.store import candidates as candidate_store


@pytest.fixture(scope="module")
def dl_repo(tmp_path_factory):
    return make_dl_repo(tmp_path_factory.mktemp("upstream") / "dlrepo")


@pytest.fixture
def ws(tmp_path):
    return mining_workspace(tmp_path / "ws")


@pytest.fixture
def store(ws):
    with Store(ws.db_path, "miner") as s:
        yield s


def by_name(store, status="all"):
    return {r["qualname"]: r for r in candidate_store.list_rows(store, status=status)}


def test_mine_finds_tested_candidates_with_node_ids(ws, store, dl_repo):
    report = mine(store, ws, str(dl_repo["path"]), rev=dl_repo["first"])
    assert report.commit == dl_repo["first"]
    rows = by_name(store)
    # FocalLoss(...) in the tests makes its constructor a candidate too
    assert set(rows) == {"box_area", "xyxy_to_cxcywh", "FocalLoss.forward",
                         "FocalLoss.__init__", "accuracy"}
    assert rows["box_area"]["tests"] == [
        "tests/test_boxes.py::test_area", "tests/test_boxes.py::test_area_empty",
        "tests/test_boxes.py::test_area_negative_is_zero"]
    # through a helper function of the test module
    assert rows["xyxy_to_cxcywh"]["tests"] == ["tests/test_boxes.py::test_convert_via_helper"]
    # through an instance made in setup_method, and through FocalLoss(...)(...)
    assert rows["FocalLoss.forward"]["tests"] == [
        "tests/test_boxes.py::TestFocal::test_gamma_zero_is_bce",
        "tests/test_boxes.py::TestFocal::test_positive",
        "tests/test_boxes.py::TestFocal::test_zero_when_confident"]
    # `import pkg.metrics as M` inside a unittest.TestCase
    assert rows["accuracy"]["tests"] == ["tests/test_metrics.py::MetricsCase::test_accuracy",
                                         "tests/test_metrics.py::MetricsCase::test_all_right"]
    for row in rows.values():
        assert row["commit_sha"] == dl_repo["first"] and row["license"] == "MIT"
        assert 0 <= row["score"] <= 1 and row["status"] == "new"
    focal = rows["FocalLoss.forward"]
    assert focal["kind"] == "method" and focal["path"] == "pkg/boxes.py"
    start = BOXES.splitlines().index("    def forward(self, logits, targets):") + 1
    assert (focal["line_start"], focal["line_end"]) == (start, start + 4)
    assert focal["source"].startswith("def forward(self, logits, targets):")
    details = {e["detail"] for e in focal["evidence"]}
    assert "torch.nn.functional.binary_cross_entropy" in details
    assert any(e["kind"] == "base" for e in focal["evidence"])
    assert focal["score"] > rows["accuracy"]["score"] > 0
    assert rows["accuracy"]["framework"] == "numpy" and focal["framework"] == "pytorch"
    # the duplicate in copy_of_boxes.py (same normalised AST) is not a second candidate
    assert rows["xyxy_to_cxcywh"]["path"] == "pkg/boxes.py"
    stages = {s["slug"] for s in focal["suggestions"] if s["axis"] == "stage"}
    assert "model" in stages


def test_summary_counts_every_skipped_file_with_its_reason(ws, store, dl_repo):
    report = mine(store, ws, str(dl_repo["path"]), rev=dl_repo["first"])
    data = report.to_json()
    assert data["files"] == 14 and data["parsed"] == 9
    assert data["skipped"] == {"excluded": 1, "not_utf8": 1, "symlink": 1, "syntax_error": 1,
                               "too_large": 1}
    reasons = {row["path"]: row["reason"] for row in data["skipped_files"]}
    assert reasons == {"pkg/escape.py": "symlink", "pkg/latin1.py": "not_utf8",
                       "pkg/legacy.py": "syntax_error", "pkg/generated.py": "too_large"}
    assert data["failed"] == 4 and data["ok"] is False
    assert data["candidates"] == 5 and data["commit"] == dl_repo["first"]
    assert data["license"] == "MIT" and data["test_modules"] == 2 and data["tests"] == 9


def test_all_candidates_keeps_untested_functions_but_not_stubs_or_duplicates(ws, store,
                                                                               dl_repo):
    mine(store, ws, str(dl_repo["path"]), rev=dl_repo["first"], with_tests=False)
    rows = candidate_store.list_rows(store, status="all")
    names = [r["qualname"] for r in rows]
    assert "gelu_approx" in names and "_stub" not in names
    # a constructor is a candidate only when some test builds its class
    assert "FocalLoss.__init__" in names and by_name(store)["FocalLoss.__init__"]["tests"]
    assert names.count("xyxy_to_cxcywh") == 1
    assert by_name(store)["gelu_approx"]["tests"] == []


def test_remining_the_same_commit_is_a_noop(ws, store, dl_repo):
    first = mine(store, ws, str(dl_repo["path"]), rev=dl_repo["first"])
    before = store.one("SELECT COUNT(*) AS n FROM audit")["n"]
    rows_before = store.query("SELECT * FROM candidates ORDER BY id")
    again = mine(store, ws, str(dl_repo["path"]), rev="v1")  # same commit, by its tag
    assert again.already_mined and again.new == 0 and again.commit == first.commit
    assert again.candidates == first.candidates
    assert store.query("SELECT * FROM candidates ORDER BY id") == rows_before
    assert store.one("SELECT COUNT(*) AS n FROM audit")["n"] == before


def test_newer_commit_adds_new_marks_vanished_and_repins(ws, store, dl_repo):
    mine(store, ws, str(dl_repo["path"]), rev=dl_repo["first"])
    old = by_name(store)
    report = mine(store, ws, str(dl_repo["path"]))  # default branch = second commit
    assert report.commit == dl_repo["second"]
    assert (report.new, report.vanished) == (1, 1)
    rows = by_name(store)
    assert rows["cxcywh_to_xyxy"]["tests"] == ["tests/test_convert.py::test_back"]
    assert rows["xyxy_to_cxcywh"]["status"] == "vanished"
    assert rows["xyxy_to_cxcywh"]["vanished_commit"] == dl_repo["second"]
    assert rows["xyxy_to_cxcywh"]["commit_sha"] == dl_repo["first"]
    assert rows["box_area"]["id"] == old["box_area"]["id"]
    assert rows["box_area"]["commit_sha"] == dl_repo["second"]
    qualnames = [r["qualname"] for r in candidate_store.list_rows(store, status="all")]
    assert len(qualnames) == len(set(qualnames)) == 6
    # mining the older commit again changes nothing that is already known
    again = mine(store, ws, str(dl_repo["path"]), rev=dl_repo["first"])
    assert again.already_mined
    assert by_name(store)["box_area"]["commit_sha"] == dl_repo["second"]


def test_reviewed_candidates_stay_pinned(ws, store, dl_repo):
    mine(store, ws, str(dl_repo["path"]), rev=dl_repo["first"])
    cid = by_name(store)["accuracy"]["id"]
    candidate_store.reject(store, cid, "too trivial")
    mine(store, ws, str(dl_repo["path"]), rev=dl_repo["second"])
    row = candidate_store.get(store, cid)
    assert row["status"] == "rejected" and row["commit_sha"] == dl_repo["first"]


def test_older_commit_after_newer_adds_without_vanishing(ws, store, dl_repo):
    mine(store, ws, str(dl_repo["path"]), rev=dl_repo["second"])
    report = mine(store, ws, str(dl_repo["path"]), rev=dl_repo["first"])
    assert report.new == 1 and report.vanished == 0  # xyxy_to_cxcywh, pinned to first
    rows = by_name(store)
    assert rows["xyxy_to_cxcywh"]["commit_sha"] == dl_repo["first"]
    assert rows["cxcywh_to_xyxy"]["status"] == "new"
    assert rows["box_area"]["commit_sha"] == dl_repo["second"]


def test_cache_is_a_bare_clone_in_db_repos_and_source_can_be_bare(ws, store, dl_repo,
                                                                  tmp_path):
    bare = tmp_path / "mirror.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(dl_repo["path"]), str(bare)],
                   check=True, capture_output=True)
    report = mine(store, ws, str(bare))
    assert report.commit == dl_repo["second"] and report.candidates == 5
    cache = cache_for(ws.repos_dir, str(bare))
    assert cache.path.parent == ws.repos_dir and (cache.path / "HEAD").is_file()
    assert not (cache.path / "pkg").exists()  # bare: no work tree


def test_progress_reports_files_per_second_and_cancel_writes_nothing(ws, store, dl_repo):
    calls = []
    mine(store, ws, str(dl_repo["path"]), rev=dl_repo["first"],
         progress=lambda done, total, label: calls.append((done, total, label)))
    phases = [label.split(" ")[0] for _, _, label in calls]
    assert list(dict.fromkeys(phases)) == ["fetch", "parse", "link", "score"]
    parsed = [c for c in calls if c[2].startswith("parse")]
    assert parsed[-1][0] == parsed[-1][1] == 14 and parsed[-1][2].endswith("files/s")
    linked = [c for c in calls if c[2] == "link tests"]
    assert linked[-1][0] == linked[-1][1] == 2  # both test modules
    other = workspace_mod.init(ws.root.parent / "ws2")
    with Store(other.db_path, "miner") as fresh:
        with pytest.raises(Cancelled):
            mine(fresh, other, str(dl_repo["path"]), rev=dl_repo["first"],
                 cancelled=lambda: True)
        assert fresh.one("SELECT COUNT(*) AS n FROM candidates")["n"] == 0
        assert fresh.one("SELECT COUNT(*) AS n FROM mined_commits")["n"] == 0


def test_repository_without_tests_is_reported(ws, store, tmp_path):
    repo = tmp_path / "notests"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, {"m.py": "import torch\n\ndef f(x):\n    return torch.relu(x)\n"})
    commit(repo, "one")
    report = mine(store, ws, str(repo))
    assert report.ok and report.candidates == 0 and report.test_modules == 0
    assert any("no test modules" in w for w in report.warnings)
    assert mine(store, ws, str(repo), with_tests=False).candidates == 1


@pytest.mark.parametrize("source,expected", [
    ("{tmp}/does-not-exist", "no such folder"),
    ("{tmp}", "not a git repository"),
    ("file://{tmp}/missing.git", "cannot clone"),
])
def test_bad_sources_fail_with_one_line(ws, store, tmp_path, source, expected):
    with pytest.raises(CuratorError) as info:
        mine(store, ws, source.format(tmp=tmp_path))
    message = str(info.value)
    assert expected in message and "\n" not in message
    assert store.one("SELECT COUNT(*) AS n FROM repos")["n"] == 0


def test_unknown_rev_fails_with_one_line(ws, store, dl_repo):
    with pytest.raises(CuratorError) as info:
        mine(store, ws, str(dl_repo["path"]), rev="no-such-branch")
    assert "no-such-branch" in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(CuratorError, match="not found"):
        mine(store, ws, str(dl_repo["path"]), rev="0" * 40)


class _AuthRequired(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="private"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.mark.timeout(60)
def test_url_needing_credentials_fails_fast(ws, store):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _AuthRequired)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/private/repo.git"
        with pytest.raises(CuratorError) as info:
            mine(store, ws, url)
    finally:
        server.shutdown()
    message = str(info.value)
    assert message.startswith(f"cannot clone {url}") and "\n" not in message


def test_no_hook_filter_or_submodule_runs(ws, store, tmp_path, monkeypatch):
    marker = tmp_path / "ran"
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for name in ("post-checkout", "post-merge", "reference-transaction", "post-index-change"):
        hook = hooks / name
        hook.write_text(f"#!/bin/sh\necho {name} >> {marker}\n")
        hook.chmod(0o755)
    sub = tmp_path / "sub"
    sub.mkdir()
    git(sub, "init", "-q", "-b", "main")
    write(sub, {"inner.py": "x = 1\n"})
    commit(sub, "sub")
    repo = tmp_path / "hostile"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, {".gitattributes": "*.py filter=evil\n",
                 "m.py": "import torch\n\ndef f(x):\n    return torch.relu(x)\n",
                 "tests/test_m.py": "from m import f\n\ndef test_f():\n    f(1)\n"})
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "sub")
    sha = commit(repo, "hostile")
    # A global git config as hostile as a person's could be: hooks, a smudge filter,
    # recursive submodules. None of it may run while mining or checking out.
    config = tmp_path / "gitconfig"
    config.write_text(f"[core]\n\thooksPath = {hooks}\n[filter \"evil\"]\n"
                      f"\tsmudge = sh -c 'echo smudge >> {marker}; cat'\n"
                      f"\tclean = cat\n\trequired = true\n"
                      f"[submodule]\n\trecurse = true\n[protocol \"file\"]\n\tallow = always\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    report = mine(store, ws, str(repo))
    assert report.candidates == 1
    worktree = cache_for(ws.repos_dir, str(repo)).worktree(sha)
    assert (worktree / "m.py").read_text().startswith("import torch")
    assert not marker.exists(), marker.read_text()
    assert not any((worktree / "sub").iterdir())  # submodule never initialised


def test_licence_detection():
    apache = "Apache License\nVersion 2.0, January 2004\nhttp://www.apache.org/licenses/"
    bsd3 = ("Redistribution and use in source and binary forms, with or without\n"
            "modification ... Neither the name of the copyright holder nor ...")
    gpl3 = "GNU GENERAL PUBLIC LICENSE\nVersion 3, 29 June 2007"
    assert licenses.detect({"LICENSE.txt": apache.encode()}) == "Apache-2.0"
    assert licenses.detect({"COPYING": gpl3.encode()}) == "GPL-3.0"
    assert licenses.detect({"LICENSE.md": bsd3.encode()}) == "BSD-3-Clause"
    assert licenses.detect({"LICENSE": b"SPDX-License-Identifier: MPL-2.0\n"}) == "MPL-2.0"
    assert licenses.detect({"pyproject.toml": b'[project]\nlicense = {text = "MIT"}\n'}) == "MIT"
    assert licenses.detect({"LICENSE": b"All rights reserved."}) == "unknown"
    assert licenses.detect({}) == "unknown"


def test_mine_cli_json_summary_is_one_line_and_exit_status(ws, dl_repo, tmp_path):
    from click.testing import CliRunner

    from curator.cli import main

    runner = CliRunner()
    result = runner.invoke(main, ["--workspace", str(ws.root), "mine", str(dl_repo["path"]),
                                  "--rev", dl_repo["first"], "--json"])
    assert result.exit_code == 1  # some files could not be parsed
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    for key in ("files", "parsed", "skipped", "candidates", "commit"):
        assert key in summary
    assert summary["commit"] == dl_repo["first"] and summary["candidates"] == 5
    clean = tmp_path / "clean"
    clean.mkdir()
    git(clean, "init", "-q", "-b", "main")
    write(clean, {"m.py": "import numpy as np\n\ndef f(x):\n    return np.abs(x)\n",
                  "test_m.py": "from m import f\n\ndef test_f():\n    assert f(-1) == 1\n"})
    commit(clean, "one")
    ok = runner.invoke(main, ["--workspace", str(ws.root), "mine", str(clean), "--json"])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["candidates"] == 1
    bad = runner.invoke(main, ["--workspace", str(ws.root), "mine", str(clean),
                               "--rev", "nope"])
    assert bad.exit_code == 1
    assert bad.stderr.strip().count("\n") == 0 and bad.stderr.startswith("error: ")
    assert os.path.isdir(ws.repos_dir)


RESOLUTION_FILES = {
    "src/lib/__init__.py": "from .core import *\nfrom .core import shift as moved\n",
    "src/lib/core.py": '''import torch

__all__ = ["scale", "Base", "Child", "Layer"]


def scale(x, k):
    return torch.mul(x, k)


def shift(x, k):
    return torch.add(x, k)


def clip(x):
    return torch.clamp(x, 0, 1)


def fixture_made(x):
    return torch.abs(x)


class Base:
    def step(self, x):
        return torch.neg(x)


class Child(Base):
    def other(self):
        return torch.zeros(1)


class Layer(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)

    def reset(self):
        return torch.ones(1)
''',
    "tests/test_styles.py": '''import pytest
import src.lib.core
from src.lib import core as C
from src.lib import *


@pytest.fixture
def made():
    from src.lib.core import fixture_made
    return fixture_made(1)


def test_star():
    scale(1, 2)


def test_module_alias():
    C.shift(1, 2)


def test_reexport_under_another_name():
    from src.lib import moved
    moved(1, 2)


def test_full_chain():
    src.lib.core.clip(1)


def test_fixture(made):
    assert made


def test_local_import():
    from src.lib.core import Layer as L
    net = L().eval()
    net(1)


@pytest.mark.parametrize("fn", [C.clip])
def test_reference_in_parametrize(fn):
    fn(1)


def test_inherited():
    Child().step(1)


class BaseTests:
    def test_reset(self):
        Layer().reset()


class TestInheritsTests(BaseTests):
    pass
''',
}


def test_test_discovery_handles_import_styles_fixtures_and_inheritance(ws, store, tmp_path):
    repo = tmp_path / "styles"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, RESOLUTION_FILES)
    commit(repo, "styles")
    mine(store, ws, str(repo))
    tests = {name: row["tests"] for name, row in by_name(store).items()}
    node = "tests/test_styles.py::"
    assert tests == {
        "scale": [node + "test_star"],
        "shift": [node + "test_module_alias", node + "test_reexport_under_another_name"],
        "clip": [node + "test_full_chain", node + "test_reference_in_parametrize"],
        "fixture_made": [node + "test_fixture"],
        "Layer.forward": [node + "test_local_import"],
        "Base.step": [node + "test_inherited"],
        "Layer.reset": [node + "TestInheritsTests::test_reset"],
    }


def test_released_function_info_is_rebuilt_from_the_module_text():
    from curator.pysource.modules import parse_module

    module = parse_module("pkg/boxes.py", BOXES)
    infos = {info.qualname: info for info in module.candidates()}
    kept = infos["FocalLoss.forward"]
    kept.prebuild()
    for info in infos.values():
        info.release()
    module.release()
    assert module.tree is None
    late = infos["box_area"]  # never prebuilt: parsed again on demand
    assert late.signature == "def box_area(boxes: torch.Tensor) -> torch.Tensor:"
    assert late.source.startswith("def box_area(") and "torch" in late.refs.names
    assert kept.class_header == "class FocalLoss(nn.Module):"
    assert kept.docstring == "Mean focal loss of logits against 0/1 targets."


@pytest.mark.parametrize("url,name", [
    ("git@github.com:owner/name.git", "owner/name"),
    ("https://github.com/owner/name.git", "owner/name"),
    ("ssh://git@host:22/owner/name", "owner/name"),
    ("/srv/mirrors/name.git", "name"),
])
def test_repo_names_and_cache_keys(url, name):
    from curator.repos.gitcache import cache_key, repo_name

    assert repo_name(url) == name
    key = cache_key(url)
    assert key.startswith(name.replace("/", "-")) and key != cache_key(url + "-other")
