"""Where repositories come from: GitHub's repository search, by topic and stars.

DL-Bench searched GitHub by deep-learning topics, ranked the repositories by stars and
picked by hand. `discover` runs that search (GET /search/repositories, sorted by stars,
paged), then asks for each result whether it has tests: the root listing
(GET /repos/{name}/contents/) first, the recursive tree of the default branch
(GET /repos/{name}/git/trees/{branch}?recursive=1) when the root shows none.

Rate limits are respected and reported: every response's X-RateLimit-Remaining /
X-RateLimit-Reset is kept; when nothing remains (or a 429 / a 403 saying so arrives) the
client waits for the reset if that is at most `max_wait_s` away, else stops and says so,
keeping what it has. 5xx answers are retried with backoff. GITHUB_TOKEN is sent when set;
without it GitHub allows 60 requests an hour (10 searches a minute), enough for a few
dozen repositories, and the report says the search was anonymous.

Chosen repositories are queued for `curator mine` by registering them (`repos` table,
never cloned here); `curator mine --queued` mines the registered ones never mined.
"""

from __future__ import annotations

import json
import os
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from curator.errors import CuratorError
from curator.progress import CancelCheck, Progress, checkpoint
from curator.repos import identity
from curator.store import Store
from curator.store import repos as repo_rows

GITHUB_API = "https://api.github.com"
GITHUB_WEB = "https://github.com"
TOKEN_ENV = "GITHUB_TOKEN"
MAX_PER_PAGE = 100
SEARCH_CAP = 1000                 # GitHub returns at most the first 1,000 results
_TEST_DIRS = {"test", "tests", "testing", "unittests", "unit_tests"}
_TEST_PATH = re.compile(r"(?:^|/)(?:tests?|testing)/|(?:^|/)test_[^/]*\.py$|_test\.py$|"
                        r"(?:^|/)conftest\.py$")


class DiscoverError(CuratorError):
    """GitHub refused the search or answered something else than the API."""


@dataclass
class RateLimit:
    remaining: int | None = None
    limit: int | None = None
    reset: float | None = None     # epoch seconds

    def to_json(self) -> dict:
        reset = datetime.fromtimestamp(self.reset, UTC).isoformat() if self.reset else None
        return {"remaining": self.remaining, "reset": reset}


@dataclass
class Repository:
    full_name: str
    stars: int
    license: str | None
    pushed_at: str | None
    topics: list[str]
    default_branch: str = "main"
    has_tests: bool | None = None   # None: not known (rate limit, or the API refused)
    description: str = ""

    def to_json(self) -> dict:
        return {"full_name": self.full_name, "stars": self.stars, "license": self.license,
                "pushed_at": self.pushed_at, "topics": self.topics,
                "has_tests": self.has_tests}


@dataclass
class DiscoverReport:
    repositories: list[Repository] = field(default_factory=list)
    rate_limit: RateLimit = field(default_factory=RateLimit)
    anonymous: bool = True
    requests: int = 0
    waited_s: float = 0.0
    stopped: str | None = None      # why the listing is incomplete (rate limit, cancelled)
    total_count: int | None = None
    queued: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"repositories": [r.to_json() for r in self.repositories],
                "rate_limit": self.rate_limit.to_json()}

    def notes(self) -> list[str]:
        out = []
        if self.anonymous:
            out.append(f"no {TOKEN_ENV}: anonymous requests (60 an hour, 10 searches a "
                       f"minute); {self.rate_limit.remaining} left now")
        if self.waited_s:
            out.append(f"waited {self.waited_s:.0f}s for GitHub's rate limit to reset")
        if self.stopped:
            out.append(self.stopped)
        return out


def query_string(topics: list[str], min_stars: int | None, language: str | None) -> str:
    parts = [f"topic:{t}" for t in topics]
    if min_stars:
        parts.append(f"stars:>={min_stars}")
    if language:
        parts.append(f"language:{language}")
    if not parts:
        raise CuratorError("give at least one --topic (or --min-stars / --language)")
    return " ".join(parts)


