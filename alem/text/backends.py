"""Chat backends: any OpenAI-compatible HTTP endpoint, and scripted stand-ins.

:class:`OpenAIChatBackend` posts to ``{base_url}/chat/completions`` with
``temperature``, ``top_p`` and ``max_tokens`` always sent explicitly, a
per-request ``seed`` where the server supports one, and (``structured="auto"``
or ``"json_schema"``) a ``response_format`` JSON schema whose ``enum`` lists
the legal action names. Calls are retried with exponential backoff and jitter
on 429, 5xx, timeouts, connection errors and malformed 200 replies, never on
other 4xx. ``structured="auto"`` drops ``response_format`` for the rest of the
run when the server rejects it with a 400.

Limits against a slow or hostile server: ``timeout_s`` is a deadline for the whole
request (connect, send and the complete reply), however slowly the bytes trickle in;
a reply body larger than ``max_reply_bytes`` is cut there and counted as an
``oversized`` error (retried); any reply that is not a well-formed completion (bad
JSON, nesting too deep, token counts that are not counts, no choices) is a
``malformed`` error (retried), never an exception that stops a run. Text that UTF-8
cannot hold (lone surrogates) is replaced by U+FFFD before anything stores it.
Credentials in ``base_url`` (``http://user:key@host``, ``?api_key=``) are used for
requests but never shown: messages and :meth:`describe` carry :func:`redact_url`'s form.

:class:`RequestCache` stores replies keyed by the full request body (and
endpoint path, not host), so a cached run replays offline, and a cache in
``mode="replay"`` turns a recorded evaluation into a test fixture.

:class:`ScriptedBackend` answers without a server (``script="random"``: a
random legal action, ``"first"``: the first legal action, or any callable),
with the same :class:`Reply` shape, for tests and dry runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import json
import math
import os
import random
import re
import threading
import time
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, TypeVar

from alem.errors import (
    BackendConfigError,
    BackendUnavailable,
    CacheMiss,
    RequestFailed,
    TextBackendError,
)
from alem.text.parsing import action_schema

__all__ = [
    "TextBackendError",
    "BackendUnavailable",
    "RequestFailed",
    "CacheMiss",
    "BackendConfigError",
    "Reply",
    "redact_url",
    "RequestCache",
    "ChatBackend",
    "OpenAIChatBackend",
    "ScriptedBackend",
    "run_sync",
    "gather_or_cancel",
]

T = TypeVar("T")







class _Oversized(Exception):
    """A reply body went past ``max_reply_bytes``; ``head`` is what was read."""

    def __init__(self, head: bytes, limit: int):
        super().__init__(f"reply larger than {limit} bytes")
        self.head = head


def redact_url(url: str) -> str:
    """``url`` without secrets: the password of ``user:password@`` and values of key-like query fields."""
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable url>"
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        user = userinfo.split(":", 1)[0]
        netloc = f"{user}:***@{host}" if ":" in userinfo else f"***@{host}"
    query = parts.query
    if query:
        secret = re.compile(r"key|token|secret|pass|auth|sig", re.I)
        pairs = [(k, "***" if secret.search(k) else v) for k, v in parse_qsl(query, keep_blank_values=True)]
        query = urlencode(pairs, safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """``text`` with what UTF-8 cannot encode (lone surrogates) replaced by U+FFFD."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)


@dataclasses.dataclass
class Reply:
    """One chat completion as the text bridge uses it."""

    content: str
    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0
    retries: int = 0  # failed tries before this reply
    cached: bool = False
    structured: bool = False  # response_format was sent
    finish_reason: str | None = None
    errors: list[str] = dataclasses.field(default_factory=list)  # kinds of the failed tries


# ---------------------------------------------------------------------------- event loop
_LOCAL = threading.local()


_WORKER: Any = None  # one thread for calls made inside a running loop (see run_sync)
_WORKER_LOCK = threading.Lock()


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on this thread's persistent event loop (HTTP clients stay bound to one loop).

    Called where a loop is already running on this thread (a Jupyter notebook, an async
    app), it runs on one persistent worker thread and its loop instead, and blocks until done.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        global _WORKER
        with _WORKER_LOCK:
            if _WORKER is None:
                from concurrent.futures import ThreadPoolExecutor

                _WORKER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="alem-run-sync")
        return _WORKER.submit(run_sync, coro).result()
    loop = getattr(_LOCAL, "loop", None)
    if loop is None or loop.is_closed():
        loop = _LOCAL.loop = asyncio.new_event_loop()
    return loop.run_until_complete(coro)


