"""The public face of the foundation and runtime packages: exactly these names, each importable.

As httpx does in ``test_exported_members``: a name enters or leaves ``__all__`` on purpose, and no public
attribute is defined without being listed (RT-1, RT-4, CX-1, MEM-1 name what the root package offers).
"""

from __future__ import annotations

import importlib
import types

import pytest

EXPECTED: dict[str, set[str]] = {
    "ditto.errors": {
        "CANCELLED", "HANDLER_ERROR", "OUTPUT_NOT_SERIALIZABLE", "REJECTED", "TIMEOUT", "ConfigError",
        "DittoError", "GraphError", "InvalidArgumentError", "NodeStatus", "RegistrationError", "RoutingError",
        "TransportError", "describe_validation_error",
    },
    "ditto.signal": {"AbortController", "CancelSignal", "CancelledBySignal", "await_with_signal"},
    "ditto.text": {
        "BM25_B", "BM25_K1", "CJK_CLASS", "CJK_STOPWORDS", "ENGLISH_STOPWORDS", "CjkMode", "TextAnalyzer",
        "bm25_score", "score_documents", "word_terms",
    },
    "ditto.runtime": {
        "DEFAULT_LOOP_BUDGET", "INPUT_FN_FAILED", "ExecutionContext", "Graph", "GraphNode", "GraphResult",
        "LoopContext", "NodeDescriptor", "NodeError", "NodeHandler", "NodeResult", "NodeStatus", "Runtime",
        "RuntimeClient", "Transport", "WorkerDefinition", "WorkerInfo", "create_ditto", "current_execution",
        "graph", "node_descriptor",
    },
    "ditto.transport": {"DEFAULT_MAX_BODY_BYTES", "HttpTransport", "create_http_transport", "create_worker_http_app"},
}


@pytest.mark.parametrize("package", sorted(EXPECTED))
def test_exported_members(package: str) -> None:
    """``__all__`` is exactly the documented set, every name resolves, nothing public is left unlisted."""
    module = importlib.import_module(package)
    exported = set(module.__all__)
    assert exported == EXPECTED[package]
    missing = {name for name in exported if not hasattr(module, name)}
    assert missing == set()
    defined_here = {
        name for name, value in vars(module).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
        and getattr(value, "__module__", package).startswith(package)
    }
    assert defined_here - exported <= _TYPING_HELPERS, defined_here - exported


# Module-level type variables and aliases used in signatures are not part of the face.
_TYPING_HELPERS = {"T", "In", "Out", "M", "InputFn", "Invoke", "TYPE_CHECKING"}
