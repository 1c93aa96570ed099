"""Sample generation against a real OpenAI-compatible HTTP server on 127.0.0.1.

The client is the openai package (curator.llm); servers ask for short waits with
retry-after-ms so the library's backoff keeps the tests quick.
"""

from __future__ import annotations

import json
import socket

import pytest
from click.testing import CliRunner
from llm_support import ChatServer
from samples_support import ADD_SOLUTION, COUNTER_SOLUTION, DOUBLE_SOLUTION, make_problems

from curator import llm
from curator.cli import main
from curator.evaluation import generate as gen
from curator.store import Store

ANSWERS = {"add_one": ADD_SOLUTION, "Counter.bump": COUNTER_SOLUTION, "double": DOUBLE_SOLUTION}


def answer(body: dict) -> str:
    ask = body["messages"][-1]["content"]
    entry = ask.split("implementation of `")[1].split("`")[0]
    return f"Here you go:\n\n```python\n{ANSWERS[entry]}```\nHope this helps."


@pytest.fixture
def llm_server():
    with ChatServer(answer) as server:
        yield server


@pytest.fixture
def db(empty_workspace):
    store = Store(empty_workspace.db_path, "tester")
    make_problems(store)
    yield store
    store.close()


def client_for(url: str, **kw) -> llm.ChatClient:
    return llm.ChatClient(url, api_key=kw.pop("api_key", None), **kw)


def test_retries_429_then_500_then_success_honouring_retry_after(db, llm_server):
    llm_server.script = [(429, {"retry-after-ms": "20"}), (500, {"retry-after-ms": "20"})]
    client = client_for(llm_server.url, api_key="sk-test")
    report = gen.generate(db, "tiny-model", llm_server.url, problem_ids=["add_one"],
                          client=client)
    assert report.generated == 1 and report.failed == [] and report.retries == 2
    assert len(llm_server.requests) == 3
    assert all(r["path"] == "/v1/chat/completions" for r in llm_server.requests)
    assert llm_server.requests[0]["auth"] == "Bearer sk-test"
    assert llm_server.requests[0]["body"].get("stream") in (None, False)
    sample = db.one("SELECT * FROM samples")
    assert (sample["problem_id"], sample["model"], sample["technique"]) == \
        ("add_one", "tiny-model", "zero-shot")
    assert sample["code"] == ADD_SOLUTION and sample["format"] == "response"
    cached = db.one("SELECT * FROM generation_cache")
    assert cached["problem_id"] == "add_one" and "Hope this helps" in cached["text"]
    assert json.loads(cached["response"])["usage"]["completion_tokens"] == 20


def test_no_key_sends_no_authorization_header(db, llm_server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    report = gen.generate(db, "m", llm_server.url, problem_ids=["add_one"])
    assert report.generated == 1
    assert llm_server.requests[0]["auth"] is None


def test_cache_means_nothing_is_paid_twice(db, llm_server):
    first = gen.generate(db, "m", llm_server.url, n=3, temperature=0.7, concurrency=2,
                         client=client_for(llm_server.url))
    assert first.requests == 9 and first.generated == 9 and first.imported == 9
    # Identical answers for the same problem are still distinct samples (indices 0..2).
    indices = sorted(r["sample_index"] for r in db.query(
        "SELECT sample_index FROM samples WHERE problem_id = 'add_one'"))
    assert indices == [0, 1, 2]
    assert db.one("SELECT COUNT(*) AS n FROM samples")["n"] == 9
    second = gen.generate(db, "m", llm_server.url, n=3, temperature=0.7, client=client_for(llm_server.url))
    assert second.cached == 9 and second.generated == 0 and second.imported == 0
    assert len(llm_server.requests) == 9  # the server saw nothing new
    # A different temperature or technique is a different request.
    gen.generate(db, "m", llm_server.url, n=1, temperature=0.2, problem_ids=["double_it"],
                 client=client_for(llm_server.url))
    assert len(llm_server.requests) == 10


def test_few_shot_examples_never_come_from_the_problem_itself(db, llm_server):
    report = gen.generate(db, "m", llm_server.url, technique="few-shot", shots=2,
                          client=client_for(llm_server.url))
    assert report.generated == 3
    for request in llm_server.requests:
        messages = request["body"]["messages"]
        asked = messages[-1]["content"].split("implementation of `")[1].split("`")[0]
        shown = [m["content"] for m in messages if m["role"] == "assistant"]
        assert len(shown) == 2
        assert all(ANSWERS[asked].strip() not in answer for answer in shown)
    techniques = {r["technique"] for r in db.query("SELECT technique FROM samples")}
    assert techniques == {"few-shot"}


def test_client_errors_fail_without_retry(db, llm_server):
    llm_server.script = [(401, {})]
    report = gen.generate(db, "m", llm_server.url, problem_ids=["add_one"],
                          client=client_for(llm_server.url))
    assert report.generated == 0 and report.retries == 0 and len(llm_server.requests) == 1
    assert "HTTP 401" in report.failed[0]["message"]
    assert "scripted 401" in report.failed[0]["message"]


def test_connection_errors_retry_then_give_up(db):
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    report = gen.generate(db, "m", url, problem_ids=["add_one"],
                          client=client_for(url, max_retries=1))
    assert report.retries == 1
    assert "gave up after 2 attempts" in report.failed[0]["message"]
    assert "connection failed" in report.failed[0]["message"]
    assert db.one("SELECT COUNT(*) AS n FROM samples")["n"] == 0


def test_endpoint_forms():
    assert llm.endpoint("http://h:1") == "http://h:1/v1/chat/completions"
    assert llm.endpoint("http://h:1/v1/") == "http://h:1/v1/chat/completions"
    assert llm.endpoint("http://h:1/v1/chat/completions") == "http://h:1/v1/chat/completions"
    assert llm.base_url_of("http://h:1/v1/chat/completions") == "http://h:1/v1"


def test_cancel_stops_new_requests(db, llm_server):
    calls = []

    def cancelled() -> bool:
        calls.append(1)
        return len(calls) > 2

    report = gen.generate(db, "m", llm_server.url, n=5, concurrency=1, cancelled=cancelled,
                          client=client_for(llm_server.url))
    assert report.cancelled
    assert 0 < report.generated < 15
    assert len(llm_server.requests) == report.generated


def test_cli_generate_with_key_from_env(empty_workspace, llm_server, monkeypatch):
    with Store(empty_workspace.db_path, "tester") as store:
        make_problems(store)
    monkeypatch.setenv("LOCAL_KEY", "sk-local")
    llm_server.script = [(429, {"retry-after-ms": "10"})]
    runner = CliRunner()
    args = ["--workspace", str(empty_workspace.root), "samples", "generate", "--model", "m",
            "--base-url", llm_server.url, "--technique", "cot", "-n", "2", "--temperature", "0.5",
            "--problem", "double_it", "--api-key-env", "LOCAL_KEY", "--json"]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["generated"] == 2 and data["retries"] == 1 and data["imported"] == 2
    assert {r["auth"] for r in llm_server.requests} == {"Bearer sk-local"}
    assert "step by step" in llm_server.requests[0]["body"]["messages"][-1]["content"]
    assert llm_server.requests[0]["body"]["temperature"] == 0.5
    again = runner.invoke(main, args)
    assert json.loads(again.stdout)["cached"] == 2
    assert len(llm_server.requests) == 3