async def gather_or_cancel(*coros: Coroutine[Any, Any, T]) -> list[T]:
    """``asyncio.gather`` that cancels the other tasks when one fails (nothing left running after)."""
    tasks = [asyncio.ensure_future(c) for c in coros]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


# ---------------------------------------------------------------------------- cache
class RequestCache:
    """Replies keyed by the full request (endpoint path + body), persisted as JSONL.

    Args:
        path: the JSONL file (created on first write).
        mode: ``"readwrite"`` (look up, store misses), ``"replay"`` (look up only; a
            miss is an error, so a test can prove it ran fully offline) or ``"write"``
            (store, never look up: re-record).

    Crash safety: each entry is one whole line appended and flushed; a torn last line
    (a kill mid-write) is cut off when the cache is opened, so later appends never glue
    onto it. Corrupt entries elsewhere are skipped and counted in ``corrupt``;
    entries whose reply fails validation are dropped by :meth:`invalidate` (``invalid``).
    """

    MODES = ("readwrite", "replay", "write")

    def __init__(self, path: str | Path, mode: str = "readwrite"):
        if mode not in self.MODES:
            raise BackendConfigError(f"llm.cache_mode must be one of {list(self.MODES)}, got {mode!r}")
        self.path, self.mode = Path(path), mode
        self._store: dict[str, dict] = {}
        self.hits = self.misses = self.corrupt = self.invalid = 0
        if self.path.is_dir():
            raise BackendConfigError(f"llm.cache={self.path} is a directory; give a file path")
        if self.path.exists():
            from alem.rundir import read_jsonl, repair_tail

            if mode != "replay":
                repair_tail(self.path)  # a torn entry would corrupt the next append
            for rec in read_jsonl(self.path, on_corrupt=self._count_corrupt):
                if (
                    isinstance(rec, dict)
                    and isinstance(rec.get("key"), str)
                    and isinstance(rec.get("response"), dict)
                ):
                    self._store[rec["key"]] = rec["response"]
                else:
                    self.corrupt += 1
        elif mode == "replay":
            raise BackendConfigError(f"replay cache {self.path} does not exist")

    def _count_corrupt(self, line: int, text: str) -> None:
        self.corrupt += 1

    @staticmethod
    def key(endpoint: str, body: dict) -> str:
        blob = json.dumps({"endpoint": endpoint, "body": body}, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()

    def get(self, key: str) -> dict | None:
        if self.mode == "write":
            return None
        hit = self._store.get(key)
        if hit is None:
            self.misses += 1
        else:
            self.hits += 1
        return hit

    def invalidate(self, key: str) -> None:
        """Forget an entry whose reply failed validation (it is fetched again and re-stored)."""
        if self._store.pop(key, None) is not None:
            self.invalid += 1
            self.hits -= 1
            self.misses += 1

    def put(self, key: str, response: dict) -> None:
        if self.mode == "replay":
            return
        self._store[key] = response
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps({"key": key, "response": response}) + "\n"  # ASCII: any text survives
        with self.path.open("a", encoding="utf-8") as f:
            f.write(line)
            f.flush()

    def __len__(self) -> int:
        return len(self._store)


# ---------------------------------------------------------------------------- backends
class ChatBackend:
    """Interface: ``await chat(messages, legal_names=..., seed=...) -> Reply``."""

    name = "backend"

    async def chat(
        self,
        messages: list[dict[str, str]],
        *,
        legal_names: Sequence[str] | None = None,
        seed: int | None = None,
    ) -> Reply:
        raise NotImplementedError

    async def health_check(self) -> None:
        """Raise :class:`BackendUnavailable` with a clear message when the backend cannot serve."""

    async def aclose(self) -> None:
        """Close connections."""

    def describe(self) -> dict[str, Any]:
        return {"backend": self.name}


_MAX_TOKEN_COUNT = 2**53  # any real count fits; larger (or 1e400 = inf) is garbage


def _token_count(usage: dict, field: str) -> int:
    value = usage.get(field)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"usage.{field}={value!r} is not a token count")
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        raise ValueError(f"usage.{field}={value!r} is not a token count")
    if not 0 <= value < _MAX_TOKEN_COUNT:
        raise ValueError(f"usage.{field}={value!r} is out of range")
    return int(value)


