"""``python -m alem.serve``: the command, in a subprocess, with clients over the socket."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

ENV = {**os.environ, "JAX_PLATFORMS": "cpu"}


def _start(*args, stream="stdout"):
    proc = subprocess.Popen(
        [sys.executable, "-m", "alem.serve", "env.id=tic_tac_toe-v0", "port=0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )
    out = proc.stdout if stream == "stdout" else proc.stderr
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = out.readline()
        found = re.search(r"(http://[\d.]+:\d+)", line)
        if found:
            return proc, found.group(1)
        if proc.poll() is not None:
            break
    proc.kill()
    raise AssertionError(f"the server did not start: {proc.stderr.read()}")


def _stop(proc):
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()


def _post(url, body):
    headers = {"Content-Type": "application/json"}
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST", headers=headers)
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


@pytest.mark.integration  # a server process
def test_the_http_server_serves_a_game_to_a_client():
    proc, url = _start()
    try:
        s = _post(url + "/v1/sessions", {"seed": 0})
        for move in ["a1", "a2", "b1", "b2", "c1"]:
            s = _post(f"{url}/v1/sessions/{s['session']}/step", {"action": move})
        assert s["done"] and s["returns"] == [1.0, -1.0]
    finally:
        _stop(proc)


@pytest.mark.integration  # a server process
def test_the_mcp_server_serves_a_game_over_streamable_http():
    mcp = pytest.importorskip("mcp")
    proc, url = _start("protocol=mcp", stream="stderr")
    try:
        deadline = time.monotonic() + 60  # the URL is printed before the server listens
        while time.monotonic() < deadline:
            try:
                socket.create_connection(tuple(url.removeprefix("http://").split(":")), timeout=1).close()
                break
            except OSError:
                time.sleep(0.2)

        async def play():
            async with mcp.Client(url + "/mcp") as client:
                s = json.loads((await client.call_tool("new_game", {"seed": 0})).content[0].text)
                for move in ["a1", "a2", "b1", "b2", "c1"]:
                    r = await client.call_tool("play", {"session": s["session"], "move": move})
                return json.loads(r.content[0].text)

        done = asyncio.run(play())
        assert done["done"] and done["returns"] == [1.0, -1.0]
        # the HTTP API's Host check, wired in by alem.serve: a foreign name is refused (421), a
        # loopback one without a port (which the library alone would refuse) is let through
        assert _mcp_post(url, "evil.example") == 421
        assert _mcp_post(url, "localhost") not in (421, 403)
    finally:
        _stop(proc)


def _mcp_post(url, host):
    import http.client

    conn = http.client.HTTPConnection(*url.removeprefix("http://").split(":"), timeout=30)
    headers = {
        "Host": host,
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    conn.request("POST", "/mcp", body=b"{}", headers=headers)
    status = conn.getresponse().status
    conn.close()
    return status


@pytest.mark.integration  # a server process
def test_a_server_bound_off_loopback_warns_in_one_line():
    proc, url = _start("host=0.0.0.0")
    try:
        import select

        ready = select.select([proc.stderr], [], [], 30)[0]  # no line at all: fail, never hang
        warning = proc.stderr.readline() if ready else ""
        assert warning.startswith("alem.serve: warning: host=0.0.0.0 is reachable from the network"), warning
        port = url.rsplit(":", 1)[1]
        s = _post(f"http://127.0.0.1:{port}/v1/sessions", {"seed": 0})
        assert s["steps"] == 0
    finally:
        _stop(proc)


@pytest.mark.parametrize(
    ("arg", "match"),
    [
        ("protocol=grpc", r"protocol must be one of \['http', 'mcp', 'mcp-stdio'\], got 'grpc'"),
        ("port=70000", "port must be an integer in 0..65535, got 70000"),
        ("max_sessions=0", "max_sessions must be an integer >= 1, got 0"),
    ],
)
@pytest.mark.integration  # a subprocess
def test_bad_settings_end_in_one_line(arg, match):
    r = subprocess.run(
        [sys.executable, "-m", "alem.serve", "env.id=tic_tac_toe-v0", arg],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=120,
    )
    assert r.returncode == 2 and re.search(match, r.stderr) and "Traceback" not in r.stderr, r.stderr
