"""The default MEMORY store: one SQLite file with FTS5 keyword search (MEM-2).

Why it looks like this:

* **One file, WAL, busy timeout.** Several processes (a CLI run and a resumed
  run, two workers) may open the same ``memory.sqlite``. WAL lets readers run
  beside one writer; ``busy_timeout`` makes a second writer wait for the lock
  instead of failing at once.
* **Atomic writes.** A WRITE or DELETE is one ``BEGIN IMMEDIATE … COMMIT``
  transaction: every item of the call is stored, or none is. A process killed
  mid-transaction leaves only a rolled-back journal behind.
* **Threads, not the event loop.** ``sqlite3`` is synchronous, so every call
  runs in ``asyncio.to_thread`` on a connection borrowed from a small pool
  (one connection is used by one thread at a time). A ``signal`` that fires
  mid-query calls ``Connection.interrupt()``.
* **Hidden backend text.** Every ``sqlite3`` failure becomes
  ``MEMORY_BACKEND_ERROR`` with a fixed message; the original is logged for
  operators on the ``ditto.memory`` logger, never returned (it may hold the
  path or SQL).

Schema (version 3, ``PRAGMA user_version``; version 1 and 2 files are re-indexed
on first writable open, see :func:`_reindex`): ``memory_records(seq INTEGER
PRIMARY KEY, id TEXT UNIQUE, key TEXT UNIQUE NULL, content JSON, metadata JSON,
length, created_at, updated_at)``, the FTS5 table ``memory_fts(body)`` whose
rowid is ``seq``, and ``memory_stats`` (record and token totals for BM25,
kept in step by every write). ``seq`` is an internal, VACUUM-stable join key;
``id`` is the public identifier.

Search: FTS5 finds the records matching any query token (within the filter);
the best ``max(limit, 256)`` of them by FTS5's own ``bm25()`` are re-scored
with BM25 in :mod:`._fts` from FTS5's term counts, with an idf that never
collapses in small stores.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar
from urllib.parse import quote

from ...signal import CancelSignal
from ._filters import compile_filter
from ._fts import FTS5_TOKENIZE, bm25_score, index_text, match_expression, query_tokens, token_count
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

__all__ = ["SCHEMA_VERSION", "SqliteMemoryStore", "create_sqlite_memory_store"]

_log = logging.getLogger("ditto.memory")

SCHEMA_VERSION = 3
#: Strategies the built-in search understands (None means the same).
_STRATEGIES = frozenset({"keyword"})

#: Candidates re-scored per search (at least ``limit``).
_SCORING_POOL = 256

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS memory_records (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        key TEXT UNIQUE,
        content TEXT NOT NULL,
        metadata TEXT,
        length INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    )""",
    f"CREATE VIRTUAL TABLE IF NOT EXISTS memory_fts USING fts5(body, tokenize = '{FTS5_TOKENIZE}')",
    """CREATE TABLE IF NOT EXISTS memory_stats (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        records INTEGER NOT NULL,
        tokens INTEGER NOT NULL
    )""",
    "INSERT OR IGNORE INTO memory_stats (id, records, tokens) VALUES (1, 0, 0)",
)

T = TypeVar("T")
_Row = tuple[str, str | None, str, str | None]
_Prepared = tuple[str, str | None, str, str | None, str, int]  # id, key, content, metadata, FTS body, length
_Candidate = tuple[int, str, str | None, str, str | None, int]  # seq, id, key, content, metadata, length
#: highlight() markers; each matched instance adds exactly their combined length to the text.
_OPEN, _CLOSE = "\x02", "\x03"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def _signal_of(options: MemoryCallOptions | None) -> CancelSignal | None:
    return options.signal if options is not None else None


