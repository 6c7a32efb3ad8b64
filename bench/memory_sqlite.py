"""MEMORY's SQLite store against raw ``sqlite3`` doing the same work, in the same run, as ratios.

Run: .venv/bin/python bench/memory_sqlite.py [--records 10000] [--singles 500] [--batch 500]
     [--gets 1000] [--searches 200]

Both sides use a fresh file in a temporary directory with the same settings
(WAL, ``synchronous=NORMAL``, an FTS5 table with the same tokenizer, a unique
key index). MEMORY is timed through its public SDK (``create_memory``):
validation, JSON, one ``asyncio.to_thread`` hop per call, frozen snapshots,
and for search the BM25 re-scoring. Raw is the bare statements, synchronously
on the calling thread:

* write single — one record per transaction (``BEGIN IMMEDIATE``, INSERT row,
  INSERT FTS row, COMMIT), ``--singles`` times;
* write batched — ``--records`` records in transactions of ``--batch``;
* get — one id per call, ``--gets`` calls (raw: ``SELECT … WHERE id = ?``);
* search — 2–3 word queries, limit 10 (raw: FTS5 ``MATCH`` of the quoted words
  ORed, ``ORDER BY bm25() LIMIT 10`` joined to the rows), with and without a
  key-prefix filter that selects one tenant's tenth of the records.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sqlite3
import tempfile
import time
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from ditto.contracts import js_json_dumps
from ditto.worker.memory import Memory, create_memory, create_sqlite_memory_store

WORDS = ("backup", "retention", "policy", "days", "hours", "tenant", "knowledge", "evidence", "source", "query",
         "archive", "snapshot", "restore", "replica", "region", "audit", "access", "review", "incident", "report",
         "storage", "cluster", "index", "search", "memory", "record", "version", "schedule", "owner", "quota")
TENANTS = 10

RAW_SCHEMA = (
    "PRAGMA journal_mode = WAL",
    "PRAGMA synchronous = NORMAL",
    "CREATE TABLE records (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, key TEXT UNIQUE, content TEXT NOT NULL,"
    " metadata TEXT)",
    "CREATE VIRTUAL TABLE fts USING fts5(body, tokenize = 'porter unicode61 remove_diacritics 2')",
)
RAW_SEARCH = ("SELECT r.id, r.key, r.content, r.metadata FROM fts JOIN records AS r ON r.seq = fts.rowid "
              "WHERE fts MATCH ? {extra} ORDER BY bm25(fts) LIMIT 10")


def make_records(count: int, seed: int = 5) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    records = []
    for index in range(count):
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 40)))
        tenant = index % TENANTS
        records.append({"id": f"rec-{index}", "key": f"knowledge:t{tenant}:{index}",
                        "content": {"kind": "knowledge", "tenant": f"t{tenant}", "text": text},
                        "metadata": {"n": index}})
    return records


def make_queries(count: int, seed: int = 9) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.sample(WORDS, rng.randint(2, 3))) for _ in range(count)]


def raw_row(record: dict[str, Any]) -> tuple[str, str, str, str]:
    return record["id"], record["key"], js_json_dumps(record["content"]), js_json_dumps(record["metadata"])


def raw_insert(connection: sqlite3.Connection, records: list[dict[str, Any]]) -> None:
    connection.execute("BEGIN IMMEDIATE")
    for record in records:
        cursor = connection.execute("INSERT INTO records (id, key, content, metadata) VALUES (?, ?, ?, ?)",
                                    raw_row(record))
        connection.execute("INSERT INTO fts (rowid, body) VALUES (?, ?)", (cursor.lastrowid, record["content"]["text"]))
    connection.execute("COMMIT")


def quoted_or(query: str) -> str:
    return " OR ".join(f'"{word}"' for word in query.split())


async def timed(call: Callable[[], Awaitable[Any]]) -> float:
    started = time.perf_counter()
    await call()
    return time.perf_counter() - started


def open_raw(path: Path) -> sqlite3.Connection:
    connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    for statement in RAW_SCHEMA:
        connection.execute(statement)
    return connection


class Raw:
    """The same operations as bare statements; ``hop=True`` runs each call in ``asyncio.to_thread``
    (the floor any asyncio-native store over ``sqlite3`` pays, SPEC §0)."""

    def __init__(self, connection: sqlite3.Connection, hop: bool) -> None:
        self.connection = connection
        self.hop = hop

    async def call(self, function: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.to_thread(function, *args) if self.hop else function(*args)

    async def write(self, records: list[dict[str, Any]]) -> None:
        await self.call(raw_insert, self.connection, records)

    def _get(self, record_id: str) -> list[Any]:
        return self.connection.execute("SELECT id, key, content, metadata FROM records WHERE id = ?",
                                       (record_id,)).fetchall()

    async def get(self, record_id: str) -> None:
        await self.call(self._get, record_id)

    def _search(self, query: str, prefix: str | None) -> list[Any]:
        if prefix is None:
            return self.connection.execute(RAW_SEARCH.format(extra=""), (quoted_or(query),)).fetchall()
        upper = prefix[:-1] + chr(ord(prefix[-1]) + 1)  # the same index range the store uses for a prefix
        return self.connection.execute(RAW_SEARCH.format(extra="AND r.key >= ? AND r.key < ?"),
                                       (quoted_or(query), prefix, upper)).fetchall()

    async def search(self, query: str, prefix: str | None) -> None:
        await self.call(self._search, query, prefix)


class Ditto:
    """The MEMORY SDK with the same call shapes as :class:`Raw`."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory

    async def write(self, records: list[dict[str, Any]]) -> None:
        await self.memory.write({"memories": records})

    async def get(self, record_id: str) -> None:
        await self.memory.get({"ids": [record_id]})

    async def search(self, query: str, prefix: str | None) -> None:
        request: dict[str, Any] = {"query": query, "limit": 10}
        if prefix is not None:
            request["filter"] = {"keyPrefix": prefix}
        await self.memory.search(request)


