"""The Model Context Protocol face of a :class:`~alem.text.serve.sessions.SessionStore`.

:func:`mcp_server` builds an ``mcp`` (2.x) :class:`MCPServer` whose tools play sessions of the
store's env: ``env_info``, ``new_game``, ``observe``, ``play`` and ``end_game``. Answers are the
same JSON objects as the HTTP API's; a refused request (an illegal move, an unknown session, too
many sessions) is a tool error whose text says what was wrong, and the server keeps serving.
:func:`transport_security` gives the streamable HTTP endpoint the HTTP API's Host and Origin
checks (:func:`alem.text.serve.http.local_names`). Needs the ``serve`` extra
(``pip install "alem[serve]"``).
"""

from __future__ import annotations

import json
from typing import Any

from alem.text.serve.sessions import SessionError, SessionStore

__all__ = ["mcp_server", "transport_security"]


def transport_security(host: str, address: str | None = None) -> Any:
    """The ``mcp`` library's Host/Origin settings for an endpoint bound to ``host`` (at
    ``address``): the names the HTTP API answers to, any port (421 for another Host, 403 for a
    page of another Origin); no check when bound off loopback, as the HTTP API."""
    from mcp.server.transport_security import TransportSecuritySettings

    from alem.text.serve.http import local_names

    names = local_names(host, address)
    if names is None:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[p for n in names for p in (n, f"{n}:*")],
        allowed_origins=[p for n in names for p in (f"http://{n}", f"http://{n}:*")],
    )


def mcp_server(store: SessionStore, **server_kwargs: Any) -> Any:
    """An ``MCPServer`` for ``store``; ``server_kwargs`` go to its constructor."""
    from alem.extras import require

    require("serve", "alem.serve protocol=mcp")
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    env = store.env
    server = MCPServer(
        name=f"alem {env.id}",
        instructions=(
            f"Play {env.id} ({env.num_agents} seats). new_game starts a session; observe shows every "
            "seat's view, who acts and the legal moves; play makes a move for the acting seat (a move is "
            "an action name, or its index in env_info's action_names); end_game closes a session."
        ),
        **server_kwargs,
    )

    def _call(fn: Any, *args: Any) -> str:
        try:
            return json.dumps(fn(*args))
        except SessionError as e:
            raise ToolError(str(e)) from None

    @server.tool()
    def env_info() -> str:
        """The game: its seats, each seat's rules and action names (JSON)."""
        return json.dumps(store.describe())

    @server.tool()
    def new_game(seed: int | None = None) -> str:
        """Start a session (an episode dealt from ``seed``, random when omitted); its first state (JSON)."""
        return _call(lambda: store.open(seed, closing="with the end_game tool"))

    @server.tool()
    def observe(session: str) -> str:
        """A session's state: every seat's view, who acts, the legal moves (JSON)."""
        return _call(store.state, session)

    @server.tool()
    def play(session: str, move: int | str, seat: int | None = None) -> str:
        """Play ``move`` (an action name, or its index in env_info's action_names) for ``seat``
        (omit it when one seat acts); the new state (JSON)."""
        return _call(store.play, session, move, seat)

    @server.tool()
    def end_game(session: str) -> str:
        """Close a session."""
        return _call(store.close, session)

    return server
