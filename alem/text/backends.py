"""Chat backends: any OpenAI-compatible HTTP endpoint, and scripted stand-ins.

:class:`OpenAIChatBackend` posts to ``{base_url}/chat/completions`` with
``temperature``, ``top_p`` and ``max_tokens`` always sent explicitly, a
per-request ``seed`` where the server supports one, and (``structured="auto"``
or ``"json_schema"``) a ``response_format`` JSON schema whose ``enum`` lists
the legal action names. Calls are retried with exponential backoff and jitter
on 429, 5xx, timeouts, connection errors and malformed 200 replies, never on
other 4xx. ``structured="auto"`` drops ``response_format`` for the rest of the
run when the server rejects it with a 400.

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
import os
import random
import re
import threading
import time
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, TypeVar

from alem.errors import AlemError
from alem.text.parsing import action_schema

__all__ = [
    "TextBackendError",
    "BackendUnavailable",
    "RequestFailed",
    "Reply",
    "RequestCache",
    "ChatBackend",
    "OpenAIChatBackend",
    "ScriptedBackend",
    "run_sync",
    "gather_or_cancel",
]

T = TypeVar("T")


class TextBackendError(AlemError):
    """A chat backend failed; ``kind`` says how (``timeout``, ``http_429``, ``malformed``, ...)."""

    def __init__(self, message: str, kind: str = "error"):
        super().__init__(message)
        self.kind = kind


class BackendUnavailable(TextBackendError, ConnectionError):
    """The health check before a run failed (unreachable, wrong model, missing or rejected key)."""


class RequestFailed(TextBackendError):
    """One chat request failed for good (after retries, or a non-retryable client error).

    ``errors`` lists the kinds of every failed try, the last one included.
    """

    def __init__(self, message: str, kind: str = "error", errors: list[str] | None = None):
        super().__init__(message, kind)
        self.errors = list(errors) if errors is not None else [kind]


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


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on this thread's persistent event loop (HTTP clients stay bound to one loop)."""
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
    """

    MODES = ("readwrite", "replay", "write")

    def __init__(self, path: str | Path, mode: str = "readwrite"):
        if mode not in self.MODES:
            raise ValueError(f"cache mode must be one of {self.MODES}, got {mode!r}")
        self.path, self.mode = Path(path), mode
        self._store: dict[str, dict] = {}
        self.hits = self.misses = 0
        if self.path.exists():
            from alem.rundir import read_jsonl

            for rec in read_jsonl(self.path):
                if isinstance(rec, dict) and "key" in rec and "response" in rec:
                    self._store[rec["key"]] = rec["response"]
        elif mode == "replay":
            raise FileNotFoundError(f"replay cache {self.path} does not exist")

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

    def put(self, key: str, response: dict) -> None:
        if self.mode == "replay":
            return
        self._store[key] = response
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a") as f:
            f.write(json.dumps({"key": key, "response": response}) + "\n")

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


def _parse_completion(payload: Any) -> tuple[str, int, int, str | None]:
    """Content, prompt and completion tokens of a chat-completions JSON body (raises on garbage)."""
    choices = payload.get("choices") if isinstance(payload, dict) else None
    if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict):
        raise ValueError("no choices in the reply")
    message = choices[0].get("message") or {}
    content = message.get("content")
    if content is None:
        raise ValueError("the first choice has no message content")
    usage = payload.get("usage") or {}
    return (
        str(content),
        int(usage.get("prompt_tokens") or 0),
        int(usage.get("completion_tokens") or 0),
        choices[0].get("finish_reason"),
    )


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
        timeout_s: per-request timeout (connect + read).
        max_retries: retries after the first try on 429/5xx/timeouts/connection errors/garbage.
        backoff_s, backoff_cap_s: backoff before retry k is uniform in [d/2, d] with
            ``d = min(backoff_cap_s, backoff_s * 2**k)``; a ``Retry-After`` header raises it.
        extra_body: extra request fields (e.g. ``{"cache_prompt": false}`` for llama.cpp,
            whose seeds reproduce only without prompt caching).
        cache: a :class:`RequestCache` (or a path for a read-write one).
        headers: extra HTTP headers.
    """

    name = "openai"
    STRUCTURED = ("auto", "json_schema", "off")

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
        extra_body: dict[str, Any] | None = None,
        cache: RequestCache | str | Path | None = None,
        headers: dict[str, str] | None = None,
    ):
        if not base_url or not isinstance(base_url, str):
            raise ValueError(f"base_url must be a URL such as http://127.0.0.1:8000/v1, got {base_url!r}")
        if not model:
            raise ValueError("model must name the model to query (see GET {base_url}/models)")
        if structured not in self.STRUCTURED:
            raise ValueError(f"structured must be one of {self.STRUCTURED}, got {structured!r}")
        if int(max_tokens) < 1 or float(timeout_s) <= 0 or int(max_retries) < 0:
            raise ValueError("max_tokens >= 1, timeout_s > 0 and max_retries >= 0 are required")
        self.base_url = base_url.rstrip("/")
        self.model = str(model)
        self.api_key_env = api_key_env or None
        self.temperature, self.top_p, self.max_tokens = float(temperature), float(top_p), int(max_tokens)
        self.send_seed, self.structured = bool(send_seed), structured
        self.timeout_s, self.max_retries = float(timeout_s), int(max_retries)
        self.backoff_s, self.backoff_cap_s = float(backoff_s), float(backoff_cap_s)
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
                content, t_in, t_out, finish = _parse_completion(hit)
                return Reply(content, t_in, t_out, 0.0, 0, True, structured, finish)
            if self.cache.mode == "replay":
                raise RequestFailed("request not in the replay cache", "cache_miss")
        client = self._get_client()
        errors: list[str] = []
        t0 = time.perf_counter()
        for attempt in range(self.max_retries + 1):
            retry_after = None
            try:
                r = await client.post(f"{self.base_url}/chat/completions", json=body)
            except httpx.TimeoutException:
                errors.append("timeout")
            except httpx.TransportError:
                errors.append("connection")
            else:
                code = r.status_code
                if code == 429 or code >= 500:
                    errors.append(f"http_{code}")
                    retry_after = r.headers.get("retry-after")
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
                    raise RequestFailed(
                        f"{self.base_url}/chat/completions answered {code}: {r.text[:300]}",
                        f"http_{code}",
                        [*errors, f"http_{code}"],
                    )
                else:
                    try:
                        payload = r.json()
                        content, t_in, t_out, finish = _parse_completion(payload)
                    except (ValueError, TypeError, AttributeError):
                        errors.append("malformed")
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
            f"{self.base_url}/chat/completions failed {len(errors)} times ({', '.join(errors)})",
            errors[-1] if errors else "error",
            errors,
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
        client = self._get_client()
        url = f"{self.base_url}/models"
        try:
            r = await client.get(url, timeout=min(self.timeout_s, 30.0))
        except httpx.HTTPError as e:
            raise BackendUnavailable(
                f"cannot reach {self.base_url} ({type(e).__name__}: {e}); is the server running "
                "and is llm.base_url right (it should end before /chat/completions, e.g. .../v1)?",
                "unreachable",
            ) from None
        if r.status_code in (401, 403):
            raise BackendUnavailable(
                f"{url} rejected the API key (HTTP {r.status_code}); check ${self.api_key_env}", "bad_key"
            )
        if r.status_code == 404:
            await self._probe()
            return
        if r.status_code >= 400:
            raise BackendUnavailable(f"{url} answered HTTP {r.status_code}: {r.text[:200]}", "unhealthy")
        try:
            data = r.json().get("data")
            served = set()
            for m in data:
                served.add(str(m["id"]))
                served.update(str(a) for a in m.get("aliases") or [])
        except (ValueError, TypeError, KeyError, AttributeError):
            raise BackendUnavailable(
                f"{url} did not answer like an OpenAI-compatible server (no model list): {r.text[:200]}",
                "unhealthy",
            ) from None
        if served and self.model not in served:
            raise BackendUnavailable(
                f"model {self.model!r} is not served at {self.base_url}; it serves {sorted(served)[:20]}",
                "wrong_model",
            )

    async def _probe(self) -> None:
        saved = self.max_retries
        self.max_retries = 0
        try:
            await self.chat([{"role": "user", "content": "Say OK."}], seed=0)
        except RequestFailed as e:
            raise BackendUnavailable(f"probe request to {self.base_url} failed: {e}", e.kind) from None
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
            "base_url": self.base_url,
            "model": self.model,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
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
