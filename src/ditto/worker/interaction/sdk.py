"""The INTERACTION SDK: ``create_interaction(...)`` (INT-1…INT-6).

The worker's nodes call exactly these methods. The one rule that shapes them:
a *request* that is wrong (malformed input, unknown tool, arguments failing the
schema) raises :class:`InteractionError`; a tool that *ran and failed* gives a
``ToolResult`` with ``status="error"`` so the model can be shown what happened,
and OBSERVE turns either into an observation the application can branch on.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Iterable, Mapping
from typing import Any, Final

from pydantic import BaseModel, ValidationError

from ...contracts import InvalidJson, ToolCall, check_json, js_json_dumps
from ...errors import InvalidArgumentError, describe_validation_error
from ...runtime import NodeResult
from ...signal import CancelSignal, await_with_signal
from .config import McpServer, WebOptions, mcp_server_from, web_options_from
from .mcp_client import McpSessionPool, call_mcp_tool, list_mcp_tools
from .tools import Tool, tool_from
from .types import (
    ActMcpInput,
    ActToolInput,
    InteractionError,
    ListToolsInput,
    Observation,
    ObserveInput,
    ToolError,
    ToolFailure,
    ToolMessage,
    ToolResult,
    ToolSpec,
    WebPage,
    WebReadInput,
    WebSearchInput,
    WebSearchResult,
    parse_interaction_input,
)
from .web import WebClient

__all__ = ["MAX_TOOL_CONTENT_BYTES", "Interaction", "create_interaction"]

_log = logging.getLogger("ditto.interaction")


#: Largest tool answer (JSON UTF-8 bytes) handed back; more is INTERACTION_RESPONSE_TOO_LARGE.
MAX_TOOL_CONTENT_BYTES: Final = 4 * 1024 * 1024
_MAX_TOOL_ERROR_TEXT: Final = 4000
_TOOL_FAILED: Final = "INTERACTION_TOOL_FAILED"



def _check_signal(signal: CancelSignal | None) -> None:
    if signal is not None and not isinstance(signal, CancelSignal):
        raise InteractionError("INTERACTION_INVALID_INPUT", "signal must be a CancelSignal")
    if signal is not None and signal.aborted:
        raise InteractionError.from_signal(signal.reason)


def _signal_error(signal: CancelSignal) -> InteractionError:
    return InteractionError.from_signal(signal.reason)


def _public_text(text: str) -> str:
    return text.encode("utf-8", "replace").decode("utf-8")[:_MAX_TOOL_ERROR_TEXT] or "The tool failed"


def _as_json(value: Any) -> Any:
    """A tool's return value as JSON: models by alias, dataclasses as objects, tuples as arrays."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _as_json(dataclasses.asdict(value))
    if isinstance(value, Mapping):
        return {key: _as_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_as_json(item) for item in value]
    return value


def _failed(call: ToolCall, source: str, code: str, message: str) -> ToolResult:
    return ToolResult(call_id=call.id, name=call.name, status="error", content=message, source=source,
                      error=ToolFailure(code=code, message=message))


def _succeeded(call: ToolCall, source: str, value: Any) -> ToolResult:
    try:
        content = _as_json(value)
        check_json(content)
        size = len(js_json_dumps(content).encode("utf-8"))
    except (InvalidJson, TypeError, ValueError, RecursionError):
        _log.warning("tool %r returned a value that is not JSON", call.name)
        return _failed(call, source, _TOOL_FAILED, "The tool returned a value that is not JSON")
    if size > MAX_TOOL_CONTENT_BYTES:
        return _failed(call, source, "INTERACTION_RESPONSE_TOO_LARGE",
                       f"The tool's answer is larger than {MAX_TOOL_CONTENT_BYTES} bytes")
    return ToolResult(call_id=call.id, name=call.name, status="success", content=content, source=source)


