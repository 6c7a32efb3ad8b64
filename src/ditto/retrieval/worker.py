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

from ..config import RuntimeConfig
from ..runtime import ExecutionContext, NodeDescriptor, WorkerDefinition
from .config import DefaultsLayer, RetrievalOptions, merge_defaults, retrieval_options
from .sdk import RETRIEVAL_SEARCH, execute_search, provider_context
from .types import RetrievalExecutionContext, RetrievalProviderRegistry, RetrievalSearchInput, RetrievalSearchOutput

__all__ = ["RETRIEVAL_WORKER_TYPE", "create_retrieval_worker", "retrieval_search_node"]

RETRIEVAL_WORKER_TYPE = "RETRIEVAL"

#: Identity scaffold for the SEARCH node (``.type == "RETRIEVAL.SEARCH"``).
retrieval_search_node: NodeDescriptor[RetrievalSearchInput | Mapping[str, Any], RetrievalSearchOutput] = \
    NodeDescriptor(RETRIEVAL_SEARCH, RetrievalSearchOutput)

_WORKER_OPTIONS = frozenset({"providers", "defaults", "concurrency", "config"})

#: Provider contexts kept per runtime configuration before the cache starts over.
_MAX_CONTEXTS = 16


class _SearchHandler:
    """The SEARCH handler of one definition: the options, plus one signal-less provider context per
    runtime configuration (frozen), built on first use and never per call."""

    __slots__ = ("_contexts", "_options", "_pinned")

    def __init__(self, options: RetrievalOptions) -> None:
        self._options = options
        self._pinned = merge_defaults(options.defaults, options.config)
        self._contexts: dict[int, tuple[RuntimeConfig | None, RetrievalExecutionContext]] = {}

    def _context_for(self, runtime_config: RuntimeConfig | None) -> RetrievalExecutionContext:
        entry = self._contexts.get(id(runtime_config))
        if entry is None or entry[0] is not runtime_config:
            if len(self._contexts) > _MAX_CONTEXTS:
                self._contexts.clear()
            section = runtime_config.retrieval if runtime_config is not None else None
            merged = self._pinned if section is None else merge_defaults(self._pinned, section)
            entry = self._contexts[id(runtime_config)] = (runtime_config, provider_context(merged))
        return entry[1]

    async def __call__(self, input: Any, ctx: ExecutionContext) -> RetrievalSearchOutput:
        context = self._context_for(ctx.config)
        if ctx.signal is not None:
            context = provider_context(context.defaults, ctx.signal)
        return await execute_search(self._options.providers, input, context)


def create_retrieval_worker(providers: RetrievalProviderRegistry | Mapping[str, Any], *, defaults: DefaultsLayer = None,
                            concurrency: int | None = None, config: DefaultsLayer = None) -> WorkerDefinition:
    """A worker definition serving ``RETRIEVAL.SEARCH``.

    Limit precedence: request ``limit`` → ``defaults.search_limit`` → ``config``
    (when given) → the serving runtime's YAML ``workers.retrieval`` → 10. Provider
    numbers read the same merged defaults from ``RetrievalExecutionContext.defaults``
    after their own constructor options. Registering the definition twice shares
    ``providers``. The seed's options object ``{"providers": ..., "concurrency": 8}`` works too.

    Example::

        providers = RetrievalTargetRegistry({"kb": {"default_strategy": "bm25", "providers": {"bm25": provider}}})
        runtime = create_ditto(config=config, workers=[create_retrieval_worker(providers, concurrency=8)])
        result = await runtime.invoke("RETRIEVAL.SEARCH", {"query": {"content": "agent memory"},
                                                           "target": {"name": "kb"}, "limit": 20})
    """
    options = retrieval_options(providers, factory="create_retrieval_worker", allowed=_WORKER_OPTIONS,
                                defaults=defaults, concurrency=concurrency, config=config)
    return retrieval_search_node.define(RETRIEVAL_WORKER_TYPE, _SearchHandler(options),
                                        concurrency=options.concurrency)
