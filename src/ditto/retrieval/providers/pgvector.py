"""``create_pgvector_provider``: vector search in PostgreSQL with pgvector's HNSW index (issue 18).

The server option next to the embedded indexes: one table ``(id, content, metadata jsonb,
embedding vector(N))`` with an HNSW index on cosine distance, written by :meth:`PgvectorIndex.add`
/ :meth:`~PgvectorIndex.add_contents` / :meth:`~PgvectorIndex.remove` and searched through the
same :class:`~ditto.retrieval.providers.vector.VectorSearchProvider` as the in-memory index
(vector queries, or text embedded by an external provider).

Why it looks like this:

* **Filters before top-k.** The shared filter language (:mod:`ditto.retrieval.engines.filters`)
  becomes a ``WHERE`` clause over ``metadata`` (JSON-typed equality through ``@>``, so
  ``1 == 1.0`` and ``true`` is not ``1``, a list field matches when an element does, ranges on
  numbers only: the in-memory index's rules). pgvector's *iterative* index scan
  (``hnsw.iterative_scan = strict_order``) keeps walking the graph until ``limit`` rows pass the
  filter; when it still has fewer (a very selective filter, past ``hnsw.max_scan_tuples``) the
  query is run again as an exact scan, so a filtered search returns ``limit`` hits whenever that
  many match.
* **Recall.** ``ef_search`` (default 100, raised to ``limit`` when larger) is set per query in
  the search's own transaction; ``m`` and ``ef_construction`` are pgvector's defaults.
* **Dimensions are the table's.** The table is made with ``vector(dimensions)``; an existing table
  of another dimension is refused (``RETRIEVAL_INVALID_EMBEDDING``), never truncated.
* **Hidden backend text.** Driver failures become ``RETRIEVAL_BACKEND_ERROR`` (logged once); a
  fired signal cancels the statement on the server.

Needs ``pip install 'ditto-agents[postgres]'`` and the ``vector`` extension on the server (``CREATE
EXTENSION vector`` is run on first use when the role may).
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, TypeVar

from ...contracts import freeze_json
from ..engines.filters import FilterCondition, parse_filter
from ..errors import INVALID_EMBEDDING, INVALID_INPUT, RetrievalArgumentError, RetrievalError, as_retrieval_error
from ..errors import await_with_signal as _await_with_signal
from ..types import RetrievalExecutionContext
from .embedding import EmbeddingProvider, Vector, embed_contents, validate_vector
from .vector import VectorHit, VectorRecord, VectorSearchProvider

if TYPE_CHECKING:  # psycopg (extra ``ditto-agents[postgres]``) is imported on first use
    import psycopg
    import psycopg_pool

__all__ = ["PgvectorIndex", "PgvectorSearchProvider", "create_pgvector_provider"]

_TABLE = re.compile(r"[a-z_][a-z0-9_]{0,47}")
#: pgvector indexes at most 2,000 dimensions of ``vector`` with HNSW.
MAX_DIMENSIONS: Final = 2000
#: ``hnsw.ef_search`` accepts 1…1000.
_MAX_EF_SEARCH: Final = 1000
#: Records written per statement.
_CHUNK: Final = 1000
_MAX_ID_LENGTH: Final = 1024
_FLOAT32_MAX: Final = 3.4028234663852886e38
_RANGE_SQL: Final = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}

T = TypeVar("T")


def _positive(value: Any, name: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise RetrievalArgumentError(INVALID_INPUT, f"{name} must be an integer from {low} to {high}")
    return value


def _literal(vector: Vector) -> str:
    """pgvector's text form; ``repr`` keeps every float64 digit (the server rounds to float32)."""
    return "[" + ",".join(repr(x) for x in vector) + "]"


