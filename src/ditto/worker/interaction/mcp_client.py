"""MCP tools through the official ``mcp`` SDK (INT-2): stdio and streamable HTTP.

Each call opens a session, does its one request and closes it: a stdio server is
started for the call and stopped after it, so a crashed server never poisons the
next call and nothing outlives a cancelled one. The SDK (``pip install
pyditto[mcp]``) is imported on first use only.
"""

from __future__ import annotations

import logging
from typing import Any, Final

from ...contracts import InvalidJson, check_json
from .config import McpHttpServer, McpServer
from .types import InteractionError, ToolSpec

__all__ = ["McpAnswer", "call_mcp_tool", "list_mcp_tools"]

_log = logging.getLogger("ditto.interaction.mcp")

#: Pages of tools/list followed before giving up (a paginator that never ends cannot hang a call).
_MAX_LIST_PAGES: Final = 50


class McpAnswer:
    """A tool's answer as the worker reports it: content and whether the tool said it failed."""

    __slots__ = ("content", "is_error")

    def __init__(self, content: Any, is_error: bool) -> None:
        self.content = content
        self.is_error = is_error


def _client(server: McpServer) -> Any:
    try:
        from mcp import Client, StdioServerParameters
    except ImportError:  # pragma: no cover - the extra is part of the dev install
        raise InteractionError("INTERACTION_TOOL_FAILED",
                               "MCP support is not installed (pip install pyditto[mcp])") from None
    if isinstance(server, McpHttpServer):
        return Client(server.url, read_timeout_seconds=server.timeout_s, cache=None)
    parameters = StdioServerParameters(command=server.command, args=list(server.args),
                                       env=dict(server.env) if server.env is not None else None,
                                       cwd=server.cwd)
    return Client(parameters, read_timeout_seconds=server.timeout_s, cache=None)


def _content(result: Any) -> Any:
    """Structured content when the tool gave it, else its text blocks, else the blocks as JSON."""
    structured = getattr(result, "structured_content", None)
    if structured is not None:
        check_json(structured)
        return structured
    blocks = list(getattr(result, "content", None) or ())
    if blocks and all(getattr(block, "type", None) == "text" for block in blocks):
        texts = [str(block.text) for block in blocks]
        return texts[0] if len(texts) == 1 else texts
    dumped = [block.model_dump(mode="json", by_alias=True, exclude_none=True) for block in blocks]
    check_json(dumped)
    return dumped


def _error_text(result: Any) -> str:
    """An ``isError`` answer's text: MCP meant it for the model, so it is passed on (bounded)."""
    texts = [str(block.text) for block in (getattr(result, "content", None) or ())
             if getattr(block, "type", None) == "text"]
    text = "\n".join(texts).strip() or "The MCP tool reported an error"
    return text.encode("utf-8", "replace").decode("utf-8")[:4000]


async def call_mcp_tool(server_name: str, server: McpServer, name: str, arguments: dict[str, Any]) -> McpAnswer:
    """Call ``name`` on the server; a failure of the server or the protocol is ``INTERACTION_TOOL_FAILED``.

    The caller bounds the time and owns cancellation (``CancelledError`` passes through untouched).
    """
    try:
        async with _client(server) as client:
            result = await client.call_tool(name, arguments)
    except InteractionError:
        raise
    except Exception:
        _log.warning("MCP server %r failed during a call to %r", server_name, name, exc_info=True)
        raise InteractionError("INTERACTION_TOOL_FAILED", "The MCP server failed during the call") from None
    if getattr(result, "is_error", False):
        return McpAnswer(_error_text(result), True)
    try:
        return McpAnswer(_content(result), False)
    except (InvalidJson, ValueError, TypeError):
        _log.warning("MCP server %r answered content that is not JSON", server_name)
        raise InteractionError("INTERACTION_TOOL_FAILED", "The MCP server answered content that is not JSON") \
            from None


async def list_mcp_tools(server_name: str, server: McpServer) -> tuple[ToolSpec, ...]:
    """Every tool the server lists (following pagination), as :class:`ToolSpec`."""
    specs: list[ToolSpec] = []
    try:
        async with _client(server) as client:
            cursor: str | None = None
            for _ in range(_MAX_LIST_PAGES):
                page = await client.list_tools(cursor=cursor)
                for listed in page.tools:
                    schema = listed.input_schema if isinstance(listed.input_schema, dict) else {}
                    specs.append(ToolSpec(name=listed.name, description=listed.description or "",
                                          input_schema=schema, source=f"mcp:{server_name}"))
                cursor = page.next_cursor
                if cursor is None:
                    break
    except Exception:
        _log.warning("MCP server %r failed while listing tools", server_name, exc_info=True)
        raise InteractionError("INTERACTION_TOOL_FAILED", "The MCP server could not list its tools") from None
    return tuple(specs)