Side = Ditto | Raw


async def run(args: argparse.Namespace) -> list[tuple[str, int, list[float]]]:
    records = make_records(args.records)
    singles = make_records(args.singles, seed=6)
    for index, record in enumerate(singles):
        record["id"], record["key"] = f"single-{index}", f"knowledge:single:{index}"
    queries = make_queries(args.searches)
    rng = random.Random(3)
    get_ids = [f"rec-{rng.randrange(args.records)}" for _ in range(args.gets)]
    prefix = "knowledge:t3:"

    async def batches(side: Side) -> None:
        for start in range(0, len(records), args.batch):
            await side.write(records[start:start + args.batch])

    async def single_writes(side: Side) -> None:
        for record in singles:
            await side.write([record])

    async def gets(side: Side) -> None:
        for record_id in get_ids:
            await side.get(record_id)

    async def searches(side: Side, filtered: bool) -> None:
        for query in queries:
            await side.search(query, prefix if filtered else None)

    plan: list[tuple[str, int, Callable[[Side], Awaitable[None]]]] = [
        (f"write batched ({args.batch}/transaction)", len(records), batches),
        ("write single (1/transaction)", len(singles), single_writes),
        ("get by id", len(get_ids), gets),
        ("search, no filter", len(queries), lambda side: searches(side, False)),
        ("search, keyPrefix filter (1/10 of records)", len(queries), lambda side: searches(side, True)),
    ]
    with tempfile.TemporaryDirectory() as directory:
        store = create_sqlite_memory_store(Path(directory) / "memory.sqlite")
        await store.get(ids=["warm-up"])  # open the pool and create the schema outside the timings
        raw, hopped = open_raw(Path(directory) / "raw.sqlite"), open_raw(Path(directory) / "raw-thread.sqlite")
        sides: list[Side] = [Ditto(create_memory(store=store)), Raw(raw, hop=False), Raw(hopped, hop=True)]
        rows = []
        for name, count, operation in plan:
            rows.append((name, count, [await timed(partial(operation, side)) for side in sides]))
        raw.close()
        hopped.close()
        await store.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--singles", type=int, default=500)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--gets", type=int, default=1_000)
    parser.add_argument("--searches", type=int, default=200)
    rows = asyncio.run(run(parser.parse_args()))
    table = Table(title="MEMORY SQLite store vs raw sqlite3 (same file settings, same run)")
    columns = ("operation", "ops", "MEMORY µs/op", "raw µs/op", "raw+to_thread µs/op", "MEMORY / raw",
               "MEMORY / raw+to_thread")
    for column in columns:
        table.add_column(column, justify="left" if column == "operation" else "right")
    for name, count, (ditto, raw, hopped) in rows:
        table.add_row(name, f"{count:,}", *(f"{seconds / count * 1e6:,.1f}" for seconds in (ditto, raw, hopped)),
                      f"{ditto / raw:.2f}×", f"{ditto / hopped:.2f}×")
    Console(width=160).print(table)


if __name__ == "__main__":
    main()