class _Pool:
    """At most ``size`` connections, each used by one thread at a time."""

    def __init__(self, opener: Callable[[], sqlite3.Connection], size: int) -> None:
        self._opener = opener
        self._size = size
        self._idle: list[sqlite3.Connection] = []
        self._count = 0
        self._closed = False
        self._cond = threading.Condition()

    def acquire(self) -> sqlite3.Connection:
        with self._cond:
            while True:
                if self._closed:
                    raise DittoMemoryError("MEMORY_BACKEND_ERROR", "the memory store is closed")
                if self._idle:
                    return self._idle.pop()
                if self._count < self._size:
                    self._count += 1
                    break
                self._cond.wait()
        try:
            return self._opener()
        except BaseException:
            with self._cond:
                self._count -= 1
                self._cond.notify()
            raise

    def release(self, connection: sqlite3.Connection, *, broken: bool) -> None:
        with self._cond:
            keep = not broken and not self._closed
            if keep:
                self._idle.append(connection)
            else:
                self._count -= 1
            self._cond.notify()
        if not keep:
            connection.close()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            idle, self._idle = self._idle, []
            self._count -= len(idle)
            self._cond.notify_all()
        for connection in idle:
            connection.close()


class SqliteMemoryStore:
    """A :class:`~ditto.worker.memory.MemoryStore` over one SQLite file.

    Nothing is opened until the first call. The application owns the store and
    calls :meth:`close` (``runtime.close()`` never does).
    """

    def __init__(self, path: str | os.PathLike[str], *, busy_timeout_ms: int = 5000,
                 read_only: bool = False, max_connections: int = 4) -> None:
        if isinstance(busy_timeout_ms, bool) or not isinstance(busy_timeout_ms, int) or busy_timeout_ms < 0:
            raise MemoryArgumentError("busy_timeout_ms must be a non-negative integer")
        if isinstance(max_connections, bool) or not isinstance(max_connections, int) or max_connections < 1:
            raise MemoryArgumentError("max_connections must be a positive integer")
        self._path = Path(path)
        self._busy_timeout_ms = busy_timeout_ms
        self._read_only = read_only
        self._schema_lock = threading.Lock()
        self._open_lock = threading.Lock()
        self._schema_ready = False
        self._pool = _Pool(self._open, max_connections)

    @property
    def path(self) -> Path:
        return self._path

    @property
    def read_only(self) -> bool:
        return self._read_only

    # -- connections ----------------------------------------------------------
    def _open(self) -> sqlite3.Connection:
        # One open at a time per store: concurrent journal-mode switches on a new file fail with BUSY.
        with self._open_lock:
            if self._read_only:
                uri = "file:" + quote(str(self._path.absolute())) + "?mode=ro"
                connection = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
            else:
                connection = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False)
            try:
                connection.execute(f"PRAGMA busy_timeout = {self._busy_timeout_ms}")
                if not self._read_only:
                    self._enable_wal(connection)
                    connection.execute("PRAGMA synchronous = NORMAL")
                self._ensure_schema(connection)
            except BaseException:
                connection.close()
                raise
            return connection

    def _enable_wal(self, connection: sqlite3.Connection) -> None:
        """Switch the file to WAL once; retry while another process holds the lock it needs.

        SQLite does not call the busy handler for a journal-mode change, so
        the wait is done here, up to the same ``busy_timeout_ms``.
        """
        deadline = time.monotonic() + self._busy_timeout_ms / 1000
        while True:
            try:
                if str(connection.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
                    connection.execute("PRAGMA journal_mode = WAL").fetchone()
                return
            except sqlite3.OperationalError as error:
                if not _is_busy(error) or time.monotonic() >= deadline:
                    raise
                time.sleep(0.01)

    def _ensure_schema(self, connection: sqlite3.Connection) -> None:
        with self._schema_lock:
            if self._schema_ready:
                return
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION or (self._read_only and version != SCHEMA_VERSION):
                _log.warning("memory store schema version %s is not supported", version)
                raise backend_error()
            if version < SCHEMA_VERSION:
                connection.execute("BEGIN IMMEDIATE")
                try:
                    # Another process may have created or upgraded it while we waited for the lock.
                    current = connection.execute("PRAGMA user_version").fetchone()[0]
                    if current < SCHEMA_VERSION:
                        for statement in _SCHEMA:
                            connection.execute(statement)
                        if current >= 1:
                            _reindex(connection)
                        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                    connection.execute("COMMIT")
                except BaseException:
                    if connection.in_transaction:
                        connection.execute("ROLLBACK")
                    raise
            self._schema_ready = True

    def _in_thread(self, operation: str, body: Callable[[sqlite3.Connection], T],
                   signal: CancelSignal | None) -> T:
        if signal is not None and signal.aborted:
            raise DittoMemoryError.from_signal(signal.reason)
        try:
            connection = self._pool.acquire()
        except DittoMemoryError:
            raise
        except (sqlite3.Error, OSError, ValueError):
            _log.warning("memory store could not open its database (%s)", operation, exc_info=True)
            raise backend_error() from None
        guard = threading.Lock()
        state = {"active": True, "interrupted": False}

        def on_abort(_: CancelSignal) -> None:
            with guard:
                if state["active"]:
                    state["interrupted"] = True
                    connection.interrupt()

        remove = signal.add_callback(on_abort) if signal is not None else None
        broken = False
        try:
            return body(connection)
        except sqlite3.Error:
            broken = True
            if signal is not None and signal.aborted:
                raise DittoMemoryError.from_signal(signal.reason) from None
            _log.warning("memory store %s failed", operation, exc_info=True)
            raise backend_error() from None
        except DittoMemoryError:
            raise
        except Exception:  # e.g. a statement answered a shape the schema does not allow
            broken = True
            _log.warning("memory store %s failed unexpectedly", operation, exc_info=True)
            raise backend_error() from None
        except BaseException:
            broken = True
            raise
        finally:
            with guard:
                state["active"] = False
            if remove is not None:
                remove()
            # An interrupt that landed between statements could leak into the next call: retire it.
            self._pool.release(connection, broken=broken or state["interrupted"])

    async def _run(self, operation: str, body: Callable[[sqlite3.Connection], T],
                   options: MemoryCallOptions | None) -> T:
        signal = _signal_of(options)
        if signal is not None and signal.aborted:
            raise DittoMemoryError.from_signal(signal.reason)
        return await asyncio.to_thread(self._in_thread, operation, body, signal)

    # -- MemoryStore ------------------------------------------------------------
    async def write(self, items: Sequence[MemoryWriteItem], options: MemoryCallOptions | None = None
                    ) -> tuple[MemoryItem, ...]:
        """Store every item or none; ids default to ``uuid4().hex``; a taken key moves to the new record."""
        items = tuple(items)
        prepared: list[_Prepared] = []
        for item, (content, metadata) in zip(items, check_write_items(items), strict=True):
            text = index_text(item.content)
            prepared.append((item.id or uuid.uuid4().hex, item.key, content, metadata, text, token_count(text)))
        if not prepared:
            return ()
        signal, busy = _signal_of(options), self._busy_timeout_ms
        await self._run("write", lambda connection: _write(connection, prepared, busy, signal), options)
        return tuple(item_from_json(row[:4]) for row in prepared)

    async def get(self, *, ids: Sequence[str] | None = None, keys: Sequence[str] | None = None,
                  options: MemoryCallOptions | None = None) -> tuple[MemoryItem, ...]:
        """Records in request order; missing ones are omitted, repeats answered once."""
        field, values = check_selector(ids, keys, "get")
        if not values:
            return ()
        rows = await self._run("get", lambda connection: _select(connection, field, values), options)
        found = {(row[0] if field == "id" else row[1]): row for row in rows}
        ordered = dict.fromkeys(value for value in values if value in found)
        return tuple(item_from_json(found[value]) for value in ordered)

    async def delete(self, *, ids: Sequence[str] | None = None, keys: Sequence[str] | None = None,
                     options: MemoryCallOptions | None = None) -> int:
        """Remove the named records in one transaction; returns how many existed."""
        field, values = check_selector(ids, keys, "delete")
        if not values:
            return 0
        signal, busy = _signal_of(options), self._busy_timeout_ms
        return await self._run("delete", lambda connection: _delete(connection, field, values, busy, signal),
                               options)

    async def search(self, input: MemorySearchInput, options: MemoryCallOptions | None = None
                     ) -> tuple[MemorySearchHit, ...]:
        """Keyword search (FTS5, OR of quoted query tokens, BM25 ranking) within the filter.

        A ``None`` or blank string query lists the filtered records instead,
        most recently written first, without scores.
        """
        request = parse_search_input(input)
        if request.strategy is not None and request.strategy not in _STRATEGIES:
            raise invalid("the SQLite memory store supports only the keyword strategy")
        if request.options:
            raise invalid("the SQLite memory store takes no search options")
        condition, params = compile_filter(request.filter)
        limit = request.limit or 10
        listing = request.query is None or (isinstance(request.query, str) and not request.query.strip())
        if listing:
            rows = await self._run("search", lambda c: _list(c, condition, params, limit), options)
            return tuple(MemorySearchHit.model_construct(memory=item_from_json(row), score=None, metadata=None)
                         for row in rows)
        tokens = query_tokens(request.query)
        if not tokens:
            return ()
        originals = [original for original, _ in tokens]
        pool = max(limit, _SCORING_POOL)
        candidates, frequency, counts, (records, total) = await self._run(
            "search", lambda c: _match(c, originals, condition, params, pool), options)
        if not candidates:
            return ()
        average = total / records if records else 0.0
        ranked = sorted(((bm25_score({token: counts.get((token, row[0]), 0) for token in originals}, row[5],
                                     frequency, records, average), row)
                         for row in candidates), key=lambda pair: (-pair[0], pair[1][0]))
        return tuple(MemorySearchHit.model_construct(memory=item_from_json(row[1:5]), score=score, metadata=None)
                     for score, row in ranked[:limit])

    # -- lifecycle ----------------------------------------------------------------
    async def close(self) -> None:
        """Close idle connections now and busy ones when their call ends; later calls fail."""
        await asyncio.to_thread(self._pool.close)

    async def __aenter__(self) -> SqliteMemoryStore:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        traceback: TracebackType | None) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"<SqliteMemoryStore read_only={self._read_only}>"