def _parse_completion(payload: Any) -> tuple[str, int, int, str | None]:
    """Content, prompt and completion tokens and finish reason of a chat-completions body.

    Raises ValueError (only) on anything that is not a well-formed completion.
    """
    choices = payload.get("choices") if isinstance(payload, dict) else None
    if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict):
        raise ValueError("no choices in the reply")
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str):
        raise ValueError("the first choice has no message content")
    usage = payload.get("usage") or {}
    if not isinstance(usage, dict):
        raise ValueError(f"usage is not an object: {usage!r:.60}")
    finish = choices[0].get("finish_reason")
    return (
        clean_text(content),
        _token_count(usage, "prompt_tokens"),
        _token_count(usage, "completion_tokens"),
        clean_text(finish) if isinstance(finish, str) else None,
    )


def _parse_body(data: bytes) -> tuple[Any, tuple[str, int, int, str | None]]:
    """``(payload, parsed completion)`` of a reply body; ValueError for anything malformed."""
    try:
        payload = json.loads(data.decode("utf-8", "replace"))
    except RecursionError:
        raise ValueError("the reply nests too deep") from None
    return payload, _parse_completion(payload)


#: The request settings :func:`check_settings` knows (also the keys LLMPolicy checks up front).
CHECKED_SETTINGS = (
    "temperature",
    "top_p",
    "max_tokens",
    "timeout_s",
    "max_retries",
    "backoff_s",
    "backoff_cap_s",
    "max_reply_bytes",
)


def check_settings(**settings: Any) -> None:
    """Raise :class:`BackendConfigError` naming the first request setting with a bad value."""
    rules = {
        "temperature": (float, 0.0, None, True),
        "top_p": (float, 0.0, 1.0, True),
        "max_tokens": (int, 1, None, True),
        "timeout_s": (float, 0.0, None, False),
        "max_retries": (int, 0, None, True),
        "backoff_s": (float, 0.0, None, True),
        "backoff_cap_s": (float, 0.0, None, True),
        "max_reply_bytes": (int, 1024, None, True),
    }
    for name, value in settings.items():
        kind, low, high, low_ok = rules[name]
        numeric = isinstance(value, int | float) and not isinstance(value, bool)
        ok = numeric and math.isfinite(value) and (kind is float or isinstance(value, int))
        ok = ok and (value >= low if low_ok else value > low) and (high is None or value <= high)
        if not ok:
            bound = f">= {low}" if low_ok else f"> {low}"
            if high is not None:
                bound += f" and <= {high}"
            what = "an integer" if kind is int else "a number"
            raise BackendConfigError(f"llm.{name} must be {what} {bound}, got {value!r}")


