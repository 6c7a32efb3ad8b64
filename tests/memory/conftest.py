"""Fixtures for the MEMORY tests: real SQLite files in per-test temporary directories."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from ditto.worker.memory import SqliteMemoryStore, create_sqlite_memory_store


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "memory.sqlite"


@pytest.fixture
async def store(db_path: Path) -> AsyncIterator[SqliteMemoryStore]:
    opened = create_sqlite_memory_store(db_path)
    yield opened
    await opened.close()
