"""The one client for OpenAI-compatible chat-completions endpoints.

Every model call of the project (sample generation, drafted prompts, review suggestions)
goes through `ChatClient`, a thin layer over the official `openai` package: vLLM, Ollama,
llama.cpp's server and hosted APIs all speak POST {base}/v1/chat/completions. The library
does the HTTP, the timeouts and the retries (408, 409, 429, 5xx and connection errors, with
exponential backoff honouring Retry-After / retry-after-ms); this module turns its answers
into plain JSON dicts and its failures into one-line `LLMError`s, and counts the retries it
made. Streaming is never used. Caching is the caller's business (generation keeps every
answer in `generation_cache`), so this module holds no state but the connection pool.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field

from curator.config import Config, LlmConfig
from curator.errors import CuratorError
from curator.progress import CancelCheck

DEFAULT_KEY_ENV = LlmConfig().api_key_env
RETRY_STATUSES = {408, 409, 425, 429}
# The library insists on a key; a local server needs none, so a placeholder is set and the
# Authorization header is left out of every request.
_NO_KEY = "no-key"


class LLMError(CuratorError):
    """The endpoint refused a request or answered something that is not a completion."""


def base_url_of(url: str) -> str:
    """The API root the library wants (".../v1") from any form people type."""
    base = url.rstrip("/")
    if base.endswith("/chat/completions"):
        base = base[: -len("/chat/completions")]
    if not base.endswith("/v1"):
        base += "/v1"
    return base


def endpoint(url: str) -> str:
    """The chat-completions URL a base URL resolves to (named in reports and origins)."""
    return base_url_of(url) + "/chat/completions"


def key_from_env(api_key_env: str = DEFAULT_KEY_ENV) -> str | None:
    return os.environ.get(api_key_env) or None


@dataclass
class ChatClient:
    base_url: str
    api_key: str | None = None
    timeout_s: float = 120.0
    max_retries: int = 5
    retries: int = 0                   # retries made so far, over all calls
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        import openai  # here: the package takes a third of a second to import, and most
        # commands that import this module never make a request

        self._client = openai.OpenAI(base_url=base_url_of(self.base_url),
                                     api_key=self.api_key or _NO_KEY,
                                     timeout=self.timeout_s, max_retries=self.max_retries)
        self._headers = None if self.api_key else {"Authorization": openai.omit}

    @property
    def url(self) -> str:
        return endpoint(self.base_url)

    def complete(self, body: dict, cancelled: CancelCheck | None = None) -> dict:
        """POST one chat-completions request (`body` as the API takes it); the response JSON.

        `cancelled` is checked before the request: the library's own retry waits are short
        (at most its backoff cap) and not interruptible.
        """
        if cancelled and cancelled():
            raise LLMError(f"{self.url}: cancelled")
        import openai

        body = {k: v for k, v in body.items() if k != "stream"}
        try:
            raw = self._client.chat.completions.with_raw_response.create(
                **body, extra_headers=self._headers)
        except openai.APIStatusError as exc:
            retried = exc.status_code in RETRY_STATUSES or exc.status_code >= 500
            self._count(self.max_retries if retried else 0)
            problem = f"HTTP {exc.status_code}: {_detail(exc)}"
            if retried and self.max_retries:
                raise LLMError(f"{self.url}: gave up after {self.max_retries + 1} attempts "
                               f"({problem})") from None
            raise LLMError(f"{self.url}: {problem}") from None
        except openai.APIConnectionError as exc:
            self._count(self.max_retries)
            cause = exc.__cause__ or exc
            raise LLMError(f"{self.url}: gave up after {self.max_retries + 1} attempts "
                           f"(connection failed: {cause})") from None
        except openai.OpenAIError as exc:
            raise LLMError(f"{self.url}: {' '.join(str(exc).split())[:200]}") from None
        self._count(getattr(raw, "retries_taken", 0))
        try:
            return json.loads(raw.http_response.text)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise LLMError(f"{self.url}: response is not JSON") from None

    def chat(self, model: str, messages: list[dict], temperature: float = 0.0,
             max_tokens: int | None = None, cancelled: CancelCheck | None = None) -> str:
        """One answer's text."""
        body: dict = {"model": model, "messages": messages, "temperature": temperature}
        if max_tokens:
            body["max_tokens"] = max_tokens
        return content_of(self.complete(body, cancelled))

    def _count(self, n: int) -> None:
        with self._lock:
            self.retries += n

    def close(self) -> None:
        self._client.close()


def _detail(exc) -> str:
    """Why an openai.APIStatusError happened, in one short line."""
    import openai

    body = exc.body
    text = ""
    if isinstance(body, dict):
        message = body.get("message") or body.get("error") or ""
        text = message.get("message", "") if isinstance(message, dict) else str(message)
    elif isinstance(body, str):
        text = body
    if not text:
        try:
            text = exc.response.text
        except (openai.OpenAIError, UnicodeDecodeError, RuntimeError):
            text = ""
    return " ".join(str(text).split())[:200] or exc.message or "no details"


def content_of(response: dict) -> str:
    try:
        content = response["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise LLMError("response has no choices[0].message.content") from None
    if content is None:
        content = ""
    if not isinstance(content, str):  # some servers send a list of content parts
        content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content


def client_for(base_url: str, api_key_env: str = DEFAULT_KEY_ENV, timeout_s: float = 120.0,
               max_retries: int = 5) -> ChatClient:
    """A client whose key comes from `api_key_env` (unset: no key sent)."""
    return ChatClient(base_url, api_key=key_from_env(api_key_env), timeout_s=timeout_s,
                      max_retries=max_retries)


@dataclass(frozen=True)
class EndpointSettings:
    """curator.toml's [llm] table: the endpoint model-assisted curation uses by default."""
    base_url: str | None = None
    model: str | None = None
    api_key_env: str = DEFAULT_KEY_ENV
    timeout_s: float = 120.0
    max_retries: int = 5

    @classmethod
    def from_config(cls, config: Config) -> EndpointSettings:
        """From the [llm] table (curator.config checked its types when it read it)."""
        table = config.llm
        return cls(base_url=table.base_url or None, model=table.model or None,
                   api_key_env=table.api_key_env or DEFAULT_KEY_ENV,
                   timeout_s=table.timeout_s, max_retries=table.max_retries)

    def client(self, base_url: str | None = None, api_key_env: str | None = None
               ) -> ChatClient | None:
        """A client for `base_url` (else the configured one); None when there is neither."""
        url = base_url or self.base_url
        if not url:
            return None
        return client_for(url, api_key_env or self.api_key_env, self.timeout_s,
                          self.max_retries)
