"""The in-process providers (text/BM25, vector, hybrid, rerank) run ditto.testing's RetrievalProviderContract.

RET-4/RET-5/RET-6: dict input, output contract, limits, cancellation, hidden and logged failures, filters.
A failing backend is an index that fails the way a remote one does (the documented ``VectorIndex`` port,
or a BM25 index whose storage cannot be read).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

from ditto.retrieval import (
    InMemoryVectorIndex,
    RetrievalExecutionContext,
    RetrievalSearchProvider,
    create_cosine_reranker,
    create_hybrid_search_provider,
    create_rerank_search_provider,
    create_text_search_provider,
    create_vector_search_provider,
)
from ditto.retrieval.engines.bm25 import BM25Index
from ditto.retrieval.providers.vector import VectorHit
from ditto.testing import RetrievalProviderContract
from ditto.testing.retrieval import CONTRACT_DOCUMENTS

from .test_embedding import CountingEmbedding

FILTERS: dict[str, Any] = {"honoured_filter": {"year": 2024}, "refused_filter": {"year": {"regex": "20.*"}}}


class UnreachableIndex:
    """A ``VectorIndex`` whose server is down: every search fails with the driver's own text."""

    def __init__(self, secret: str) -> None:
        self.secret = secret

    async def search_vector(self, vector: Sequence[float], *, limit: int, filter: Mapping[str, Any] | None,
                            context: RetrievalExecutionContext | None = None) -> Sequence[VectorHit]:
        raise ConnectionError(f"could not reach vector index at {self.secret}")


class UnreadableIndex(BM25Index):
    """A BM25 index whose on-disk shard cannot be read when searched."""

    def __init__(self, secret: str) -> None:
        super().__init__()
        self.secret = secret

    def search(self, *args: Any, **kwargs: Any) -> Any:
        raise OSError(f"shard {self.secret}/terms.npy is unreadable")


def text_provider() -> RetrievalSearchProvider:
    return create_text_search_provider([dict(document) for document in CONTRACT_DOCUMENTS])


async def vector_provider() -> RetrievalSearchProvider:
    embedding = CountingEmbedding(dimensions=32)
    index = InMemoryVectorIndex(embedding=embedding)
    await index.add_contents([dict(document) for document in CONTRACT_DOCUMENTS])
    return create_vector_search_provider(index, embedding=embedding)


class TestTextProviderContract(RetrievalProviderContract):
    """RET-6: the BM25 text provider keeps the provider contract."""

    strategy = "bm25"
    honoured_filter = FILTERS["honoured_filter"]
    refused_filter = FILTERS["refused_filter"]

    @asynccontextmanager
    async def provider(self) -> AsyncIterator[RetrievalSearchProvider]:
        yield text_provider()

    @asynccontextmanager
    async def failing_provider(self, secret: str) -> AsyncIterator[RetrievalSearchProvider]:
        yield create_text_search_provider(index=UnreadableIndex(secret))


class TestVectorProviderContract(RetrievalProviderContract):
    """RET-6: the vector provider (external embedding, in-memory index) keeps the provider contract."""

    honoured_filter = FILTERS["honoured_filter"]
    refused_filter = FILTERS["refused_filter"]

    @asynccontextmanager
    async def provider(self) -> AsyncIterator[RetrievalSearchProvider]:
        yield await vector_provider()

    @asynccontextmanager
    async def failing_provider(self, secret: str) -> AsyncIterator[RetrievalSearchProvider]:
        yield create_vector_search_provider(UnreachableIndex(secret), embedding=CountingEmbedding(dimensions=32))


class TestHybridProviderContract(RetrievalProviderContract):
    """RET-6: hybrid RRF over text and vector branches keeps the provider contract; one failing branch fails
    the call without its text."""

    honoured_filter = FILTERS["honoured_filter"]
    refused_filter = FILTERS["refused_filter"]

    @asynccontextmanager
    async def provider(self) -> AsyncIterator[RetrievalSearchProvider]:
        yield create_hybrid_search_provider([{"provider": text_provider(), "strategy": "bm25"},
                                             await vector_provider()])

    @asynccontextmanager
    async def failing_provider(self, secret: str) -> AsyncIterator[RetrievalSearchProvider]:
        broken = create_vector_search_provider(UnreachableIndex(secret), embedding=CountingEmbedding(dimensions=32))
        yield create_hybrid_search_provider([{"provider": text_provider(), "strategy": "bm25"}, broken])


class TestRerankProviderContract(RetrievalProviderContract):
    """RET-6: cosine reranking over the text provider keeps the provider contract."""

    honoured_filter = FILTERS["honoured_filter"]
    refused_filter = FILTERS["refused_filter"]

    @asynccontextmanager
    async def provider(self) -> AsyncIterator[RetrievalSearchProvider]:
        inner = create_hybrid_search_provider([{"provider": text_provider(), "strategy": "bm25"}])
        yield create_rerank_search_provider(inner, create_cosine_reranker(CountingEmbedding(dimensions=32)))

    @asynccontextmanager
    async def failing_provider(self, secret: str) -> AsyncIterator[RetrievalSearchProvider]:
        broken = create_vector_search_provider(UnreachableIndex(secret), embedding=CountingEmbedding(dimensions=32))
        yield create_rerank_search_provider(broken, create_cosine_reranker(CountingEmbedding(dimensions=32)))
