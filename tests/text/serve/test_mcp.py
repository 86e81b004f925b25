"""The MCP server, with the mcp package's own client connected in-process."""

from __future__ import annotations

import asyncio
import json

import pytest

import alem
from alem.text.serve.sessions import SessionStore

mcp = pytest.importorskip("mcp", reason='needs pip install "alem[serve]"')


def _run(coro):
    return asyncio.run(coro)


def test_an_mcp_client_plays_a_game_and_reads_refusals():
    from alem.text.serve.mcp import mcp_server

    server = mcp_server(SessionStore(alem.make("tic_tac_toe-v0"), max_sessions=2))

    async def session():
        async with mcp.Client(server) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            assert tools == {"env_info", "new_game", "observe", "play", "end_game"}
            text = lambda r: r.content[0].text
            info = json.loads(text(await client.call_tool("env_info", {})))
            assert info["action_names"][0][4] == "b2"
            s = json.loads(text(await client.call_tool("new_game", {"seed": 0})))
            sid = s["session"]
            for move in ["a1", "a2", "b1", "b2"]:
                r = await client.call_tool("play", {"session": sid, "move": move})
                assert not r.is_error
            bad = await client.call_tool("play", {"session": sid, "move": "a1"})
            assert bad.is_error and "seat 0: 'a1' is not a legal move now" in text(bad)
            done = json.loads(text(await client.call_tool("play", {"session": sid, "move": "c1", "seat": 0})))
            assert done["done"] and done["returns"] == [1.0, -1.0]
            gone = await client.call_tool("observe", {"session": "nope"})
            assert gone.is_error and "session 'nope' does not exist" in text(gone)
            await client.call_tool("new_game", {})
            full = await client.call_tool("new_game", {})
            assert full.is_error and "maximum of 2 sessions" in text(full)
            assert not (await client.call_tool("end_game", {"session": sid})).is_error

    _run(session())


def test_play_takes_what_the_guide_promises_and_refusals_name_the_tools():
    from alem.text.serve.mcp import mcp_server

    server = mcp_server(SessionStore(alem.make("tic_tac_toe-v0"), max_sessions=1))

    async def session():
        async with mcp.Client(server) as client:
            text = lambda r: r.content[0].text
            guide = (await client.list_tools()).tools
            play_doc = next(t.description for t in guide if t.name == "play")
            assert "index" in play_doc  # the guide says a move may be an index ...
            sid = json.loads(text(await client.call_tool("new_game", {"seed": 0})))["session"]
            r = await client.call_tool("play", {"session": sid, "move": 4})  # ... and play takes one
            assert not r.is_error, text(r)
            assert json.loads(text(r))["played"] == {"0": "b2"}
            full = await client.call_tool("new_game", {})
            assert full.is_error and "end_game" in text(full) and "DELETE" not in text(full)
            for move in ["a1", "a2", "b1", "c2"]:  # X: b2, a2, c2 (row 2)
                r = await client.call_tool("play", {"session": sid, "move": move})
            assert json.loads(text(r))["done"]
            late = await client.call_tool("play", {"session": sid, "move": "a1"})
            assert late.is_error and f"session {sid} has ended" in text(late)

    _run(session())


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Host": "evil.example"}, 421),
        ({"Host": "127.0.0.1:8765", "Origin": "http://evil.example"}, 403),
        ({"Host": "localhost:8765", "Origin": "null"}, 403),
    ],
)
def test_the_mcp_endpoint_refuses_foreign_hosts_and_origins(headers, status):
    from starlette.testclient import TestClient

    from alem.text.serve.mcp import mcp_server, transport_security

    server = mcp_server(SessionStore(alem.make("tic_tac_toe-v0")))
    app = server.streamable_http_app(transport_security=transport_security("127.0.0.1"))
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        r = client.post("/mcp", json={}, headers={"Accept": "application/json, text/event-stream", **headers})
    assert r.status_code == status


def test_the_security_settings_follow_the_bind_address():
    from alem.text.serve.mcp import transport_security

    local = transport_security("localhost")
    assert local.enable_dns_rebinding_protection and "localhost:*" in local.allowed_hosts
    assert "http://127.0.0.1:*" in local.allowed_origins
    assert not transport_security("0.0.0.0").enable_dns_rebinding_protection