def _json(value: Any, what: str) -> str:
    """JSON text PostgreSQL can hold (jsonb refuses U+0000, text refuses lone surrogates)."""
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
        text.encode("utf-8")
    except (TypeError, ValueError, RecursionError, UnicodeEncodeError):
        raise RetrievalError(INVALID_INPUT, f"{what} must be finite JSON") from None
    if "\\u0000" in text:
        raise RetrievalError(INVALID_INPUT, f"{what} cannot hold NUL characters in PostgreSQL")
    return text


def _check_vector(raw: Any, dimensions: int, index: int | None = None) -> Vector:
    """A finite vector of the table's dimension, storable as float32 and not zero (cosine)."""
    vector = validate_vector(raw, index=index, dimensions=dimensions)
    where = "the query" if index is None else f"record {index}"
    if any(abs(x) > _FLOAT32_MAX for x in vector):
        raise RetrievalError(INVALID_EMBEDDING, f"{where} has a number beyond float32's range")
    if not any(vector):
        raise RetrievalError(INVALID_EMBEDDING, f"{where} is a zero vector (cosine)")
    return vector


def _filter_sql(conditions: Sequence[FilterCondition]) -> tuple[str, list[Any]]:
    """The ``WHERE`` condition of the shared filter language over ``metadata`` (the in-memory index's rules)."""
    clauses: list[str] = []
    params: list[Any] = []
    for condition in conditions:
        if "\x00" in condition.field:
            raise RetrievalError(INVALID_INPUT, "filter field names cannot hold NUL characters")
        op, value = condition.op, condition.value
        if op in _RANGE_SQL:
            clauses.append(f"(CASE WHEN jsonb_typeof(metadata -> %s) = 'number' THEN "
                           f"(metadata -> %s)::numeric {_RANGE_SQL[op]} %s::numeric ELSE false END)")
            params += [condition.field, condition.field, value]
            continue
        wanted = [value] if op in ("eq", "ne") else list(value)
        member = "EXISTS (SELECT 1 FROM unnest(%s::jsonb[]) AS v(value) WHERE (metadata -> %s) @> v.value)"
        params += [[_json(item, "a filter value") for item in wanted], condition.field]
        clauses.append(member if op in ("eq", "in") else f"NOT {member}")
    return (" AND ".join(clauses) or "true"), params


