"""pyditto: a runtime for agents that find things and keep their working context honest.

``import ditto`` loads the runtime, contracts, config and core workers only;
the optional RETRIEVAL package (``ditto.retrieval``) is never imported here.
"""

from importlib.metadata import PackageNotFoundError, version

from .config import RuntimeConfig, load_dotenv_mapping, load_runtime_config, load_runtime_config_file
from .errors import ConfigError, DittoError, GraphError, RegistrationError, RoutingError, TransportError
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
from .transport import HttpTransport, create_http_transport, create_worker_http_app
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
from .worker.memory import (
    DittoMemoryError,
    MemoryItem,
    create_memory,
    create_memory_worker,
    create_sqlite_memory_store,
)

try:
    __version__ = version("pyditto")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0"

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
    "LoopContext",
    "MemoryItem",
    "NodeDescriptor",
    "NodeError",
    "NodeResult",
    "RegistrationError",
    "RoutingError",
    "Runtime",
    "RuntimeClient",
    "RuntimeConfig",
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
    "is_protected_context_item",
    "load_dotenv_mapping",
    "load_runtime_config",
    "load_runtime_config_file",
    "node_descriptor",
    "run_rag_flow",
    "run_skill_flow",
]
