"""Wiring ``RuntimeConfig.context`` (YAML ``workers.context``) into CONTEXT options (CX-16).

The config loader never connects anywhere; this module only turns the typed
sections into constructor arguments. Redis is used when the application passes
a client (see :mod:`ditto.worker.context.env` for building one from
``DITTO_WORKER_CONTEXT_REDIS_URL``); otherwise a configured ``local_cache``
becomes an in-memory store.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ...config import ContextWorkerConfig, RuntimeConfig
from .ports import ContextServices, resolve_services
from .queue import create_context_operation_queue
from .sdk import ContextOptions
from .stores.memory import create_in_memory_context_store

__all__ = ["context_options_from_config"]


def context_options_from_config(config: RuntimeConfig | ContextWorkerConfig | None, *, redis_client: Any = None,
                                services: Any = None, concurrency: int | None = None) -> Any:
    """Build ``ContextOptions`` from ``config.context``.

    * ``policy`` → ``options.policy``;
    * ``cache{ttl_ms, key_prefix}`` + ``redis_client`` → ``options.redis``;
    * ``local_cache{ttl_ms, max_entries}`` (only without a Redis client) → an in-memory store;
    * ``queue{max_pending}`` → an operation queue.
    Explicit ``services`` win over what the config would create.
    """
    section = config.context if isinstance(config, RuntimeConfig) else (config or ContextWorkerConfig())
    resolved = resolve_services(services)
    redis: dict[str, Any] | None = None
    if redis_client is not None:
        redis = {"client": redis_client}
        if section.cache is not None:
            redis.update(section.cache.model_dump(exclude_none=True))
    elif section.local_cache is not None and resolved.state_store is None:
        resolved = replace(resolved, state_store=create_in_memory_context_store(section.local_cache))
    if section.queue is not None and resolved.operation_queue is None:
        resolved = replace(resolved, operation_queue=create_context_operation_queue(section.queue))
    return ContextOptions(
        policy=None if section.policy is None else section.policy,
        services=None if resolved == ContextServices() else resolved,
        redis=redis,
        concurrency=concurrency,
    )
