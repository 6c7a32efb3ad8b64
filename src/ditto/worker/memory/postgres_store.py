"""MEMORY on PostgreSQL: the SQLite store's contract on a server that many processes share.

Why it looks like this:

* **The same records, the same answers.** Ids, keys, the JSON text of content
  and metadata, filters (:mod:`._filters`), bounds (:mod:`.validation`) and the
  keyword search are the SQLite store's: ``ditto.testing.MemoryStoreContract``
  runs against both. The terms are FTS5's own (:func:`._fts.search_terms`: the
  same folding, Porter stemming and one term per CJK character), kept as a
  ``tsvector`` with a GIN index for matching and as ``{term: count}`` for BM25,
  which is scored in Python by :func:`ditto.text.bm25_score` exactly as the
  SQLite store scores it.
* **Atomic, concurrent writes.** A WRITE is one transaction of two statements
  (drop the records whose key moves to another id, then one upsert of every
  item), so a batch of 10,000 costs two round trips. Two writers racing for one
  id or key are serialised by the unique indexes; the loser's transaction is
  retried from the start (unique violation, deadlock, serialisation failure),
  so the last writer wins and nothing is half-written.
* **BM25 totals without a hot row.** Record and token totals live in 16 rows
  (``<table>_stats``) kept exact by statement triggers, each backend adding to
  the row of its process id, so concurrent writers rarely wait on one another.
* **A read is one snapshot.** A search reads the totals, document frequencies
  and candidates in one ``REPEATABLE READ`` read-only transaction.
* **Hidden backend text.** Every driver or pool failure becomes
  ``MEMORY_BACKEND_ERROR`` with the fixed message; the original is logged on the
  ``ditto.memory`` logger (the DSN and its password never are). A fired signal
  cancels the running statement on the server.

Schema (version 1, in ``<table>_meta``), made on first use under an advisory lock:
``<table>(seq bigserial, id text UNIQUE, key text COLLATE "C" UNIQUE, content
text, metadata text, filter_view jsonb, terms tsvector, freq jsonb, length int,
created_at, updated_at)``. ``key`` sorts bytewise (``COLLATE "C"``) so a
``keyPrefix`` is an index range scan whatever the database's collation.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import re
import uuid
from collections.abc import Awaitable, Callable, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, TypeVar

from ...signal import CancelSignal, await_with_signal
from ._filters import compile_postgres_filter, jsonb_scalars
from ._fts import bm25_score, index_text, query_tokens, search_terms
from .types import (
    DittoMemoryError,
    MemoryArgumentError,
    MemoryCallOptions,
    MemoryItem,
    MemorySearchHit,
    MemorySearchInput,
    MemoryWriteItem,
)
from .validation import (
    backend_error,
    check_selector,
    check_write_items,
    invalid,
    item_from_json,
    parse_search_input,
)

if TYPE_CHECKING:  # psycopg (extra ``ditto-agents[postgres]``) is imported on first use
    import psycopg
    import psycopg_pool

__all__ = ["POSTGRES_SCHEMA_VERSION", "PostgresMemoryStore", "create_postgres_memory_store"]

_log = logging.getLogger("ditto.memory")

POSTGRES_SCHEMA_VERSION: Final = 1
_STRATEGIES = frozenset({"keyword"})
_TABLE = re.compile(r"[a-z_][a-z0-9_]{0,47}")
#: Candidates scored exactly per search (at least ``limit``), preselected by the idf of the terms they hold.
_SCORING_POOL: Final = 256
#: PostgreSQL refuses lexemes of 2 KiB and more, and tsvectors of 1 MiB and more.
_MAX_LEXEME_BYTES: Final = 2046
_MAX_TSVECTOR_BYTES: Final = 1_000_000
#: Rows of ``<table>_stats``: writers add to ``pg_backend_pid() % _STAT_SLOTS``.
_STAT_SLOTS: Final = 16
#: A write that lost a race (unique key taken meanwhile, deadlock) is run again, this many times at most.
_WRITE_ATTEMPTS: Final = 6

T = TypeVar("T")
_Prepared = tuple[str, str | None, str, str | None, str | None, str, int]  # id, key, content, metadata, view,
#                                                                           freq JSON, length


def _schema(table: str) -> tuple[str, ...]:
    stats, meta = f"{table}_stats", f"{table}_meta"
    return (
        f"""CREATE TABLE IF NOT EXISTS {table} (
            seq bigserial PRIMARY KEY,
            id text NOT NULL UNIQUE,
            key text COLLATE "C" UNIQUE,
            content text NOT NULL,
            metadata text,
            filter_view jsonb,
            terms tsvector NOT NULL,
            freq jsonb NOT NULL,
            length integer NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(),
            updated_at timestamptz NOT NULL DEFAULT now()
        )""",
        f"CREATE INDEX IF NOT EXISTS {table}_terms_idx ON {table} USING gin (terms)",
        f"CREATE INDEX IF NOT EXISTS {table}_view_idx ON {table} USING gin (filter_view jsonb_path_ops)",
        f"CREATE INDEX IF NOT EXISTS {table}_recent_idx ON {table} (updated_at DESC, seq DESC)",
        f"""CREATE TABLE IF NOT EXISTS {stats} (
            slot integer PRIMARY KEY, records bigint NOT NULL, tokens bigint NOT NULL)""",
        f"""CREATE OR REPLACE FUNCTION {table}_count() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            records bigint;
            tokens bigint;
        BEGIN
            IF TG_OP = 'INSERT' THEN
                SELECT count(*), coalesce(sum(length), 0) INTO records, tokens FROM new_rows;
            ELSIF TG_OP = 'DELETE' THEN
                SELECT -count(*), -coalesce(sum(length), 0) INTO records, tokens FROM old_rows;
            ELSE
                SELECT 0, coalesce((SELECT sum(length) FROM new_rows), 0)
                          - coalesce((SELECT sum(length) FROM old_rows), 0) INTO records, tokens;
            END IF;
            IF records <> 0 OR tokens <> 0 THEN
                INSERT INTO {stats} AS s (slot, records, tokens)
                VALUES (pg_backend_pid() % {_STAT_SLOTS}, records, tokens)
                ON CONFLICT (slot) DO UPDATE SET records = s.records + excluded.records,
                                                 tokens = s.tokens + excluded.tokens;
            END IF;
            RETURN NULL;
        END $$""",
        f"""CREATE OR REPLACE TRIGGER {table}_count_insert AFTER INSERT ON {table}
            REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION {table}_count()""",
        f"""CREATE OR REPLACE TRIGGER {table}_count_update AFTER UPDATE ON {table}
            REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
            EXECUTE FUNCTION {table}_count()""",
        f"""CREATE OR REPLACE TRIGGER {table}_count_delete AFTER DELETE ON {table}
            REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION {table}_count()""",
        f"CREATE TABLE IF NOT EXISTS {meta} (name text PRIMARY KEY, value integer NOT NULL)",
    )


def _signal_of(options: MemoryCallOptions | None) -> CancelSignal | None:
    return options.signal if options is not None else None


def _signal_error(signal: CancelSignal) -> DittoMemoryError:
    return DittoMemoryError.from_signal(signal.reason)


def _frequencies(terms: list[str]) -> str:
    """``{term: count}`` as JSON, in first-seen order, within PostgreSQL's lexeme and tsvector limits.

    Terms of 2 KiB and more cannot be lexemes and are not indexed; past about
    1 MB of distinct terms (a record of hundreds of thousands of different
    words) the rest are not indexed either. The record's length still counts them.
    """
    counts: dict[str, int] = {}
    budget = _MAX_TSVECTOR_BYTES
    for term in terms:
        if term in counts:
            counts[term] += 1
            continue
        size = len(term.encode("utf-8"))
        if size > _MAX_LEXEME_BYTES or size + 8 > budget:
            continue
        budget -= size + 8
        counts[term] = 1
    return json.dumps(counts, ensure_ascii=False)


def _tsquery(terms: Sequence[str]) -> str:
    """A tsquery that ORs the lexemes as quoted literals (no operator can be smuggled in)."""
    return " | ".join("'" + term.replace("\\", "\\\\").replace("'", "''") + "'" for term in terms)


def _query_terms(query: Any) -> list[str]:
    """Distinct FTS5 terms of the query, first occurrence first (at most 64, as the SQLite store)."""
    originals = [original for original, _ in query_tokens(query)]
    terms: dict[str, None] = {}
    for token_terms in search_terms(originals):
        for term in token_terms:
            if len(term.encode("utf-8")) <= _MAX_LEXEME_BYTES:
                terms.setdefault(term)
    return list(terms)


class PostgresMemoryStore:
    """A :class:`~ditto.worker.memory.MemoryStore` in one PostgreSQL table (and two small helpers).

    Nothing is connected until the first call. The application owns the store
    and calls :meth:`close` (``runtime.close()`` never does).
    """

    def __init__(self, dsn: str, *, table: str = "ditto_memory", max_connections: int = 4,
                 connect_timeout_s: float = 10.0) -> None:
        if not isinstance(dsn, str) or not dsn.strip() or "\x00" in dsn:
            raise MemoryArgumentError("dsn must be a non-empty PostgreSQL connection string")
        if not isinstance(table, str) or not _TABLE.fullmatch(table):
            raise MemoryArgumentError("table must be a lower-case SQL identifier of at most 48 characters")
        if isinstance(max_connections, bool) or not isinstance(max_connections, int) or max_connections < 1:
            raise MemoryArgumentError("max_connections must be a positive integer")
        if (isinstance(connect_timeout_s, bool) or not isinstance(connect_timeout_s, (int, float))
                or not 0 < connect_timeout_s <= 3600):
            raise MemoryArgumentError("connect_timeout_s must be a number of seconds in (0, 3600]")
        self._dsn = dsn
        self._table = table
        self._max_connections = max_connections
        self._timeout = float(connect_timeout_s)
        self._pool: psycopg_pool.AsyncConnectionPool[Any] | None = None
        self._ready = False
        self._closed = False
        self._lock = asyncio.Lock()

    @property
    def table(self) -> str:
        return self._table

    # -- connections --------------------------------------------------------------
    async def _open(self) -> psycopg_pool.AsyncConnectionPool[Any]:
        pool = self._pool
        if pool is not None and self._ready and not self._closed:
            return pool
        async with self._lock:
            if self._closed:
                raise DittoMemoryError("MEMORY_BACKEND_ERROR", "the memory store is closed")
            if self._pool is None:
                import psycopg_pool

                created: psycopg_pool.AsyncConnectionPool[Any] = psycopg_pool.AsyncConnectionPool(
                    self._dsn, min_size=1, max_size=self._max_connections, open=False, timeout=self._timeout,
                    kwargs={"autocommit": True, "connect_timeout": max(1, round(self._timeout))})
                await created.open(wait=False)
                self._pool = created
            if not self._ready:
                async with self._pool.connection() as connection:
                    await self._ensure_schema(connection)
                self._ready = True
            return self._pool

    async def _ensure_schema(self, connection: psycopg.AsyncConnection[Any]) -> None:
        encoding = await (await connection.execute("SHOW server_encoding")).fetchone()
        if encoding is None or str(encoding[0]).upper() not in ("UTF8", "UTF-8"):
            _log.warning("the memory store needs a UTF8 database (this one is %s)", encoding and encoding[0])
            raise backend_error()
        async with connection.transaction():
            # One creator at a time: CREATE ... IF NOT EXISTS races with itself in the catalogs.
            await connection.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"ditto-memory:{self._table}",))
            await connection.execute(f"CREATE TABLE IF NOT EXISTS {self._table}_meta "
                                     "(name text PRIMARY KEY, value integer NOT NULL)")
            row = await (await connection.execute(
                f"SELECT value FROM {self._table}_meta WHERE name = 'schema_version'")).fetchone()
            version = None if row is None else int(row[0])
            if version is not None and version > POSTGRES_SCHEMA_VERSION:
                _log.warning("memory store schema version %s is not supported", version)
                raise backend_error()
            if version is None:
                for statement in _schema(self._table):
                    await connection.execute(statement)
                await connection.execute(f"INSERT INTO {self._table}_meta (name, value) VALUES "
                                         "('schema_version', %s)", (POSTGRES_SCHEMA_VERSION,))

    async def _run(self, operation: str, body: Callable[[psycopg.AsyncConnection[Any]], Awaitable[T]],
                   options: MemoryCallOptions | None) -> T:
        signal = _signal_of(options)
        if signal is not None and signal.aborted:
            raise DittoMemoryError.from_signal(signal.reason)
        return await await_with_signal(self._call(operation, body), signal, error=_signal_error)

    async def _call(self, operation: str, body: Callable[[psycopg.AsyncConnection[Any]], Awaitable[T]]) -> T:
        import psycopg
        import psycopg_pool

        try:
            pool = await self._open()
            async with pool.connection() as connection:
                return await body(connection)
        except DittoMemoryError:
            raise
        except (psycopg.Error, psycopg_pool.PoolTimeout, OSError):
            _log.warning("memory store %s failed", operation, exc_info=True)
            raise backend_error() from None
        except Exception:  # e.g. a statement answered a shape the schema does not allow
            _log.warning("memory store %s failed unexpectedly", operation, exc_info=True)
            raise backend_error() from None

    # -- MemoryStore ----------------------------------------------------------------
    async def write(self, items: Sequence[MemoryWriteItem], options: MemoryCallOptions | None = None
                    ) -> tuple[MemoryItem, ...]:
        """Store every item or none; ids default to ``uuid4().hex``; a taken key moves to the new record."""
        items = tuple(items)
        texts = check_write_items(items)
        if not items:
            return ()
        signal = _signal_of(options)
        if signal is not None and signal.aborted:
            raise DittoMemoryError.from_signal(signal.reason)
        bodies = [index_text(item.content) for item in items]
        terms = await asyncio.to_thread(search_terms, bodies) if len(bodies) > 64 else search_terms(bodies)
        prepared: list[_Prepared] = [
            (item.id or uuid.uuid4().hex, item.key, content, metadata, jsonb_scalars(item.metadata),
             _frequencies(record_terms), len(record_terms))
            for item, (content, metadata), record_terms in zip(items, texts, terms, strict=True)]
        await self._run("write", lambda connection: self._write(connection, prepared), options)
        return tuple(item_from_json(row[:4]) for row in prepared)

    async def _write(self, connection: psycopg.AsyncConnection[Any], prepared: list[_Prepared]) -> None:
        import psycopg

        columns = list(zip(*prepared, strict=True))
        table = self._table
        moved = (f"DELETE FROM {table} AS r USING unnest(%s::text[], %s::text[]) AS i(id, key) "
                 "WHERE i.key IS NOT NULL AND r.key = i.key AND r.id <> i.id")
        upsert = (
            f"INSERT INTO {table} AS r (id, key, content, metadata, filter_view, terms, freq, length) "
            "SELECT i.id, i.key, i.content, i.metadata, i.view::jsonb, "
            "array_to_tsvector(ARRAY(SELECT jsonb_object_keys(i.freq::jsonb))), i.freq::jsonb, i.length "
            "FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::int[]) "
            "WITH ORDINALITY AS i(id, key, content, metadata, view, freq, length, n) ORDER BY i.n "
            "ON CONFLICT (id) DO UPDATE SET key = excluded.key, content = excluded.content, "
            "metadata = excluded.metadata, filter_view = excluded.filter_view, terms = excluded.terms, "
            "freq = excluded.freq, length = excluded.length, updated_at = now()")
        for attempt in range(_WRITE_ATTEMPTS):
            try:
                # One round trip: BEGIN, both statements and COMMIT go out together (errors surface at the end).
                async with connection.pipeline(), connection.transaction():
                    await connection.execute(moved, (list(columns[0]), list(columns[1])))
                    await connection.execute(upsert, [list(column) for column in columns])
                return
            except (psycopg.errors.UniqueViolation, psycopg.errors.DeadlockDetected,
                    psycopg.errors.SerializationFailure):
                if attempt == _WRITE_ATTEMPTS - 1:
                    raise
                await asyncio.sleep(random.uniform(0, 0.01 * 2**attempt))  # another writer won the race

    async def get(self, *, ids: Sequence[str] | None = None, keys: Sequence[str] | None = None,
                  options: MemoryCallOptions | None = None) -> tuple[MemoryItem, ...]:
        """Records in request order; missing ones are omitted, repeats answered once."""
        field, values = check_selector(ids, keys, "get")
        if not values:
            return ()
        column = "id" if field == "id" else "key"
        sql = f"SELECT id, key, content, metadata FROM {self._table} WHERE {column} = ANY(%s::text[])"

        async def body(connection: psycopg.AsyncConnection[Any]) -> list[Any]:
            return await (await connection.execute(sql, (list(values),))).fetchall()

        rows = await self._run("get", body, options)
        found = {(row[0] if field == "id" else row[1]): row for row in rows}
        ordered = dict.fromkeys(value for value in values if value in found)
        return tuple(item_from_json(found[value]) for value in ordered)

    async def delete(self, *, ids: Sequence[str] | None = None, keys: Sequence[str] | None = None,
                     options: MemoryCallOptions | None = None) -> int:
        """Remove the named records in one statement; returns how many existed."""
        field, values = check_selector(ids, keys, "delete")
        if not values:
            return 0
        column = "id" if field == "id" else "key"
        sql = f"DELETE FROM {self._table} WHERE {column} = ANY(%s::text[])"

        async def body(connection: psycopg.AsyncConnection[Any]) -> int:
            cursor = await connection.execute(sql, (list(values),))
            return max(cursor.rowcount, 0)

        return await self._run("delete", body, options)

    async def search(self, input: MemorySearchInput, options: MemoryCallOptions | None = None
                     ) -> tuple[MemorySearchHit, ...]:
        """Keyword search (any query term, BM25 ranking) within the filter, as the SQLite store ranks.

        A ``None`` or blank string query lists the filtered records instead,
        most recently written first, without scores.
        """
        request = parse_search_input(input)
        if request.strategy is not None and request.strategy not in _STRATEGIES:
            raise invalid("the PostgreSQL memory store supports only the keyword strategy")
        if request.options:
            raise invalid("the PostgreSQL memory store takes no search options")
        condition, params = compile_postgres_filter(request.filter)
        limit = request.limit or 10
        table = self._table
        if request.query is None or (isinstance(request.query, str) and not request.query.strip()):
            sql = (f"SELECT r.id, r.key, r.content, r.metadata FROM {table} AS r WHERE {condition} "
                   "ORDER BY r.updated_at DESC, r.seq DESC LIMIT %s")

            async def listing(connection: psycopg.AsyncConnection[Any]) -> list[Any]:
                return await (await connection.execute(sql, [*params, limit])).fetchall()

            rows = await self._run("search", listing, options)
            return tuple(MemorySearchHit.model_construct(memory=item_from_json(row), score=None, metadata=None)
                         for row in rows)
        terms = _query_terms(request.query)
        if not terms:
            return ()

        async def body(connection: psycopg.AsyncConnection[Any]) -> tuple[list[tuple[float, Any]], list[Any]]:
            return await self._match(connection, terms, condition, params, limit)

        ranked, rows = await self._run("search", body, options)
        by_seq = {row[0]: row[1:] for row in rows}
        return tuple(MemorySearchHit.model_construct(memory=item_from_json(by_seq[seq]), score=score, metadata=None)
                     for score, seq in ranked if seq in by_seq)

    async def _match(self, connection: psycopg.AsyncConnection[Any], terms: list[str], condition: str,
                     params: list[Any], limit: int) -> tuple[list[tuple[float, Any]], list[Any]]:
        """Candidates, BM25 inputs and the winners' records, read in one snapshot.

        The candidates are the ``max(limit, 256)`` matching records whose query terms have the highest
        idf sum (BM25 without its tf and length factors, which only the few candidates need); they are
        then scored exactly. SQLite's FTS5 preselects by its own ``bm25()`` the same way.
        """
        table = self._table
        term_queries = [_tsquery([term]) for term in terms]
        matched = " + ".join("(CASE WHEN r.terms @@ %s::tsquery THEN %s ELSE 0 END)" for _ in terms)
        # One pass over the matching records counts every term's document frequency (the whole store's).
        frequencies_sql = (f"SELECT {', '.join('count(*) FILTER (WHERE terms @@ %s::tsquery)' for _ in terms)} "
                           f"FROM {table} WHERE terms @@ %s::tsquery")
        counts = ", ".join("coalesce((f.freq ->> %s)::int, 0)" for _ in terms)
        candidates_sql = (  # the inner query sorts (seq, weight) pairs only; term counts are read for the pick
            f"SELECT f.seq, f.length, {counts} "
            f"FROM (SELECT r.seq FROM {table} AS r WHERE r.terms @@ %s::tsquery AND {condition} "
            f"ORDER BY {matched} DESC, r.seq LIMIT %s) AS pick JOIN {table} AS f ON f.seq = pick.seq")
        async with connection.transaction():
            await connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            totals = await (await connection.execute(
                f"SELECT coalesce(sum(records), 0), coalesce(sum(tokens), 0) FROM {table}_stats")).fetchone()
            counts_row = await (await connection.execute(frequencies_sql, [*term_queries, _tsquery(terms)])).fetchone()
            records, tokens = (int(totals[0]), int(totals[1])) if totals is not None else (0, 0)
            frequency = {term: int(count) for term, count in zip(terms, counts_row or [0] * len(terms), strict=True)}
            if not any(frequency.values()):
                return [], []
            # bm25_score of one occurrence in a document of average length is exactly the term's idf.
            weighted = [value for term, query in zip(terms, term_queries, strict=True)
                        for value in (query, bm25_score({term: 1}, 1, frequency, records, 1.0))]
            candidates = await (await connection.execute(candidates_sql, [
                *terms, _tsquery(terms), *params, *weighted, max(limit, _SCORING_POOL)])).fetchall()
            average = tokens / records if records else 0.0
            scored = sorted(((bm25_score(dict(zip(terms, row[2:], strict=True)), row[1], frequency, records,
                                         average), row[0]) for row in candidates),
                            key=lambda pair: (-pair[0], pair[1]))[:limit]
            rows = await (await connection.execute(
                f"SELECT seq, id, key, content, metadata FROM {table} WHERE seq = ANY(%s::bigint[])",
                ([seq for _, seq in scored],))).fetchall() if scored else []
        return scored, rows

    # -- lifecycle ------------------------------------------------------------------
    async def close(self) -> None:
        """Close the connection pool; later calls fail with ``MEMORY_BACKEND_ERROR``."""
        async with self._lock:
            self._closed = True
            pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()

    async def __aenter__(self) -> PostgresMemoryStore:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        traceback: TracebackType | None) -> None:
        await self.close()

    def __repr__(self) -> str:  # never the DSN: it may hold a password
        return f"<PostgresMemoryStore table={self._table}>"


def create_postgres_memory_store(dsn: str, *, table: str = "ditto_memory", max_connections: int = 4,
                                 connect_timeout_s: float = 10.0) -> PostgresMemoryStore:
    """A MEMORY store in the PostgreSQL database ``dsn`` (needs ``pip install 'ditto-agents[postgres]'``).

    The tables (``table``, ``<table>_stats``, ``<table>_meta``) are made on first
    use in the connection's schema; any number of processes may share them.
    ``max_connections`` bounds this process's pool::

        async with create_postgres_memory_store("postgresql://ditto@db.internal/agents") as store:
            memory = create_memory(store=store)
            await memory.write({"memories": [{"key": "backup-retention", "content": "Kept 35 days."}]})
    """
    return PostgresMemoryStore(dsn, table=table, max_connections=max_connections,
                               connect_timeout_s=connect_timeout_s)
