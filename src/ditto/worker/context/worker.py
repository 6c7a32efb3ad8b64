"""``create_context_worker`` (CX-1, CX-15) and the CONTEXT node descriptors (RT-4)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from ...contracts import Context, ContextSelection
from ...runtime import ExecutionContext, NodeDescriptor, WorkerDefinition
from .errors import ContextError
from .policy import resolve_policy
from .sdk import CONTEXT_NODES, ContextClient, build_execution, resolve_options

__all__ = [
    "context_compress_node",
    "context_load_node",
    "context_select_node",
    "context_update_node",
    "create_context_worker",
]

context_load_node: Final[NodeDescriptor[Any, Context]] = NodeDescriptor("CONTEXT.LOAD")
context_update_node: Final[NodeDescriptor[Any, Context]] = NodeDescriptor("CONTEXT.UPDATE")
context_select_node: Final[NodeDescriptor[Any, ContextSelection]] = NodeDescriptor("CONTEXT.SELECT")
context_compress_node: Final[NodeDescriptor[Any, Context]] = NodeDescriptor("CONTEXT.COMPRESS")


def _handlers(client: Callable[[], ContextClient]) -> dict[str, Callable[..., Any]]:
    def handler(node: str) -> Callable[..., Any]:
        async def run(input: Any, ctx: ExecutionContext) -> Any:
            return await client().run(node, input, ctx.signal, ctx.runtime)

        run.__name__ = node.lower().replace(".", "_")
        return run

    return {node: handler(node) for node in CONTEXT_NODES}


def create_context_worker(options: Any = None, *, policy: Any = None, services: Any = None, redis: Any = None,
                          services_factory: Callable[[], Any] | None = None,
                          concurrency: int | None = None) -> WorkerDefinition:
    """A ``CONTEXT`` WorkerDefinition with the four leaves LOAD/UPDATE/SELECT/COMPRESS.

    ``options`` may be a dict, ``ContextOptions`` or a ``RuntimeConfig`` (so
    ``ditto serve --worker ditto.worker.context:create_context_worker`` works).
    ``services_factory`` (taking precedence over ``services``) is called once
    per registered local replica; without it every replica shares one set of
    services. ``concurrency`` caps concurrent top-level calls per replica.
    """
    resolved = resolve_options(options, policy=policy, services=services, redis=redis,
                               services_factory=services_factory, concurrency=concurrency)
    factory = resolved.services_factory
    if factory is not None and not callable(factory):
        raise ContextError("INVALID_INPUT", "servicesFactory must be a function")
    limit = resolved.concurrency
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ContextError("INVALID_INPUT", "concurrency must be a positive integer")
    if factory is None:
        shared = ContextClient(build_execution(resolved.policy, resolved.services, resolved.redis))
        return WorkerDefinition("CONTEXT", _handlers(lambda: shared), concurrency=limit)

    resolve_policy(resolved.policy)  # fail at definition time, not at registration

    def make_client() -> ContextClient:
        return ContextClient(build_execution(resolved.policy, factory(), resolved.redis))

    def setup() -> dict[str, Callable[..., Any]]:
        replica = make_client()
        return _handlers(lambda: replica)

    lazy: list[ContextClient] = []

    def lazy_client() -> ContextClient:
        # Used only if someone calls definition.nodes directly instead of registering it.
        if not lazy:
            lazy.append(make_client())
        return lazy[0]

    return WorkerDefinition("CONTEXT", _handlers(lazy_client), concurrency=limit, setup=setup)
