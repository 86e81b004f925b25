"""The HTTP JSON API over a real socket on 127.0.0.1: a game, refusals, and a hostile client."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import urllib.error
import urllib.request

import pytest

import alem
from alem.text.serve.http import JsonApiServer
from alem.text.serve.sessions import SessionStore


@pytest.fixture(scope="module")
def server():
    with JsonApiServer(
        SessionStore(alem.make("tic_tac_toe-v0"), max_sessions=4), max_body_bytes=16384
    ) as srv:
        yield srv


def call(server, method, path, body=None, raw=None, headers=None):
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    headers = {"Content-Type": "application/json", **(headers or {})}
    req = urllib.request.Request(server.url + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_a_client_plays_a_game_over_the_socket(server):
    status, env = call(server, "GET", "/v1/env")
    assert status == 200 and env["env"] == "tic_tac_toe-v0" and "tic-tac-toe" in env["rules"][0]
    status, s = call(server, "POST", "/v1/sessions", {"seed": 0})
    assert status == 201 and s["seats"][0]["acting"]
    sid = s["session"]
    for move in ["a1", "a2", "b1", "b2"]:
        status, s = call(server, "POST", f"/v1/sessions/{sid}/step", {"action": move})
        assert status == 200
    status, s = call(server, "POST", f"/v1/sessions/{sid}/step", {"actions": {"0": "c1"}})
    assert status == 200 and s["done"] and s["returns"] == [1.0, -1.0]
    assert call(server, "GET", f"/v1/sessions/{sid}")[1]["done"]
    assert call(server, "DELETE", f"/v1/sessions/{sid}")[1] == {"session": sid, "closed": True}


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "match"),
    [
        ("GET", "/v1/sessions/nope", None, 404, "session 'nope' does not exist"),
        ("POST", "/v1/sessions/nope/step", {"action": "a1"}, 404, "session 'nope' does not exist"),
        ("GET", "/v2/anything", None, 404, "no route GET /v2/anything"),
        ("POST", "/v1/sessions", b"[1, 2]", 400, "the body must be a JSON object, got list"),
        ("POST", "/v1/sessions", b"{not json", 400, "the body is not JSON"),
        ("POST", "/v1/sessions", {"seed": 1, "env": "x"}, 400, r"unknown fields \['env'\]"),
        ("POST", "/v1/sessions", {"seed": "x"}, 400, "seed must be an integer"),
    ],
)
def test_bad_requests_are_answered_with_what_was_wrong(server, method, path, body, status, match):
    import re

    raw = body if isinstance(body, bytes) else None
    got, out = call(server, method, path, None if raw else body, raw=raw)
    assert got == status and re.search(match, out["error"]), out


def test_an_illegal_move_is_refused_and_the_session_kept(server):
    sid = call(server, "POST", "/v1/sessions", {"seed": 1})[1]["session"]
    call(server, "POST", f"/v1/sessions/{sid}/step", {"action": "b2"})
    status, out = call(server, "POST", f"/v1/sessions/{sid}/step", {"action": "b2"})
    assert status == 400 and "seat 1: 'b2' is not a legal move now; legal: a1" in out["error"]
    assert call(server, "GET", f"/v1/sessions/{sid}")[1]["steps"] == 1
    call(server, "DELETE", f"/v1/sessions/{sid}")


def test_a_10_mb_body_is_refused_unread_and_other_sessions_live_on(server):
    sid = call(server, "POST", "/v1/sessions", {"seed": 2})[1]["session"]
    call(server, "POST", f"/v1/sessions/{sid}/step", {"action": "c3"})
    host, port = server.server_address[:2]
    size = 10 * 1024 * 1024
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(
            f"POST /v1/sessions/{sid}/step HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {size}\r\n\r\n".encode()
        )
        with contextlib.suppress(OSError):  # the server answers without reading the rest
            sock.sendall(b"x" * (1024 * 1024))
        answer = b""
        while chunk := sock.recv(65536):  # headers and body may come in separate segments
            answer += chunk
        answer = answer.decode(errors="replace")
    assert (
        answer.startswith("HTTP/1.1 413")
        and f"the body has {size} bytes; the most this server reads is 16384" in answer
    )
    state = call(server, "GET", f"/v1/sessions/{sid}")[1]
    assert state["steps"] == 1 and state["seats"][1]["acting"]  # untouched, still served


def test_concurrent_clients_play_their_own_sessions(server):
    results = []

    def play(seed):
        sid = call(server, "POST", "/v1/sessions", {"seed": seed})[1]["session"]
        for move in ["a1", "a2", "b1", "b2", "c1"]:
            s = call(server, "POST", f"/v1/sessions/{sid}/step", {"action": move})[1]
        results.append(s["returns"])
        call(server, "DELETE", f"/v1/sessions/{sid}")

    threads = [threading.Thread(target=play, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert results == [[1.0, -1.0]] * 3
    assert call(server, "GET", "/health")[1]["sessions"] <= 1


def raw(server, data: bytes) -> str:
    """Send ``data`` as is; every answer the server gives until it closes the connection."""
    answer = b""
    with socket.create_connection(server.server_address[:2], timeout=10) as sock:
        sock.sendall(data)
        with contextlib.suppress(OSError):
            while chunk := sock.recv(65536):
                answer += chunk
    return answer.decode(errors="replace")


#: A request hidden in a body: run, it would answer 404 (and close, so a test never waits).
HIDDEN = b"GET /v2/hidden HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"


@pytest.mark.parametrize(
    ("framing", "status", "match"),
    [
        (b"Content-Length: -1", 400, "Content-Length must be a decimal number of bytes, got '-1'"),
        (b"Content-Length: +2", 400, "Content-Length must be a decimal number of bytes, got '\\+2'"),
        (b"Content-Length: 2, 2", 400, "Content-Length must be a decimal number"),
        (b"Content-Length: 2\r\nContent-Length: 70", 400, "Content-Length is given 2 times"),
        (b"Content-Length: 2\r\nContent-Length: 2", 400, "Content-Length is given 2 times"),
        (b"Transfer-Encoding: chunked\r\nContent-Length: 2", 501, "Transfer-Encoding is not supported"),
        (b"Transfer-Encoding: chunked", 501, "Transfer-Encoding is not supported"),
    ],
)
def test_a_body_of_unclear_length_is_refused_and_nothing_after_it_is_run(server, framing, status, match):
    import re

    head = b"POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    answer = raw(server, head + framing + b"\r\n\r\n{}" + HIDDEN)
    assert answer.startswith(f"HTTP/1.1 {status} ") and answer.count("HTTP/1.1 ") == 1, answer
    assert "Connection: close" in answer and re.search(match, answer), answer


@pytest.mark.parametrize(
    ("headers", "status", "match"),
    [
        ({"Host": "evil.example"}, 421, "Host 'evil.example' is not a name of this server"),
        ({"Host": "evil.example:8765"}, 421, "Host 'evil.example:8765'"),
        ({"Host": "127.0.0.1.evil.example"}, 421, "is not a name of this server"),
        ({"Origin": "http://evil.example"}, 403, "Origin 'http://evil.example' may not use this server"),
        ({"Origin": "null"}, 403, "Origin 'null'"),
        ({"Content-Type": "text/plain"}, 415, "the body must be sent as Content-Type: application/json"),
        ({"Content-Type": "application/x-www-form-urlencoded"}, 415, "got 'application/x-www-form"),
    ],
)
def test_cross_site_requests_are_refused(server, headers, status, match):
    got, out = call(server, "POST", "/v1/sessions", {"seed": 0}, headers=headers)
    assert got == status and match in out["error"], out


def test_the_loopback_names_and_their_pages_are_served(server):
    port = server.server_address[1]
    for headers in (
        {"Host": f"localhost:{port}", "Origin": "http://localhost:3000"},
        {"Origin": f"http://127.0.0.1:{port}"},
        {"Host": "[::1]", "Content-Type": "application/json; charset=utf-8"},
    ):
        got, out = call(server, "POST", "/v1/sessions", {"seed": 0}, headers=headers)
        assert got == 201, out
        call(server, "DELETE", f"/v1/sessions/{out['session']}")


@pytest.mark.parametrize(
    ("method", "path", "status", "allow"),
    [
        ("PUT", "/v1/sessions", 405, "POST"),
        ("PATCH", "/v1/env", 405, "GET"),
        ("OPTIONS", "/v1/sessions", 405, "POST"),
        ("HEAD", "/health", 405, "GET"),
        ("GET", "/v1/sessions/abc/step", 405, "POST"),
        ("BREW", "/v1/sessions/abc", 405, "DELETE, GET"),
        ("PUT", "/nowhere", 501, None),
    ],
)
def test_other_methods_are_answered_in_json_never_html(server, method, path, status, allow):
    answer = raw(server, f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
    head, _, body = answer.partition("\r\n\r\n")
    assert head.startswith(f"HTTP/1.1 {status} ") and "Content-Type: application/json" in head, answer
    assert (f"Allow: {allow}" in head) if allow else "Allow:" not in head
    if method == "HEAD":
        assert body == ""
    else:
        assert method in json.loads(body)["error"] and "<" not in body


def test_a_malformed_request_is_answered_in_json(server):
    answer = raw(server, b"GARBAGE\r\n\r\n")
    head, _, body = answer.partition("\r\n\r\n")
    assert head.startswith("HTTP/1.1 400") or head.startswith("HTTP/1.0 400"), answer
    assert "application/json" in head and "error" in json.loads(body)


def test_what_is_wrong_with_a_body_is_named(server):
    sid = call(server, "POST", "/v1/sessions", {"seed": 5})[1]["session"]
    digits = "1" * 5000
    for path, body, match in [
        (
            "/v1/sessions",
            '{"seed": ' + "[" * 2000 + "]" * 2000 + "}",
            "the body nests arrays/objects too deeply",
        ),
        (
            "/v1/sessions",
            '{"seed": ' + digits + "}",
            r"seed must be an integer in \[0, 2\*\*31\), got a 5000-digit",
        ),
        (
            f"/v1/sessions/{sid}/step",
            '{"action": -' + digits + "}",
            "a move is an action name or index, got a 5000",
        ),
        (
            f"/v1/sessions/{sid}/step",
            '{"actions": {"' + digits + '": "a1"}}',
            "a seat is an integer 0..1, got '111",
        ),
        (f"/v1/sessions/{sid}/step", '{"actions": {"0": "b1", " 0": "c1"}}', "seat 0 is given twice"),
    ]:
        import re

        got, out = call(server, "POST", path, raw=body.encode())
        assert got == 400 and re.search(match, out["error"]) and len(out["error"]) < 300, out
    assert call(server, "GET", f"/v1/sessions/{sid}")[1]["steps"] == 0
    call(server, "DELETE", f"/v1/sessions/{sid}")


def test_a_move_after_the_end_is_409(server):
    sid = call(server, "POST", "/v1/sessions", {"seed": 6})[1]["session"]
    for move in ["a1", "a2", "b1", "b2", "c1"]:
        call(server, "POST", f"/v1/sessions/{sid}/step", {"action": move})
    got, out = call(server, "POST", f"/v1/sessions/{sid}/step", {"action": "c3"})
    assert got == 409 and out["error"] == f"session {sid} has ended; open a new one"
    call(server, "DELETE", f"/v1/sessions/{sid}")


def test_clients_that_drop_are_not_tracebacks(server, capsys):
    import struct

    host, port = server.server_address[:2]
    requests = [
        b"POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: 100\r\n\r\n{",  # drops mid-body
        b"POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: 2\r\n\r\n{}",  # drops before its answer is read
        b"GET /v1/env HTTP/1.1\r\nHost: 127.0.0.1\r\n",  # drops mid-headers
    ]
    for i in range(30):  # each costs ~0.1 s here; 100 printed ~140 tracebacks before
        sock = socket.create_connection((host, port), timeout=10)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # a reset
        sock.sendall(requests[i % 3])
        sock.close()
    import time

    time.sleep(1.0)
    assert call(server, "GET", "/health")[0] == 200
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") <= 30, err[-2000:]
    for sid in [s for s in list(server.store._sessions)]:
        call(server, "DELETE", f"/v1/sessions/{sid}")
