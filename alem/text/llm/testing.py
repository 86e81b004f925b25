"""A real OpenAI-compatible HTTP server on 127.0.0.1 with a scripted player and fault injection.

For tests and for checking a setup offline::

    with FakeChatServer(script="random", faults=["429", "500"]) as srv:
        backend = OpenAIChatBackend(srv.base_url, "fake-model")

It serves ``GET /v1/models`` and ``POST /v1/chat/completions`` (threaded, so a
slow reply does not block others). Each chat request takes the next entry of
``faults`` (then behaves normally):

- ``"429"``, ``"500"``, ``"503"``, ``"400"``, ``"401"``: that HTTP status (429 with ``Retry-After: 0``),
- ``"timeout"``: sleep ``timeout_sleep_s`` before answering normally (the client should time out),
- ``"malformed"``: status 200 with a body that is not JSON,
- ``"empty"``: status 200 with ``"choices": []``,
- ``"garbage"``: a reply that names no action,
- ``"long"``: a reply of ``long_chars`` characters naming no action,
- ``"say:<text>"``: reply ``<text>`` verbatim (e.g. an illegal move),
- ``"surrogate"``: a reply whose content holds a lone surrogate (``\\ud800``),
- ``"huge_usage"``: a normal answer with ``usage.prompt_tokens: 1e400``,
- ``"deep"``: status 200 with a JSON body nested ``deep_levels`` deep,
- ``"trickle"``: a normal answer sent one byte per ``trickle_s`` seconds,
- ``"big:<n>"``: a reply whose content is ``n`` characters,
- ``"echo_auth"``: a reply whose content repeats the request's ``Authorization`` header,
- ``"echo_auth:<code>"``: HTTP ``<code>`` with an error body that repeats that header,
- ``"echo_auth:malformed"``: status 200, a body that is no completion and repeats that header,
- ``"echo_auth:big"``: status 200, a body of ``long_chars`` characters repeating that header,
- ``"ok"``: a normal answer.

The ``echo_auth`` faults are a server that leaks the credentials it was sent (alem must
redact them from everything it stores or prints).

Every fault served is counted in :data:`FAULTS_SERVED` (all servers of the process),
so a test session can report how many it injected.

``reject_schema=True`` answers 400 to requests with ``response_format`` (a server
without structured output). Token usage is whitespace word counts.
"""

from __future__ import annotations

import contextlib
import json
import random
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from alem.text.llm.scripted import legal_names_in

__all__ = ["FakeChatServer", "FAULTS_SERVED"]

#: Faults served by every :class:`FakeChatServer` of this process, by name.
FAULTS_SERVED: dict[str, int] = {}


