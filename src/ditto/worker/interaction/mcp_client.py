"""MCP tools through the official ``mcp`` SDK (INT-2): stdio and streamable HTTP.

By default each call opens a session, does its one request and closes it: a stdio
server is started for the call and stopped after it, so a crashed server never
poisons the next call and nothing outlives a cancelled one. A server configured with
``keep_alive=True`` keeps one session instead (:class:`McpSessionPool`): a background
task owns it (the SDK's client must be entered and left in one task), calls from any
task share it, and a session that fails is dropped and started again on the next call.
The SDK (``pip install 'ditto-agents[mcp]'``) is imported on first use only.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final

from ..._extras import install_hint
from ...contracts import InvalidJson, check_json
from .config import McpHttpServer, McpServer
from .types import InteractionError, ToolSpec

__all__ = ["McpAnswer", "McpSessionPool", "call_mcp_tool", "list_mcp_tools"]

_log = logging.getLogger("ditto.interaction.mcp")

#: Pages of tools/list followed before giving up (a paginator that never ends cannot hang a call).
_MAX_LIST_PAGES: Final = 50


class McpAnswer:
    """A tool's answer as the worker reports it: content and whether the tool said it failed."""

    __slots__ = ("content", "is_error")

    def __init__(self, content: Any, is_error: bool) -> None:
        self.content = content
        self.is_error = is_error


@asynccontextmanager
async def _client(server: McpServer) -> AsyncIterator[Any]:
    """A connected ``mcp.Client`` for one call; the transport (and a stdio process) ends with it."""
    try:
        from mcp import Client, StdioServerParameters
    except ImportError:  # pragma: no cover - the extra is part of the dev install
        raise InteractionError("INTERACTION_TOOL_FAILED",
                               f"MCP support needs the 'mcp' extra: {install_hint('mcp')}") from None
    if isinstance(server, McpHttpServer):
        if not server.headers:
            async with Client(server.url, read_timeout_seconds=server.timeout_s, cache=None) as client:
                yield client
            return
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        # The SDK's own client settings (30 s connect, long reads for the event stream), plus the headers.
        async with httpx2.AsyncClient(headers=dict(server.headers), timeout=httpx2.Timeout(30.0, read=300.0)) as http, \
                Client(streamable_http_client(server.url, http_client=http), read_timeout_seconds=server.timeout_s,
                       cache=None) as client:
            yield client
        return
    parameters = StdioServerParameters(command=server.command, args=list(server.args),
                                       env=dict(server.env) if server.env is not None else None,
                                       cwd=server.cwd)
    async with Client(parameters, read_timeout_seconds=server.timeout_s, cache=None) as client:
        yield client


class _Session:
    """One long-lived client, owned by its own task from connect to close."""

    def __init__(self, server_name: str, server: McpServer) -> None:
        self.client: Any = None
        self.failed = False
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._task = asyncio.create_task(self._own(server_name, server), name=f"ditto-mcp-session:{server_name}")

    async def _own(self, server_name: str, server: McpServer) -> None:
        try:
            async with _client(server) as client:
                self.client = client
                self._ready.set()
                await self._stop.wait()
        except Exception:  # the process died or never started: the next call starts a new session
            _log.warning("MCP session with %r ended with an error", server_name, exc_info=True)
        finally:
            self.failed = True
            self.client = None
            self._ready.set()

    async def connected(self) -> Any:
        await self._ready.wait()
        if self.client is None:
            raise InteractionError("INTERACTION_TOOL_FAILED", "The MCP server could not be started or reached")
        return self.client

    async def close(self) -> None:
        self._stop.set()
        await asyncio.gather(self._task, return_exceptions=True)


class McpSessionPool:
    """Long-lived sessions for the servers configured with ``keep_alive=True``, one per server name.

    Belongs to the event loop that first used it; :meth:`aclose` stops every session
    (a stdio server's process ends with its session).
    """

    __slots__ = ("_lock", "_loop", "_sessions")

    def __init__(self) -> None:
        self._sessions: dict[str, _Session] = {}
        self._lock: asyncio.Lock | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def acquire(self, server_name: str, server: McpServer) -> Any:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # sessions of another (finished) loop cannot be reused or closed here
            self._sessions, self._lock, self._loop = {}, asyncio.Lock(), loop
        assert self._lock is not None
        async with self._lock:
            session = self._sessions.get(server_name)
            if session is None or session.failed:
                session = self._sessions[server_name] = _Session(server_name, server)
        return await session.connected()

    async def discard(self, server_name: str, client: Any) -> None:
        """Drop the session that answered with a failure (only if it is still the current one)."""
        session = self._sessions.get(server_name)
        if session is not None and session.client is client:
            del self._sessions[server_name]
            await session.close()

    async def aclose(self) -> None:
        sessions, self._sessions = list(self._sessions.values()), {}
        if self._loop is asyncio.get_running_loop():
            for session in sessions:
                await session.close()


@asynccontextmanager
async def _connected(server_name: str, server: McpServer, pool: McpSessionPool | None) -> AsyncIterator[Any]:
    if pool is None or not server.keep_alive:
        async with _client(server) as client:
            yield client
        return
    client = await pool.acquire(server_name, server)
    try:
        yield client
    except Exception:
        await pool.discard(server_name, client)
        raise


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


async def call_mcp_tool(server_name: str, server: McpServer, name: str, arguments: dict[str, Any],
                        pool: McpSessionPool | None = None) -> McpAnswer:
    """Call ``name`` on the server; a failure of the server or the protocol is ``INTERACTION_TOOL_FAILED``.

    The caller bounds the time and owns cancellation (``CancelledError`` passes through untouched).
    """
    try:
        async with _connected(server_name, server, pool) as client:
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


async def list_mcp_tools(server_name: str, server: McpServer,
                         pool: McpSessionPool | None = None) -> tuple[ToolSpec, ...]:
    """Every tool the server lists (following pagination), as :class:`ToolSpec`."""
    specs: list[ToolSpec] = []
    try:
        async with _connected(server_name, server, pool) as client:
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
