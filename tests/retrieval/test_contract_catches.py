"""The contract suites fail for providers and stores that break the contract (so passing them means something).

Each case is a small, real implementation with one deliberate defect; the matching contract test must raise.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from ditto.retrieval import RetrievalError, RetrievalExecutionContext, RetrievalSearchProvider
from ditto.retrieval.validation import coerce_input
from ditto.testing import MemoryStoreContract, RetrievalProviderContract
from ditto.testing.retrieval import CONTRACT_DOCUMENTS
from ditto.worker.memory import MemoryCallOptions, MemoryItem, MemoryStore, MemoryWriteItem, create_sqlite_memory_store


class CarelessProvider:
    """Returns every document: ignores ``limit``, ``filter`` and the signal; leaks its backend's text when told
    to fail."""

    def __init__(self, secret: str | None = None, *, check_input: bool = True) -> None:
        self.secret = secret
        self.check_input = check_input

    async def search(self, input: Any, context: RetrievalExecutionContext | None = None) -> dict[str, Any]:
        if self.secret is not None:
            raise RetrievalError("RETRIEVAL_BACKEND_ERROR", f"connection to {self.secret} refused")
        request = coerce_input(input) if self.check_input else None
        target = request.target.model_dump(exclude_none=True) if request is not None else {"name": "kb"}
        return {"candidates": [{"id": d["id"], "content": d["content"]} for d in CONTRACT_DOCUMENTS],
                "target": target, "strategy": input.get("strategy") if isinstance(input, dict) else None}


class CarelessContract(RetrievalProviderContract):
    honoured_filter = {"year": 2024}

    @asynccontextmanager
    async def provider(self) -> AsyncIterator[RetrievalSearchProvider]:
        yield CarelessProvider()

    @asynccontextmanager
    async def failing_provider(self, secret: str) -> AsyncIterator[RetrievalSearchProvider]:
        yield CarelessProvider(secret)


@pytest.mark.parametrize("name", ["test_contract_limit_is_respected", "test_contract_filters_are_honoured_or_refused",
                                  "test_contract_backend_failure_is_hidden_and_logged",
                                  "test_contract_cancelled_before_any_work"])
def test_retrieval_contract_catches_a_careless_provider(name: str) -> None:
    """RET-4/RET-5: a provider ignoring limits, filters or signals, or leaking backend text, fails the suite."""
    with pytest.raises(AssertionError):
        getattr(CarelessContract(), name)()


def test_retrieval_contract_catches_unchecked_input() -> None:
    """RET-1: a provider that does not check its input fails the bad-input contract test."""

    class Unchecked(CarelessContract):
        @asynccontextmanager
        async def provider(self) -> AsyncIterator[RetrievalSearchProvider]:
            yield CarelessProvider(check_input=False)

    with pytest.raises(AssertionError):
        Unchecked().test_contract_bad_input_is_invalid_input()


class PrefixByLikeStore:
    """The SQLite store with one defect: ``keyPrefix`` matched as a LIKE pattern on the whole store."""

    def __init__(self, inner: MemoryStore) -> None:
        self.inner = inner

    async def write(self, items: Sequence[MemoryWriteItem], options: MemoryCallOptions | None = None
                    ) -> Sequence[MemoryItem]:
        return await self.inner.write(items, options)

    async def get(self, *, ids: Sequence[str] | None = None, keys: Sequence[str] | None = None,
                  options: MemoryCallOptions | None = None) -> Sequence[MemoryItem]:
        return await self.inner.get(ids=ids, keys=keys, options=options)

    async def delete(self, *, ids: Sequence[str] | None = None, keys: Sequence[str] | None = None,
                     options: MemoryCallOptions | None = None) -> int:
        return await self.inner.delete(ids=ids, keys=keys, options=options)

    async def search(self, input: Any, options: MemoryCallOptions | None = None) -> Any:
        prefix = (input.filter or {}).get("keyPrefix")
        hits = await self.inner.search(input.model_copy(update={"filter": None, "limit": 10_000}), options)
        if prefix is None:
            return hits[: input.limit]
        pattern = prefix.replace("%", "").replace("_", "")  # what a LIKE wildcard lets through
        return [hit for hit in hits if (hit.memory.key or "").startswith(pattern)][: input.limit]


def test_memory_contract_catches_an_inexact_key_prefix(tmp_path: Path) -> None:
    """MEM-2: a store whose keyPrefix behaves like LIKE fails the exact-prefix contract test."""

    class Contract(MemoryStoreContract):
        @asynccontextmanager
        async def store(self) -> AsyncIterator[MemoryStore]:
            async with create_sqlite_memory_store(tmp_path / "memory.sqlite") as store:
                yield PrefixByLikeStore(store)

    with pytest.raises(AssertionError):
        Contract().test_contract_key_prefix_is_exact()


class ReversedRankingStore:
    """A real SQLite store whose search answers its hits worst first (a ranking that drifted)."""

    def __init__(self, inner: MemoryStore) -> None:
        self.inner = inner
        self.write, self.get, self.delete = inner.write, inner.get, inner.delete

    async def search(self, input: Any, options: MemoryCallOptions | None = None) -> Any:
        return tuple(reversed(await self.inner.search(input, options)))


def test_memory_contract_catches_a_drifted_ranking(tmp_path: Path) -> None:
    """Issue 18: a store whose keyword ranking is not BM25's order fails the ranking contract tests, so the
    SQLite and PostgreSQL stores cannot drift apart and both still pass."""

    class Contract(MemoryStoreContract):
        @asynccontextmanager
        async def store(self) -> AsyncIterator[MemoryStore]:
            async with create_sqlite_memory_store(tmp_path / "ranked.sqlite") as store:
                yield ReversedRankingStore(store)  # type: ignore[misc]

    for test in (Contract().test_contract_ranks_with_bm25, Contract().test_contract_searches_cjk_by_character):
        with pytest.raises(AssertionError):
            test()
        (tmp_path / "ranked.sqlite").unlink()