class FakeChatServer:
    """See the module docstring."""

    def __init__(
        self,
        script: str | Callable[[dict[str, Any]], str] = "random",
        *,
        faults: Iterable[str] = (),
        models: Iterable[str] = ("fake-model",),
        api_key: str | None = None,
        reject_schema: bool = False,
        timeout_sleep_s: float = 2.0,
        long_chars: int = 20000,
        trickle_s: float = 0.1,
        deep_levels: int = 100_000,
    ):
        self.script = script
        self.faults = deque(faults)
        self.models = list(models)
        self.api_key = api_key
        self.reject_schema = reject_schema
        self.timeout_sleep_s = timeout_sleep_s
        self.long_chars = long_chars
        self.trickle_s = trickle_s
        self.deep_levels = deep_levels
        self.requests: list[dict[str, Any]] = []  # chat bodies, in arrival order
        self.served: list[str] = []  # what each chat request got ("ok", "429", ...)
        self.paths: list[str] = []  # every request's path (with its query), in arrival order
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.base_url = ""

    # ------------------------------------------------------------------ answers
    def answer(self, body: dict[str, Any]) -> str:
        if callable(self.script):
            return self.script(body)
        names = legal_names_in(body)
        if not names:
            return "I am not sure."
        pick = names[0] if self.script == "first" else random.Random(body.get("seed")).choice(names)
        return json.dumps({"action": pick})

    def add_faults(self, faults: Iterable[str]) -> None:
        with self._lock:
            self.faults.extend(faults)

    def _next_fault(self) -> str:
        with self._lock:
            return self.faults.popleft() if self.faults else "ok"

    # ------------------------------------------------------------------ server
    def start(self) -> FakeChatServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def _send(self, code: int, payload: Any, headers: dict[str, str] | None = None) -> None:
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(data)

            def _route(self) -> str:
                """The path without its query (a query in a base URL is the client's to keep)."""
                with server._lock:
                    server.paths.append(self.path)
                return self.path.split("?", 1)[0].rstrip("/")

            def _authorized(self) -> bool:
                if server.api_key is None:
                    return True
                return self.headers.get("Authorization") == f"Bearer {server.api_key}"

            def do_GET(self):
                if self._route() not in ("/v1/models", "/models"):
                    return self._send(404, {"error": {"message": "not found"}})
                if not self._authorized():
                    return self._send(401, {"error": {"message": "invalid api key"}})
                self._send(
                    200, {"object": "list", "data": [{"id": m, "object": "model"} for m in server.models]}
                )

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if self._route() not in ("/v1/chat/completions", "/chat/completions"):
                    return self._send(404, {"error": {"message": "not found"}})
                if not self._authorized():
                    return self._send(401, {"error": {"message": "invalid api key"}})
                try:
                    body = json.loads(raw)
                except ValueError:
                    return self._send(400, {"error": {"message": "body is not JSON"}})
                with server._lock:
                    server.requests.append(body)
                if body.get("model") not in server.models:
                    return self._send(404, {"error": {"message": f"model {body.get('model')!r} not found"}})
                if server.reject_schema and "response_format" in body:
                    return self._send(400, {"error": {"message": "response_format is not supported"}})
                fault = server._next_fault()
                with server._lock:
                    server.served.append(fault)
                    if fault != "ok":
                        name = fault.split(":", 1)[0]
                        FAULTS_SERVED[name] = FAULTS_SERVED.get(name, 0) + 1
                if fault.startswith("echo_auth:"):
                    return self._echo_auth(fault.split(":", 1)[1])
                if fault in ("429", "500", "503", "400", "401"):
                    extra = {"Retry-After": "0"} if fault == "429" else None
                    return self._send(int(fault), {"error": {"message": f"injected {fault}"}}, extra)
                if fault == "malformed":
                    return self._send(200, b"{this is not json")
                if fault == "empty":
                    return self._send(200, {"object": "chat.completion", "choices": []})
                if fault == "deep":
                    depth = server.deep_levels
                    return self._send(200, b"[" * depth + b"]" * depth)
                if fault == "timeout":
                    time.sleep(server.timeout_sleep_s)
                if fault == "garbage":
                    content = "Hmm, let me think about the weather instead."
                elif fault == "long":
                    content = ("blah " * (server.long_chars // 5 + 1))[: server.long_chars]
                elif fault.startswith("say:"):
                    content = fault[4:]
                elif fault.startswith("big:"):
                    content = ("move " * (int(fault[4:]) // 5 + 1))[: int(fault[4:])]
                elif fault == "echo_auth":
                    content = f"You sent Authorization: {self.headers.get('Authorization')}"
                elif fault == "surrogate":
                    content = "\ud800 " + server.answer(body)
                else:
                    content = server.answer(body)
                words = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
                reply = {
                    "id": f"fake-{len(server.requests)}",
                    "object": "chat.completion",
                    "created": int(time.time()),  # required by OpenAI's schema (verifiers checks it)
                    "model": body["model"],
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": content},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {
                        "prompt_tokens": words,
                        "completion_tokens": len(content.split()),
                        "total_tokens": words + len(content.split()),
                    },
                }
                data = json.dumps(reply).encode()  # ASCII: a lone surrogate goes out as \\ud800
                if fault == "huge_usage":
                    data = data.replace(f'"prompt_tokens": {words}'.encode(), b'"prompt_tokens": 1e400')
                if fault == "trickle":
                    return self._trickle(data)
                self._send(200, data)

            def _echo_auth(self, how: str) -> None:
                auth = f"Authorization: {self.headers.get('Authorization')}"
                if how == "malformed":
                    return self._send(200, {"choices": [{"message": {"content": "x"}}], "usage": auth})
                if how == "big":
                    return self._send(200, ((auth + " ") * (server.long_chars // len(auth) + 1)).encode())
                self._send(int(how), {"error": {"message": f"bad credentials; {auth}"}})

            def _trickle(self, data: bytes) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    for i in range(len(data)):
                        self.wfile.write(data[i : i + 1])
                        self.wfile.flush()
                        time.sleep(server.trickle_s)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        port = self._httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{port}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeChatServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()
