"""A small MCP server for the INTERACTION tests, written with the ``mcp`` SDK's server side.

``python mcp_server.py`` speaks stdio; ``python mcp_server.py http PORT`` speaks
streamable HTTP on 127.0.0.1:PORT, ``http-auth PORT TOKEN`` the same behind a bearer
token. When ``MCP_NOTIFY_PORT`` is set, the ``slow`` and ``crash`` tools first connect
there and send their pid, so a test can wait for "the call is running" on an event
instead of a sleep.
"""

from __future__ import annotations

import os
import socket
import sys
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("ditto-test")


def _notify() -> None:
    port = os.environ.get("MCP_NOTIFY_PORT")
    if port:
        with socket.create_connection(("127.0.0.1", int(port))) as connection:
            connection.sendall(str(os.getpid()).encode())


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def pid() -> int:
    """The server's process id (tells a kept-alive session from a new one)."""
    return os.getpid()


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.tool()
def fail(path: str) -> str:
    """Fails with an internal error whose text must not reach the model."""
    raise ValueError(f"cannot open /srv/secret/{path}")


@server.tool()
def refuse(path: str) -> str:
    """Fails with a message meant for the model."""
    raise ToolError(f"{path} is not shared with you")


@server.tool()
def crash() -> str:
    """Kills the server in the middle of the call."""
    _notify()
    os._exit(3)


@server.tool()
async def slow() -> str:
    """Runs for a minute (until the client goes away)."""
    _notify()
    await anyio.sleep(60)
    return "done"


def require_token(app: Any, token: str) -> Any:
    """ASGI middleware: HTTP requests without ``Authorization: Bearer <token>`` get 401 and reach nothing."""

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and dict(scope["headers"]).get(b"authorization") != f"Bearer {token}".encode():
            await send({"type": "http.response.start", "status": 401, "headers": [(b"content-length", b"0")]})
            await send({"type": "http.response.body", "body": b""})
            return
        await app(scope, receive, send)

    return guarded


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    elif len(sys.argv) == 4 and sys.argv[1] == "http-auth":
        import uvicorn

        uvicorn.run(require_token(server.streamable_http_app(), sys.argv[3]), host="127.0.0.1",
                    port=int(sys.argv[2]), log_level="warning")
    else:
        server.run("stdio")
