"""``create_retrieval_worker`` (RET-2): the single leaf node ``RETRIEVAL.SEARCH``.

The handler is :func:`~ditto.retrieval.sdk.execute_search` with the runtime's
signal: the runtime turns a raised ``RetrievalError`` into the NodeResult and
applies ``concurrency`` per replica. The runtime itself also cancels the
handler when the call's signal fires; the slot is released only after the
provider coroutine has actually stopped.

YAML defaults: the serving runtime's configuration (``ExecutionContext.config``,
i.e. ``create_ditto(config=...)`` or ``ditto serve --config``) is the "Runtime
YAML" layer, so the seed's ``create_ditto(config=config, workers=[
create_retrieval_worker(providers=...)])`` honours ``workers.retrieval`` without
handing the config to the worker twice. ``config=`` may still pin a YAML layer
to one definition; it then sits between ``defaults`` and the runtime's YAML.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..runtime import ExecutionContext, NodeDescriptor, WorkerDefinition
from .defaults import merge_defaults
from .errors import PROVIDER_UNAVAILABLE, RetrievalError
from .sdk import RETRIEVAL_SEARCH, execute_search, options_from_mapping, provider_context
from .types import RetrievalExecutionContext, RetrievalProviderRegistry, RetrievalSearchOutput

__all__ = ["RETRIEVAL_WORKER_TYPE", "create_retrieval_worker", "retrieval_search_node"]

RETRIEVAL_WORKER_TYPE = "RETRIEVAL"

#: Identity scaffold for the SEARCH node (``.type == "RETRIEVAL.SEARCH"``).
retrieval_search_node: NodeDescriptor[Any, RetrievalSearchOutput] = NodeDescriptor(RETRIEVAL_SEARCH)


def create_retrieval_worker(providers: RetrievalProviderRegistry | Mapping[str, Any], defaults: Any = None,
                            concurrency: int | None = None, config: Any = None) -> WorkerDefinition:
    """A worker definition serving ``RETRIEVAL.SEARCH``.

    Limit precedence: request ``limit`` → ``defaults.search_limit`` → ``config``
    (when given) → the serving runtime's YAML ``workers.retrieval`` → 10. Provider
    numbers read the same merged defaults from ``RetrievalExecutionContext.defaults``
    after their own constructor options. Registering the definition twice shares
    ``providers``.
    The seed's form ``create_retrieval_worker({"providers": registry, "concurrency": 8})`` works too.
    """
    if isinstance(providers, Mapping):
        options = options_from_mapping(providers, frozenset({"providers", "defaults", "concurrency", "config"}))
        registry: Any = options.get("providers")
        return create_retrieval_worker(registry, options.get("defaults", defaults),
                                       options.get("concurrency", concurrency), options.get("config", config))
    if providers is None or not callable(getattr(providers, "resolve", None)):
        raise RetrievalError(PROVIDER_UNAVAILABLE, "create_retrieval_worker needs providers with a resolve method")
    pinned = merge_defaults(defaults, config)
    # One signal-less provider context per runtime configuration (frozen), built on first use and
    # never per call: {id(config): (config, context)}.
    contexts: dict[int, tuple[Any, RetrievalExecutionContext]] = {}

    def context_for(runtime_config: Any) -> RetrievalExecutionContext:
        entry = contexts.get(id(runtime_config))
        if entry is None or entry[0] is not runtime_config:
            if len(contexts) > 16:
                contexts.clear()
            section = getattr(runtime_config, "retrieval", None)
            merged = pinned if section is None else merge_defaults(pinned, section)
            entry = contexts[id(runtime_config)] = (runtime_config, provider_context(merged))
        return entry[1]

    async def search(input: Any, ctx: ExecutionContext) -> RetrievalSearchOutput:
        context = context_for(ctx.config)
        if ctx.signal is not None:
            context = provider_context(context.defaults, ctx.signal)
        return await execute_search(providers, input, context)

    return retrieval_search_node.define(RETRIEVAL_WORKER_TYPE, search, concurrency=concurrency)