class PgvectorIndex:
    """A :class:`~ditto.retrieval.providers.vector.VectorIndex` in one PostgreSQL table (cosine, HNSW).

    Nothing is connected until the first call; :meth:`close` closes the pool.
    """

    def __init__(self, dsn: str, table: str, dimensions: int, *, embedding: EmbeddingProvider | None = None,
                 batch_size: int | None = None, m: int = 16, ef_construction: int = 64, ef_search: int = 100,
                 max_connections: int = 4, connect_timeout_s: float = 10.0) -> None:
        if not isinstance(dsn, str) or not dsn.strip() or "\x00" in dsn:
            raise RetrievalArgumentError(INVALID_INPUT, "dsn must be a non-empty PostgreSQL connection string")
        if not isinstance(table, str) or not _TABLE.fullmatch(table):
            raise RetrievalArgumentError(INVALID_INPUT, "table must be a lower-case SQL identifier of at most "
                                                        "48 characters")
        self.dimensions = _positive(dimensions, "dimensions", 1, MAX_DIMENSIONS)
        self.m = _positive(m, "m", 2, 100)
        self.ef_construction = _positive(ef_construction, "ef_construction", 2 * self.m, 1000)
        self.ef_search = _positive(ef_search, "ef_search", 1, _MAX_EF_SEARCH)
        max_connections = _positive(max_connections, "max_connections", 1, 1000)
        if (isinstance(connect_timeout_s, bool) or not isinstance(connect_timeout_s, (int, float))
                or not 0 < connect_timeout_s <= 3600):
            raise RetrievalArgumentError(INVALID_INPUT, "connect_timeout_s must be a number of seconds in (0, 3600]")
        self.table = table
        self._dsn = dsn
        self._embedding = embedding
        self._batch_size = batch_size
        self._max_connections = max_connections
        self._timeout = float(connect_timeout_s)
        self._pool: psycopg_pool.AsyncConnectionPool[Any] | None = None
        self._ready = False
        self._closed = False
        self._lock = asyncio.Lock()

    # -- connections --------------------------------------------------------------
    async def _open(self) -> psycopg_pool.AsyncConnectionPool[Any]:
        pool = self._pool
        if pool is not None and self._ready and not self._closed:
            return pool
        async with self._lock:
            if self._closed:
                raise RetrievalError("RETRIEVAL_PROVIDER_UNAVAILABLE", "the pgvector index is closed")
            if self._pool is None:
                import psycopg_pool

                created: psycopg_pool.AsyncConnectionPool[Any] = psycopg_pool.AsyncConnectionPool(
                    self._dsn, min_size=1, max_size=self._max_connections, open=False, timeout=self._timeout,
                    kwargs={"autocommit": True, "connect_timeout": max(1, round(self._timeout))})
                await created.open(wait=False)
                self._pool = created
            if not self._ready:
                async with self._pool.connection() as connection:
                    await self._ensure_table(connection)
                self._ready = True
            return self._pool

    async def _ensure_table(self, connection: psycopg.AsyncConnection[Any]) -> None:
        table = self.table
        async with connection.transaction():
            await connection.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"ditto-pgvector:{table}",))
            await connection.execute("CREATE EXTENSION IF NOT EXISTS vector")
            row = await (await connection.execute(
                "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
                "WHERE attrelid = to_regclass(%s) AND attname = 'embedding' AND NOT attisdropped",
                (table,))).fetchone()
            if row is not None and row[0] != f"vector({self.dimensions})":
                raise RetrievalError(INVALID_EMBEDDING, f"the table {table} holds {row[0]} embeddings, not "
                                                        f"vector({self.dimensions})")
            await connection.execute(f"CREATE TABLE IF NOT EXISTS {table} (id text PRIMARY KEY, content text, "
                                     f"metadata jsonb, embedding vector({self.dimensions}) NOT NULL)")
            await connection.execute(f"CREATE INDEX IF NOT EXISTS {table}_hnsw ON {table} USING hnsw "
                                     f"(embedding vector_cosine_ops) WITH (m = {self.m}, "
                                     f"ef_construction = {self.ef_construction})")

    async def _run(self, body: Callable[[psycopg.AsyncConnection[Any]], Awaitable[T]],
                   context: RetrievalExecutionContext | None) -> T:
        async def call() -> T:
            try:
                pool = await self._open()
                async with pool.connection() as connection:
                    return await body(connection)
            except Exception as error:
                raise as_retrieval_error(error) from None

        return await _await_with_signal(call(), context.signal if context is not None else None)

    # -- writing -----------------------------------------------------------------------
    async def add(self, records: Sequence[VectorRecord | Mapping[str, Any]],
                  context: RetrievalExecutionContext | None = None) -> int:
        """Add or replace ``{id, vector, content?, metadata?}`` records, all in one transaction; returns the count."""
        if isinstance(records, (str, bytes, Mapping)) or not isinstance(records, Sequence):
            raise RetrievalError(INVALID_INPUT, "records must be a list")
        rows: list[tuple[str, str, str | None, str]] = []
        seen: set[str] = set()
        for position, raw in enumerate(records):
            try:
                record = raw if isinstance(raw, VectorRecord) else VectorRecord(**dict(raw))
            except TypeError:
                raise RetrievalError(INVALID_INPUT, f"record {position} must have id, vector, content and "
                                                    "metadata only") from None
            if (not isinstance(record.id, str) or not record.id or len(record.id) > _MAX_ID_LENGTH
                    or "\x00" in record.id or record.id in seen):
                raise RetrievalError(INVALID_INPUT, f"record {position} needs a unique, non-empty string id of at "
                                                    f"most {_MAX_ID_LENGTH} characters")
            seen.add(record.id)
            _json(record.id, f"record {position} id")
            if record.metadata is not None and not isinstance(record.metadata, Mapping):
                raise RetrievalError(INVALID_INPUT, f"record {position} metadata must be an object")
            vector = _check_vector(record.vector, self.dimensions, position)
            metadata = None if record.metadata is None else _json(dict(record.metadata), f"record {position} metadata")
            rows.append((record.id, _json(record.content, f"record {position} content"), metadata, _literal(vector)))
        if not rows:
            return 0
        sql = (f"INSERT INTO {self.table} (id, content, metadata, embedding) "
               "SELECT id, content, metadata::jsonb, embedding::vector FROM "
               "unnest(%s::text[], %s::text[], %s::text[], %s::text[]) AS r(id, content, metadata, embedding) "
               "ON CONFLICT (id) DO UPDATE SET content = excluded.content, metadata = excluded.metadata, "
               "embedding = excluded.embedding")

        async def body(connection: psycopg.AsyncConnection[Any]) -> int:
            async with connection.transaction():
                for start in range(0, len(rows), _CHUNK):
                    chunk = rows[start:start + _CHUNK]
                    await connection.execute(sql, [list(column) for column in zip(*chunk, strict=True)])
            return len(rows)

        return await self._run(body, context)

    async def add_contents(self, items: Sequence[Mapping[str, Any]],
                           context: RetrievalExecutionContext | None = None) -> int:
        """Embed ``{id, content, metadata?}`` items with the index's embedding provider and add them."""
        if self._embedding is None:
            raise RetrievalError(INVALID_INPUT, "this index has no embedding provider")
        if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Sequence) or not all(
                isinstance(item, Mapping) and "id" in item and "content" in item for item in items):
            raise RetrievalError(INVALID_INPUT, "items must be a list of {id, content, metadata?} objects")
        vectors = await embed_contents(self._embedding, [item["content"] for item in items],
                                       batch_size=self._batch_size, dimensions=self.dimensions, context=context)
        return await self.add([VectorRecord(item["id"], vector, item["content"], item.get("metadata"))
                               for item, vector in zip(items, vectors, strict=True)], context)

    async def remove(self, ids: Sequence[str], context: RetrievalExecutionContext | None = None) -> int:
        """Remove records by id; returns how many existed."""
        if isinstance(ids, (str, bytes)) or not isinstance(ids, Sequence) or not all(
                isinstance(value, str) and "\x00" not in value for value in ids):
            raise RetrievalError(INVALID_INPUT, "ids must be a list of strings")
        if not ids:
            return 0

        async def body(connection: psycopg.AsyncConnection[Any]) -> int:
            cursor = await connection.execute(f"DELETE FROM {self.table} WHERE id = ANY(%s::text[])", (list(ids),))
            return max(cursor.rowcount, 0)

        return await self._run(body, context)

    # -- searching -----------------------------------------------------------------------
    async def search_vector(self, vector: Vector, *, limit: int, filter: Mapping[str, Any] | None,
                            context: RetrievalExecutionContext | None = None) -> list[VectorHit]:
        """The ``limit`` nearest records (cosine) that pass ``filter``; score = cosine similarity."""
        query = _literal(_check_vector(vector, self.dimensions))
        condition, params = _filter_sql(parse_filter(filter))
        sql = (f"SELECT id, content, metadata::text, embedding <=> %s::vector FROM {self.table} WHERE {condition} "
               "ORDER BY embedding <=> %s::vector LIMIT %s")
        ef_search = str(min(max(self.ef_search, limit), _MAX_EF_SEARCH))

        async def body(connection: psycopg.AsyncConnection[Any]) -> list[Any]:
            async with connection.transaction():
                await connection.execute("SELECT set_config('hnsw.ef_search', %s, true), "
                                         "set_config('hnsw.iterative_scan', 'strict_order', true)", (ef_search,))
                rows = await (await connection.execute(sql, [query, *params, query, limit])).fetchall()
                if len(rows) < limit:  # the graph walk gave up before `limit` rows passed: search exactly
                    await connection.execute("SELECT set_config('enable_indexscan', 'off', true)")
                    rows = await (await connection.execute(sql, [query, *params, query, limit])).fetchall()
            return rows

        rows = await self._run(body, context)
        hits = []
        for record_id, content, metadata, distance in rows:
            loaded = None if metadata is None else json.loads(metadata)
            score = 1.0 - float(distance)
            hits.append(VectorHit(record_id, score if math.isfinite(score) else 0.0,
                                  freeze_json(json.loads(content)) if content is not None else None,
                                  None if loaded is None else freeze_json(loaded)))
        return hits

    async def count(self, context: RetrievalExecutionContext | None = None) -> int:
        """How many records the table holds."""
        async def body(connection: psycopg.AsyncConnection[Any]) -> int:
            row = await (await connection.execute(f"SELECT count(*) FROM {self.table}")).fetchone()
            return int(row[0]) if row is not None else 0

        return await self._run(body, context)

    async def close(self) -> None:
        async with self._lock:
            self._closed = True
            pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()

    def __repr__(self) -> str:  # never the DSN: it may hold a password
        return f"<PgvectorIndex table={self.table} dimensions={self.dimensions}>"


