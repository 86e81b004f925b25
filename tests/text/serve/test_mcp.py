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
