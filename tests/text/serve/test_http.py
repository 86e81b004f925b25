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
    with JsonApiServer(SessionStore(alem.make("tic_tac_toe-v0"), max_sessions=4), max_body_bytes=4096) as srv:
        yield srv


def call(server, method, path, body=None, raw=None):
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    req = urllib.request.Request(server.url + path, data=data, method=method)
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
            f"POST /v1/sessions/{sid}/step HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
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
        and f"the body has {size} bytes; the most this server reads is 4096" in answer
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