class Interaction:
    """Tools, MCP servers and the web, behind the operations of the INTERACTION nodes.

    ::

        interaction = create_interaction(tools=[add], web=WebOptions(allowed_origins=["https://sqlite.org"]))
        try:
            result = await interaction.act_tool({"call": {"id": "c1", "name": "add", "arguments": {"a": 1, "b": 2}}})
            observation = await interaction.observe({"result": result})
            page = await interaction.web_read({"url": "https://sqlite.org/wal.html"})
        finally:
            await interaction.aclose()
    """

    __slots__ = ("_mcp", "_mcp_sessions", "_tools", "_web")

    def __init__(self, tools: Iterable[Any] = (), mcp_servers: Mapping[str, Any] | None = None,
                 web: WebOptions | Mapping[str, Any] | None = None, *, web_tools: bool = False) -> None:
        if isinstance(tools, (str, bytes)) or not isinstance(tools, Iterable):
            raise InvalidArgumentError("tools must be a list of callables or Tool objects")
        self._web = WebClient(web_options_from(web))
        registered: dict[str, Tool] = {}
        candidates = [tool_from(item) for item in tools]
        if web_tools:
            from .builtin import web_tools as make_web_tools

            candidates.extend(make_web_tools(self._web))
        for item in candidates:
            if item.name in registered:
                raise InvalidArgumentError(f"two tools are named {item.name!r}")
            registered[item.name] = item
        self._tools: Mapping[str, Tool] = registered
        if mcp_servers is not None and not isinstance(mcp_servers, Mapping):
            raise InvalidArgumentError("mcp_servers must map names to MCP server configs")
        servers: dict[str, McpServer] = {}
        for name, config in (mcp_servers or {}).items():
            if not isinstance(name, str) or not name.strip() or len(name) > 128:
                raise InvalidArgumentError("MCP server names must be non-empty strings of at most 128 characters")
            servers[name] = mcp_server_from(config)
        self._mcp: Mapping[str, McpServer] = servers
        self._mcp_sessions = McpSessionPool()

    @property
    def tools(self) -> Mapping[str, Tool]:
        return dict(self._tools)

    @property
    def web(self) -> WebClient:
        return self._web

    async def aclose(self) -> None:
        """Close the web tools' pooled HTTP session and any kept-alive MCP sessions (idempotent)."""
        await self._web.aclose()
        await self._mcp_sessions.aclose()

    async def __aenter__(self) -> Interaction:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    # -- local tools --------------------------------------------------------------------------
    async def act_tool(self, input: ActToolInput | Mapping[str, Any], *,
                       signal: CancelSignal | None = None) -> ToolResult:
        """INTERACTION.ACT.TOOL ``{call}`` → :class:`ToolResult`.

        Raises ``INTERACTION_UNKNOWN_TOOL`` / ``INTERACTION_INVALID_INPUT`` before
        anything runs; a tool that raises gives ``status="error"`` with code
        ``INTERACTION_TOOL_FAILED`` and a fixed message (the tool's own text only
        when it raised :class:`ToolError`).
        """
        _check_signal(signal)
        call = parse_interaction_input(ActToolInput, input).call
        found = self._tools.get(call.name)
        if found is None:
            raise InteractionError("INTERACTION_UNKNOWN_TOOL", "No tool with that name is registered")
        try:
            validated = found.validate(call.arguments)
        except ValidationError as error:
            raise InteractionError("INTERACTION_INVALID_INPUT",
                                   "arguments." + describe_validation_error(error, root="arguments")) from None
        source = f"tool:{found.name}"
        try:
            value = await await_with_signal(found.run(validated, signal), signal, error=_signal_error)
        except ToolError as error:
            return _failed(call, source, _TOOL_FAILED, _public_text(error.message))
        except InteractionError as error:
            if signal is not None and signal.aborted:
                raise
            return _failed(call, source, error.code, error.message)
        except Exception:
            _log.exception("tool %r raised", found.name)
            return _failed(call, source, _TOOL_FAILED, "The tool failed")
        return _succeeded(call, source, value)

    # -- MCP ----------------------------------------------------------------------------------
    def _server(self, name: str) -> McpServer:
        server = self._mcp.get(name)
        if server is None:
            raise InteractionError("INTERACTION_UNKNOWN_TOOL", "No MCP server with that name is configured")
        return server

    async def act_mcp(self, input: ActMcpInput | Mapping[str, Any], *,
                      signal: CancelSignal | None = None) -> ToolResult:
        """INTERACTION.ACT.MCP ``{server, call}`` → :class:`ToolResult` (source ``mcp:<server>/<tool>``).

        An ``isError`` answer passes its text on (MCP meant it for the model); a
        server that fails or dies mid-call gives ``status="error"`` with a fixed message.
        """
        _check_signal(signal)
        request = parse_interaction_input(ActMcpInput, input)
        server = self._server(request.server)
        call = request.call
        source = f"mcp:{request.server}/{call.name}"
        try:
            answer = await await_with_signal(self._bounded_mcp(request.server, server, call), signal,
                                             error=_signal_error)
        except InteractionError as error:
            if error.code in ("INTERACTION_TIMEOUT", "INTERACTION_CANCELLED"):
                raise
            return _failed(call, source, error.code, error.message)
        if answer.is_error:
            return _failed(call, source, _TOOL_FAILED, str(answer.content))
        return _succeeded(call, source, answer.content)

    async def _bounded_mcp(self, server_name: str, server: McpServer, call: ToolCall) -> Any:
        try:
            async with asyncio.timeout(server.timeout_s):
                return await call_mcp_tool(server_name, server, call.name, dict(call.arguments), self._mcp_sessions)
        except TimeoutError:
            raise InteractionError("INTERACTION_TIMEOUT",
                                   f"The MCP call took longer than {server.timeout_s:g} s") from None

    async def list_tools(self, input: ListToolsInput | Mapping[str, Any] | str | None = None, *,
                         server: str | None = None, signal: CancelSignal | None = None) -> tuple[ToolSpec, ...]:
        """INTERACTION.LIST_TOOLS: ``{}`` lists this worker's tools, ``{server}`` an MCP server's.

        The server may also be named directly: ``list_tools("files")`` or ``list_tools(server="files")``.
        """
        _check_signal(signal)
        if server is not None:
            if input is not None:
                raise InteractionError("INTERACTION_INVALID_INPUT", "pass either an input or server=, not both")
            input = {"server": server}
        elif isinstance(input, str):
            input = {"server": input}
        request = parse_interaction_input(ListToolsInput, input if input is not None else {})
        if request.server is None:
            return tuple(ToolSpec(name=item.name, description=item.description, input_schema=dict(item.input_schema),
                                  source=f"tool:{item.name}") for item in self._tools.values())
        config = self._server(request.server)

        async def bounded() -> tuple[ToolSpec, ...]:
            try:
                async with asyncio.timeout(config.timeout_s):
                    return await list_mcp_tools(request.server or "", config, self._mcp_sessions)
            except TimeoutError:
                raise InteractionError("INTERACTION_TIMEOUT",
                                       f"Listing MCP tools took longer than {config.timeout_s:g} s") from None

        return await await_with_signal(bounded(), signal, error=_signal_error)

    # -- observe ------------------------------------------------------------------------------
    async def observe(self, input: ObserveInput | Mapping[str, Any], *,
                      signal: CancelSignal | None = None) -> Observation:
        """INTERACTION.OBSERVE ``{result}`` → ``{message: {role: "tool", content}, source, status}``.

        ``result`` is a ToolResult, or the NodeResult of an ACT call: a failed
        call becomes an observation with that status and error, so the seed's
        "tool observation into the cached context" graph can branch on one value.
        """
        _check_signal(signal)
        request = parse_interaction_input(ObserveInput, input)
        return observation_of(request.result, request.call)

    # -- web ----------------------------------------------------------------------------------
    async def web_search(self, input: WebSearchInput | Mapping[str, Any], *,
                         signal: CancelSignal | None = None) -> WebSearchResult:
        """INTERACTION.WEB.SEARCH ``{query, engine?, limit?}`` → ``{engine, query, candidates}``."""
        _check_signal(signal)
        return await self._web.search(input, signal=signal)

    async def web_read(self, input: WebReadInput | Mapping[str, Any], *,
                       signal: CancelSignal | None = None) -> WebPage:
        """INTERACTION.WEB.READ ``{url}`` → :class:`WebPage`."""
        _check_signal(signal)
        return await self._web.read(input, signal=signal)


