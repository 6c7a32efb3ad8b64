"""A tiny MCP server (stdio) that examples/interaction.py starts as a subprocess.

Written with the official ``mcp`` SDK's server side; it only needs ``mcp``
installed, not ditto-agents. Run it alone with ``python examples/interaction_mcp_server.py``.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("glossary")

GLOSSARY = {
    "wal": "write-ahead logging: changes are written to a log before they are applied",
    "rpo": "recovery point objective: how much recent data a restore may lose",
}


@server.tool()
def define(term: str) -> str:
    """Define a storage term (wal, rpo)."""
    return GLOSSARY.get(term.lower(), f"no entry for {term}")


if __name__ == "__main__":
    server.run("stdio")