class OpenAIChatBackend(ChatBackend):
    """An OpenAI-compatible chat-completions endpoint (vLLM, llama.cpp server, ollama, hosted APIs).

    Args:
        base_url: e.g. ``http://127.0.0.1:8000/v1`` (the part before ``/chat/completions``).
        model: the model name sent in every request (and checked by :meth:`health_check`).
        api_key_env: name of the environment variable holding the API key (None: no key).
        temperature, top_p, max_tokens: sampling settings, always sent.
        send_seed: send a per-request ``seed`` (reproducible sampling where supported).
        structured: ``"auto"`` (send ``response_format`` until the server rejects it),
            ``"json_schema"`` (always send it) or ``"off"``.
        timeout_s: deadline of one request try: connect, send and the whole reply.
        max_retries: retries after the first try on 429/5xx/timeouts/connection errors/garbage.
        backoff_s, backoff_cap_s: backoff before retry k is uniform in [d/2, d] with
            ``d = min(backoff_cap_s, backoff_s * 2**k)``; a ``Retry-After`` header raises it.
        max_reply_bytes: the most of a reply body that is read; a longer reply is cut
            there and counts as an ``oversized`` error (default 256 KiB: ample for chat).
        extra_body: extra request fields (e.g. ``{"cache_prompt": false}`` for llama.cpp,
            whose seeds reproduce only without prompt caching).
        cache: a :class:`RequestCache` (or a path for a read-write one).
        headers: extra HTTP headers.
    """

    name = "openai"
    STRUCTURED = ("auto", "json_schema", "off")
    MAX_REPLY_BYTES = 256 * 1024

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key_env: str | None = None,
        temperature: float = 0.0,
        top_p: float = 1.0,
        max_tokens: int = 32,
        send_seed: bool = True,
        structured: str = "auto",
        timeout_s: float = 60.0,
        max_retries: int = 4,
        backoff_s: float = 0.5,
        backoff_cap_s: float = 20.0,
        max_reply_bytes: int = MAX_REPLY_BYTES,
        extra_body: dict[str, Any] | None = None,
        cache: RequestCache | str | Path | None = None,
        headers: dict[str, str] | None = None,
    ):
        if not base_url or not isinstance(base_url, str) or not re.match(r"^https?://[^/]", base_url):
            raise BackendConfigError(
                f"llm.base_url must be an http(s) URL such as http://127.0.0.1:8000/v1, got {base_url!r}"
            )
        if not model:
            raise BackendConfigError("llm.model must name the model to query (see GET {base_url}/models)")
        if structured not in self.STRUCTURED:
            raise BackendConfigError(
                f"llm.structured must be one of {list(self.STRUCTURED)}, got {structured!r}"
            )
        check_settings(
            temperature=temperature,
            top_p=top_p,
            max_tokens=max_tokens,
            timeout_s=timeout_s,
            max_retries=max_retries,
            backoff_s=backoff_s,
            backoff_cap_s=backoff_cap_s,
            max_reply_bytes=max_reply_bytes,
        )
        self.base_url = base_url.rstrip("/")
        self.public_url = redact_url(self.base_url)
        self.model = str(model)
        self.api_key_env = api_key_env or None
        self.temperature, self.top_p, self.max_tokens = float(temperature), float(top_p), int(max_tokens)
        self.send_seed, self.structured = bool(send_seed), structured
        self.timeout_s, self.max_retries = float(timeout_s), int(max_retries)
        self.backoff_s, self.backoff_cap_s = float(backoff_s), float(backoff_cap_s)
        self.max_reply_bytes = int(max_reply_bytes)
        self.extra_body = dict(extra_body or {})
        self.cache = RequestCache(cache) if isinstance(cache, str | Path) else cache
        self.headers = dict(headers or {})
        self.structured_rejected = False
        self._client = None
        self._client_loop = None
        self._rng = random.Random(0)  # jitter only; never affects results

    # -- plumbing
    def _api_key(self) -> str | None:
        return os.environ.get(self.api_key_env) if self.api_key_env else None

    def _get_client(self):
        try:
            import httpx
        except ImportError:  # pragma: no cover - httpx is in the llm extra
            raise TextBackendError(
                "the OpenAI-compatible backend needs httpx: pip install 'alem[llm]'", "missing_dependency"
            ) from None
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            headers = {"Content-Type": "application/json", **self.headers}
            key = self._api_key()
            if key:
                headers["Authorization"] = f"Bearer {key}"
            self._client = httpx.AsyncClient(headers=headers, timeout=self.timeout_s)
            self._client_loop = loop
        return self._client

    def _body(self, messages, legal_names, seed) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
        }
        if self.send_seed and seed is not None:
            body["seed"] = int(seed)
        use_schema = self.structured == "json_schema" or (
            self.structured == "auto" and not self.structured_rejected
        )
        if use_schema and legal_names:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "move", "strict": True, "schema": action_schema(legal_names)},
            }
        body.update(self.extra_body)
        return body

    def _delay(self, retry: int, retry_after: str | None) -> float:
        d = min(self.backoff_cap_s, self.backoff_s * 2**retry)
        delay = self._rng.uniform(d / 2, d)
        if retry_after:
            with contextlib.suppress(ValueError):
                delay = max(delay, min(float(retry_after), self.backoff_cap_s))
        return delay

    async def _request(self, method: str, url: str, body: dict | None = None) -> tuple[int, Any, bytes]:
        """``(status, headers, body bytes)`` within the deadline; raises ``TimeoutError``,
        ``httpx.TransportError`` or :class:`_Oversized`."""
        client = self._get_client()
        # Serialised here as ASCII JSON: any text survives, whatever a server sent before.
        content = None if body is None else json.dumps(body).encode("ascii")
        async with asyncio.timeout(self.timeout_s):
            async with client.stream(method, url, content=content) as r:
                chunks, size = [], 0
                async for chunk in r.aiter_bytes():
                    chunks.append(chunk)
                    size += len(chunk)
                    if size > self.max_reply_bytes:
                        raise _Oversized(b"".join(chunks)[: self.max_reply_bytes], self.max_reply_bytes)
                return r.status_code, r.headers, b"".join(chunks)

    # -- API
    async def chat(
        self,
        messages: list[dict[str, str]],
        *,
        legal_names: Sequence[str] | None = None,
        seed: int | None = None,
    ) -> Reply:
        import httpx

        body = self._body(messages, legal_names, seed)
        structured = "response_format" in body
        key = RequestCache.key("/chat/completions", body) if self.cache is not None else None
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                try:
                    content, t_in, t_out, finish = _parse_completion(hit)
                except ValueError:
                    self.cache.invalidate(key)  # validated like a live reply; fetched again below
                else:
                    return Reply(content, t_in, t_out, 0.0, 0, True, structured, finish)
            if self.cache.mode == "replay":
                raise CacheMiss(
                    f"a request is not in the replay cache {self.cache.path} (or its entry is invalid); "
                    "record it with llm.cache_mode=readwrite against a live server"
                )
        url = f"{self.base_url}/chat/completions"
        errors: list[str] = []
        detail: dict[str, Any] = {}
        t0 = time.perf_counter()
        for attempt in range(self.max_retries + 1):
            retry_after = None
            try:
                code, headers, data = await self._request("POST", url, body)
            except (TimeoutError, httpx.TimeoutException):
                errors.append("timeout")
            except httpx.TransportError:
                errors.append("connection")
            except _Oversized as e:
                errors.append("oversized")
                head = clean_text(e.head[:2000].decode("utf-8", "replace"))
                detail = {"truncated": True, "reply_head": head, "reply_bytes_read": self.max_reply_bytes}
            else:
                if code == 429 or code >= 500:
                    errors.append(f"http_{code}")
                    retry_after = headers.get("retry-after")
                elif code >= 400:
                    if (
                        code == 400
                        and structured
                        and self.structured == "auto"
                        and not self.structured_rejected
                    ):
                        # The server does not take response_format: go on without it (text parser).
                        self.structured_rejected = True
                        reply = await self.chat(messages, legal_names=legal_names, seed=seed)
                        reply.errors = [f"http_{code}", *errors, *reply.errors]
                        return reply
                    text = clean_text(data[:300].decode("utf-8", "replace"))
                    raise RequestFailed(
                        f"{self.public_url}/chat/completions answered {code}: {text}",
                        f"http_{code}",
                        [*errors, f"http_{code}"],
                    )
                else:
                    try:
                        payload, (content, t_in, t_out, finish) = _parse_body(data)
                    except ValueError as e:
                        errors.append("malformed")
                        detail = {"malformed": str(e)[:200]}
                    else:
                        if self.cache is not None:
                            self.cache.put(key, payload)
                        latency = time.perf_counter() - t0
                        return Reply(
                            content, t_in, t_out, latency, attempt, False, structured, finish, errors
                        )
            if attempt < self.max_retries:
                await asyncio.sleep(self._delay(attempt, retry_after))
        raise RequestFailed(
            f"{self.public_url}/chat/completions failed {len(errors)} times ({', '.join(errors)})",
            errors[-1] if errors else "error",
            errors,
            detail,
        )

    async def health_check(self) -> None:
        """Check the key, reachability and the model name before a run; raise a clear error."""
        import httpx

        if self.cache is not None and self.cache.mode == "replay":
            return  # offline replay needs no server
        if self.api_key_env and not self._api_key():
            raise BackendUnavailable(
                f"the API key variable {self.api_key_env} is not set (needed for {self.base_url}); "
                f"export {self.api_key_env}=... or set llm.api_key_env=null for a server without keys",
                "missing_key",
            )
        url = f"{self.public_url}/models"
        try:
            code, _headers, raw = await self._request("GET", f"{self.base_url}/models")
        except (TimeoutError, httpx.HTTPError, _Oversized) as e:
            why = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
            raise BackendUnavailable(
                f"cannot reach {self.public_url} within timeout_s={self.timeout_s} ({why}); is the server "
                "running and is llm.base_url right (it should end before /chat/completions, e.g. .../v1)?",
                "unreachable",
            ) from None
        text = clean_text(raw[:200].decode("utf-8", "replace"))
        if code in (401, 403):
            raise BackendUnavailable(
                f"{url} rejected the API key (HTTP {code}); check ${self.api_key_env}", "bad_key"
            )
        if code == 404:
            await self._probe()
            return
        if code >= 400:
            raise BackendUnavailable(f"{url} answered HTTP {code}: {text}", "unhealthy")
        try:
            data = json.loads(raw.decode("utf-8", "replace")).get("data")
            served = set()
            for m in data:
                served.add(str(m["id"]))
                served.update(str(a) for a in m.get("aliases") or [])
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
            raise BackendUnavailable(
                f"{url} did not answer like an OpenAI-compatible server (no model list): {text}",
                "unhealthy",
            ) from None
        if served and self.model not in served:
            shown = sorted(clean_text(m)[:80] for m in served)[:20]
            raise BackendUnavailable(
                f"model {self.model!r} is not served at {self.public_url}; it serves {shown}",
                "wrong_model",
            )

    async def _probe(self) -> None:
        saved = self.max_retries
        self.max_retries = 0
        try:
            await self.chat([{"role": "user", "content": "Say OK."}], seed=0)
        except RequestFailed as e:
            raise BackendUnavailable(f"probe request to {self.public_url} failed: {e}", e.kind) from None
        finally:
            self.max_retries = saved

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            with contextlib.suppress(RuntimeError):  # its loop is gone; nothing left to close
                await client.aclose()

    def describe(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "base_url": self.public_url,
            "model": self.model,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
            "max_reply_bytes": self.max_reply_bytes,
            "structured": self.structured,
            "structured_rejected": self.structured_rejected,
        }


