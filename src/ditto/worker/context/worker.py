"""``create_context_worker`` and the CONTEXT node descriptors.

The worker runs the same :class:`~.sdk.ContextClient` as the direct SDK, as the
four leaves ``CONTEXT.LOAD|UPDATE|SELECT|COMPRESS``; the runtime supplies each
call's signal and a runtime bound to the execution (for ports that delegate).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any, Final

from ...config import RuntimeConfig
from ...contracts import Context, ContextSelection
from ...runtime import ExecutionContext, NodeDescriptor, WorkerDefinition
from ...runtime.worker import valid_concurrency
from .config import (
    REDIS_URL_ENV,
    ContextOptions,
    PolicyInput,
    ServicesInput,
    build_execution,
    context_options_from_config,
    create_context_redis_client,
    resolve_options,
    resolve_policy,
)
from .sdk import ContextClient
from .types import CONTEXT_NODES, ContextArgumentError

__all__ = [
    "context_compress_node",
    "context_load_node",
    "context_select_node",
    "context_update_node",
    "context_worker_from_env",
    "create_context_worker",
]

context_load_node: Final[NodeDescriptor[Any, Context]] = NodeDescriptor("CONTEXT.LOAD", Context)
context_update_node: Final[NodeDescriptor[Any, Context]] = NodeDescriptor("CONTEXT.UPDATE", Context)
context_select_node: Final[NodeDescriptor[Any, ContextSelection]] = NodeDescriptor("CONTEXT.SELECT")
context_compress_node: Final[NodeDescriptor[Any, Context]] = NodeDescriptor("CONTEXT.COMPRESS")


def _handlers(client: Callable[[], ContextClient]) -> dict[str, Callable[..., Any]]:
    def handler(node: str) -> Callable[..., Any]:
        async def run(input: Any, ctx: ExecutionContext) -> Any:
            return await client().run(node, input, ctx.signal, ctx.runtime)

        run.__name__ = node.lower().replace(".", "_")
        return run

    return {node: handler(node) for node in CONTEXT_NODES}


def create_context_worker(options: ContextOptions | Mapping[str, Any] | RuntimeConfig | None = None, *,
                          policy: PolicyInput | None = None, services: ServicesInput | None = None,
                          redis: Mapping[str, Any] | None = None,
                          services_factory: Callable[[], ServicesInput] | None = None,
                          concurrency: int | None = None) -> WorkerDefinition:
    """A ``CONTEXT`` WorkerDefinition with the four leaves LOAD/UPDATE/SELECT/COMPRESS.

    ``options`` may be a dict, ``ContextOptions`` or a ``RuntimeConfig`` (so
    ``ditto serve --worker ditto.worker.context:create_context_worker`` works).
    ``services_factory`` (taking precedence over ``services``) is called once
    per registered local replica; without it every replica shares one set of
    services. ``concurrency`` caps concurrent top-level calls per replica::

        runtime = create_ditto(workers=[create_context_worker(policy={"maxItems": 64}, concurrency=16)])
        result = await runtime.invoke("CONTEXT.SELECT", {"context": working, "purpose": "infer", "limit": 8})
        if result.status == "success":
            chosen = result.output.context.items
    """
    resolved = resolve_options(options, policy=policy, services=services, redis=redis,
                               services_factory=services_factory, concurrency=concurrency)
    factory = resolved.services_factory
    if factory is not None and not callable(factory):
        raise ContextArgumentError("INVALID_INPUT", "servicesFactory must be a function")
    limit = resolved.concurrency
    if not valid_concurrency(limit):
        raise ContextArgumentError("INVALID_INPUT", "concurrency must be a positive integer")
    if factory is None:
        shared = ContextClient(build_execution(resolved.policy, resolved.services, resolved.redis))
        return WorkerDefinition("CONTEXT", _handlers(lambda: shared), concurrency=limit)

    resolve_policy(resolved.policy)  # fail at definition time, not at registration
    make_services = factory

    def make_client() -> ContextClient:
        return ContextClient(build_execution(resolved.policy, make_services(), resolved.redis))

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


def context_worker_from_env(config: RuntimeConfig | None = None, env: Mapping[str, str] | None = None
                            ) -> WorkerDefinition:
    """A CONTEXT worker wired from YAML plus, when ``DITTO_WORKER_CONTEXT_REDIS_URL`` is set, Redis.

    Usable as ``ditto serve --worker ditto.worker.context:context_worker_from_env``.
    """
    source = os.environ if env is None else env
    client = create_context_redis_client(source) if source.get(REDIS_URL_ENV) else None
    return create_context_worker(context_options_from_config(config, redis_client=client))
