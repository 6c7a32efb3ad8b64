"""The public face of ditto.worker.memory: exactly these names, each importable, nothing public unlisted (MEM-1)."""

from __future__ import annotations

import types

import ditto.worker.memory as memory

EXPECTED = {
    "MEMORY_WORKER_TYPE", "DittoMemoryError", "Memory", "MemoryCallOptions", "MemoryDeleteInput", "MemoryGetInput",
    "MemoryItem", "MemoryResources", "MemorySearchHit", "MemorySearchInput", "MemorySearchProvider", "MemoryStore",
    "MemoryWriteInput", "MemoryWriteItem", "PostgresMemoryStore", "SqliteMemoryStore", "create_memory",
    "create_memory_worker", "create_postgres_memory_store", "create_sqlite_memory_store", "memory_delete_node",
    "memory_get_node", "memory_search_node", "memory_write_node",
}


def test_exported_members() -> None:
    """MEM-1: ``__all__`` is exactly the documented set, every name resolves, nothing public is unlisted."""
    assert set(memory.__all__) == EXPECTED
    assert {name for name in memory.__all__ if not hasattr(memory, name)} == set()
    defined_here = {
        name for name, value in vars(memory).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
        and str(getattr(value, "__module__", "")).startswith("ditto.worker.memory")
    }
    assert defined_here <= EXPECTED, defined_here - EXPECTED


def test_construction_mistakes_are_invalid_argument_errors() -> None:
    """MEM-1: a factory given bad resources raises InvalidArgumentError (a ValueError) that is also the
    DittoMemoryError with code MEMORY_INVALID_INPUT it always was."""
    from ditto.errors import InvalidArgumentError

    for call in (lambda: memory.create_memory({"store": object()}),
                 lambda: memory.create_memory_worker({"store": None}),
                 lambda: memory.create_memory_worker(store=memory.create_sqlite_memory_store("m.sqlite"),
                                                     concurrency=0),
                 lambda: memory.create_sqlite_memory_store("memory.sqlite", max_connections=0),
                 lambda: memory.create_sqlite_memory_store("memory.sqlite", busy_timeout_ms=-1)):
        try:
            call()
        except InvalidArgumentError as error:
            assert isinstance(error, ValueError) and isinstance(error, memory.DittoMemoryError)
            assert error.code == "MEMORY_INVALID_INPUT"
        else:
            raise AssertionError("a construction mistake must raise")