# -- statements (run in a worker thread with a borrowed connection) -------------------


_SQLITE_BUSY = 5
_SQLITE_LOCKED = 6


def _is_busy(error: sqlite3.OperationalError) -> bool:
    code = getattr(error, "sqlite_errorcode", None)
    return isinstance(code, int) and code & 0xFF in (_SQLITE_BUSY, _SQLITE_LOCKED)

#: While a signal is attached, lock waits are cut into slices this long so the signal is seen.
_BUSY_SLICE_MS = 50


def _begin(connection: sqlite3.Connection, busy_timeout_ms: int, signal: CancelSignal | None) -> None:
    """``BEGIN IMMEDIATE`` that gives up waiting for another writer when ``signal`` fires.

    SQLite's own busy wait cannot be interrupted, so with a signal attached the
    wait runs as short slices with a signal check between them, up to the
    same overall ``busy_timeout_ms``.
    """
    if signal is None or busy_timeout_ms <= _BUSY_SLICE_MS:
        connection.execute("BEGIN IMMEDIATE")
        return
    deadline = time.monotonic() + busy_timeout_ms / 1000
    connection.execute(f"PRAGMA busy_timeout = {_BUSY_SLICE_MS}")
    try:
        while True:
            try:
                connection.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as error:
                if not _is_busy(error) or signal.aborted or time.monotonic() >= deadline:
                    raise
    finally:
        connection.execute(f"PRAGMA busy_timeout = {busy_timeout_ms}")


