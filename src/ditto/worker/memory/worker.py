"""The MEMORY worker: four leaf nodes over one :class:`~ditto.worker.memory.sdk.Memory` (MEM-1).

Handlers pass the runtime's ``ctx.signal`` to the SDK, so cancelling a call
(or its timeout) reaches the SQLite query or the injected search provider.
The store is shared by every registration of the definition and is never
closed by the runtime: the application that created it closes it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...contracts import FrozenDict
from ...runtime import ExecutionContext, NodeDescriptor, WorkerDefinition
from .config import MemoryResources, check_concurrency
from .sdk import create_memory
from .types import (
    MemoryDeleteInput,
    MemoryGetInput,
    MemoryItem,
    MemorySearchHit,
    MemorySearchInput,
    MemorySearchProvider,
    MemoryStore,
    MemoryWriteInput,
)

__all__ = [
    "MEMORY_WORKER_TYPE",
    "create_memory_worker",
    "memory_delete_node",
    "memory_get_node",
    "memory_search_node",
    "memory_write_node",
]

MEMORY_WORKER_TYPE = "MEMORY"

memory_write_node: NodeDescriptor[MemoryWriteInput | Mapping[str, Any], tuple[MemoryItem, ...]] = \
    NodeDescriptor("MEMORY.WRITE", tuple[MemoryItem, ...])
memory_get_node: NodeDescriptor[MemoryGetInput | Mapping[str, Any], tuple[MemoryItem, ...]] = \
    NodeDescriptor("MEMORY.GET", tuple[MemoryItem, ...])
memory_search_node: NodeDescriptor[MemorySearchInput | Mapping[str, Any], tuple[MemorySearchHit, ...]] = \
    NodeDescriptor("MEMORY.SEARCH", tuple[MemorySearchHit, ...])
memory_delete_node: NodeDescriptor[MemoryDeleteInput | Mapping[str, Any], FrozenDict] = \
    NodeDescriptor("MEMORY.DELETE")


def create_memory_worker(resources: MemoryResources | Mapping[str, Any] | None = None, *,
                         store: MemoryStore | None = None, search: MemorySearchProvider | None = None,
                         concurrency: int | None = None) -> WorkerDefinition:
    """A ``MEMORY`` worker definition with MEMORY.WRITE / GET / SEARCH / DELETE.

    Accepts the seed's ``create_memory_worker({store, search})`` as well as
    keywords. ``concurrency`` caps concurrent calls per local replica. The store
    is shared by every registration of the definition and never closed by the runtime.

    Example::

        store = create_sqlite_memory_store(config.memory.path or "memory.sqlite")
        runtime = create_ditto(workers=[create_memory_worker(store=store, concurrency=8)])
        await runtime.invoke("MEMORY.WRITE", {"memories": [{"content": "backups run every 6 hours"}]})
        found = await runtime.invoke("MEMORY.SEARCH", {"query": "backups", "limit": 5})
    """
    memory = create_memory(resources, store=store, search=search)

    async def write(input: Any, context: ExecutionContext) -> tuple[MemoryItem, ...]:
        return await memory.write(input, signal=context.signal)

    async def get(input: Any, context: ExecutionContext) -> tuple[MemoryItem, ...]:
        return await memory.get(input, signal=context.signal)

    async def search_(input: Any, context: ExecutionContext) -> tuple[MemorySearchHit, ...]:
        return await memory.search(input, signal=context.signal)

    async def delete(input: Any, context: ExecutionContext) -> FrozenDict:
        return await memory.delete(input, signal=context.signal)

    return WorkerDefinition(MEMORY_WORKER_TYPE, {
        memory_write_node.type: write,
        memory_get_node.type: get,
        memory_search_node.type: search_,
        memory_delete_node.type: delete,
    }, concurrency=check_concurrency(concurrency))
