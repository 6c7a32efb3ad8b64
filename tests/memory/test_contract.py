"""The SQLite memory store runs ditto.testing's MemoryStoreContract (MEM-1, MEM-2)."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from ditto.testing import MemoryStoreContract
from ditto.worker.memory import MemoryStore, SqliteMemoryStore, create_sqlite_memory_store


class TestSqliteMemoryStoreContract(MemoryStoreContract):
    """MEM-1/MEM-2: the default store keeps the MEMORY store contract (write/get/search/delete semantics,
    exact keyPrefix, frozen snapshots, atomic writes, cancellation, hidden and logged failures)."""

    @pytest.fixture(autouse=True)
    def _path(self, tmp_path: Path) -> None:
        self.path = tmp_path / "memory.sqlite"

    @asynccontextmanager
    async def store(self) -> AsyncIterator[MemoryStore]:
        async with create_sqlite_memory_store(self.path) as store:
            yield store

    async def break_writes_of(self, store: MemoryStore, memory_id: str, secret: str) -> None:
        assert isinstance(store, SqliteMemoryStore)
        with sqlite3.connect(self.path) as raw:  # a real constraint in the file, hit by that record's insert
            raw.execute(f"CREATE TRIGGER refuse BEFORE INSERT ON memory_records WHEN NEW.id = '{memory_id}' "
                        f"BEGIN SELECT RAISE(ABORT, 'refused by {secret}'); END")
