"""ditto-agents: a runtime for agents that find things and keep their working context honest.

``import ditto`` loads the runtime, contracts, config and core workers only;
the optional RETRIEVAL package (``ditto.retrieval``) and the research workflow are never
imported here, nor any server, model or web client library (they load on first use).
"""

from typing import TYPE_CHECKING, Any

from ._version import __version__
from .config import RuntimeConfig, load_dotenv_mapping, load_runtime_config, load_runtime_config_file
from .contracts import ToolCall
from .errors import (
    ConfigError,
    DittoError,
    GraphError,
    InvalidArgumentError,
    MissingExtraError,
    RegistrationError,
    RoutingError,
    TransportError,
)
from .runtime import (
    ExecutionContext,
    Graph,
    GraphResult,
    LoopContext,
    NodeDescriptor,
    NodeError,
    NodeResult,
    Runtime,
    RuntimeClient,
    WorkerDefinition,
    WorkerInfo,
    create_ditto,
    current_execution,
    graph,
    node_descriptor,
)
from .signal import AbortController, CancelledBySignal, CancelSignal
from .worker.context import (
    ContextError,
    ContextScope,
    ContextStateStore,
    context_compress_node,
    context_load_node,
    context_scope_key,
    context_select_node,
    context_update_node,
    create_context,
    create_context_execution,
    create_context_operation_queue,
    create_context_worker,
    create_in_memory_context_store,
    create_rag_strategy,
    create_redis_context_store,
    default_select,
    deterministic_compress,
    is_protected_context_item,
    run_rag_flow,
    run_skill_flow,
)
from .worker.infer import (
    InferClient,
    InferCounters,
    InferError,
    InferResult,
    ModelConfig,
    create_infer_client,
    create_infer_worker,
    infer_sample_node,
)
from .worker.interaction import (
    InteractionError,
    Observation,
    ToolError,
    ToolResult,
    create_interaction,
    create_interaction_worker,
)
from .worker.memory import (
    DittoMemoryError,
    MemoryItem,
    create_memory,
    create_memory_worker,
    create_sqlite_memory_store,
)

if TYPE_CHECKING:
    from .transport import HttpTransport, create_http_transport, create_worker_http_app

# The HTTP transport pulls in starlette and httpx (~150 ms); load it on first use only.
_LAZY = {"HttpTransport", "create_http_transport", "create_worker_http_app"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from . import transport

        return getattr(transport, name)
    raise AttributeError(f"module 'ditto' has no attribute {name!r}")

__all__ = [
    "AbortController",
    "CancelSignal",
    "CancelledBySignal",
    "ConfigError",
    "ContextError",
    "ContextScope",
    "ContextStateStore",
    "DittoError",
    "DittoMemoryError",
    "ExecutionContext",
    "Graph",
    "GraphError",
    "GraphResult",
    "HttpTransport",
    "InferClient",
    "InferCounters",
    "InferError",
    "InferResult",
    "InteractionError",
    "InvalidArgumentError",
    "LoopContext",
    "MemoryItem",
    "MissingExtraError",
    "ModelConfig",
    "NodeDescriptor",
    "NodeError",
    "NodeResult",
    "Observation",
    "RegistrationError",
    "RoutingError",
    "Runtime",
    "RuntimeClient",
    "RuntimeConfig",
    "ToolCall",
    "ToolError",
    "ToolResult",
    "TransportError",
    "WorkerDefinition",
    "WorkerInfo",
    "__version__",
    "context_compress_node",
    "context_load_node",
    "context_scope_key",
    "context_select_node",
    "context_update_node",
    "create_context",
    "create_context_execution",
    "create_context_operation_queue",
    "create_context_worker",
    "create_ditto",
    "create_http_transport",
    "create_in_memory_context_store",
    "create_infer_client",
    "create_infer_worker",
    "create_interaction",
    "create_interaction_worker",
    "create_memory",
    "create_memory_worker",
    "create_rag_strategy",
    "create_redis_context_store",
    "create_sqlite_memory_store",
    "create_worker_http_app",
    "current_execution",
    "default_select",
    "deterministic_compress",
    "graph",
    "infer_sample_node",
    "is_protected_context_item",
    "load_dotenv_mapping",
    "load_runtime_config",
    "load_runtime_config_file",
    "node_descriptor",
    "run_rag_flow",
    "run_skill_flow",
]
