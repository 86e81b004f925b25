"""``python -m alem.serve env.id=<id> [protocol=http|mcp|mcp-stdio]``: an env as a served game.

Outside agents (an LLM client, an MCP host, any HTTP client) play sessions of one text-capable
env: :mod:`alem.text.serve.sessions` holds them, :mod:`alem.text.serve.http` is the plain JSON
API and :mod:`alem.text.serve.mcp` the MCP server. Bound to 127.0.0.1 unless ``host=`` says
otherwise. Settings: ``configs/serve.yaml``.
"""

from __future__ import annotations

import sys
from typing import Any

from alem.extras import require

require("arena", "python -m alem.serve", cli=__name__ == "__main__")

from alem.cli import hydra_app, hydra_overrides, make_env, override_key  # noqa: E402
from alem.errors import AlemError  # noqa: E402

__all__ = ["PROTOCOLS", "main", "serve"]

PROTOCOLS = ("http", "mcp", "mcp-stdio")


def serve(cfg: Any) -> None:
    """Check the settings, build the store, then serve until interrupted."""
    from alem.text.serve.sessions import SessionStore

    protocol = cfg.get("protocol")
    if protocol not in PROTOCOLS:
        raise AlemError(f"protocol must be one of {list(PROTOCOLS)}, got {protocol!r}")
    port = cfg.get("port")
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise AlemError(f"port must be an integer in 0..65535, got {port!r}")
    max_body = cfg.get("max_body_bytes")
    if isinstance(max_body, bool) or not isinstance(max_body, int) or max_body < 1:
        raise AlemError(f"max_body_bytes must be an integer >= 1, got {max_body!r}")
    if protocol == "mcp-stdio":  # speaks over stdin/stdout: the listening options would be ignored
        for key in filter(None, map(override_key, hydra_overrides())):
            if key in ("host", "port", "max_body_bytes"):
                raise AlemError(
                    f"{key} is read by protocol=http and protocol=mcp only; protocol=mcp-stdio does not listen"
                )
    env = make_env(cfg.env)
    store = SessionStore(
        env, max_sessions=cfg.max_sessions, idle_timeout_s=cfg.idle_timeout_s, max_steps=cfg.max_steps
    )
    if protocol == "http":
        from alem.text.serve.http import JsonApiServer

        try:
            server = JsonApiServer(store, cfg.host, port, max_body_bytes=max_body)
        except OSError as e:
            raise AlemError(f"cannot listen on {cfg.host}:{port}: {e.strerror or e}") from None
        _warn_if_exposed(cfg.host, server.server_address[0])
        print(f"alem.serve: {env.id} on {server.url}/v1 (GET /v1/env for the routes' game)", flush=True)
        try:
            server.serve_forever()
        finally:
            server.server_close()
        return
    from alem.text.serve.mcp import mcp_server, transport_security

    if protocol == "mcp-stdio":
        mcp_server(store).run("stdio")
        return
    import socket

    # a free port when port=0 (uvicorn would not say which it took), and an address that cannot be
    # listened on refused in one line here rather than in uvicorn's traceback
    try:
        with socket.create_server((cfg.host, port)) as probe:
            address, port = probe.getsockname()[:2]
    except OSError as e:
        raise AlemError(f"cannot listen on {cfg.host}:{port}: {e.strerror or e}") from None
    _warn_if_exposed(cfg.host, address)
    print(f"alem.serve: {env.id} over MCP at http://{cfg.host}:{port}/mcp", file=sys.stderr, flush=True)
    # the game sessions are bounded by the store; the MCP transport's own sessions carry no state
    # the Host/Origin checks are the HTTP API's (the library's own apply to three names only)
    mcp_server(store).run(
        "streamable-http",
        host=cfg.host,
        port=port,
        max_request_body_size=max_body,
        transport_security=transport_security(cfg.host, address),
    )


def _warn_if_exposed(host: str, address: str) -> None:
    """One line on stderr when the server is bound off loopback: anyone who reaches it may play."""
    from alem.text.serve.http import is_loopback

    if not is_loopback(address):
        print(
            f"alem.serve: warning: host={host} is reachable from the network: any machine that can "
            "reach this port may open and play sessions (Host and Origin are not checked)",
            file=sys.stderr,
            flush=True,
        )


main = hydra_app("alem.serve", "serve", serve)

if __name__ == "__main__":
    main()
