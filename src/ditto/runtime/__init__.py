"""The runtime layer: workers, routing, graphs and loops."""

from .graph import INPUT_FN_FAILED, SKIP, Graph, GraphNode, GraphResult, graph
from .loop import DEFAULT_LOOP_BUDGET, LoopContext
from .node import NodeDescriptor, node_descriptor
from .result import NodeError, NodeResult, NodeStatus
from .runtime import Runtime, create_ditto
from .transport import Transport
from .worker import (
    ExecutionContext,
    NodeHandler,
    RuntimeClient,
    WorkerDefinition,
    WorkerInfo,
    current_execution,
)

__all__ = [
    "DEFAULT_LOOP_BUDGET",
    "INPUT_FN_FAILED",
    "SKIP",
    "ExecutionContext",
    "Graph",
    "GraphNode",
    "GraphResult",
    "LoopContext",
    "NodeDescriptor",
    "NodeError",
    "NodeHandler",
    "NodeResult",
    "NodeStatus",
    "Runtime",
    "RuntimeClient",
    "Transport",
    "WorkerDefinition",
    "WorkerInfo",
    "create_ditto",
    "current_execution",
    "graph",
    "node_descriptor",
]
