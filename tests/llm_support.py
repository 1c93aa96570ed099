"""A real chat-completions endpoint on 127.0.0.1 (non-streaming) for the tests.

`ChatServer(respond)` answers every POST .../chat/completions with `respond(body)` as the
assistant's text, after sending the scripted failures in `script` ((status, headers)
pairs, e.g. a 429 with retry-after-ms, a 500). Every request is kept in `requests`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class ChatServer:
    def __init__(self, respond: Callable[[dict], str]):
        self.respond = respond
        self.script: list[tuple[int, dict]] = []
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output quiet
                pass

            def _send(self, status: int, payload: bytes, headers: dict) -> None:
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                with outer.lock:
                    outer.requests.append({"path": self.path, "body": body,
                                           "auth": self.headers.get("Authorization")})
                    scripted = outer.script.pop(0) if outer.script else None
                if not self.path.endswith("/chat/completions"):
                    self._send(404, b'{"error": {"message": "no such route"}}', {})
                    return
                if scripted is not None:
                    status, headers = scripted
                    payload = json.dumps({"error": {"message": f"scripted {status}"}}).encode()
                    self._send(status, payload, headers)
                    return
                text = outer.respond(body)
                payload = json.dumps({"id": "x", "object": "chat.completion", "created": 0,
                                      "model": body.get("model", "m"),
                                      "choices": [{"index": 0, "finish_reason": "stop",
                                                   "message": {"role": "assistant",
                                                               "content": text}}],
                                      "usage": {"prompt_tokens": 10,
                                                "completion_tokens": 20}}).encode()
                self._send(200, payload, {})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,),
                                       daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> ChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
