"""Generating samples from any OpenAI-compatible chat-completions endpoint.

vLLM, Ollama, llama.cpp's server and hosted APIs all speak POST {base}/v1/chat/completions.
Plain urllib, no client library. Requests run in a few threads (the concurrency limit);
the database is written only from the calling thread, one response at a time, so an
interrupted run keeps everything already paid for.

Retries: 429, 5xx and connection errors are retried with exponential backoff, honouring a
Retry-After header. Cache: every response is stored under (model, technique, temperature,
prompt hash, sample index) and never requested again. Few-shot examples come from other
problems only.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime

from curator.errors import CuratorError
from curator.evaluation import samples as sample_files
from curator.evaluation.extract import extract_code
from curator.problem import Problem
from curator.progress import CancelCheck, Progress
from curator.store import Store, generation_cache
from curator.store import problems as problem_store

TECHNIQUES = ("zero-shot", "few-shot", "cot")
RETRY_STATUSES = {408, 409, 425, 429}

SYSTEM = ("You are an expert Python and deep-learning engineer. You write correct, "
          "self-contained code that uses PyTorch idiomatically.")


class GenerateError(CuratorError):
    """The endpoint refused a request or answered something that is not a completion."""


# -- prompts ---------------------------------------------------------------------------------


def _ask(problem: Problem) -> str:
    return (f"{problem.prompt.rstrip()}\n\nWrite the complete implementation of "
            f"`{problem.entry_point}` in Python, with every import it needs. Answer with one "
            "```python code block.")


def _ask_cot(problem: Problem) -> str:
    return (f"{problem.prompt.rstrip()}\n\nFirst think step by step: the inputs and their "
            "shapes, the output, the edge cases and the library calls you need. Then write "
            f"the complete implementation of `{problem.entry_point}`, with every import it "
            "needs, in one ```python code block at the end.")


def pick_examples(problem: Problem, pool: list[Problem], shots: int) -> list[Problem]:
    """Few-shot examples for `problem`: other problems only, same stage first, stable order."""
    others = [p for p in pool if p.id != problem.id and p.entry_point != problem.entry_point
              and p.solution.strip() and p.prompt.strip()
              and p.solution.strip() != problem.solution.strip()]

    def rank(p: Problem):
        mix = hashlib.sha256(f"{problem.id}\0{p.id}".encode()).hexdigest()
        return (p.stage != problem.stage, mix)

    return sorted(others, key=rank)[:shots]


def build_messages(problem: Problem, technique: str, examples: list[Problem] = ()) -> list[dict]:
    if technique not in TECHNIQUES:
        raise CuratorError(f"unknown technique {technique!r} (expected {', '.join(TECHNIQUES)})")
    messages = [{"role": "system", "content": SYSTEM}]
    if technique == "few-shot":
        for example in examples:
            if example.id == problem.id:  # never show the answer being asked for
                raise CuratorError(f"few-shot example {example.id} is the problem itself")
            messages.append({"role": "user", "content": _ask(example)})
            messages.append({"role": "assistant",
                             "content": f"```python\n{example.solution.rstrip()}\n```"})
    messages.append({"role": "user",
                     "content": _ask_cot(problem) if technique == "cot" else _ask(problem)})
    return messages


def prompt_hash(messages: list[dict]) -> str:
    return hashlib.sha256(json.dumps(messages, sort_keys=True, ensure_ascii=False)
                          .encode()).hexdigest()


# -- the HTTP client ---------------------------------------------------------------------------


def endpoint(base_url: str) -> str:
    base = base_url.rstrip("/")
    if base.endswith("/chat/completions"):
        return base
    if base.endswith("/v1"):
        return base + "/chat/completions"
    return base + "/v1/chat/completions"


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, moment.timestamp() - time.time())


@dataclass
class ChatClient:
    base_url: str
    api_key: str | None = None
    timeout_s: float = 120.0
    max_retries: int = 5
    backoff_s: float = 1.0        # first wait; doubles on each retry
    max_backoff_s: float = 60.0
    sleep: Callable[[float], None] = time.sleep
    waits: list[float] = field(default_factory=list)  # every wait made, for reports and tests

    def complete(self, body: dict, cancelled: CancelCheck | None = None) -> dict:
        """POST one chat-completions request; returns the response JSON."""
        data = json.dumps(body).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        url = endpoint(self.base_url)
        attempt = 0
        while True:
            retry_after = None
            try:
                request = urllib.request.Request(url, data=data, headers=headers,
                                                 method="POST")
                with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                    payload = response.read()
                try:
                    return json.loads(payload)
                except (json.JSONDecodeError, UnicodeDecodeError):
                    raise GenerateError(f"{url}: response is not JSON") from None
            except urllib.error.HTTPError as exc:
                detail = _body_snippet(exc)
                if exc.code not in RETRY_STATUSES and exc.code < 500:
                    raise GenerateError(f"{url}: HTTP {exc.code}: {detail}") from None
                problem = f"HTTP {exc.code}: {detail}"
                retry_after = _retry_after(exc.headers.get("Retry-After") if exc.headers
                                           else None)
            except (urllib.error.URLError, ConnectionError, TimeoutError,
                    http.client.HTTPException) as exc:
                problem = f"connection failed: {getattr(exc, 'reason', exc)}"
            if attempt >= self.max_retries:
                raise GenerateError(f"{url}: gave up after {attempt + 1} attempts ({problem})")
            if cancelled and cancelled():
                raise GenerateError(f"{url}: cancelled while retrying ({problem})")
            wait_s = self.backoff_s * (2 ** attempt)
            if retry_after is not None:
                wait_s = max(wait_s, retry_after) if retry_after > 0 else retry_after
            wait_s = min(wait_s, self.max_backoff_s)
            self.waits.append(wait_s)
            self.sleep(wait_s)
            attempt += 1


def _body_snippet(exc: urllib.error.HTTPError) -> str:
    try:
        text = exc.read().decode("utf-8", "replace")
    except (OSError, ValueError, http.client.HTTPException):  # decoration only
        text = ""
    try:
        message = json.loads(text).get("error", {})
        if isinstance(message, dict):
            text = message.get("message") or text
        elif isinstance(message, str):
            text = message
    except (json.JSONDecodeError, AttributeError):
        pass
    return " ".join(text.split())[:200] or exc.reason or "no details"


def content_of(response: dict) -> str:
    try:
        content = response["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise GenerateError("response has no choices[0].message.content") from None
    if content is None:
        content = ""
    if not isinstance(content, str):  # some servers send a list of content parts
        content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content


# -- generation ---------------------------------------------------------------------------------


@dataclass
class GenerateReport:
    requests: int = 0          # (problem, sample index) pairs asked for
    cached: int = 0            # answered from the cache
    generated: int = 0         # paid for now
    imported: int = 0          # new samples stored
    duplicates: int = 0
    no_code: int = 0
    sample_ids: list[int] = field(default_factory=list)
    failed: list[dict] = field(default_factory=list)  # {"problem_id", "sample_index", "message"}
    retries: int = 0
    cancelled: bool = False

    def to_json(self) -> dict:
        return {"requests": self.requests, "cached": self.cached, "generated": self.generated,
                "imported": self.imported, "duplicates": self.duplicates,
                "no_code": self.no_code, "retries": self.retries, "failed": self.failed,
                "sample_ids": self.sample_ids, "cancelled": self.cancelled}


@dataclass
class _Request:
    problem: Problem
    index: int
    messages: list[dict]
    key: tuple
    body: dict


def _cached(store: Store, key: tuple) -> str | None:
    return generation_cache.cached_text(store, key)


def _store_result(store: Store, req: _Request, text: str, response: dict | None,
                  origin: str, report: GenerateReport) -> None:
    model, technique, temperature, _, index = req.key
    with store.transaction():
        if response is not None:
            generation_cache.remember(store, req.key, req.problem.id,
                                      json.dumps(req.body, ensure_ascii=False),
                                      json.dumps(response, ensure_ascii=False), text)
        extraction = extract_code(text, req.problem.entry_point)
        sample = sample_files.NewSample(
            problem_id=req.problem.id, model=model, technique=technique,
            temperature=temperature, sample_index=index, format="response", raw=text,
            code=extraction.code, extraction=extraction.method, origin=origin)
        sample_id = sample_files.insert(store, sample)
    if sample_id is None:
        report.duplicates += 1
        return
    report.imported += 1
    report.sample_ids.append(sample_id)
    report.no_code += extraction.code is None


def generate(store: Store, model: str, base_url: str, technique: str = "zero-shot",
             n: int = 1, temperature: float = 0.0, problem_ids: list[str] | None = None,
             concurrency: int = 4, api_key_env: str = "OPENAI_API_KEY",
             max_tokens: int | None = None, shots: int = 2,
             client: ChatClient | None = None, progress: Progress | None = None,
             cancelled: CancelCheck | None = None) -> GenerateReport:
    """Ask `model` for `n` samples per problem and import them as samples."""
    if technique not in TECHNIQUES:
        raise CuratorError(f"unknown technique {technique!r} (expected {', '.join(TECHNIQUES)})")
    if n < 1:
        raise CuratorError("-n must be at least 1")
    if concurrency < 1:
        raise CuratorError("--concurrency must be at least 1")
    pool = problem_store.all_problems(store)
    if problem_ids:
        known = {p.id: p for p in pool}
        missing = [i for i in problem_ids if i not in known]
        if missing:
            raise CuratorError(f"unknown problem(s): {', '.join(missing)}")
        chosen = [known[i] for i in problem_ids]
    else:
        chosen = [p for p in pool if p.status != "retired"]
    if client is None:
        client = ChatClient(base_url, api_key=os.environ.get(api_key_env) or None)
    report = GenerateReport()
    temperature = float(temperature)
    todo: list[_Request] = []
    for problem in chosen:
        examples = pick_examples(problem, pool, shots) if technique == "few-shot" else []
        messages = build_messages(problem, technique, examples)
        digest = prompt_hash(messages)
        for index in range(n):
            key = (model, technique, temperature, digest, index)
            body = {"model": model, "messages": messages, "temperature": temperature}
            if max_tokens:
                body["max_tokens"] = max_tokens
            req = _Request(problem, index, messages, key, body)
            report.requests += 1
            text = _cached(store, key)
            if text is not None:
                report.cached += 1
                _store_result(store, req, text, None, f"generate:cache:{digest[:12]}", report)
            else:
                todo.append(req)
    done = report.cached
    total = report.requests
    if progress:
        progress(done, total, "cache")
    waits_before = len(client.waits)
    executor = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="generate")
    try:
        pending: dict[Future, _Request] = {}
        queue = list(reversed(todo))
        while queue or pending:
            while queue and len(pending) < concurrency and not report.cancelled:
                if cancelled and cancelled():
                    report.cancelled = True
                    break
                req = queue.pop()
                pending[executor.submit(client.complete, req.body, cancelled)] = req
            if not pending:
                break
            finished, _ = wait(list(pending), return_when=FIRST_COMPLETED)
            for future in finished:
                req = pending.pop(future)
                done += 1
                try:
                    response = future.result()
                    text = content_of(response)
                except GenerateError as exc:
                    report.failed.append({"problem_id": req.problem.id,
                                          "sample_index": req.index, "message": str(exc)})
                else:
                    report.generated += 1
                    _store_result(store, req, text, response,
                                  f"generate:{endpoint(base_url)}", report)
                if progress:
                    progress(done, total, req.problem.id)
            if cancelled and cancelled():
                report.cancelled = True
                queue.clear()
    finally:
        executor.shutdown(wait=True, cancel_futures=True)
    report.retries = len(client.waits) - waits_before
    return report
