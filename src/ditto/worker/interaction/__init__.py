"""INTERACTION: tools, MCP servers and the web for agents (SPEC §7, INT-1…INT-6).

``create_interaction`` is the SDK, ``create_interaction_worker`` registers the
nodes INTERACTION.ACT.TOOL / ACT.MCP / LIST_TOOLS / OBSERVE / WEB.SEARCH /
WEB.READ. ``web_search`` / ``web_read`` are the web tools as plain functions.
The data types in :mod:`ditto.worker.interaction.types` are what other packages
(the research workflow) depend on.
"""

from ...contracts import ToolCall
from .config import (
    BRAVE_API_KEY_ENV,
    McpHttpServer,
    McpStdioServer,
    WebOptions,
    web_options_from_config,
    web_options_from_env,
)
from .sdk import Interaction, create_interaction
from .tools import Tool, tool
from .types import (
    InteractionError,
    Observation,
    SearchCandidate,
    ToolError,
    ToolFailure,
    ToolMessage,
    ToolResult,
    ToolSpec,
    WebPage,
    WebSearchResult,
)
from .web import WebClient, web_read, web_search
from .worker import (
    INTERACTION_WORKER_TYPE,
    InteractionWorkerDefinition,
    create_interaction_worker,
    interaction_act_mcp_node,
    interaction_act_tool_node,
    interaction_list_tools_node,
    interaction_observe_node,
    interaction_web_read_node,
    interaction_web_search_node,
    interaction_worker_from_env,
)

__all__ = [
    "BRAVE_API_KEY_ENV",
    "INTERACTION_WORKER_TYPE",
    "Interaction",
    "InteractionError",
    "InteractionWorkerDefinition",
    "McpHttpServer",
    "McpStdioServer",
    "Observation",
    "SearchCandidate",
    "Tool",
    "ToolCall",
    "ToolError",
    "ToolFailure",
    "ToolMessage",
    "ToolResult",
    "ToolSpec",
    "WebClient",
    "WebOptions",
    "WebPage",
    "WebSearchResult",
    "create_interaction",
    "create_interaction_worker",
    "interaction_act_mcp_node",
    "interaction_act_tool_node",
    "interaction_list_tools_node",
    "interaction_observe_node",
    "interaction_web_read_node",
    "interaction_web_search_node",
    "interaction_worker_from_env",
    "tool",
    "web_options_from_config",
    "web_options_from_env",
    "web_read",
    "web_search",
]
