"""The public face of ``ditto.worker.context``: exactly these names, no import circles (CX-1 … CX-16, issue 9)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import ditto
import ditto.worker.context as context
from ditto.errors import DittoError
from ditto.signal import AbortController, CancelledBySignal
from ditto.worker.context import CONTEXT_ERROR_CODES, ContextError, create_context

EXPORTED = {
    # errors
    "CONTEXT_ERROR_CODES", "ContextError", "ContextArgumentError",
    # SDK, worker and node descriptors
    "ContextClient", "ContextOptions", "create_context", "create_context_worker",
    "context_load_node", "context_update_node", "context_select_node", "context_compress_node",
    # request models, results and what services exchange
    "ContextPolicy", "ContextScope", "ContextStrategy", "ContextLoadRequest", "ContextUpdateRequest",
    "ContextSelectRequest", "ContextCompressRequest", "ContextIngressItem", "StoredContext", "ContextCallOptions",
    "ContextServices", "ContextExecution", "ContextFlowResult", "RagCandidate", "RagStageInput",
    # service protocols
    "TokenEstimator", "ContextSelector", "RagStrategy", "ContextCompressor", "ReferenceResolver",
    "ContextStateStore", "ContextOperationQueue", "RedisContextClient",
    # built-in strategies and low-level functions
    "default_select", "deterministic_compress", "is_protected_context_item", "create_context_execution",
    "run_load", "run_update", "run_select", "run_compress",
    # RAG, stores, queue
    "create_rag_strategy", "RagStrategyPipeline", "create_redis_context_store", "RedisContextStore",
    "context_scope_key", "create_in_memory_context_store", "InMemoryContextStore",
    "create_context_operation_queue", "InProcessContextQueue", "update_with_retry",
    # runtime helpers and configuration
    "run_rag_flow", "run_skill_flow", "context_options_from_config", "REDIS_URL_ENV",
    "create_context_redis_client", "context_worker_from_env",
}

#: Names the root package re-exports from CONTEXT (``ditto/__init__.py``).
ROOT = {
    "ContextError", "ContextScope", "ContextStateStore", "context_compress_node", "context_load_node",
    "context_scope_key", "context_select_node", "context_update_node", "create_context", "create_context_execution",
    "create_context_operation_queue", "create_context_worker", "create_in_memory_context_store",
    "create_rag_strategy", "create_redis_context_store", "default_select", "deterministic_compress",
    "is_protected_context_item", "run_rag_flow", "run_skill_flow",
}


def test_exported_members() -> None:
    """CX-1 CX-15: ``__all__`` is exactly the public names, each defined and documented; ``*_node`` are descriptors."""
    assert set(context.__all__) == EXPORTED
    assert len(context.__all__) == len(EXPORTED)
    for name in context.__all__:
        member = getattr(context, name)
        if name.endswith("_node"):
            assert member.type.startswith("CONTEXT."), name
        if callable(member) and not name.isupper():
            assert member.__doc__, name


def test_root_package_re_exports() -> None:
    """CX-1 (seed 001 line 47): the names ``ditto`` re-exports are the CONTEXT objects themselves."""
    for name in ROOT:
        assert getattr(ditto, name) is getattr(context, name), name


_PACKAGE = Path(context.__file__).parent


def _local_imports(module: Path) -> set[str]:
    """Sibling modules ``module`` imports at import time (``TYPE_CHECKING`` blocks excluded)."""
    found: set[str] = set()
    for node in ast.parse(module.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            found.add((node.module or "").split(".")[0])
    return found - {""}


def test_no_import_circles() -> None:
    """CX-1: the CONTEXT modules import each other in one direction only (issue 9: no circles)."""
    graph = {path.stem: _local_imports(path) for path in _PACKAGE.glob("*.py") if path.stem != "__init__"}
    assert len(graph) < 20
    state: dict[str, int] = {}

    def visit(name: str, trail: list[str]) -> None:
        if state.get(name) == 2:
            return
        assert state.get(name) != 1, f"import circle: {' -> '.join([*trail, name])}"
        state[name] = 1
        for child in sorted(graph.get(name, ())):
            visit(child, [*trail, name])
        state[name] = 2

    for name in sorted(graph):
        visit(name, [])
    for name in graph:
        importlib.import_module(f"ditto.worker.context.{name}")


def test_context_error_declares_its_codes() -> None:
    """CX-8: ContextError carries only the seed's codes; an unknown code is a bug (ValueError)."""
    assert ContextError.codes == CONTEXT_ERROR_CODES
    assert ContextError("QUEUE_FULL").status == "error"
    with pytest.raises(ValueError):
        ContextError("TIMEOUT")
    with pytest.raises(TypeError):
        ContextError.from_signal("CANCELLED")  # CONTEXT has no cancellation code: a signal is CancelledBySignal


async def test_a_fired_signal_is_cancelled_by_signal() -> None:
    """CX-1 (seed 001 line 434): cancelling an SDK call raises the runtime's CancelledBySignal with its reason."""
    client = create_context()
    for reason, status in (("CANCELLED", "cancelled"), ("TIMEOUT", "timeout")):
        controller = AbortController()
        controller.abort(reason)
        with pytest.raises(CancelledBySignal) as caught:
            await client.load({"sources": []}, signal=controller.signal)
        assert (caught.value.code, caught.value.status) == (reason, status)
        assert isinstance(caught.value, DittoError) and not isinstance(caught.value, ContextError)
