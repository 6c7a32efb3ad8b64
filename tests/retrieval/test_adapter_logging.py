"""The MEMORY adapters hide RETRIEVAL failures from MEMORY callers and log them once (RET-7)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from ditto import create_ditto
from ditto.retrieval import RetrievalError, RetrievalTargetRegistry, create_retrieval_worker
from ditto.retrieval.adapters.memory import RemoteRetrievalSearchProvider, create_retrieval_memory_search_provider
from ditto.worker.memory import create_memory_worker, create_sqlite_memory_store

from .providers import FailingProvider, ListProvider

LOGGER = "ditto.retrieval.adapters.memory"


async def test_remote_failure_is_hidden_and_logged_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """RET-7: RETRIEVAL.SEARCH answering PERMISSION_DENIED reaches MEMORY callers as MEMORY_BACKEND_ERROR with a
    fixed message; the adapter logs the status and code once; a failing mapper is logged with its traceback."""
    registry = RetrievalTargetRegistry({"memories": {"default_strategy": "keyword", "providers": {
        "keyword": FailingProvider(RetrievalError("RETRIEVAL_PERMISSION_DENIED", "tenant t-42 may not read"))}}})

    def broken_mapper(output: object) -> list[object]:
        raise KeyError("mapper secret")

    mapped = RetrievalTargetRegistry({"memories": {"default_strategy": "keyword", "providers": {
        "keyword": ListProvider([{"id": "m", "content": "x"}])}}})
    async with create_sqlite_memory_store(tmp_path / "memory.sqlite") as store:
        runtime = create_ditto(workers=[create_retrieval_worker(registry), create_memory_worker(
            store=store, search=RemoteRetrievalSearchProvider(target={"name": "memories"}))])
        with caplog.at_level(logging.WARNING, logger=LOGGER):
            result = await runtime.invoke("MEMORY.SEARCH", {"query": "anything"})
        assert result.error is not None and result.error.code == "MEMORY_BACKEND_ERROR"
        assert "t-42" not in result.error.message
        records = [r for r in caplog.records if r.name == LOGGER]
        assert len(records) == 1 and "RETRIEVAL_PERMISSION_DENIED" in records[0].getMessage()
        await runtime.close()

        caplog.clear()
        search = create_retrieval_memory_search_provider(mapped.resolve({"name": "memories"}),
                                                         target={"name": "memories"}, map_output=broken_mapper)
        other = create_ditto(workers=[create_memory_worker(store=store, search=search)])
        with caplog.at_level(logging.WARNING, logger=LOGGER):
            failed = await other.invoke("MEMORY.SEARCH", {"query": "anything"})
        assert failed.error is not None and failed.error.code == "MEMORY_BACKEND_ERROR"
        assert "mapper secret" not in failed.error.message
        records = [r for r in caplog.records if r.name == LOGGER]
        assert len(records) == 1 and records[0].exc_info is not None
        await other.close()
