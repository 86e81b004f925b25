"""The OpenAI-compatible HTTP chat backend and the checks of its request settings.

:class:`OpenAIChatBackend` posts to ``{base_url}/chat/completions`` with
``temperature``, ``top_p`` and ``max_tokens`` always sent explicitly, a
per-request ``seed`` where the server supports one, and (``structured="auto"``
or ``"json_schema"``) a ``response_format`` JSON schema whose ``enum`` lists
the legal action names. Calls are retried with exponential backoff and jitter
on 429, 5xx, timeouts, connection errors and malformed 200 replies, never on
other 4xx. ``structured="auto"`` drops ``response_format`` for the rest of the
run when the server rejects it with a 400. Replies can be cached
(:class:`~alem.text.llm.cache.RequestCache`).

Limits against a slow or hostile server: ``timeout_s`` is a deadline for the whole
request (connect, send and the complete reply), however slowly the bytes trickle in;
a reply body larger than ``max_reply_bytes`` is cut there and counted as an
``oversized`` error (retried); any reply that is not a well-formed completion (bad
JSON, nesting too deep, token counts that are not counts, no choices; see
:mod:`alem.text.llm.completions`) is a ``malformed`` error (retried), never an exception
that stops a run. Text that UTF-8 cannot hold (lone surrogates) is replaced by U+FFFD
before anything stores it. Credentials in ``base_url`` (``http://user:key@host``,
``?api_key=``) are used for requests but never shown: messages and :meth:`describe`
carry :func:`~alem.sanitize.redact_url`'s form. Everything a server answers (replies,
error bodies, cut and malformed replies, model lists, cached replies) passes
:class:`~alem.sanitize.Secrets` on its way in, so the API key and the URL's credentials,
in any form a server may repeat them (``Bearer <key>``, the base64 of a Basic header), reach
no file, message or exception. :func:`check_auth` refuses an API key together with
credentials in the URL: both would be the ``Authorization`` header, and one would silently win.

:func:`check_settings` validates the request settings named in :data:`CHECKED_SETTINGS`
(the backend on construction, :class:`~alem.text.llm.player.LLMPlayer` before any server starts).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import random
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from alem.errors import (
    BackendConfigError,
    BackendUnavailable,
    CacheMiss,
    RequestFailed,
    TextBackendError,
)
from alem.sanitize import Secrets, clean_text, redact_url
from alem.text.llm.cache import RequestCache
from alem.text.llm.chat import ChatBackend, Reply
from alem.text.llm.completions import parse_body, parse_completion
from alem.text.llm.parsing import action_schema

__all__ = ["OpenAIChatBackend", "check_settings", "check_auth", "CHECKED_SETTINGS"]


class _Oversized(Exception):
    """A reply body went past ``max_reply_bytes``; ``head`` is what was read."""

    def __init__(self, head: bytes, limit: int):
        super().__init__(f"reply larger than {limit} bytes")
        self.head = head


#: The request settings :func:`check_settings` knows (also the keys LLMPlayer checks up front).
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


def check_auth(base_url: str, api_key_env: str | None) -> None:
    """Raise :class:`BackendConfigError` when an API key and credentials in the URL are both given.

    The key goes as ``Authorization: Bearer``, the URL's ``user:password@`` as ``Authorization:
    Basic``; a request carries one, so one of them would be dropped without a word.
    """
    try:
        in_url = isinstance(base_url, str) and "@" in urlsplit(base_url).netloc
    except ValueError:  # an unparseable URL is refused as such by the backend
        in_url = False
    if api_key_env and in_url:
        raise BackendConfigError(
            f"llm.api_key_env={api_key_env} and the credentials in llm.base_url={redact_url(base_url)} "
            "are both the Authorization header (Bearer and Basic), and only one can be sent: "
            "set llm.api_key_env=null or remove user:password@ from llm.base_url"
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
                "llm.base_url must be an http(s) URL such as http://127.0.0.1:8000/v1, got "
                f"{redact_url(base_url) if isinstance(base_url, str) else base_url!r}"
            )
        check_auth(base_url, api_key_env)
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
        # A query (``?api-version=``, ``?api_key=``) stays after the endpoint's path.
        path, sep, query = base_url.partition("?")
        self.base_url = path.rstrip("/") + sep + query
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
        self._secrets: tuple[str | None, Secrets] | None = None

    # -- plumbing
    def _api_key(self) -> str | None:
        return os.environ.get(self.api_key_env) if self.api_key_env else None

    def _url(self, endpoint: str, public: bool = False) -> str:
        """``{base_url}{endpoint}``, the base URL's query after the endpoint."""
        base, sep, query = (self.public_url if public else self.base_url).partition("?")
        return f"{base}{endpoint}{sep}{query}"

    def _scrub(self) -> Secrets:
        """The credentials this backend sends (the key is read when a request is made)."""
        key = self._api_key()
        if self._secrets is None or self._secrets[0] != key:
            self._secrets = (key, Secrets(self.base_url, key, self.headers))
        return self._secrets[1]

    def _text(self, data: bytes, limit: int, cut: bool = False) -> str:
        """At most ``limit`` characters of server bytes, safe to store: redacted, then cut."""
        return self._scrub().redact(clean_text(data.decode("utf-8", "replace")), cut=cut)[:limit]

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
                try:  # a cache file may hold what an earlier version stored unredacted
                    content, t_in, t_out, finish = parse_completion(self._scrub().redact_tree(hit))
                except ValueError:
                    self.cache.invalidate(key)  # validated like a live reply; fetched again below
                else:
                    return Reply(content, t_in, t_out, 0.0, 0, True, structured, finish)
            if self.cache.mode == "replay":
                raise CacheMiss(
                    f"a request is not in the replay cache {self.cache.path} (or its entry is invalid); "
                    "record it with llm.cache_mode=readwrite against a live server"
                )
        url = self._url("/chat/completions")
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
                head = self._text(e.head, 2000, cut=True)
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
                    raise RequestFailed(
                        f"{self._url('/chat/completions', True)} answered {code}: {self._text(data, 300)}",
                        f"http_{code}",
                        [*errors, f"http_{code}"],
                    )
                else:
                    try:
                        payload, _ = parse_body(data)
                        payload = self._scrub().redact_tree(payload)
                        content, t_in, t_out, finish = parse_completion(payload)
                    except ValueError as e:
                        errors.append("malformed")
                        detail = {"malformed": self._scrub().redact(str(e))[:200]}
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
            f"{self._url('/chat/completions', True)} failed {len(errors)} times ({', '.join(errors)})",
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
                f"the API key variable {self.api_key_env} is not set (needed for {self.public_url}); "
                f"export {self.api_key_env}=... or set llm.api_key_env=null for a server without keys",
                "missing_key",
            )
        url = self._url("/models", public=True)
        try:
            code, _headers, raw = await self._request("GET", self._url("/models"))
        except (TimeoutError, httpx.HTTPError, _Oversized) as e:
            why = self._scrub().redact(f"{type(e).__name__}: {e}" if str(e) else type(e).__name__)
            raise BackendUnavailable(
                f"cannot reach {self.public_url} within timeout_s={self.timeout_s} ({why}); is the server "
                "running and is llm.base_url right (it should end before /chat/completions, e.g. .../v1)?",
                "unreachable",
            ) from None
        text = self._text(raw, 200)
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
            shown = sorted(self._scrub().redact(clean_text(m))[:80] for m in served)[:20]
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
