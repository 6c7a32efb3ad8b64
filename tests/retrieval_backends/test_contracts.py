"""The database providers (SQL on SQLite FTS5 and PostgreSQL, Milvus Lite) run ditto.testing's
RetrievalProviderContract against real databases (RET-4/RET-5/RET-6).

A failing backend is the real thing: a table or collection that does not exist, named with the contract's
secret so that the driver's own error text carries it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest
from pymilvus import DataType, MilvusClient

from ditto.retrieval import RetrievalSearchProvider
from ditto.retrieval.providers.milvus import create_milvus_search_provider
from ditto.retrieval.providers.sql import create_sql_search_provider
from ditto.testing import RetrievalProviderContract
from ditto.testing.retrieval import CONTRACT_DOCUMENTS
from tests.support.postgres_server import PostgresServer

from .test_milvus_provider import DIM, HashingEmbedding, _embed

FILTERS: dict[str, Any] = {"honoured_filter": {"year": 2024}, "refused_filter": {"year": {"regex": "20.*"}}}
SQL_COLUMNS = {"content_column": "body", "id_column": "doc_id", "metadata_columns": ["lang", "year"],
               "filter_columns": ["year", "lang"]}
ROWS = [(d["id"], d["content"], d["metadata"]["lang"], d["metadata"]["year"]) for d in CONTRACT_DOCUMENTS]


class TestSqliteSqlProviderContract(RetrievalProviderContract):
    """RET-6: the SQL provider's SQLite FTS5 dialect keeps the provider contract."""

    honoured_filter = FILTERS["honoured_filter"]
    refused_filter = FILTERS["refused_filter"]

    @pytest.fixture(autouse=True)
    def _database(self, tmp_path: Path) -> Iterator[None]:
        path = tmp_path / "knowledge.sqlite"
        with sqlite3.connect(path) as setup:
            setup.execute("CREATE VIRTUAL TABLE docs USING fts5(doc_id UNINDEXED, body, lang UNINDEXED, "
                          "year UNINDEXED)")
            setup.executemany("INSERT INTO docs(doc_id, body, lang, year) VALUES (?, ?, ?, ?)", ROWS)
        self.connection = sqlite3.connect(path, check_same_thread=False)
        yield
        self.connection.close()

    @asynccontextmanager
    async def provider(self) -> AsyncIterator[RetrievalSearchProvider]:
        yield create_sql_search_provider(self.connection, {"dialect": "sqlite", "table": "docs", **SQL_COLUMNS})

    @asynccontextmanager
    async def failing_provider(self, secret: str) -> AsyncIterator[RetrievalSearchProvider]:
        yield create_sql_search_provider(self.connection, {"dialect": "sqlite", "table": secret, **SQL_COLUMNS})


class TestPostgresSqlProviderContract(RetrievalProviderContract):
    """RET-6: the SQL provider's PostgreSQL full-text dialect keeps the provider contract (a real server)."""

    honoured_filter = FILTERS["honoured_filter"]
    refused_filter = FILTERS["refused_filter"]

    @pytest.fixture(autouse=True)
    def _database(self, postgres_server: PostgresServer) -> None:
        self.dsn = postgres_server.dsn
        with psycopg.connect(self.dsn, autocommit=True) as setup:
            setup.execute("DROP TABLE IF EXISTS contract_docs")
            setup.execute("CREATE TABLE contract_docs (doc_id text PRIMARY KEY, body text NOT NULL, lang text, "
                          "year integer)")
            with setup.cursor() as cursor:
                cursor.executemany("INSERT INTO contract_docs (doc_id, body, lang, year) VALUES (%s, %s, %s, %s)",
                                   ROWS)

    @asynccontextmanager
    async def _connected(self, table: str) -> AsyncIterator[RetrievalSearchProvider]:
        connection = await psycopg.AsyncConnection.connect(self.dsn, autocommit=True)
        try:
            yield create_sql_search_provider(connection, {"dialect": "postgres", "table": table, **SQL_COLUMNS})
        finally:
            await connection.close()

    def provider(self) -> Any:
        return self._connected("contract_docs")

    def failing_provider(self, secret: str) -> Any:
        return self._connected(secret)


@pytest.fixture(scope="module")
def milvus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MilvusClient]:
    client = MilvusClient(str(tmp_path_factory.mktemp("milvus-contract") / "milvus.db"))
    schema = client.create_schema(auto_id=False)
    schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=64)
    schema.add_field("vector", DataType.FLOAT_VECTOR, dim=DIM)
    schema.add_field("text", DataType.VARCHAR, max_length=2000)
    schema.add_field("year", DataType.INT64)
    schema.add_field("lang", DataType.VARCHAR, max_length=200)
    index = client.prepare_index_params()
    index.add_index("vector", metric_type="COSINE", index_type="FLAT")
    client.create_collection("contract_docs", schema=schema, index_params=index)
    client.insert("contract_docs", [{"id": d["id"], "vector": _embed(d["content"]), "text": d["content"],
                                     "year": d["metadata"]["year"], "lang": d["metadata"]["lang"]}
                                    for d in CONTRACT_DOCUMENTS])
    yield client
    client.close()


class TestMilvusProviderContract(RetrievalProviderContract):
    """RET-6: the Milvus provider (Milvus Lite, external embedding) keeps the provider contract."""

    honoured_filter = FILTERS["honoured_filter"]
    refused_filter = FILTERS["refused_filter"]
    options: dict[str, Any] = {"metadata_fields": ["year", "lang"], "filter_fields": ["year", "lang"],
                               "dimensions": DIM}

    @pytest.fixture(autouse=True)
    def _client(self, milvus: MilvusClient) -> None:
        self.client = milvus

    @asynccontextmanager
    async def provider(self) -> AsyncIterator[RetrievalSearchProvider]:
        yield create_milvus_search_provider(self.client, {"collection": "contract_docs", **self.options},
                                            embedding=HashingEmbedding())

    @asynccontextmanager
    async def failing_provider(self, secret: str) -> AsyncIterator[RetrievalSearchProvider]:
        yield create_milvus_search_provider(self.client, {"collection": secret, **self.options},
                                            embedding=HashingEmbedding())