@dataclass
class GitHubClient:
    api_url: str = GITHUB_API
    token: str | None = None
    timeout_s: float = 30.0
    max_retries: int = 3
    backoff_s: float = 1.0
    max_wait_s: float = 60.0        # longest wait for a rate-limit reset
    sleep: Callable[[float], None] = time.sleep
    rate: RateLimit = field(default_factory=RateLimit)
    requests: int = 0
    waited_s: float = 0.0

    def _headers(self) -> dict:
        headers = {"Accept": "application/vnd.github+json",
                   "X-GitHub-Api-Version": "2022-11-28", "User-Agent": "dl-bench-curator"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return headers

    def _note_rate(self, headers) -> None:
        try:
            if headers.get("X-RateLimit-Remaining") is not None:
                self.rate.remaining = int(headers["X-RateLimit-Remaining"])
            if headers.get("X-RateLimit-Limit") is not None:
                self.rate.limit = int(headers["X-RateLimit-Limit"])
            if headers.get("X-RateLimit-Reset") is not None:
                self.rate.reset = float(headers["X-RateLimit-Reset"])
        except (TypeError, ValueError):
            pass

    def _wait_for_reset(self, retry_after: float | None = None) -> None:
        """Sleep until the limit resets, or raise RateLimited when that is too far."""
        wait = retry_after if retry_after is not None else \
            max(0.0, (self.rate.reset or time.time()) - time.time()) + 1.0
        if wait > self.max_wait_s:
            reset = self.rate.to_json()["reset"] or f"in {wait:.0f}s"
            raise RateLimited(f"GitHub's rate limit is used up ({self.rate.remaining} "
                              f"left, resets {reset}); stopped here"
                              + ("" if self.token else f"; set {TOKEN_ENV} for 5,000 "
                                 "requests an hour"))
        self.waited_s += wait
        self.sleep(wait)

    def get(self, path: str, params: dict | None = None) -> dict | list:
        url = self.api_url.rstrip("/") + path
        if params:
            url += "?" + urllib.parse.urlencode(params)
        attempt = 0
        while True:
            if self.rate.remaining == 0 and self.rate.reset and self.rate.reset > time.time():
                self._wait_for_reset()
            self.requests += 1
            request = urllib.request.Request(url, headers=self._headers())
            try:
                with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                    self._note_rate(response.headers)
                    payload = response.read()
                try:
                    return json.loads(payload)
                except (json.JSONDecodeError, UnicodeDecodeError):
                    raise DiscoverError(f"{url}: the answer is not JSON") from None
            except urllib.error.HTTPError as exc:
                self._note_rate(exc.headers or {})
                detail = _message(exc)
                limited = exc.code == 429 or (exc.code == 403 and (
                    self.rate.remaining == 0 or "rate limit" in detail.lower()))
                if limited:
                    retry_after = _float(exc.headers.get("Retry-After") if exc.headers
                                         else None)
                    self._wait_for_reset(retry_after)
                    continue            # a rate-limit wait is not a failed attempt
                if exc.code < 500 or attempt >= self.max_retries:
                    raise DiscoverError(f"{url}: HTTP {exc.code}: {detail}") from None
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                if attempt >= self.max_retries:
                    raise DiscoverError(f"{url}: connection failed: "
                                        f"{getattr(exc, 'reason', exc)}") from None
            self.sleep(self.backoff_s * (2 ** attempt))
            attempt += 1


class RateLimited(DiscoverError):
    """The rate limit resets too far in the future to wait for."""


def _float(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _message(exc: urllib.error.HTTPError) -> str:
    try:
        text = exc.read().decode("utf-8", "replace")
        data = json.loads(text)
        text = data.get("message", text) if isinstance(data, dict) else text
    except (OSError, ValueError, AttributeError):
        text = ""
    return " ".join(str(text).split())[:200] or str(exc.reason or "no details")


def _repository(item: dict) -> Repository:
    lic = item.get("license") or {}
    spdx = lic.get("spdx_id") if isinstance(lic, dict) else None
    return Repository(full_name=str(item.get("full_name")),
                      stars=int(item.get("stargazers_count") or 0),
                      license=None if spdx in (None, "", "NOASSERTION") else spdx,
                      pushed_at=item.get("pushed_at"), topics=list(item.get("topics") or []),
                      default_branch=item.get("default_branch") or "main",
                      description=str(item.get("description") or ""))


def has_tests(client: GitHubClient, repo: Repository) -> bool:
    """Whether the repository has tests: the root listing, then the recursive tree."""
    root = client.get(f"/repos/{repo.full_name}/contents/")
    if isinstance(root, list):
        for entry in root:
            name = str(entry.get("name") or "")
            if (entry.get("type") == "dir" and name.lower() in _TEST_DIRS) or \
                    _TEST_PATH.search(name):
                return True
    tree = client.get(f"/repos/{repo.full_name}/git/trees/"
                      f"{urllib.parse.quote(repo.default_branch, safe='')}",
                      {"recursive": "1"})
    paths = [str(e.get("path") or "") for e in (tree.get("tree") or [])] \
        if isinstance(tree, dict) else []
    return any(_TEST_PATH.search(p) for p in paths)


def discover(topics: list[str], min_stars: int | None = None, language: str | None = None,
             limit: int = 50, api_url: str = GITHUB_API, token: str | None = None,
             check_tests: bool = True, client: GitHubClient | None = None,
             progress: Progress | None = None,
             cancelled: CancelCheck | None = None) -> DiscoverReport:
    """Repositories with these topics, most stars first, up to `limit`."""
    if limit < 1:
        raise CuratorError("--limit must be at least 1")
    q = query_string(topics, min_stars, language)
    if token is None:
        token = os.environ.get(TOKEN_ENV) or None
    client = client or GitHubClient(api_url=api_url, token=token)
    report = DiscoverReport(anonymous=not client.token)
    per_page = min(limit, MAX_PER_PAGE)
    page = 1
    try:
        while len(report.repositories) < min(limit, SEARCH_CAP):
            checkpoint(cancelled, "discover")
            data = client.get("/search/repositories", {"q": q, "sort": "stars",
                                                       "order": "desc",
                                                       "per_page": per_page, "page": page})
            if not isinstance(data, dict):
                raise DiscoverError(f"{client.api_url}: search answered no object")
            report.total_count = data.get("total_count")
            items = data.get("items") or []
            for item in items[: limit - len(report.repositories)]:
                report.repositories.append(_repository(item))
            if progress:
                progress(len(report.repositories), limit, f"search page {page}")
            if len(items) < per_page:
                break
            page += 1
        if check_tests:
            for position, repo in enumerate(report.repositories, 1):
                checkpoint(cancelled, "discover")
                try:
                    repo.has_tests = has_tests(client, repo)
                except RateLimited:
                    raise
                except DiscoverError:
                    repo.has_tests = None     # e.g. an empty repository: 409 on its tree
                if progress:
                    progress(position, len(report.repositories), repo.full_name)
    except RateLimited as exc:
        report.stopped = str(exc)
    finally:
        report.rate_limit = client.rate
        report.requests = client.requests
        report.waited_s = client.waited_s
    return report


def web_url(api_url: str) -> str:
    """Where the repositories of a search API live: github.com for GitHub's API, the
    server itself for a GitHub Enterprise one (its API is SERVER/api/v3)."""
    api = api_url.rstrip("/")
    if api == GITHUB_API:
        return GITHUB_WEB
    return api.removesuffix("/api/v3")


def queue_for_mining(store: Store, full_names: list[str],
                     web_url: str = GITHUB_WEB) -> list[dict]:
    """Register repositories for `curator mine --queued` (nothing is cloned here);
    `web_url` is where they live (`web_url(api_url)` of the API that found them)."""
    rows = []
    with store.transaction():
        for name in full_names:
            url = f"{web_url.rstrip('/')}/{name}"
            row = identity.get_or_create(store, url)
            store.audit("repo", url, "queued_for_mining", after={"full_name": name})
            rows.append(row)
    return rows


def queued(store: Store) -> list[dict]:
    """Registered repositories never mined (what `--mine` queued, or `repo` registered)."""
    return [r for r in repo_rows.list_with_counts(store)
            if not r["last_commit"] and not r["candidates"]]