def _transaction(connection: sqlite3.Connection, body: Callable[[], T], busy_timeout_ms: int,
                 signal: CancelSignal | None) -> T:
    _begin(connection, busy_timeout_ms, signal)
    try:
        result = body()
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    return result


def _reindex(connection: sqlite3.Connection) -> None:
    """Bring every FTS text up to the current term definition (inside the caller's schema transaction).

    Version 1 indexed a run of Han/Hiragana characters as one term, version 2
    spaced Han/Hiragana apart, version 3 spaces every character of
    ``ditto.text.CJK_CLASS`` (Katakana and Hangul too). Only records whose
    indexed text changes get a new FTS text, length and BM25 totals.
    """
    delta = 0
    rows = connection.execute("SELECT r.seq, r.content, r.length, f.body FROM memory_records AS r "
                              "JOIN memory_fts AS f ON f.rowid = r.seq").fetchall()
    for seq, content, length, body in rows:
        text = index_text(json.loads(content))
        if text != body:
            tokens = token_count(text)
            connection.execute("UPDATE memory_fts SET body = ? WHERE rowid = ?", (text, seq))
            connection.execute("UPDATE memory_records SET length = ? WHERE seq = ?", (tokens, seq))
            delta += tokens - length
    _count(connection, 0, delta)


