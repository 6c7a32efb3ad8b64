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

try:
    __version__ = version("pyditto")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0"

__all__ = [
    "AbortController",
    "CancelSignal",
    "CancelledBySignal",
    "ConfigError",
    "DittoError",
    "ExecutionContext",
    "Graph",
    "GraphError",
    "GraphResult",
    "HttpTransport",
    "LoopContext",
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
    "create_ditto",
    "create_http_transport",
    "create_worker_http_app",
    "current_execution",
    "graph",
    "load_dotenv_mapping",
    "load_runtime_config",
    "load_runtime_config_file",
    "node_descriptor",
]
