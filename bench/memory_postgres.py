"""MEMORY on PostgreSQL against MEMORY on SQLite: the same SDK calls over 10,000 records, in one run (issue 18).

Run: PYTHONPATH=src:. .venv/bin/python bench/memory_postgres.py [--records 10000] [--singles 500] [--batch 500]
     [--gets 1000] [--searches 200] [--writers 4] [--dsn postgresql://…]

Both stores get the records and queries of ``bench/memory_sqlite.py`` (``knowledge:t<0–9>:<n>`` keys,
8–40 words from a 30-word vocabulary) through ``create_memory``: batched writes (``--batch`` per call),
single writes (one record per call, one after another, then ``--writers`` callers at once), gets by id
and 2–3 word searches (limit 10) with and without a keyPrefix filter that selects a tenth of the records.
SQLite is a fresh file (WAL, ``synchronous=NORMAL``: no fsync per commit); PostgreSQL is Debian's server
on loopback started for the run with ``fsync=off`` (no fsync either), unless ``--dsn`` names one.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

from memory_sqlite import make_queries, make_records

from ditto.worker.memory import Memory, create_memory, create_postgres_memory_store, create_sqlite_memory_store


async def timed(call: Callable[[], Awaitable[Any]]) -> float:
    started = time.perf_counter()
    await call()
    return time.perf_counter() - started


async def run(args: argparse.Namespace, dsn: str) -> None:
    records = make_records(args.records)
    singles = make_records(args.singles, seed=6)
    for index, record in enumerate(singles):
        record["id"], record["key"] = f"single-{index}", f"knowledge:single:{index}"
    queries = make_queries(args.searches)
    rng = random.Random(3)
    get_ids = [f"rec-{rng.randrange(args.records)}" for _ in range(args.gets)]

    async def batches(memory: Memory) -> None:
        for start in range(0, len(records), args.batch):
            await memory.write({"memories": records[start:start + args.batch]})

    async def single_writes(memory: Memory) -> None:
        for record in singles:
            await memory.write({"memories": [{**record, "id": "s" + record["id"], "key": "s" + record["key"]}]})

    async def concurrent_writes(memory: Memory) -> None:
        async def writer(part: int) -> None:
            for record in singles[part::args.writers]:
                await memory.write({"memories": [{**record, "id": "c" + record["id"], "key": "c" + record["key"]}]})

        await asyncio.gather(*(writer(part) for part in range(args.writers)))

    async def gets(memory: Memory) -> None:
        for record_id in get_ids:
            await memory.get({"ids": [record_id]})

    async def searches(memory: Memory, prefix: str | None) -> None:
        for query in queries:
            request: dict[str, Any] = {"query": query, "limit": 10}
            if prefix is not None:
                request["filter"] = {"keyPrefix": prefix}
            await memory.search(request)

    plan: list[tuple[str, int, str, Callable[[Memory], Awaitable[None]]]] = [
        (f"write batched ({args.batch}/call)", len(records), "records/s", batches),
        ("write single (1/call, one caller)", len(singles), "records/s", single_writes),
        (f"write single (1/call, {args.writers} callers at once)", len(singles), "records/s", concurrent_writes),
        ("get by id", len(get_ids), "µs/op", gets),
        ("search, no filter", len(queries), "µs/op", lambda memory: searches(memory, None)),
        ("search, keyPrefix filter (1/10 of records)", len(queries), "µs/op",
         lambda memory: searches(memory, "knowledge:t3:")),
    ]
    with tempfile.TemporaryDirectory() as directory:
        lite = create_sqlite_memory_store(Path(directory) / "memory.sqlite")
        pg = create_postgres_memory_store(dsn, table="bench_memory", max_connections=args.writers)
        for store in (lite, pg):
            await store.get(ids=["warm-up"])  # connect and create the schema outside the timings
        sides = [create_memory(store=lite), create_memory(store=pg)]
        print("| operation | ops | unit | SQLite | PostgreSQL | PostgreSQL / SQLite |\n"
              "| --- | ---: | --- | ---: | ---: | ---: |")
        for name, count, unit, operation in plan:
            seconds = [await timed(partial(operation, memory)) for memory in sides]
            lite_value, pg_value = (count / s if unit == "records/s" else s / count * 1e6 for s in seconds)
            ratio = pg_value / lite_value
            print(f"| {name} | {count:,} | {unit} | {lite_value:,.0f} | {pg_value:,.0f} | {ratio:.2f}× |")
        await lite.close()
        await pg.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--singles", type=int, default=500)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--gets", type=int, default=1000)
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--dsn")
    args = parser.parse_args()
    if args.dsn:
        asyncio.run(run(args, args.dsn))
        return
    from tests.support.postgres_server import running_postgres

    with running_postgres() as server:
        asyncio.run(run(args, server.dsn))


if __name__ == "__main__":
    main()
