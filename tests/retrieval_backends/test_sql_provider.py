"""``create_sql_search_provider`` (RET-6) on a real SQLite FTS5 file and a real PostgreSQL server."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from psycopg_pool import AsyncConnectionPool

from ditto.retrieval import RetrievalError, RetrievalExecutionContext, RetrievalTargetRegistry, create_retrieval
from ditto.retrieval.providers.sql import SqlSearchOptions, SqlSearchProvider, create_sql_search_provider
from ditto.signal import AbortController, CancelSignal
from tests.support.postgres_server import PostgresServer

from .conftest import DOCS

SQLITE_OPTIONS = {"dialect": "sqlite", "table": "docs", "content_column": "body",
                  "metadata_columns": ["lang", "year"], "filter_columns": {"year": "year", "lang": "lang"}}


def _request(content: object = "agent memory migration", **extra: object) -> dict[str, object]:
    return {"query": {"content": content}, "target": {"name": "kb"}, **extra}


def _rows() -> list[tuple[str, str, str, int]]:
    return [(d["id"], d["content"], d["metadata"]["lang"], d["metadata"]["year"]) for d in DOCS]


@pytest.fixture
def sqlite_db(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    path = tmp_path / "knowledge.sqlite"
    with sqlite3.connect(path) as setup:
        setup.execute("CREATE VIRTUAL TABLE docs USING fts5(doc_id UNINDEXED, body, lang UNINDEXED, "
                      "year UNINDEXED)")
        setup.executemany("INSERT INTO docs(doc_id, body, lang, year) VALUES (?, ?, ?, ?)", _rows())
    connection = sqlite3.connect(path, check_same_thread=False)
    yield connection
    connection.close()


@pytest.fixture
def sqlite_provider(sqlite_db: sqlite3.Connection) -> SqlSearchProvider:
    return create_sql_search_provider(sqlite_db, SQLITE_OPTIONS)


async def test_ret6_sqlite_fts5_ranks_with_bm25_and_keeps_the_record_locator(
        sqlite_provider: SqlSearchProvider) -> None:
    """RET-6: SQLite FTS5 search ranks by bm25(), source.ref is ``table:rowid``, metadata columns returned."""
    output = await sqlite_provider.search(_request("agent memory migration", strategy="keyword", limit=5))
    assert output.strategy == "keyword"
    ids = [c.id for c in output.candidates]
    assert set(ids) == {"1", "2", "3"}  # rowids; d4-d6 share no English word
    assert ids[0] in {"1", "3"}
    scores = [c.score for c in output.candidates]
    assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]
    first = output.candidates[0]
    assert first.source is not None and first.source.ref == f"docs:{first.id}" and first.source.target == "kb"
    assert first.metadata is not None and first.metadata["lang"] == "en"
    assert "memory" in first.content.lower()


async def test_ret6_sqlite_match_all_and_user_text_is_never_fts_syntax(sqlite_db: sqlite3.Connection) -> None:
    """RET-6: ``match=all`` needs every word; quotes, operators and parentheses in the text are just words."""
    provider = create_sql_search_provider(sqlite_db, {**SQLITE_OPTIONS, "match": "all", "id_column": "doc_id"})
    output = await provider.search(_request("agent memory"))
    assert {c.id for c in output.candidates} == {"d1", "d3"}
    assert output.candidates[0].source.ref.startswith("docs:d")  # type: ignore[union-attr]
    for hostile in ['memory" OR body:*', "NEAR(agent memory", "memory AND NOT agent)", "'; DROP TABLE docs; --",
                    '"', "*", "body:pasta"]:
        await provider.search(_request(hostile))
    assert sqlite_db.execute("SELECT count(*) FROM docs").fetchone()[0] == len(DOCS)
    assert (await provider.search(_request("?!"))).candidates == ()


# Each query holds FTS/websearch syntax around the one real word "pasta" (only d6 contains it).
_HOSTILE_PASTA = ['"pasta"', "pasta*", "^pasta", "(pasta)", "-pasta", '"*:^()-pasta-)(^:*"', "- pasta -", "pasta:",
                  ":pasta", "pasta)", '"pasta']
# The same with other words no document holds (found under match "any" only).
_HOSTILE_PASTA_ANY = ["body:pasta", 'pasta" OR body:*', "NEAR(pasta", "NOT pasta", "'; DROP TABLE docs; -- pasta"]


@pytest.mark.parametrize("match", ["any", "all"])
async def test_ret6_sqlite_hostile_text_still_finds_the_real_word(sqlite_db: sqlite3.Connection, match: str) -> None:
    """RET-6: quotes, ``* : ^ ( ) -`` and operators around a word are not FTS syntax: the document holding the
    word is found (not merely "no crash"), and nothing else is."""
    provider = create_sql_search_provider(sqlite_db, {**SQLITE_OPTIONS, "match": match, "id_column": "doc_id"})
    for hostile in _HOSTILE_PASTA + (_HOSTILE_PASTA_ANY if match == "any" else []):
        output = await provider.search(_request(hostile))
        assert [c.id for c in output.candidates] == ["d6"], hostile
    assert sqlite_db.execute("SELECT count(*) FROM docs").fetchone()[0] == len(DOCS)


async def test_ret6_sqlite_filters_equality_in_ranges(sqlite_provider: SqlSearchProvider) -> None:
    """RET-6: filters become WHERE clauses on declared columns; the top-k is among matching rows."""
    async def ids(filter: dict[str, Any], limit: int = 10) -> set[str]:
        output = await sqlite_provider.search(_request("memory agent migration 记忆", filter=filter, limit=limit))
        return {c.id for c in output.candidates}

    assert await ids({"year": {"gte": 2024}}) == {"1", "3"}
    assert await ids({"year": {"gt": 2020, "lt": 2025}}) == {"1", "2"}
    assert await ids({"lang": "en", "year": {"lte": 2021}}) == {"2"}
    assert await ids({"lang": {"in": ["fr", "en"]}}) == {"1", "2", "3"}
    assert await ids({"lang": {"in": []}}) == set()
    assert await ids({"year": {"nin": [2021, 2024]}}) == {"3"}
    assert await ids({"year": {"ne": 2021}}) == {"1", "3"}
    assert await ids({"lang": "en"}, limit=1) != set()


@pytest.mark.parametrize(("filter", "reason"), [
    ({"author": "x"}, "undeclared column"),
    ({"year": {"regex": "2.*"}}, "unknown operator"),
    ({"year": [2024]}, "list value"),
    ({"year": {"gte": "2024"}}, "non-numeric range"),
])
async def test_ret5_sql_unsupported_filters_are_rejected(sqlite_provider: SqlSearchProvider,
                                                         filter: dict[str, Any], reason: str) -> None:
    """RET-5: undeclared fields and unsupported operators → RETRIEVAL_INVALID_INPUT (never ignored)."""
    with pytest.raises(RetrievalError) as caught:
        await sqlite_provider.search(_request(filter=filter))
    assert caught.value.code == "RETRIEVAL_INVALID_INPUT", reason


@pytest.mark.parametrize("options", [
    {**SQLITE_OPTIONS, "table": "docs; DROP TABLE docs"},
    {**SQLITE_OPTIONS, "content_column": 'body" FROM docs --'},
    {**SQLITE_OPTIONS, "filter_columns": {"year": "year)"}},
    {**SQLITE_OPTIONS, "metadata_columns": ["a b"]},
    {"dialect": "postgres", "table": "docs", "content_column": "body"},
    {**SQLITE_OPTIONS, "dialect": "oracle"},
])
def test_ret6_sql_identifiers_are_validated(sqlite_db: sqlite3.Connection, options: dict[str, Any]) -> None:
    """RET-6: table/column names must be plain identifiers; bad options fail at construction."""
    with pytest.raises(ValueError):
        create_sql_search_provider(sqlite_db, options)


async def test_ret5_sqlite_backend_errors_are_hidden(sqlite_db: sqlite3.Connection,
                                                     sqlite_provider: SqlSearchProvider) -> None:
    """RET-5: a dropped table → RETRIEVAL_BACKEND_ERROR with a fixed message (no SQL, no path)."""
    sqlite_db.execute("DROP TABLE docs")
    with pytest.raises(RetrievalError) as caught:
        await sqlite_provider.search(_request())
    assert caught.value.code == "RETRIEVAL_BACKEND_ERROR"
    assert caught.value.message == "The search backend failed"
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
    assert "docs" not in str(caught.value) and "SELECT" not in str(caught.value)


async def test_ret5_sqlite_connection_must_allow_threads(tmp_path: Path) -> None:
    """RET-5: a connection bound to its creating thread fails clearly, without backend text."""
    connection = sqlite3.connect(tmp_path / "x.sqlite")
    connection.execute("CREATE VIRTUAL TABLE docs USING fts5(body, lang UNINDEXED, year UNINDEXED)")
    provider = create_sql_search_provider(connection, SQLITE_OPTIONS)
    with pytest.raises(RetrievalError) as caught:
        await provider.search(_request())
    assert caught.value.code == "RETRIEVAL_BACKEND_ERROR"
    assert "check_same_thread=False" in caught.value.message
    connection.close()


async def test_ret5_sqlite_cancellation(sqlite_provider: SqlSearchProvider, tmp_path: Path) -> None:
    """RET-5: an aborted signal → RETRIEVAL_CANCELLED before any statement; a signal firing during a
    long statement interrupts it (sqlite3 interrupt) and the call ends with RETRIEVAL_CANCELLED."""
    controller = AbortController()
    controller.abort()
    with pytest.raises(RetrievalError) as caught:
        await sqlite_provider.search(_request(), RetrievalExecutionContext(signal=controller.signal))
    assert caught.value.code == "RETRIEVAL_CANCELLED"

    path = tmp_path / "big.sqlite"
    with sqlite3.connect(path) as setup:
        setup.execute("CREATE VIRTUAL TABLE docs USING fts5(body, lang UNINDEXED, year UNINDEXED)")
        setup.execute("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300000) "
                      "INSERT INTO docs(body, lang, year) SELECT 'alpha beta gamma ' || i, 'en', i FROM n")
    big = sqlite3.connect(path, check_same_thread=False)
    provider = create_sql_search_provider(big, SQLITE_OPTIONS)
    started = time.perf_counter()
    await provider.search(_request("alpha beta gamma", limit=5))
    full = time.perf_counter() - started
    controller = AbortController()
    asyncio.get_running_loop().call_later(full / 4, controller.abort)
    started = time.perf_counter()
    with pytest.raises(RetrievalError) as caught:
        await provider.search(_request("alpha beta gamma", limit=5),
                              RetrievalExecutionContext(signal=controller.signal))
    assert caught.value.code == "RETRIEVAL_CANCELLED"
    assert time.perf_counter() - started < full * 0.9
    big.close()


# -- PostgreSQL -------------------------------------------------------------------------------

PG_OPTIONS = {"dialect": "postgres", "table": "public.docs", "content_column": "body", "id_column": "doc_id",
              "metadata_columns": ["lang", "year"], "filter_columns": ["year", "lang", "draft"]}


@pytest.fixture
async def pg(postgres_server: PostgresServer) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
    connection = await psycopg.AsyncConnection.connect(postgres_server.dsn, autocommit=True)
    await connection.execute("DROP TABLE IF EXISTS docs CASCADE")
    await connection.execute("CREATE TABLE docs (doc_id text PRIMARY KEY, body text NOT NULL, lang text, "
                             "year integer, draft boolean, tsv tsvector GENERATED ALWAYS AS "
                             "(to_tsvector('english', body)) STORED)")
    async with connection.cursor() as cursor:
        await cursor.executemany("INSERT INTO docs (doc_id, body, lang, year, draft) VALUES (%s, %s, %s, %s, %s)",
                                 [(*row, d["metadata"].get("draft", False)) for row, d in zip(_rows(), DOCS,
                                                                                               strict=True)])
    yield connection
    await connection.close()


async def test_ret6_postgres_full_text_search(pg: psycopg.AsyncConnection[Any]) -> None:
    """RET-6: PostgreSQL full text (to_tsvector / websearch_to_tsquery / ts_rank_cd), locator in source.ref."""
    provider = create_sql_search_provider(pg, PG_OPTIONS)
    output = await provider.search(_request("migrating agents", limit=5))
    ids = [c.id for c in output.candidates]
    assert set(ids) == {"d1", "d3"}
    scores = [c.score for c in output.candidates]
    assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]
    assert output.candidates[0].source.ref == f"public.docs:{ids[0]}"  # type: ignore[union-attr]
    assert output.candidates[0].metadata == {"lang": "en", "year": 2024 if ids[0] == "d1" else 2025}
    precomputed = create_sql_search_provider(pg, {**PG_OPTIONS, "tsvector_column": "tsv", "match": "all"})
    both = await precomputed.search(_request("agent memory -garbage"))
    assert {c.id for c in both.candidates} == {"d1", "d3"}
    assert (await precomputed.search(_request("pasta memory"))).candidates == ()


async def test_ret6_postgres_hostile_text_still_finds_the_real_word(pg: psycopg.AsyncConnection[Any]) -> None:
    """RET-6: on PostgreSQL (match any) the query is reduced to its words: syntax around "pasta" neither breaks
    the search nor negates the word; the one document holding it is found."""
    provider = create_sql_search_provider(pg, PG_OPTIONS)
    for hostile in _HOSTILE_PASTA + _HOSTILE_PASTA_ANY:
        output = await provider.search(_request(hostile))
        assert [c.id for c in output.candidates] == ["d6"], hostile


async def test_ret6_postgres_through_a_psycopg_pool(pg: psycopg.AsyncConnection[Any],
                                                   postgres_server: PostgresServer) -> None:
    """RET-6: a real ``psycopg_pool.AsyncConnectionPool`` is used through ``async with pool.connection()``: one
    checkout per search, the connection goes back to the pool, concurrent searches each get their own."""
    async with AsyncConnectionPool(postgres_server.dsn, min_size=2, max_size=2, open=False,
                                   kwargs={"autocommit": True}) as pool:
        await pool.wait()
        provider = create_sql_search_provider(pool, PG_OPTIONS)
        output = await provider.search(_request("pasta", limit=1))
        assert [c.id for c in output.candidates] == ["d6"]
        stats = pool.get_stats()
        assert stats["requests_num"] == 1 and stats["pool_available"] == 2
        together = await asyncio.gather(*(provider.search(_request(text)) for text in ("pasta", "migrating agents",
                                                                                       "garbage collection")))
        assert [sorted(c.id for c in o.candidates) for o in together] == [["d6"], ["d1", "d3"], ["d2"]]
        stats = pool.get_stats()
        assert stats["requests_num"] == 4 and stats["pool_available"] == 2
        assert stats.get("requests_errors", 0) == 0


async def test_ret6_postgres_filters(pg: psycopg.AsyncConnection[Any]) -> None:
    """RET-6: equality, in, ranges, booleans on PostgreSQL columns; unsupported → RETRIEVAL_INVALID_INPUT."""
    provider = create_sql_search_provider(pg, PG_OPTIONS)

    async def ids(filter: dict[str, Any]) -> set[str]:
        output = await provider.search(_request("memory agent pasta", filter=filter))
        return {c.id for c in output.candidates}

    assert await ids({"year": {"gte": 2024}}) == {"d1", "d3"}
    assert await ids({"year": {"lt": 2022}}) == {"d2", "d6"}
    assert await ids({"draft": True}) == {"d6"}
    assert await ids({"lang": {"in": ["en"]}, "year": {"gte": 2021, "lte": 2024}}) == {"d1", "d2"}
    with pytest.raises(RetrievalError) as caught:
        await provider.search(_request(filter={"body": "x"}))
    assert caught.value.code == "RETRIEVAL_INVALID_INPUT"


async def test_ret5_postgres_backend_errors_are_hidden(pg: psycopg.AsyncConnection[Any],
                                                       postgres_server: PostgresServer) -> None:
    """RET-5: a dropped table → RETRIEVAL_BACKEND_ERROR without SQL text or DSN; the connection stays usable."""
    provider = create_sql_search_provider(pg, PG_OPTIONS)
    await pg.execute("DROP TABLE docs")
    with pytest.raises(RetrievalError) as caught:
        await provider.search(_request())
    text = str(caught.value)
    assert caught.value.code == "RETRIEVAL_BACKEND_ERROR"
    assert "docs" not in text and "SELECT" not in text and str(postgres_server.port) not in text
    assert (await (await pg.execute("SELECT 1")).fetchone()) == (1,)


async def test_ret5_postgres_cancellation_stops_the_statement(pg: psycopg.AsyncConnection[Any]) -> None:
    """RET-5: a signal firing during a slow statement cancels it on the server → RETRIEVAL_CANCELLED;
    a deadline → RETRIEVAL_TIMEOUT."""
    await pg.execute("CREATE VIEW slow_docs AS SELECT doc_id, body || pg_sleep(3)::text AS body, lang, year "
                     "FROM docs")
    provider = create_sql_search_provider(pg, {**PG_OPTIONS, "table": "slow_docs", "filter_columns": {}})
    controller = AbortController()
    asyncio.get_running_loop().call_later(0.3, controller.abort)
    started = time.perf_counter()
    with pytest.raises(RetrievalError) as caught:
        await provider.search(_request("memory"), RetrievalExecutionContext(signal=controller.signal))
    assert caught.value.code == "RETRIEVAL_CANCELLED"
    assert time.perf_counter() - started < 2.5
    started = time.perf_counter()
    with pytest.raises(RetrievalError) as caught:
        await provider.search(_request("memory"), RetrievalExecutionContext(signal=CancelSignal.timeout(0.3)))
    assert caught.value.code == "RETRIEVAL_TIMEOUT"
    assert time.perf_counter() - started < 2.5
    assert (await (await pg.execute("SELECT count(*) FROM docs")).fetchone()) == (len(DOCS),)


async def test_ret6_sql_provider_behind_the_sdk(sqlite_provider: SqlSearchProvider) -> None:
    """RET-6: the SQL provider serves RETRIEVAL.SEARCH via the SDK with backend errors as NodeResults."""
    registry = RetrievalTargetRegistry({"kb": {"default_strategy": "keyword",
                                               "providers": {"keyword": sqlite_provider}}})
    result = await create_retrieval(providers=registry).search(_request(limit=2))
    assert result.status == "success"
    assert result.output.strategy == "keyword" and len(result.output.candidates) == 2


@settings(max_examples=40, deadline=None)
@given(text=st.text(max_size=40), limit=st.integers(1, 8),
       low=st.integers(2018, 2026), lang=st.sampled_from(["en", "zh", "fr"]))
def test_ret6_sqlite_ordering_limit_and_filter_invariants(tmp_path_factory: pytest.TempPathFactory, text: str,
                                                          limit: int, low: int, lang: str) -> None:
    """RET-6 (hypothesis): any query text is safe; results ≤ limit, scores descending, filters hold."""
    path = tmp_path_factory.getbasetemp() / "hypothesis.sqlite"
    if not path.exists():
        with sqlite3.connect(path) as setup:
            setup.execute("CREATE VIRTUAL TABLE docs USING fts5(doc_id UNINDEXED, body, lang UNINDEXED, "
                          "year UNINDEXED)")
            setup.executemany("INSERT INTO docs VALUES (?, ?, ?, ?)", _rows())
    connection = sqlite3.connect(path, check_same_thread=False)
    try:
        provider = create_sql_search_provider(connection, SQLITE_OPTIONS)
        query = f"{text} memory"
        output = asyncio.run(provider.search(_request(query, limit=limit,
                                                      filter={"year": {"gte": low}, "lang": lang})))
        assert len(output.candidates) <= limit
        scores = [c.score for c in output.candidates]
        assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]
        for candidate in output.candidates:
            assert candidate.metadata["year"] >= low and candidate.metadata["lang"] == lang  # type: ignore[index]
    finally:
        connection.close()


def test_ret6_sql_options_model_is_typed() -> None:
    """RET-6: ``SqlSearchOptions`` is a typed model accepting camelCase keys."""
    options = SqlSearchOptions.model_validate({"dialect": "sqlite", "table": "docs", "contentColumn": "body",
                                               "filterColumns": ["year"]})
    assert options.filter_columns == {"year": "year"} and options.match == "any"
