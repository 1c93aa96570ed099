"""GitHub's REST API on 127.0.0.1, for `curator discover`: repository search (paged, sorted
by stars), a repository's root contents and its recursive git tree, with rate-limit headers.

`script` holds (status, headers) answers sent before the next real one (a 500, a 429 with
Retry-After); `budget` is how many requests the rate limit allows before it answers 403
"API rate limit exceeded" with X-RateLimit-Remaining: 0 and a reset `reset_in` seconds away.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def fake_repos(n: int) -> list[dict]:
    out = []
    for i in range(n):
        out.append({"full_name": f"org{i}/net{i}", "stargazers_count": 10_000 - 100 * i,
                    "license": {"spdx_id": ["MIT", "Apache-2.0", "NOASSERTION"][i % 3]},
                    "pushed_at": f"2026-11-{1 + i % 28:02d}T10:00:00Z",
                    "topics": ["pytorch", "deep-learning"], "default_branch": "main",
                    "description": f"network {i}"})
    return out


class GitHubServer:
    def __init__(self, repos: list[dict], budget: int = 1000, reset_in: float = 3600.0):
        self.repos = repos
        self.budget = budget
        self.reset_in = reset_in
        self.script: list[tuple[int, dict]] = []
        self.requests: list[dict] = []
        # which repositories have tests: in the root listing, only deep in the tree, or none
        self.layout: dict[str, str] = {}
        self.lock = threading.Lock()
        self.reset_at = time.time() + reset_in
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, status: int, data, headers: dict | None = None) -> None:
                payload = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self):
                parsed = urllib.parse.urlparse(self.path)
                query = dict(urllib.parse.parse_qsl(parsed.query))
                with outer.lock:
                    outer.requests.append({"path": parsed.path, "query": query,
                                           "auth": self.headers.get("Authorization")})
                    scripted = outer.script.pop(0) if outer.script else None
                    outer.budget -= 1
                    remaining = max(outer.budget, 0)
                    over = outer.budget < 0
                rate = {"X-RateLimit-Limit": "60", "X-RateLimit-Remaining": str(remaining),
                        "X-RateLimit-Reset": str(int(outer.reset_at))}
                if scripted is not None:
                    status, headers = scripted
                    self._send(status, {"message": f"scripted {status}"}, {**rate, **headers})
                    return
                if over:
                    self._send(403, {"message": "API rate limit exceeded for 127.0.0.1."},
                               rate)
                    return
                self._route(parsed.path, query, rate)

            def _route(self, path: str, query: dict, rate: dict) -> None:
                if path.endswith("/search/repositories"):
                    per_page, page = int(query.get("per_page", 30)), int(query.get("page", 1))
                    items = sorted(outer.repos, key=lambda r: -r["stargazers_count"])
                    chunk = items[(page - 1) * per_page: page * per_page]
                    self._send(200, {"total_count": len(items), "incomplete_results": False,
                                     "items": chunk}, rate)
                    return
                parts = path.strip("/").split("/")
                if len(parts) >= 4 and parts[-4] == "repos" or "repos" in parts:
                    at = parts.index("repos")
                    name = "/".join(parts[at + 1: at + 3])
                    kind = outer.layout.get(name, "root")
                    if parts[at + 3:at + 4] == ["contents"]:
                        listing = [{"name": "setup.py", "type": "file"},
                                   {"name": "src", "type": "dir"}]
                        if kind == "root":
                            listing.append({"name": "tests", "type": "dir"})
                        self._send(200, listing, rate)
                        return
                    if parts[at + 3:at + 5] == ["git", "trees"]:
                        tree = [{"path": "src/net/model.py", "type": "blob"}]
                        if kind == "deep":
                            tree.append({"path": "src/net/test_model.py", "type": "blob"})
                        self._send(200, {"tree": tree, "truncated": False}, rate)
                        return
                self._send(404, {"message": "Not Found"}, rate)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,),
                                       daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> GitHubServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
