"""A plain HTTP JSON API over a :class:`~alem.text.serve.sessions.SessionStore` (standard library only).

Routes (every body and answer is a JSON object; a body is sent as ``Content-Type: application/json``):

- ``GET /health``: ``{"ok": true, "env": id, "sessions": n}``
- ``GET /v1/env``: the env: seats, each seat's rules and action names
- ``POST /v1/sessions`` ``{"seed": s}`` (optional): a new session and its first state (201)
- ``GET /v1/sessions/<id>``: its state
- ``POST /v1/sessions/<id>/step`` ``{"actions": {"<seat>": "<move>"}}``, or ``{"action": "<move>"}``
  when one seat acts: one move per acting seat; the new state, ``rewards`` and ``played``
- ``DELETE /v1/sessions/<id>``: close it

Errors answer ``{"error": "<what was wrong>"}`` with a status naming the kind: 400 (bad
request or illegal move; a Content-Length that is not one decimal number), 403 (an Origin
other than a loopback page's), 404 (no such route or session), 405 (a route's other methods,
with ``Allow``), 409 (the session has ended), 413 (a body over ``max_body_bytes``, refused
unparsed; at most 1 MiB of it is drained so the client reads the answer), 415 (a POST or body
not sent as JSON), 421 (a Host that is not a loopback name), 429 (too many sessions), 500 (a
fault of the server, which keeps serving), 501 (Transfer-Encoding, or an unknown method on no
route). A request whose body is refused unread closes its connection: nothing after it is read
as another request. The server binds to 127.0.0.1 unless told otherwise; bound to loopback it
answers only to the loopback names and their pages (a web page elsewhere, even one rebinding
its own name to 127.0.0.1, cannot play); bound to another address it checks neither.
"""

from __future__ import annotations

import ipaddress
import json
import re
import sys
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from alem.text.serve.sessions import SessionError, SessionStore, brief

__all__ = ["JsonApiServer", "MAX_BODY_BYTES", "is_loopback", "local_names"]

#: The largest request body read (larger ones are refused unread).
MAX_BODY_BYTES = 64 * 1024
#: What is drained (and dropped) of a refused body so its client gets the answer.
_DRAIN_BYTES = 1024 * 1024
#: Numbers longer than this are never a valid seed, seat or move (and Python refuses to read
#: ints over 4300 digits): they are kept as :class:`_LongNumber` so the refusal names the field.
_MAX_DIGITS = 30

_SESSION = re.compile(r"^/v1/sessions/([^/]+)(/step)?/?$")
#: The names every loopback-bound server (this API and the MCP endpoint) answers to.
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
_KNOWN_METHODS = ("GET", "POST", "DELETE")


def is_loopback(address: str) -> bool:
    """Whether ``address`` (an IP address or ``localhost``) is this machine's loopback."""
    name = address.strip("[]")
    if name.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def local_names(host: str, address: str | None = None) -> tuple[str, ...] | None:
    """The Host names a server bound to ``host`` (at ``address``, the one it resolved to) answers
    to, shared by the HTTP API and the MCP endpoint: the loopback names and ``host`` itself when
    bound to loopback; None (any name, unchecked) when bound elsewhere, where clients reach it
    under names it cannot know. A page's Origin is trusted when it is ``http://`` one of them."""
    if not is_loopback(address or host):
        return None
    own = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return tuple(dict.fromkeys((*LOOPBACK_NAMES, own.lower())))


def _name_in(authority: str, names: tuple[str, ...]) -> bool:
    """Whether ``host[:port]`` names one of ``names`` (any port, as the MCP library checks)."""
    name, sep, port = authority.rpartition(":")
    if not sep or name.endswith(":") or authority.endswith("]"):  # no port (or a bare IPv6 address)
        name, port = authority, ""
    return name.lower() in names and (port == "" or port.isdigit())


class _LongNumber:
    """A JSON number of more digits than any field takes; named by its length in refusals."""

    def __init__(self, digits: int):
        self.digits = digits

    def __repr__(self) -> str:
        return f"a {self.digits}-digit number"


def _read_int(text: str) -> Any:
    digits = len(text.lstrip("-"))
    return _LongNumber(digits) if digits > _MAX_DIGITS else int(text)


def _cut(text: str) -> str:
    """A method or path from the request line, cut to a readable length for an answer."""
    return text if len(text) <= 80 else f"{text[:60]}... ({len(text)} characters)"


def _route(path: str) -> tuple[str, str | None, tuple[str, ...]] | None:
    """``(route, session id, the methods it takes)`` for a path, None for no route."""
    if path in ("/health", "/health/"):
        return "health", None, ("GET",)
    if path.rstrip("/") == "/v1/env":
        return "env", None, ("GET",)
    if path.rstrip("/") == "/v1/sessions":
        return "open", None, ("POST",)
    m = _SESSION.match(path)
    if m is None:
        return None
    return ("step", m.group(1), ("POST",)) if m.group(2) else ("session", m.group(1), ("DELETE", "GET"))


