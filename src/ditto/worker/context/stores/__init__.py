"""ContextStateStore implementations: Redis (default for shared state) and in-memory."""

from .memory import InMemoryContextStore, create_in_memory_context_store
from .redis import CAS_SCRIPT, CAS_SCRIPT_SHA, RedisContextClient, RedisContextStore, create_redis_context_store

__all__ = [
    "CAS_SCRIPT",
    "CAS_SCRIPT_SHA",
    "InMemoryContextStore",
    "RedisContextClient",
    "RedisContextStore",
    "create_in_memory_context_store",
    "create_redis_context_store",
]
