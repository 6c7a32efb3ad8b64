"""The INTERACTION worker: its nodes over one :class:`~ditto.worker.interaction.sdk.Interaction`.

Nodes (input → output):

* ``INTERACTION.ACT.TOOL``  ``{call}`` → ToolResult
* ``INTERACTION.ACT.MCP``   ``{server, call}`` → ToolResult
* ``INTERACTION.LIST_TOOLS`` ``{server?}`` → tuple of ToolSpec
* ``INTERACTION.OBSERVE``   ``{result, call?}`` → Observation
* ``INTERACTION.WEB.SEARCH`` ``{query, engine?, limit?}`` → WebSearchResult
* ``INTERACTION.WEB.READ``  ``{url}`` → WebPage

Handlers pass the runtime's ``ctx.signal`` on, so a cancelled call or its
timeout stops the tool, the MCP session or the HTTP request.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ...errors import InvalidArgumentError
from ...runtime import ExecutionContext, NodeDescriptor, WorkerDefinition
from ...runtime.worker import valid_concurrency
from .config import WebOptions, web_options_from_env
from .sdk import Interaction, create_interaction
from .types import InteractionError, Observation, ToolResult, ToolSpec, WebPage, WebSearchResult

if TYPE_CHECKING:
    from ...config import RuntimeConfig

__all__ = [
    "INTERACTION_WORKER_TYPE",
    "InteractionWorkerDefinition",
    "create_interaction_worker",
    "interaction_act_mcp_node",
    "interaction_act_tool_node",
    "interaction_list_tools_node",
    "interaction_observe_node",
    "interaction_web_read_node",
    "interaction_web_search_node",
    "interaction_worker_from_env",
]

INTERACTION_WORKER_TYPE = "INTERACTION"

interaction_act_tool_node: NodeDescriptor[Any, ToolResult] = NodeDescriptor("INTERACTION.ACT.TOOL")
interaction_act_mcp_node: NodeDescriptor[Any, ToolResult] = NodeDescriptor("INTERACTION.ACT.MCP")
interaction_list_tools_node: NodeDescriptor[Any, tuple[ToolSpec, ...]] = NodeDescriptor("INTERACTION.LIST_TOOLS")
interaction_observe_node: NodeDescriptor[Any, Observation] = NodeDescriptor("INTERACTION.OBSERVE")
interaction_web_search_node: NodeDescriptor[Any, WebSearchResult] = NodeDescriptor("INTERACTION.WEB.SEARCH",
                                                                                  WebSearchResult)
interaction_web_read_node: NodeDescriptor[Any, WebPage] = NodeDescriptor("INTERACTION.WEB.READ", WebPage)


class InteractionWorkerDefinition(WorkerDefinition):
    """A WorkerDefinition that also hands out its :class:`Interaction` and closes its connections.

    ``await worker.aclose()`` after ``runtime.close()`` (the runtime never closes
    what a worker holds). When the application passed its own ``interaction=``,
    closing it stays the application's job and ``aclose`` does nothing.
    """

    interaction: Interaction
    owns_interaction: bool

    async def aclose(self) -> None:
        """Close the web tools' HTTP pool and kept-alive MCP sessions (when the worker made the SDK)."""
        if self.owns_interaction:
            await self.interaction.aclose()


def create_interaction_worker(tools: Iterable[Any] = (), mcp_servers: Mapping[str, Any] | None = None,
                              web: WebOptions | Mapping[str, Any] | None = None, *, concurrency: int | None = None,
                              web_tools: bool = False, interaction: Interaction | None = None
                              ) -> InteractionWorkerDefinition:
    """An ``INTERACTION`` worker definition with the six nodes above.

    ::

        worker = create_interaction_worker(tools=[add], web=WebOptions(allowed_origins=["https://sqlite.org"]))
        runtime = create_ditto(workers=[worker])
        result = await runtime.invoke("INTERACTION.ACT.TOOL", {"call": {"id": "c1", "name": "add",
                                                                        "arguments": {"a": 1, "b": 2}}})
        ...
        await runtime.close()
        await worker.aclose()

    Pass ``interaction=create_interaction(...)`` instead of the options to share
    one SDK (and its connection pool) between the worker and direct calls.
    """
    if not valid_concurrency(concurrency):  # before an SDK exists that would need closing
        raise InvalidArgumentError("concurrency must be a positive integer or None")
    if interaction is not None:
        if not isinstance(interaction, Interaction):
            raise InvalidArgumentError("interaction must come from create_interaction()")
        if tools or mcp_servers or web is not None or web_tools:
            raise InvalidArgumentError("pass either interaction= or tools/mcp_servers/web/web_tools, not both")
        sdk, owned = interaction, False
    else:
        sdk, owned = create_interaction(tools, mcp_servers, web, web_tools=web_tools), True

    async def act_tool(input: Any, context: ExecutionContext) -> ToolResult:
        return await sdk.act_tool(input, signal=context.signal)

    async def act_mcp(input: Any, context: ExecutionContext) -> ToolResult:
        return await sdk.act_mcp(input, signal=context.signal)

    async def list_tools(input: Any, context: ExecutionContext) -> tuple[ToolSpec, ...]:
        return await sdk.list_tools(input, signal=context.signal)

    async def observe(input: Any, context: ExecutionContext) -> Observation:
        return await sdk.observe(input, signal=context.signal)

    async def web_search(input: Any, context: ExecutionContext) -> WebSearchResult:
        return await sdk.web_search(input, signal=context.signal)

    async def web_read(input: Any, context: ExecutionContext) -> WebPage:
        return await sdk.web_read(input, signal=context.signal)

    definition = InteractionWorkerDefinition(INTERACTION_WORKER_TYPE, {
        interaction_act_tool_node.type: act_tool,
        interaction_act_mcp_node.type: act_mcp,
        interaction_list_tools_node.type: list_tools,
        interaction_observe_node.type: observe,
        interaction_web_search_node.type: web_search,
        interaction_web_read_node.type: web_read,
    }, concurrency=concurrency, signal_error=InteractionError)  # INTERACTION_CANCELLED / _TIMEOUT (INT-6)
    object.__setattr__(definition, "interaction", sdk)
    object.__setattr__(definition, "owns_interaction", owned)
    return definition


def interaction_worker_from_env(config: RuntimeConfig | None = None, env: Mapping[str, str] | None = None
                                ) -> InteractionWorkerDefinition:
    """A worker with web options from YAML (``workers.interaction.web``) and the Brave key from the environment.

    Usable as ``ditto serve --worker ditto.worker.interaction:interaction_worker_from_env``;
    it has no Python tools or MCP servers (those are code the application registers).
    """
    return create_interaction_worker(web=web_options_from_env(config, env))
