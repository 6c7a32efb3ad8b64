"""A stdio MCP server that reports its own environment, for the tests that check what a server inherits.

``python mcp_env_server.py`` speaks stdio. Its one tool, ``environment``, answers the value of each
variable it is asked about (``None`` when unset) and the names of every variable it has, so a test can
tell "the parent's secret reached the server" from "it did not".
"""

from __future__ import annotations

import os

from mcp.server.mcpserver import MCPServer

server = MCPServer("ditto-env-test")


@server.tool()
def environment(names: list[str]) -> dict[str, object]:
    """The values of ``names`` in this process's environment, and every variable name it has."""
    return {"values": {name: os.environ.get(name) for name in names}, "names": sorted(os.environ)}


if __name__ == "__main__":
    server.run("stdio")