def _count(connection: sqlite3.Connection, records: int, tokens: int) -> None:
    connection.execute("UPDATE memory_stats SET records = records + ?, tokens = tokens + ? WHERE id = 1",
                       (records, tokens))


def _write(connection: sqlite3.Connection, prepared: list[_Prepared], busy_timeout_ms: int,
           signal: CancelSignal | None) -> None:
    def body() -> None:
        now = _now()
        records = tokens = 0
        for record_id, key, content, metadata, text, length in prepared:
            existing: tuple[int, int] | None = None
            # One lookup finds the record with this id and the one holding this key under another id:
            # a key names one record, so writing it under another id replaces that record.
            for seq, held_by, old_length in connection.execute(
                    "SELECT seq, id, length FROM memory_records WHERE id = ? OR key = ?", (record_id, key)).fetchall():
                if held_by == record_id:
                    existing = (seq, old_length)
                else:
                    connection.execute("DELETE FROM memory_fts WHERE rowid = ?", (seq,))
                    connection.execute("DELETE FROM memory_records WHERE seq = ?", (seq,))
                    records, tokens = records - 1, tokens - old_length
            if existing is not None:
                connection.execute("UPDATE memory_records SET key = ?, content = ?, metadata = ?, length = ?, "
                                   "updated_at = ? WHERE seq = ?",
                                   (key, content, metadata, length, now, existing[0]))
                connection.execute("UPDATE memory_fts SET body = ? WHERE rowid = ?", (text, existing[0]))
                tokens += length - existing[1]
            else:
                cursor = connection.execute(
                    "INSERT INTO memory_records (id, key, content, metadata, length, created_at, updated_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)", (record_id, key, content, metadata, length, now, now))
                connection.execute("INSERT INTO memory_fts (rowid, body) VALUES (?, ?)", (cursor.lastrowid, text))
                records, tokens = records + 1, tokens + length
        _count(connection, records, tokens)  # once per transaction: the BM25 totals row is a hot spot

    _transaction(connection, body, busy_timeout_ms, signal)


def _selector_sql(field: str) -> str:
    column = "id" if field == "id" else "key"
    return f"{column} IN (SELECT value FROM json_each(?))"


def _select(connection: sqlite3.Connection, field: str, values: tuple[str, ...]) -> list[_Row]:
    sql = f"SELECT id, key, content, metadata FROM memory_records WHERE {_selector_sql(field)}"
    return connection.execute(sql, (json.dumps(values, ensure_ascii=False),)).fetchall()


def _delete(connection: sqlite3.Connection, field: str, values: tuple[str, ...], busy_timeout_ms: int,
            signal: CancelSignal | None) -> int:
    selector = json.dumps(values, ensure_ascii=False)

    def body() -> int:
        records, tokens = connection.execute(
            f"SELECT count(*), coalesce(sum(length), 0) FROM memory_records WHERE {_selector_sql(field)}",
            (selector,)).fetchone()
        connection.execute("DELETE FROM memory_fts WHERE rowid IN "
                           f"(SELECT seq FROM memory_records WHERE {_selector_sql(field)})", (selector,))
        cursor = connection.execute(f"DELETE FROM memory_records WHERE {_selector_sql(field)}", (selector,))
        _count(connection, -records, -tokens)
        return cursor.rowcount

    return _transaction(connection, body, busy_timeout_ms, signal)


