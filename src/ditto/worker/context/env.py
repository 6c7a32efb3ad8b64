"""Application helpers that read the environment (the config loader never does).

``DITTO_WORKER_CONTEXT_REDIS_URL`` holds the Redis address and credentials,
usually from ``.env`` loaded by the application. The client returned here is
the application's: close it with ``await client.aclose()`` when done;
``runtime.close()`` never does.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ...config import RuntimeConfig
from ...errors import ConfigError
from ...runtime import WorkerDefinition

__all__ = ["REDIS_URL_ENV", "context_worker_from_env", "create_context_redis_client"]

REDIS_URL_ENV = "DITTO_WORKER_CONTEXT_REDIS_URL"


def create_context_redis_client(env: Mapping[str, str] | None = None, *, cluster: bool = False) -> Any:
    """A ``redis.asyncio`` client (or ``RedisCluster``) for ``DITTO_WORKER_CONTEXT_REDIS_URL``.

    No connection is made until the first command. Raises ConfigError
    ``CONFIG_MISSING_ENV`` when the variable is unset.
    """
    source = os.environ if env is None else env
    url = source.get(REDIS_URL_ENV)
    if not url:
        raise ConfigError("CONFIG_MISSING_ENV", f"{REDIS_URL_ENV} is not set")
    if cluster:
        from redis.asyncio.cluster import RedisCluster

        return RedisCluster.from_url(url)
    from redis.asyncio import Redis

    return Redis.from_url(url)


def context_worker_from_env(config: RuntimeConfig | None = None, env: Mapping[str, str] | None = None
                            ) -> WorkerDefinition:
    """A CONTEXT worker wired from YAML plus, when set, Redis from the environment.

    Usable as ``ditto serve --worker ditto.worker.context.env:context_worker_from_env``.
    """
    from .settings import context_options_from_config
    from .worker import create_context_worker

    source = os.environ if env is None else env
    client = create_context_redis_client(source) if source.get(REDIS_URL_ENV) else None
    return create_context_worker(context_options_from_config(config, redis_client=client))
