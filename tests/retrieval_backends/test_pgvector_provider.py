"""pgvector (HNSW, cosine) on a real PostgreSQL 18 with the ``vector`` extension (issue 18): the provider
contract, filters applied before top-k, add/replace/remove, dimensions refused, bad input bounded."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import numpy as np
import psycopg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ditto.retrieval import RetrievalError, RetrievalSearchProvider
from ditto.retrieval.providers.pgvector import PgvectorSearchProvider, create_pgvector_provider
from ditto.retrieval.providers.vector import InMemoryVectorIndex
from ditto.testing import RetrievalProviderContract
from ditto.testing.retrieval import CONTRACT_DOCUMENTS
from tests.support.postgres_server import PostgresServer

from .test_milvus_provider import DIM, HashingEmbedding, _embed

_tables = itertools.count()


def new_table() -> str:
    return f"vectors_{next(_tables)}"


class TestPgvectorProviderContract(RetrievalProviderContract):
    """Issue 18 (RET-6): the pgvector provider keeps the provider contract on a real server."""

    honoured_filter = {"year": 2024}
    refused_filter = {"year": {"regex": "20.*"}}

    @pytest.fixture(autouse=True)
    def _database(self, pgvector_server: PostgresServer) -> None:
        self.server = pgvector_server

    @asynccontextmanager
    async def provider(self) -> AsyncIterator[RetrievalSearchProvider]:
        async with create_pgvector_provider(self.server.dsn, new_table(), DIM, embedding=HashingEmbedding()) as made:
            await made.add_contents([dict(document) for document in CONTRACT_DOCUMENTS])
            yield made

    @asynccontextmanager
    async def failing_provider(self, secret: str) -> AsyncIterator[RetrievalSearchProvider]:
        dsn = f"host={self.server.host} port={self.server.port} user={self.server.user} dbname={secret}"
        async with create_pgvector_provider(dsn, "docs", DIM, embedding=HashingEmbedding(),
                                            connect_timeout_s=1) as made:
            yield made


@pytest.fixture
async def provider(pgvector_server: PostgresServer) -> AsyncIterator[PgvectorSearchProvider]:
    async with create_pgvector_provider(pgvector_server.dsn, new_table(), DIM) as made:
        yield made


def request(vector: Any, **extra: Any) -> dict[str, Any]:
    return {"query": {"content": list(vector)}, "target": {"name": "kb"}, **extra}


async def test_selective_filters_still_return_k_exact_hits(provider: PgvectorSearchProvider,
                                                           pgvector_server: PostgresServer) -> None:
    """Issue 18: with 3,000 vectors and a filter matching 1 % of them, a top-10 search returns the 10 nearest
    matching records (the exact answer), because the filter is applied in SQL before top-k; the HNSW index
    is what an unfiltered search uses."""
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(3000, DIM))
    await provider.add([{"id": f"v{i}", "vector": vectors[i], "content": f"doc {i}",
                         "metadata": {"group": "rare" if i % 100 == 0 else "common", "rank": i}}
                        for i in range(3000)])
    query = rng.normal(size=DIM)
    normalised = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    similarity = normalised @ (query / np.linalg.norm(query))
    rare = [i for i in range(3000) if i % 100 == 0]
    expected = [f"v{i}" for i in sorted(rare, key=lambda i: -similarity[i])[:10]]
    output = await provider.search(request(query, limit=10, filter={"group": "rare"}))
    assert [candidate.id for candidate in output.candidates] == expected
    assert all(candidate.metadata and candidate.metadata["group"] == "rare" for candidate in output.candidates)
    assert output.candidates[0].score == pytest.approx(float(similarity[int(expected[0][1:])]), abs=1e-5)
    ranged = await provider.search(request(query, limit=5, filter={"rank": {"gte": 2990}, "group": {"ne": "rare"}}))
    assert {candidate.id for candidate in ranged.candidates} <= {f"v{i}" for i in range(2990, 3000)}
    assert len(ranged.candidates) == 5
    async with await psycopg.AsyncConnection.connect(pgvector_server.dsn) as raw:
        plan = await (await raw.execute(
            f"EXPLAIN SELECT id FROM {provider.index.table} ORDER BY embedding <=> %s::vector LIMIT 10",
            ("[" + ",".join(map(str, query)) + "]",))).fetchall()
    assert any("_hnsw" in line[0] for line in plan), plan


async def test_add_replaces_remove_deletes_and_the_answer_follows(provider: PgvectorSearchProvider) -> None:
    """Issue 18: adding an existing id replaces its vector, content and metadata; removing returns how many
    existed; searches see both at once."""
    await provider.add([{"id": "a", "vector": _embed("backup retention"), "content": "old", "metadata": {"v": 1}},
                        {"id": "b", "vector": _embed("garden tomatoes"), "content": "other"}])
    await provider.add([{"id": "a", "vector": _embed("garden tomatoes basil"), "content": "new", "metadata": {"v": 2}}])
    output = await provider.search(request(_embed("garden tomatoes basil"), limit=1))
    assert [(c.id, c.content, dict(c.metadata or {})) for c in output.candidates] == [("a", "new", {"v": 2})]
    assert await provider.remove(["a", "missing"]) == 1
    assert await provider.index.count() == 1
    output = await provider.search(request(_embed("garden tomatoes basil"), limit=5))
    assert [c.id for c in output.candidates] == ["b"]


async def test_a_table_of_another_dimension_is_refused(pgvector_server: PostgresServer) -> None:
    """Issue 18: opening a table made for 32-dimensional vectors with 16 dimensions is RETRIEVAL_INVALID_EMBEDDING
    and changes nothing (never truncated or padded)."""
    table = new_table()
    async with create_pgvector_provider(pgvector_server.dsn, table, DIM) as made:
        await made.add([{"id": "x", "vector": _embed("x")}])
    async with create_pgvector_provider(pgvector_server.dsn, table, 16) as other:
        with pytest.raises(RetrievalError) as raised:
            await other.search(request([1.0] * 16))
        assert raised.value.code == "RETRIEVAL_INVALID_EMBEDDING" and "vector(32)" in raised.value.message
    async with create_pgvector_provider(pgvector_server.dsn, table, DIM) as made:
        assert await made.index.count() == 1


@pytest.mark.parametrize(("records", "code"), [
    ([{"id": "n", "vector": [float("nan")] * DIM}], "RETRIEVAL_INVALID_EMBEDDING"),
    ([{"id": "s", "vector": [1.0] * (DIM - 1)}], "RETRIEVAL_INVALID_EMBEDDING"),
    ([{"id": "z", "vector": [0.0] * DIM}], "RETRIEVAL_INVALID_EMBEDDING"),
    ([{"id": "h", "vector": [1e39] * DIM}], "RETRIEVAL_INVALID_EMBEDDING"),
    ([{"id": "", "vector": [1.0] * DIM}], "RETRIEVAL_INVALID_INPUT"),
    ([{"id": "a\x00", "vector": [1.0] * DIM}], "RETRIEVAL_INVALID_INPUT"),
    ([{"id": "d", "vector": [1.0] * DIM}, {"id": "d", "vector": [1.0] * DIM}], "RETRIEVAL_INVALID_INPUT"),
    ([{"id": "m", "vector": [1.0] * DIM, "metadata": {"k": "a\x00b"}}], "RETRIEVAL_INVALID_INPUT"),
    ([{"id": "c", "vector": [1.0] * DIM, "content": float("inf")}], "RETRIEVAL_INVALID_INPUT"),
    ([{"id": "u", "vector": [1.0] * DIM, "content": "\ud800"}], "RETRIEVAL_INVALID_INPUT"),
    ([{"id": "x", "vector": [1.0] * DIM, "colour": "red"}], "RETRIEVAL_INVALID_INPUT"),
])
async def test_bad_records_are_refused_and_nothing_is_written(provider: PgvectorSearchProvider,
                                                              records: list[dict[str, Any]], code: str) -> None:
    """Issue 18: a bad record anywhere in a batch (NaN, wrong dimension, zero or float32-overflowing vector, bad
    or repeated id, NUL in metadata, non-finite content, lone surrogate, unknown field) refuses the whole batch."""
    with pytest.raises(RetrievalError) as raised:
        await provider.add([{"id": "good", "vector": [1.0] * DIM}, *records])
    assert raised.value.code == code
    assert await provider.index.count() == 0


@pytest.mark.parametrize("arguments", [
    {"table": "Docs"}, {"table": "a;b"}, {"dimensions": 0}, {"dimensions": 2001}, {"dimensions": True},
    {"m": 1}, {"ef_construction": 10}, {"ef_search": 0}, {"ef_search": 1001}, {"dsn": ""},
])
def test_construction_mistakes_are_refused(arguments: dict[str, Any]) -> None:
    """Issue 18: bad names, dimensions or HNSW parameters are RETRIEVAL_INVALID_INPUT at construction."""
    options: dict[str, Any] = {"dsn": "host=localhost", "table": "docs", "dimensions": DIM, **arguments}
    with pytest.raises(ValueError) as raised:
        create_pgvector_provider(options.pop("dsn"), options.pop("table"), options.pop("dimensions"), **options)
    assert isinstance(raised.value, RetrievalError) and raised.value.code == "RETRIEVAL_INVALID_INPUT"


_METADATA = st.fixed_dictionaries({}, optional={
    "year": st.sampled_from([2019, 2024, 2024.0, "2024", True, None]),
    "tags": st.lists(st.sampled_from(["a", "b", 1, None]), max_size=3),
    "lang": st.sampled_from(["en", "zh", ""]),
})
_FILTERS = st.dictionaries(st.sampled_from(["year", "tags", "lang", "missing"]), st.one_of(
    st.sampled_from([2024, "2024", True, None, "a", 1, "en"]),
    st.fixed_dictionaries({}, optional={"ne": st.sampled_from([2024, None, "a"]),
                                        "in": st.lists(st.sampled_from([2024, "a", None, "zh"]), max_size=3),
                                        "nin": st.lists(st.sampled_from([2019, "b", True]), max_size=2),
                                        "gte": st.sampled_from([2020, 2024.0]), "lt": st.just(2024)})
    .filter(bool)), min_size=1, max_size=2)


@settings(max_examples=30)
@given(metadata=st.lists(_METADATA, min_size=1, max_size=12), filter=_FILTERS)
def test_filters_mean_what_they_mean_in_memory(pgvector_server: PostgresServer, metadata: list[dict[str, Any]],
                                               filter: dict[str, Any]) -> None:
    """Issue 18: for any metadata and any filter of the shared language, pgvector selects exactly the records the
    in-memory index selects (JSON-typed equality, list fields, missing fields, ranges on numbers only)."""
    import asyncio

    async def body() -> None:
        rng = np.random.default_rng(len(metadata))
        records = [{"id": f"r{i}", "vector": rng.normal(size=DIM), "metadata": meta} for i, meta in enumerate(metadata)]
        memory = InMemoryVectorIndex()
        memory.add(records)
        expected = {hit.id for hit in memory.query(records[0]["vector"], limit=100, filter=filter)}
        async with create_pgvector_provider(pgvector_server.dsn, new_table(), DIM) as made:
            await made.add(records)
            got = {hit.id for hit in await made.index.search_vector(tuple(records[0]["vector"]), limit=100,
                                                                     filter=filter)}
        assert got == expected

    asyncio.run(body())