def _list(connection: sqlite3.Connection, condition: str, params: list[Any], limit: int) -> list[_Row]:
    sql = (f"SELECT r.id, r.key, r.content, r.metadata FROM memory_records AS r WHERE {condition} "
           "ORDER BY r.updated_at DESC, r.seq DESC LIMIT ?")
    return connection.execute(sql, [*params, limit]).fetchall()


def _match(connection: sqlite3.Connection, tokens: list[str], condition: str, params: list[Any], pool: int
           ) -> tuple[list[_Candidate], dict[str, int], dict[tuple[str, int], int], tuple[int, int]]:
    """Candidates and what BM25 needs about them, read in one snapshot (a read transaction).

    Term counts come from FTS5 itself (``highlight()`` marks each instance a
    token matched, stemming included), so scoring agrees with matching.
    """
    sql = ("SELECT r.seq, r.id, r.key, r.content, r.metadata, r.length FROM memory_fts "
           "JOIN memory_records AS r ON r.seq = memory_fts.rowid "
           f"WHERE memory_fts MATCH ? AND {condition} ORDER BY bm25(memory_fts), r.seq LIMIT ?")
    # ``+rowid`` keeps the candidate set out of FTS5's index choice: handed to FTS5, ``rowid IN (…)``
    # becomes one MATCH lookup per candidate (~10× slower than one pass over the term's doclist).
    marked = ("SELECT rowid, length(body), length(highlight(memory_fts, 0, ?, ?)) FROM memory_fts "
              "WHERE memory_fts MATCH ? AND +rowid IN (SELECT value FROM json_each(?))")
    connection.execute("BEGIN")
    try:
        candidates: list[_Candidate] = connection.execute(sql, [match_expression(tokens), *params, pool]).fetchall()
        frequency: dict[str, int] = {}
        counts: dict[tuple[str, int], int] = {}
        stats: tuple[int, int] = (0, 0)
        if candidates:
            rowids = json.dumps([row[0] for row in candidates])
            width = len(_OPEN) + len(_CLOSE)
            for token in tokens:
                expression = match_expression([token])
                frequency[token] = connection.execute("SELECT count(*) FROM memory_fts WHERE memory_fts MATCH ?",
                                                      (expression,)).fetchone()[0]
                for rowid, plain, highlighted in connection.execute(marked, (_OPEN, _CLOSE, expression, rowids)):
                    counts[(token, rowid)] = (highlighted - plain) // width
            row = connection.execute("SELECT records, tokens FROM memory_stats WHERE id = 1").fetchone()
            if row is None:
                raise backend_error()
            stats = (int(row[0]), int(row[1]))
    finally:
        if connection.in_transaction:
            connection.execute("COMMIT")
    return candidates, frequency, counts, stats


def create_sqlite_memory_store(path: str | os.PathLike[str], *, busy_timeout_ms: int = 5000,
                               read_only: bool = False, max_connections: int = 4) -> SqliteMemoryStore:
    """The default store over ``path`` (created on first use unless ``read_only``).

    ``busy_timeout_ms`` is how long a writer waits for another process's lock;
    ``read_only`` opens the file with ``mode=ro`` (writes fail with
    ``MEMORY_BACKEND_ERROR``); ``max_connections`` bounds this process's pool::

        async with create_sqlite_memory_store("memory.sqlite") as store:
            memory = create_memory(store=store)
            await memory.write({"memories": [{"key": "backup-retention", "content": "Kept 35 days."}]})
    """
    return SqliteMemoryStore(path, busy_timeout_ms=busy_timeout_ms, read_only=read_only,
                             max_connections=max_connections)