class PgvectorSearchProvider(VectorSearchProvider):
    """The ``RetrievalSearchProvider`` over a :class:`PgvectorIndex`, with the index's writes at hand."""

    index: PgvectorIndex

    async def add(self, records: Sequence[VectorRecord | Mapping[str, Any]],
                  context: RetrievalExecutionContext | None = None) -> int:
        return await self.index.add(records, context)

    async def add_contents(self, items: Sequence[Mapping[str, Any]],
                           context: RetrievalExecutionContext | None = None) -> int:
        return await self.index.add_contents(items, context)

    async def remove(self, ids: Sequence[str], context: RetrievalExecutionContext | None = None) -> int:
        return await self.index.remove(ids, context)

    async def close(self) -> None:
        await self.index.close()

    async def __aenter__(self) -> PgvectorSearchProvider:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        traceback: TracebackType | None) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"<PgvectorSearchProvider {self.index!r}>"


def create_pgvector_provider(dsn: str, table: str, dimensions: int, *, embedding: EmbeddingProvider | None = None,
                             batch_size: int | None = None, m: int = 16, ef_construction: int = 64,
                             ef_search: int = 100, max_connections: int = 4, connect_timeout_s: float = 10.0
                             ) -> PgvectorSearchProvider:
    """Vector search over ``table`` in the PostgreSQL database ``dsn`` (made on first use, HNSW, cosine).

    ``embedding`` embeds text queries and :meth:`~PgvectorSearchProvider.add_contents`; without it
    queries must be vectors. ``m``/``ef_construction`` build the HNSW graph, ``ef_search`` sets the
    search's candidate list (raised to ``limit``)::

        async with create_pgvector_provider("postgresql://ditto@db/kb", "passages", 384,
                                            embedding=embedder) as provider:
            await provider.add_contents([{"id": "d1", "content": "Backups are kept 35 days.",
                                          "metadata": {"year": 2024}}])
            found = await provider.search({"query": {"content": "backup retention"}, "target": {"name": "kb"},
                                           "filter": {"year": {"gte": 2024}}})
    """
    if embedding is not None and not callable(getattr(embedding, "embed", None)):
        raise RetrievalArgumentError(INVALID_INPUT, "the embedding provider needs an embed method")
    index = PgvectorIndex(dsn, table, dimensions, embedding=embedding, batch_size=batch_size, m=m,
                          ef_construction=ef_construction, ef_search=ef_search, max_connections=max_connections,
                          connect_timeout_s=connect_timeout_s)
    return PgvectorSearchProvider(index, embedding, False, index.dimensions, batch_size)