def _node_result_of(value: Any) -> NodeResult[Any] | None:
    if isinstance(value, NodeResult):
        return value
    if isinstance(value, Mapping) and ("executionId" in value or "execution_id" in value) and "status" in value:
        body = dict(value)
        if "execution_id" in body:
            body["executionId"] = body.pop("execution_id")
        try:
            return NodeResult.from_wire(body)
        except ValueError:
            raise InteractionError("INTERACTION_INVALID_INPUT", "result is not a valid NodeResult") from None
    return None


def observation_of(result: Any, call: ToolCall | None = None) -> Observation:
    """The observation for a ToolResult or an ACT NodeResult (pure; the OBSERVE node's body)."""
    node_result = _node_result_of(result)
    if node_result is not None:
        if node_result.status != "success":
            error = node_result.error
            code = error.code if error is not None else node_result.status.upper()
            message = error.message if error is not None else node_result.status
            return Observation(
                message=ToolMessage(content=message, tool_call_id=call.id if call else None,
                                    name=call.name if call else None),
                source=node_result.node, status=node_result.status, call_id=call.id if call else None,
                error=ToolFailure(code=code, message=message))
        result = node_result.output
    tool_result = parse_interaction_input(ToolResult, result)
    content = tool_result.content
    text = content if isinstance(content, str) else js_json_dumps(content)
    return Observation(message=ToolMessage(content=text, tool_call_id=tool_result.call_id, name=tool_result.name),
                       source=tool_result.source, status=tool_result.status, call_id=tool_result.call_id,
                       error=tool_result.error)


def create_interaction(tools: Iterable[Any] = (), mcp_servers: Mapping[str, Any] | None = None,
                       web: WebOptions | Mapping[str, Any] | None = None, *, web_tools: bool = False
                       ) -> Interaction:
    """The direct SDK: the same operations as the INTERACTION worker's nodes.

    ``tools`` are functions (sync or async) or :class:`Tool` objects;
    ``mcp_servers`` maps names to :class:`McpStdioServer` / :class:`McpHttpServer`
    (or ``{"command", "args"}`` / ``{"url"}``); ``web`` (a :class:`WebOptions` or
    its dict, either spelling) configures search and reading; ``web_tools=True``
    also offers ``web_search`` / ``web_read`` as tools a model can call. Close it
    with ``await interaction.aclose()``::

        def add(a: int, b: int) -> int:
            'Add two integers.'
            return a + b

        async with create_interaction([add]) as interaction:
            result = await interaction.act_tool({"call": {"id": "c1", "name": "add", "arguments": {"a": 2, "b": 3}}})
            observation = await interaction.observe({"result": result})
    """
    return Interaction(tools, mcp_servers, web, web_tools=web_tools)
