"""A plain HTTP JSON API over a :class:`~alem.text.serve.sessions.SessionStore` (standard library only).

Routes (every body and answer is a JSON object):

- ``GET /health``: ``{"ok": true, "env": id, "sessions": n}``
- ``GET /v1/env``: the env: seats, each seat's rules and action names
- ``POST /v1/sessions`` ``{"seed": s}`` (optional): a new session and its first state (201)
- ``GET /v1/sessions/<id>``: its state
- ``POST /v1/sessions/<id>/step`` ``{"actions": {"<seat>": "<move>"}}``, or ``{"action": "<move>"}``
  when one seat acts: one move per acting seat; the new state, ``rewards`` and ``played``
- ``DELETE /v1/sessions/<id>``: close it

Errors answer ``{"error": "<what was wrong>"}`` with a status naming the kind: 400 (bad
request or illegal move), 404 (no such route or session), 409 (the session has ended), 411
(no Content-Length), 413 (a body over ``max_body_bytes``, refused unparsed; at most 1 MiB of it is drained so the client reads the answer), 429 (too many
sessions), 500 (a fault of the server, which keeps serving). The server binds to 127.0.0.1
unless told otherwise.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from alem.text.serve.sessions import SessionError, SessionStore

__all__ = ["JsonApiServer", "MAX_BODY_BYTES"]

#: The largest request body read (larger ones are refused unread).
MAX_BODY_BYTES = 64 * 1024
#: What is drained (and dropped) of a refused body so its client gets the answer.
_DRAIN_BYTES = 1024 * 1024

_SESSION = re.compile(r"^/v1/sessions/([^/]+)(/step)?/?$")


class _Handler(BaseHTTPRequestHandler):
    server: JsonApiServer
    timeout = 30  # seconds a client may take to send its request (a stalled one is dropped)
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:
            super().log_message(format, *args)

    def _send(self, status: int, body: dict[str, Any], close: bool = False) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(data)
        if close:
            self._linger()

    def _linger(self) -> None:
        """Close after a refused body so the client reads the answer: closing a socket with
        unread bytes sends a reset, which can destroy the answer on its way. The write side is
        shut, then at most ``_DRAIN_BYTES`` of what the client still sends are read and dropped
        (never parsed) for at most a second."""
        import socket

        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_WR)
            self.connection.settimeout(1.0)
            drained = 0
            while drained < _DRAIN_BYTES:
                chunk = self.connection.recv(65536)
                if not chunk:
                    break
                drained += len(chunk)
        except OSError:
            pass

    def _body(self) -> dict[str, Any]:
        length = self.headers.get("Content-Length")
        if length is None:
            if self.headers.get("Transfer-Encoding"):
                raise SessionError("send the body with a Content-Length (chunked bodies are not read)", 411)
            return {}
        try:
            n = int(length)
        except ValueError:
            raise SessionError(f"Content-Length must be an integer, got {length!r}") from None
        if n > self.server.max_body_bytes:
            raise SessionError(
                f"the body has {n} bytes; the most this server reads is {self.server.max_body_bytes}", 413
            )
        raw = self.rfile.read(n) if n > 0 else b""
        if not raw.strip():
            return {}
        try:
            body = json.loads(raw)
        except (ValueError, RecursionError):
            raise SessionError("the body is not JSON") from None
        if not isinstance(body, dict):
            raise SessionError(f"the body must be a JSON object, got {type(body).__name__}")
        return body

    def _handle(self, method: str) -> None:
        store = self.server.store
        try:
            path = self.path.split("?", 1)[0]
            body = self._body() if method in ("POST", "DELETE") else {}
            m = _SESSION.match(path)
            if method == "GET" and path in ("/health", "/health/"):
                out, status = {"ok": True, "env": store.env.id, "sessions": store.count()}, 200
            elif method == "GET" and path.rstrip("/") == "/v1/env":
                out, status = store.describe(), 200
            elif method == "POST" and path.rstrip("/") == "/v1/sessions":
                unknown = set(body) - {"seed"}
                if unknown:
                    raise SessionError(f"unknown fields {sorted(unknown)}; a new session takes only 'seed'")
                out, status = store.open(body.get("seed")), 201
            elif m and method == "GET" and not m.group(2):
                out, status = store.state(m.group(1)), 200
            elif m and method == "DELETE" and not m.group(2):
                out, status = store.close(m.group(1)), 200
            elif m and method == "POST" and m.group(2):
                out, status = _step(store, m.group(1), body), 200
            else:
                raise SessionError(f"no route {method} {path}", 404)
        except SessionError as e:
            self._send(e.status, {"error": str(e)}, close=e.status in (411, 413))
        except Exception as e:  # a fault of the server: answered, logged, and the server keeps serving
            self._send(500, {"error": f"{type(e).__name__}: {e}"})
        else:
            self._send(status, out)

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_DELETE(self) -> None:
        self._handle("DELETE")


def _step(store: SessionStore, sid: str, body: dict[str, Any]) -> dict[str, Any]:
    """``{"actions": {...}}``, or ``{"action": x}`` for the one seat to move; the new state."""
    if set(body) == {"actions"}:
        return store.step(sid, body["actions"])
    if set(body) == {"action"}:
        return store.play(sid, body["action"])
    raise SessionError('a step takes {"actions": {"<seat>": "<move>"}} or {"action": "<move>"}')


class JsonApiServer(ThreadingHTTPServer):
    """The JSON API on ``(host, port)`` (port 0: a free one; see :attr:`url`)."""

    daemon_threads = True

    def __init__(
        self,
        store: SessionStore,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        max_body_bytes: int = MAX_BODY_BYTES,
        verbose: bool = False,
    ):
        self.store, self.max_body_bytes, self.verbose = store, int(max_body_bytes), verbose
        super().__init__((host, port), _Handler)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> JsonApiServer:
        """Serve in a background thread (for tests and notebooks); :meth:`stop` ends it."""
        self._thread = threading.Thread(target=self.serve_forever, name="alem-serve", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> JsonApiServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
