"""``create_retrieval_worker`` (RET-2): the single leaf node ``RETRIEVAL.SEARCH``.

The handler is :func:`~ditto.retrieval.sdk.execute_search` with the runtime's
signal: the runtime turns a raised ``RetrievalError`` into the NodeResult and
applies ``concurrency`` per replica. The runtime itself also cancels the
handler when the call's signal fires; the slot is released only after the
provider coroutine has actually stopped.

YAML defaults: a ``WorkerDefinition`` cannot see the runtime that registers
it, so the YAML layer is given explicitly as ``config=`` (a ``RuntimeConfig``
or ``config.retrieval``). ``ditto serve --worker module:factory`` passes the
loaded config to a factory that takes one argument, so a service factory is
``lambda config: create_retrieval_worker(providers=..., config=config)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..runtime import ExecutionContext, NodeDescriptor, WorkerDefinition
from .defaults import merge_defaults
from .errors import PROVIDER_UNAVAILABLE, RetrievalError
from .sdk import RETRIEVAL_SEARCH, execute_search, options_from_mapping
from .types import RetrievalProviderRegistry, RetrievalSearchOutput

__all__ = ["RETRIEVAL_WORKER_TYPE", "create_retrieval_worker", "retrieval_search_node"]

RETRIEVAL_WORKER_TYPE = "RETRIEVAL"

#: Identity scaffold for the SEARCH node (``.type == "RETRIEVAL.SEARCH"``).
retrieval_search_node: NodeDescriptor[Any, RetrievalSearchOutput] = NodeDescriptor(RETRIEVAL_SEARCH)


def create_retrieval_worker(providers: RetrievalProviderRegistry | Mapping[str, Any], defaults: Any = None,
                            concurrency: int | None = None, config: Any = None) -> WorkerDefinition:
    """A worker definition serving ``RETRIEVAL.SEARCH``.

    Limit precedence: request ``limit`` → ``defaults.search_limit`` → YAML
    (``config``) ``search_limit`` → 10. Provider numbers read the same merged
    defaults from ``RetrievalExecutionContext.defaults`` after their own
    constructor options. Registering the definition twice shares ``providers``.
    The seed's form ``create_retrieval_worker({"providers": registry, "concurrency": 8})`` works too.
    """
    if isinstance(providers, Mapping):
        options = options_from_mapping(providers, frozenset({"providers", "defaults", "concurrency", "config"}))
        registry: Any = options.get("providers")
        return create_retrieval_worker(registry, options.get("defaults", defaults),
                                       options.get("concurrency", concurrency), options.get("config", config))
    if providers is None or not callable(getattr(providers, "resolve", None)):
        raise RetrievalError(PROVIDER_UNAVAILABLE, "create_retrieval_worker needs providers with a resolve method")
    merged = merge_defaults(defaults, config)

    async def search(input: Any, ctx: ExecutionContext) -> RetrievalSearchOutput:
        return await execute_search(providers, input, merged, ctx.signal)

    return retrieval_search_node.define(RETRIEVAL_WORKER_TYPE, search, concurrency=concurrency)