class _Handler(BaseHTTPRequestHandler):
    server: JsonApiServer
    timeout = 30  # seconds a client may take to send its request (a stalled one is dropped)
    protocol_version = "HTTP/1.1"
    _unread = False  # a declared body not read yet: answering without it closes the connection

    def __getattr__(self, name: str) -> Any:
        # every method reaches _handle, so an unknown one is answered in JSON (405 or 501), not
        # with the standard library's HTML page
        if name.startswith("do_"):
            return self._handle
        raise AttributeError(name)

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:
            super().log_message(format, *args)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The standard library's own refusals (a malformed request line or header), in JSON."""
        self.log_error("code %d, message %s", code, message)
        if self.request_version == "HTTP/0.9":  # an unreadable request line: answer as HTTP/1.1
            self.request_version = self.protocol_version
        self._send(code, {"error": message or HTTPStatus(code).phrase}, close=True)

    def _send(
        self, status: int, body: dict[str, Any], close: bool = False, allow: tuple[str, ...] = ()
    ) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if allow:
            self.send_header("Allow", ", ".join(allow))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
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

    def _length(self) -> int:
        """The body's length, from exactly one decimal Content-Length: anything else could be
        read differently by a proxy in front, and what follows smuggled in as a second request."""
        if self.headers.get_all("Transfer-Encoding"):
            raise SessionError(
                "Transfer-Encoding is not supported: send the body with a Content-Length", 501, close=True
            )
        lengths = self.headers.get_all("Content-Length") or []
        if len(lengths) > 1:
            raise SessionError(f"Content-Length is given {len(lengths)} times; send it once", close=True)
        if not lengths:
            return 0
        value = lengths[0].strip()
        if not re.fullmatch(r"[0-9]+", value):
            raise SessionError(
                f"Content-Length must be a decimal number of bytes, got {brief(value)}", close=True
            )
        n = int(value) if len(value) <= 18 else 10**18
        self._unread = n > 0
        if n > self.server.max_body_bytes:
            raise SessionError(
                f"the body has {brief(n)} bytes; the most this server reads is {self.server.max_body_bytes}",
                413,
            )
        return n

    def _check_origin(self) -> None:
        """421 for a Host that is not a name of this loopback server, 403 for a page elsewhere."""
        hosts = self.headers.get_all("Host") or []
        if len(hosts) > 1:
            raise SessionError(f"Host is given {len(hosts)} times; send it once")
        names = self.server.names
        if names is None:
            return
        if not hosts or not _name_in(hosts[0].strip(), names):
            said = brief(hosts[0]) if hosts else "missing"
            raise SessionError(
                f"Host {said} is not a name of this server; it answers to {', '.join(names)}", 421
            )
        for origin in self.headers.get_all("Origin") or []:
            if not (origin.startswith("http://") and _name_in(origin.removeprefix("http://"), names)):
                raise SessionError(
                    f"Origin {brief(origin)} may not use this server; only loopback pages may", 403
                )

    def _body(self, n: int) -> dict[str, Any]:
        kind = self.headers.get("Content-Type", "")
        if (n > 0 or self.command == "POST") and kind.split(";")[0].strip().lower() != "application/json":
            # a web page may send a "simple" cross-origin request (a form, text/plain) unasked;
            # JSON needs the browser to ask first, and this server never agrees
            said = brief(kind) if kind else "none"
            raise SessionError(f"the body must be sent as Content-Type: application/json, got {said}", 415)
        raw = self.rfile.read(n) if n > 0 else b""
        self._unread = False
        if len(raw) < n:
            raise SessionError(f"the body ended after {len(raw)} of its {n} bytes", close=True)
        if not raw.strip():
            return {}
        try:
            body = json.loads(raw, parse_int=_read_int)
        except RecursionError:
            raise SessionError("the body nests arrays/objects too deeply to be read") from None
        except ValueError:
            raise SessionError("the body is not JSON") from None
        if not isinstance(body, dict):
            raise SessionError(f"the body must be a JSON object, got {type(body).__name__}")
        return body

    def _handle(self) -> None:
        store, method = self.server.store, self.command
        path = self.path.split("?", 1)[0]
        try:
            self._unread = False
            n = self._length()
            self._check_origin()
            route = _route(path)
            if route is None:
                status = 404 if method in _KNOWN_METHODS else 501
                raise SessionError(f"no route {_cut(method)} {_cut(path)}", status)
            name, sid, allow = route
            if method not in allow:
                raise SessionError(
                    f"{_cut(method)} {_cut(path)}: this route takes {', '.join(allow)}", 405, allow=allow
                )
            body = self._body(n)
            if name == "health":
                out, status = {"ok": True, "env": store.env.id, "sessions": store.count()}, 200
            elif name == "env":
                out, status = store.describe(), 200
            elif name == "open":
                unknown = set(body) - {"seed"}
                if unknown:
                    raise SessionError(f"unknown fields {sorted(unknown)}; a new session takes only 'seed'")
                out, status = store.open(body.get("seed")), 201
            elif name == "session" and method == "GET":
                out, status = store.state(sid), 200
            elif name == "session":
                out, status = store.close(sid), 200
            else:
                out, status = _step(store, sid, body), 200
        except SessionError as e:
            self._send(e.status, {"error": str(e)}, close=e.close or self._unread, allow=e.allow)
        except (ConnectionError, TimeoutError):
            raise  # the client went away: nothing to answer (the server drops it quietly)
        except Exception as e:  # a fault of the server: answered, logged, and the server keeps serving
            print(f"alem.serve: {_cut(method)} {_cut(path)} failed: {type(e).__name__}: {e}", file=sys.stderr)
            self._send(500, {"error": f"{type(e).__name__}: {e}"}, close=self._unread)
        else:
            self._send(status, out)


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
        self.names = local_names(host, self.server_address[0])
        self._thread: threading.Thread | None = None

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that drops its connection is normal (nothing printed); anything else is
        one line on stderr, never a traceback per request."""
        exc = sys.exc_info()[1]
        if not isinstance(exc, ConnectionError | TimeoutError):
            print(
                f"alem.serve: a request from {client_address[0]} failed: {type(exc).__name__}: {exc}",
                file=sys.stderr,
            )

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
