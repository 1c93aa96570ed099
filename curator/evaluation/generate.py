"""Generating samples from any OpenAI-compatible chat-completions endpoint.

Requests go through `curator.llm.ChatClient` (the openai package: HTTP, timeouts,
retries honouring Retry-After) and run in a few threads (the concurrency limit); the
database is written only from the calling thread, one response at a time, so an
interrupted run keeps everything already paid for.

Cache: every response is stored under (model, technique, temperature, prompt hash, sample
index) and never requested again. Few-shot examples come from other problems only.
"""

from __future__ import annotations

import hashlib
import json
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

from curator.errors import CuratorError
from curator.evaluation import samples as sample_files
from curator.evaluation.extract import extract_code
from curator.llm import DEFAULT_KEY_ENV, ChatClient, LLMError, content_of, endpoint, key_from_env
from curator.problem import Problem
from curator.progress import CancelCheck, Progress
from curator.store import Store, generation_cache
from curator.store import problems as problem_store

TECHNIQUES = ("zero-shot", "few-shot", "cot")

SYSTEM = ("You are an expert Python and deep-learning engineer. You write correct, "
          "self-contained code that uses PyTorch idiomatically.")


GenerateError = LLMError   # the name generation's callers knew


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
             concurrency: int = 4, api_key_env: str = DEFAULT_KEY_ENV,
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
        client = ChatClient(base_url, api_key=key_from_env(api_key_env))
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
    retries_before = client.retries
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
    report.retries = client.retries - retries_before
    return report
