"""Sample generation against a real OpenAI-compatible HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import socket
import threading
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from click.testing import CliRunner
from samples_support import ADD_SOLUTION, COUNTER_SOLUTION, DOUBLE_SOLUTION, make_problems

from curator.cli import main
from curator.evaluation import generate as gen
from curator.store import Store

ANSWERS = {"add_one": ADD_SOLUTION, "Counter.bump": COUNTER_SOLUTION, "double": DOUBLE_SOLUTION}


class FakeLLM:
    """A chat-completions endpoint: scripted failures first, then answers by entry point."""

    def __init__(self):
        self.script: list[tuple[int, dict]] = []   # (status, headers) to send before success
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output quiet
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                with outer.lock:
                    outer.requests.append({"path": self.path, "body": body,
                                           "auth": self.headers.get("Authorization")})
                    scripted = outer.script.pop(0) if outer.script else None
                if scripted is not None:
                    status, headers = scripted
                    payload = json.dumps({"error": {"message": f"scripted {status}"}}).encode()
                    self.send_response(status)
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                ask = body["messages"][-1]["content"]
                entry = ask.split("implementation of `")[1].split("`")[0]
                text = f"Here you go:\n\n```python\n{ANSWERS[entry]}```\nHope this helps."
                payload = json.dumps({"id": "x", "object": "chat.completion",
                                      "choices": [{"index": 0, "finish_reason": "stop",
                                                   "message": {"role": "assistant",
                                                               "content": text}}],
                                      "usage": {"prompt_tokens": 10,
                                                "completion_tokens": 20}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,),
                                       daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"


@pytest.fixture
def llm():
    server = FakeLLM()
    server.thread.start()
    yield server
    server.server.shutdown()
    server.server.server_close()


@pytest.fixture
def db(empty_workspace):
    store = Store(empty_workspace.db_path, "tester")
    make_problems(store)
    yield store
    store.close()


def client_for(url: str, waits_sink: list | None = None, **kw) -> gen.ChatClient:
    sleeps = waits_sink if waits_sink is not None else []
    return gen.ChatClient(url, api_key=kw.pop("api_key", None), backoff_s=0.01,
                          sleep=sleeps.append, **kw)


def test_retries_429_then_500_then_success_honouring_retry_after(db, llm, monkeypatch):
    llm.script = [(429, {"Retry-After": "3"}), (500, {})]
    slept: list[float] = []
    monkeypatch.setenv("MY_KEY", "sk-test")
    client = client_for(llm.url, slept, api_key="sk-test")
    report = gen.generate(db, "tiny-model", llm.url, problem_ids=["add_one"], client=client)
    assert report.generated == 1 and report.failed == [] and report.retries == 2
    assert slept == [3.0, 0.02]  # Retry-After honoured, then exponential backoff
    assert len(llm.requests) == 3
    assert all(r["path"] == "/v1/chat/completions" for r in llm.requests)
    assert llm.requests[0]["auth"] == "Bearer sk-test"
    sample = db.one("SELECT * FROM samples")
    assert (sample["problem_id"], sample["model"], sample["technique"]) == \
        ("add_one", "tiny-model", "zero-shot")
    assert sample["code"] == ADD_SOLUTION and sample["format"] == "response"
    cached = db.one("SELECT * FROM generation_cache")
    assert cached["problem_id"] == "add_one" and "Hope this helps" in cached["text"]
    assert json.loads(cached["response"])["usage"]["completion_tokens"] == 20


def test_cache_means_nothing_is_paid_twice(db, llm):
    first = gen.generate(db, "m", llm.url, n=3, temperature=0.7, concurrency=2,
                         client=client_for(llm.url))
    assert first.requests == 9 and first.generated == 9 and first.imported == 9
    # Identical answers for the same problem are still distinct samples (indices 0..2).
    indices = sorted(r["sample_index"] for r in db.query(
        "SELECT sample_index FROM samples WHERE problem_id = 'add_one'"))
    assert indices == [0, 1, 2]
    assert db.one("SELECT COUNT(*) AS n FROM samples")["n"] == 9
    second = gen.generate(db, "m", llm.url, n=3, temperature=0.7, client=client_for(llm.url))
    assert second.cached == 9 and second.generated == 0 and second.imported == 0
    assert len(llm.requests) == 9  # the server saw nothing new
    # A different temperature or technique is a different request.
    gen.generate(db, "m", llm.url, n=1, temperature=0.2, problem_ids=["double_it"],
                 client=client_for(llm.url))
    assert len(llm.requests) == 10


def test_few_shot_examples_never_come_from_the_problem_itself(db, llm):
    report = gen.generate(db, "m", llm.url, technique="few-shot", shots=2,
                          client=client_for(llm.url))
    assert report.generated == 3
    for request in llm.requests:
        messages = request["body"]["messages"]
        asked = messages[-1]["content"].split("implementation of `")[1].split("`")[0]
        shown = [m["content"] for m in messages if m["role"] == "assistant"]
        assert len(shown) == 2
        assert all(ANSWERS[asked].strip() not in answer for answer in shown)
    techniques = {r["technique"] for r in db.query("SELECT technique FROM samples")}
    assert techniques == {"few-shot"}


def test_client_errors_fail_without_retry(db, llm):
    llm.script = [(401, {})]
    slept: list[float] = []
    report = gen.generate(db, "m", llm.url, problem_ids=["add_one"],
                          client=client_for(llm.url, slept))
    assert report.generated == 0 and slept == []
    assert "HTTP 401" in report.failed[0]["message"]
    assert "scripted 401" in report.failed[0]["message"]


def test_connection_errors_retry_then_give_up(db):
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    slept: list[float] = []
    url = f"http://127.0.0.1:{port}"
    report = gen.generate(db, "m", url, problem_ids=["add_one"],
                          client=client_for(url, slept, max_retries=3))
    assert slept == [0.01, 0.02, 0.04]
    assert "gave up after 4 attempts" in report.failed[0]["message"]
    assert db.one("SELECT COUNT(*) AS n FROM samples")["n"] == 0


def test_retry_after_forms():
    assert gen._retry_after("2") == 2.0
    assert gen._retry_after("0") == 0.0
    assert gen._retry_after(None) is None
    assert gen._retry_after("soon") is None
    import time

    in_ten = gen._retry_after(formatdate(time.time() + 10, usegmt=True))
    assert 8 <= in_ten <= 11


def test_endpoint_forms():
    assert gen.endpoint("http://h:1") == "http://h:1/v1/chat/completions"
    assert gen.endpoint("http://h:1/v1/") == "http://h:1/v1/chat/completions"
    assert gen.endpoint("http://h:1/v1/chat/completions") == "http://h:1/v1/chat/completions"


def test_cancel_stops_new_requests(db, llm):
    calls = []

    def cancelled() -> bool:
        calls.append(1)
        return len(calls) > 2

    report = gen.generate(db, "m", llm.url, n=5, concurrency=1, cancelled=cancelled,
                          client=client_for(llm.url))
    assert report.cancelled
    assert 0 < report.generated < 15
    assert len(llm.requests) == report.generated


def test_cli_generate_with_key_from_env(empty_workspace, llm, monkeypatch):
    with Store(empty_workspace.db_path, "tester") as store:
        make_problems(store)
    monkeypatch.setenv("LOCAL_KEY", "sk-local")
    llm.script = [(429, {"Retry-After": "0"})]
    runner = CliRunner()
    args = ["--workspace", str(empty_workspace.root), "samples", "generate", "--model", "m",
            "--base-url", llm.url, "--technique", "cot", "-n", "2", "--temperature", "0.5",
            "--problem", "double_it", "--api-key-env", "LOCAL_KEY", "--json"]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["generated"] == 2 and data["retries"] == 1 and data["imported"] == 2
    assert {r["auth"] for r in llm.requests} == {"Bearer sk-local"}
    assert "step by step" in llm.requests[0]["body"]["messages"][-1]["content"]
    assert llm.requests[0]["body"]["temperature"] == 0.5
    again = runner.invoke(main, args)
    assert json.loads(again.stdout)["cached"] == 2
    assert len(llm.requests) == 3
