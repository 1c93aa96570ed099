"""`curator discover` against GitHub's API served on 127.0.0.1: paging, has_tests from the
contents and tree endpoints, a 500 and a 429 retried, the rate limit respected and
reported, GITHUB_TOKEN sent, `--mine` queueing for `curator mine --queued`."""

from __future__ import annotations

import json

from click.testing import CliRunner
from github_support import GitHubServer, fake_repos

from curator.cli import main
from curator.repos import discover as discovery
from curator.store import Store


def invoke(ws, *args):
    return CliRunner().invoke(main, ["--workspace", str(ws.root), *args])


def test_pages_sorts_and_reports_tests_licence_and_rate_limit(empty_workspace, monkeypatch):
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    with GitHubServer(fake_repos(130)) as gh:
        gh.layout = {"org1/net1": "deep", "org2/net2": "none"}
        gh.script = [(500, {}), (429, {"Retry-After": "0"})]
        result = invoke(empty_workspace, "discover", "--topic", "pytorch", "--topic",
                        "deep-learning", "--min-stars", "500", "--language", "Python",
                        "--limit", "120", "--api-url", gh.url, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert list(data) == ["repositories", "rate_limit"]
    repos = data["repositories"]
    assert len(repos) == 120
    assert [r["stars"] for r in repos] == sorted((r["stars"] for r in repos), reverse=True)
    assert repos[0] == {"full_name": "org0/net0", "stars": 10000, "license": "MIT",
                        "pushed_at": "2026-11-01T10:00:00Z",
                        "topics": ["pytorch", "deep-learning"], "has_tests": True}
    assert repos[1]["has_tests"] is True and repos[1]["license"] == "Apache-2.0"  # deep
    assert repos[2]["has_tests"] is False and repos[2]["license"] is None          # none
    searches = [r for r in gh.requests if r["path"] == "/search/repositories"]
    # the 500 and the 429 were retried, then two pages of 100
    assert [s["query"].get("page") for s in searches] == ["1", "1", "1", "2"]
    assert searches[0]["query"]["q"] == \
        "topic:pytorch topic:deep-learning stars:>=500 language:Python"
    assert searches[0]["query"]["sort"] == "stars" and searches[0]["auth"] is None
    trees = [r for r in gh.requests if "/git/trees/" in r["path"]]
    assert {t["path"].split("/")[3] for t in trees} >= {"net1", "net2"}
    assert data["rate_limit"]["remaining"] == 1000 - len(gh.requests)
    assert data["rate_limit"]["reset"].startswith("20")
    assert "anonymous" in result.stderr


def test_rate_limit_used_up_stops_and_says_so(empty_workspace, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_test")
    with GitHubServer(fake_repos(5), budget=4) as gh:
        result = invoke(empty_workspace, "discover", "--topic", "pytorch", "--api-url",
                        gh.url, "--json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert len(data["repositories"]) == 5
    known = [r["has_tests"] for r in data["repositories"]]
    assert known[0] is True and known[-1] is None        # the rest stays unknown
    assert data["rate_limit"]["remaining"] == 0
    assert "rate limit is used up" in result.stderr and "anonymous" not in result.stderr
    assert {r["auth"] for r in gh.requests} == {"Bearer ghp_test"}


def test_short_reset_is_waited_for():
    slept = []
    with GitHubServer(fake_repos(3), budget=2, reset_in=5) as gh:
        client = discovery.GitHubClient(api_url=gh.url, sleep=slept.append, max_wait_s=30)
        gh.script = []

        def refill(seconds):
            slept.append(seconds)
            gh.budget = 100

        client.sleep = refill
        report = discovery.discover(["pytorch"], client=client)
    assert report.stopped is None and len(report.repositories) == 3
    assert all(r.has_tests for r in report.repositories)
    assert slept and 0 < slept[0] <= 7 and report.waited_s == sum(slept)


def test_mine_flag_queues_repositories_with_tests(empty_workspace, monkeypatch):
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    with GitHubServer(fake_repos(3)) as gh:
        gh.layout = {"org2/net2": "none"}
        result = invoke(empty_workspace, "discover", "--topic", "pytorch", "--api-url",
                        gh.url, "--mine")
        assert result.exit_code == 0, result.output
        assert "queued 2 repositories" in result.output
        with Store(empty_workspace.db_path, "tester") as store:
            queued = [r["url"] for r in discovery.queued(store)]
            assert queued == [f"{gh.url}/org0/net0", f"{gh.url}/org1/net1"]
            history = store.history("repo", f"{gh.url}/org0/net0")
            assert [h["action"] for h in history] == ["queued_for_mining"]
        # `mine --queued` tries each; a repository it cannot fetch is reported, not fatal
        mined = invoke(empty_workspace, "mine", "--queued", "--json")
    assert mined.exit_code == 1
    rows = json.loads(mined.stdout)["mined"]
    assert [r["url"] for r in rows] == queued and all("error" in r for r in rows)


def test_web_url_of_the_searched_api():
    assert discovery.web_url(discovery.GITHUB_API) == "https://github.com"
    assert discovery.web_url("https://api.github.com/") == "https://github.com"
    assert discovery.web_url("https://ghe.example.com/api/v3") == "https://ghe.example.com"
    assert discovery.web_url("http://127.0.0.1:8080") == "http://127.0.0.1:8080"