_LEGAL_LINE = re.compile(r"Legal actions:\s*(.+)")


def legal_names_in(body: dict[str, Any]) -> list[str]:
    """The legal action names of a chat request (its schema enum, else the last 'Legal actions:' line)."""
    rf = body.get("response_format") or {}
    try:
        return list(rf["json_schema"]["schema"]["properties"]["action"]["enum"])
    except (KeyError, TypeError):
        pass
    for m in reversed(body.get("messages") or []):
        found = _LEGAL_LINE.findall(str(m.get("content", "")))
        if found:
            return [s.strip() for s in found[-1].split(",") if s.strip()]
    return []


class ScriptedBackend(ChatBackend):
    """An LLM-shaped agent without a model: ``script(body) -> reply text``.

    ``script="random"`` answers a uniformly random legal action (seeded by the
    request's ``seed``), ``"first"`` the first legal one, both as
    ``{"action": name}``. Token counts are whitespace word counts.
    """

    name = "scripted"

    def __init__(self, script: str | Callable[[dict[str, Any]], str] = "random", *, structured: bool = True):
        if isinstance(script, str) and script not in ("random", "first"):
            raise ValueError(f"script must be 'random', 'first' or a callable, got {script!r}")
        self.script, self.structured = script, structured

    async def chat(
        self,
        messages: list[dict[str, str]],
        *,
        legal_names: Sequence[str] | None = None,
        seed: int | None = None,
    ) -> Reply:
        body: dict[str, Any] = {"messages": messages, "seed": seed}
        if self.structured and legal_names:
            body["response_format"] = {"json_schema": {"schema": action_schema(legal_names)}}
        if callable(self.script):
            content = self.script(body)
        else:
            names = legal_names_in(body)
            if not names:
                content = "I do not know."
            else:
                pick = names[0] if self.script == "first" else random.Random(seed).choice(names)
                content = json.dumps({"action": pick})
        t_in = sum(len(str(m.get("content", "")).split()) for m in messages)
        return Reply(content, t_in, len(content.split()), 0.0, 0, False, "response_format" in body, "stop")

    def describe(self) -> dict[str, Any]:
        return {"backend": self.name, "script": self.script if isinstance(self.script, str) else "callable"}
