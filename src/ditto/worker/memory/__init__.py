"""MEMORY: long-term records owned by one worker (SPEC §3, MEM-1…MEM-3).

``create_memory`` is the SDK, ``create_memory_worker`` registers the nodes
MEMORY.WRITE / GET / SEARCH / DELETE, ``create_sqlite_memory_store`` is the
default store (one SQLite file, WAL, FTS5 keyword search) and
``create_postgres_memory_store`` the same contract on a PostgreSQL server that
many processes share (extra ``ditto-agents[postgres]``, imported on first use). The data types in
:mod:`ditto.worker.memory.types` are what other packages depend on.
"""

from .config import MemoryResources
from .postgres_store import PostgresMemoryStore, create_postgres_memory_store
from .sdk import Memory, create_memory
from .sqlite_store import SqliteMemoryStore, create_sqlite_memory_store
from .types import (
    DittoMemoryError,
    MemoryCallOptions,
    MemoryDeleteInput,
    MemoryGetInput,
    MemoryItem,
    MemorySearchHit,
    MemorySearchInput,
    MemorySearchProvider,
    MemoryStore,
    MemoryWriteInput,
    MemoryWriteItem,
)
from .worker import (
    MEMORY_WORKER_TYPE,
    create_memory_worker,
    memory_delete_node,
    memory_get_node,
    memory_search_node,
    memory_write_node,
)

__all__ = [
    "MEMORY_WORKER_TYPE",
    "DittoMemoryError",
    "Memory",
    "MemoryCallOptions",
    "MemoryDeleteInput",
    "MemoryGetInput",
    "MemoryItem",
    "MemoryResources",
    "MemorySearchHit",
    "MemorySearchInput",
    "MemorySearchProvider",
    "MemoryStore",
    "MemoryWriteInput",
    "MemoryWriteItem",
    "PostgresMemoryStore",
    "SqliteMemoryStore",
    "create_memory",
    "create_memory_worker",
    "create_postgres_memory_store",
    "create_sqlite_memory_store",
    "memory_delete_node",
    "memory_get_node",
    "memory_search_node",
    "memory_write_node",
]
