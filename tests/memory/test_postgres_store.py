"""MEMORY on a real PostgreSQL server (issue 18): the store contract, the same ranking as the SQLite store,
several OS processes writing at once, hidden failures, cancellation and the schema version."""

from __future__ import annotations

import asyncio
import itertools
import json
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ditto.signal import AbortController
from ditto.testing import MemoryStoreContract
from ditto.worker.memory import (
    DittoMemoryError,
    MemoryCallOptions,
    MemorySearchInput,
    MemoryStore,
    MemoryWriteItem,
    PostgresMemoryStore,
    create_postgres_memory_store,
    create_sqlite_memory_store,
)
from tests.support.postgres_server import PostgresServer

from .test_processes import FIXED_MESSAGE, child

_tables = itertools.count()


def new_table() -> str:
    return f"memory_{next(_tables)}"


class TestPostgresMemoryStoreContract(MemoryStoreContract):
    """Issue 18 (MEM-1/MEM-2): the PostgreSQL store keeps the MEMORY store contract the SQLite store keeps."""

    @pytest.fixture(autouse=True)
    def _database(self, postgres_server: PostgresServer) -> None:
        self.dsn = postgres_server.dsn
        self.table = new_table()

    @asynccontextmanager
    async def store(self) -> AsyncIterator[MemoryStore]:
        async with create_postgres_memory_store(self.dsn, table=self.table) as store:
            yield store

    async def break_writes_of(self, store: MemoryStore, memory_id: str, secret: str) -> None:
        assert isinstance(store, PostgresMemoryStore)
        await store.get(ids=["x"])  # the tables exist from the first call on
        async with await psycopg.AsyncConnection.connect(self.dsn, autocommit=True) as raw:
            await raw.execute(f"CREATE FUNCTION {store.table}_refuse() RETURNS trigger LANGUAGE plpgsql AS $$ "
                              f"BEGIN RAISE EXCEPTION 'refused by {secret}'; END $$")
            await raw.execute(f"CREATE TRIGGER refuse BEFORE INSERT ON {store.table} FOR EACH ROW "
                              f"WHEN (NEW.id = '{memory_id}') EXECUTE FUNCTION {store.table}_refuse()")


_VOCABULARY = ["backup", "retention", "policy", "database", "replica", "tenant", "quota", "window", "audit",
               "备", "份", "保", "留", "天", "数", "据", "バ", "ッ", "ク"]
_records = st.lists(st.tuples(st.sampled_from(["a", "b", "c", None]), st.sampled_from(["t:1", "t:2", "u:1", None]),
                              st.lists(st.sampled_from(_VOCABULARY), min_size=1, max_size=12)),
                    min_size=1, max_size=25)


@settings(max_examples=25)
@given(records=_records, query=st.lists(st.sampled_from(_VOCABULARY), min_size=1, max_size=4),
       prefix=st.sampled_from([None, "t:", "u:"]))
def test_ranking_equals_the_sqlite_store(postgres_server: PostgresServer, records: list[tuple[Any, Any, list[str]]],
                                         query: list[str], prefix: str | None) -> None:
    """Issue 18: for any records (ids and keys colliding) and any query, PostgreSQL answers the same hits in the
    same order with the same BM25 scores as the SQLite store (English and CJK terms, keyPrefix filter)."""

    async def body() -> None:
        with tempfile.TemporaryDirectory() as folder:
            async with create_sqlite_memory_store(Path(folder) / "m.sqlite") as lite, \
                    create_postgres_memory_store(postgres_server.dsn, table=new_table()) as pg:
                for record_id, key, words in records:  # one write each: keys and ids move as they would
                    item = [MemoryWriteItem(id=record_id, key=key, content=" ".join(words))]
                    await lite.write(item)
                    await pg.write(item)
                request = MemorySearchInput(query=" ".join(query), limit=50,
                                            filter={"keyPrefix": prefix} if prefix else None)
                expected = [(hit.memory.content, hit.score) for hit in await lite.search(request)]
                got = [(hit.memory.content, hit.score) for hit in await pg.search(request)]
                assert [content for content, _ in got] == [content for content, _ in expected]
                assert [score for _, score in got] == pytest.approx([score for _, score in expected])

    asyncio.run(body())


_ops = st.lists(st.one_of(
    st.tuples(st.just("write"), st.lists(st.tuples(st.sampled_from(["a", "b", "c", "d", None]),
                                                   st.sampled_from(["k1", "k2", "k3", None]),
                                                   st.lists(st.sampled_from(_VOCABULARY), max_size=5)),
                                         min_size=1, max_size=4)),
    st.tuples(st.just("delete"), st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=3)),
), min_size=1, max_size=8)


@settings(max_examples=25)
@given(ops=_ops)
def test_same_operations_leave_the_same_records_and_exact_totals(postgres_server: PostgresServer,
                                                                  ops: list[tuple[str, Any]]) -> None:
    """Issue 18: any mix of batched writes (ids and keys colliding inside and across calls) and deletes leaves
    PostgreSQL with the same records under the same keys as SQLite, and its BM25 totals equal its rows."""

    async def body() -> None:
        table = new_table()
        with tempfile.TemporaryDirectory() as folder:
            async with create_sqlite_memory_store(Path(folder) / "m.sqlite") as lite, \
                    create_postgres_memory_store(postgres_server.dsn, table=table) as pg:
                for op, arg in ops:
                    if op == "delete":
                        assert await lite.delete(ids=arg) == await pg.delete(ids=arg)
                        continue
                    batch, seen_ids, seen_keys = [], set(), set()
                    for record_id, key, words in arg:
                        if (record_id is not None and record_id in seen_ids) or (key is not None and key in seen_keys):
                            continue  # a call may not repeat an id or a key
                        chosen = record_id or f"gen{len(batch)}"  # an id of its own for each unnamed record
                        seen_ids.add(chosen)
                        seen_keys.add(key)
                        batch.append(MemoryWriteItem(id=chosen, key=key, content=" ".join(words)))
                    await lite.write(batch)
                    await pg.write(batch)
                listing = MemorySearchInput(query=None, limit=100)
                expected = {(hit.memory.id, hit.memory.key, hit.memory.content) for hit in await lite.search(listing)}
                got = {(hit.memory.id, hit.memory.key, hit.memory.content) for hit in await pg.search(listing)}
                assert got == expected
        async with await psycopg.AsyncConnection.connect(postgres_server.dsn) as raw:
            rows = await (await raw.execute(f"SELECT count(*), coalesce(sum(length), 0) FROM {table}")).fetchone()
            stats = await (await raw.execute(
                f"SELECT coalesce(sum(records), 0), coalesce(sum(tokens), 0) FROM {table}_stats")).fetchone()
        assert rows == stats

    asyncio.run(body())


@pytest.mark.slow
async def test_three_processes_writing_at_once_lose_nothing(postgres_server: PostgresServer) -> None:
    """Issue 18: three OS processes create the tables together and write 150 records each while racing for five
    shared keys: every record is there, each shared key names one record, the BM25 totals equal the rows."""
    table = new_table()
    flag = Path(tempfile.mkdtemp()) / "go"
    spec = f"postgres:{table}:{postgres_server.dsn}"
    writers = [child("write", spec, name, "150", str(flag)) for name in ("left", "middle", "right")]
    for process in writers:
        assert process.stdout is not None
        assert json.loads(process.stdout.readline()) == {"ready": True}
    flag.touch()
    outputs = [await asyncio.to_thread(process.communicate, timeout=240) for process in writers]
    for process, (out, err) in zip(writers, outputs, strict=True):
        assert process.returncode == 0, err
        assert json.loads(out.strip().splitlines()[-1]) == {"written": 150}
    async with create_postgres_memory_store(postgres_server.dsn, table=table) as store:
        for name in ("left", "middle", "right"):
            keys = [f"{name}:{index}" for index in range(150)]
            assert [item.key for item in await store.get(keys=keys)] == keys
        shared = await store.get(keys=[f"shared:{n}" for n in range(5)])
        assert len(shared) == 5
        assert len(await store.search(MemorySearchInput(query="record", limit=10_000))) == 450
    async with await psycopg.AsyncConnection.connect(postgres_server.dsn) as raw:
        rows = await (await raw.execute(f"SELECT count(*), sum(length), count(DISTINCT key) FROM {table}")).fetchone()
        stats = await (await raw.execute(f"SELECT sum(records), sum(tokens) FROM {table}_stats")).fetchone()
        owners = [row[0] for row in await (await raw.execute(
            f"SELECT split_part(key, ':', 1) FROM {table} WHERE key NOT LIKE 'shared:%' ORDER BY seq")).fetchall()]
    assert rows is not None and stats is not None
    assert rows[0] == 455 and rows[2] == 455 and (stats[0], stats[1]) == (rows[0], rows[1])
    assert sum(1 for a, b in itertools.pairwise(owners) if a != b) >= 2  # the writers really interleaved


async def test_backend_failures_are_hidden_and_nothing_leaks(postgres_server: PostgresServer) -> None:
    """Issue 18: a server that is not there, a closed store and a dropped table are MEMORY_BACKEND_ERROR with the
    fixed message; neither the DSN, its password nor SQL reach the caller."""
    dead = create_postgres_memory_store("postgresql://ditto:hunter2@127.0.0.1:1/nowhere", connect_timeout_s=1)
    with pytest.raises(DittoMemoryError) as raised:
        await dead.get(ids=["a"])
    await dead.close()
    assert "hunter2" not in repr(dead)
    table = new_table()
    store = create_postgres_memory_store(postgres_server.dsn, table=table)
    await store.write([MemoryWriteItem(id="a", content="alpha")])
    async with await psycopg.AsyncConnection.connect(postgres_server.dsn, autocommit=True) as raw:
        await raw.execute(f"DROP TABLE {table}")
    with pytest.raises(DittoMemoryError) as dropped:
        await store.search(MemorySearchInput(query="alpha"))
    await store.close()
    with pytest.raises(DittoMemoryError) as closed:
        await store.get(ids=["a"])
    for error in (raised.value, dropped.value):
        text = f"{error} {error.message!r} {error!r}"
        assert error.code == "MEMORY_BACKEND_ERROR" and error.message == FIXED_MESSAGE
        for leak in ("hunter2", "127.0.0.1", table, "SELECT", "relation", str(postgres_server.port)):
            assert leak not in text
    assert closed.value.code == "MEMORY_BACKEND_ERROR"


async def test_signal_cancels_a_running_statement(postgres_server: PostgresServer) -> None:
    """Issue 18: a signal fired while a write waits on the server cancels the statement: MEMORY_CANCELLED, the
    write left nothing behind and the store keeps working."""
    table = new_table()
    async with create_postgres_memory_store(postgres_server.dsn, table=table) as store:
        await store.get(ids=["x"])
        async with await psycopg.AsyncConnection.connect(postgres_server.dsn, autocommit=True) as raw:
            await raw.execute(f"CREATE FUNCTION {table}_slow() RETURNS trigger LANGUAGE plpgsql AS $$ "
                              "BEGIN PERFORM pg_sleep(30); RETURN NEW; END $$")
            await raw.execute(f"CREATE TRIGGER slow BEFORE INSERT ON {table} FOR EACH ROW WHEN (NEW.id = 'slow') "
                              f"EXECUTE FUNCTION {table}_slow()")
        controller = AbortController()
        asyncio.get_running_loop().call_later(0.3, controller.abort)
        started = asyncio.get_running_loop().time()
        with pytest.raises(DittoMemoryError) as raised:
            await store.write([MemoryWriteItem(id="first", content="x"), MemoryWriteItem(id="slow", content="y")],
                              MemoryCallOptions(signal=controller.signal))
        assert raised.value.code == "MEMORY_CANCELLED"
        assert asyncio.get_running_loop().time() - started < 10
        assert await store.get(ids=["first", "slow"]) == ()
        await store.write([MemoryWriteItem(id="after", content="still works")])
        assert len(await store.get(ids=["after"])) == 1


async def test_newer_schema_version_is_refused(postgres_server: PostgresServer) -> None:
    """Issue 18: tables written by a newer Ditto are not touched: MEMORY_BACKEND_ERROR, logged."""
    table = new_table()
    async with create_postgres_memory_store(postgres_server.dsn, table=table) as store:
        await store.get(ids=["x"])
    async with await psycopg.AsyncConnection.connect(postgres_server.dsn, autocommit=True) as raw:
        await raw.execute(f"UPDATE {table}_meta SET value = 99 WHERE name = 'schema_version'")
    async with create_postgres_memory_store(postgres_server.dsn, table=table) as store:
        with pytest.raises(DittoMemoryError) as raised:
            await store.get(ids=["x"])
    assert raised.value.code == "MEMORY_BACKEND_ERROR"


@pytest.mark.parametrize("arguments", [
    {"dsn": ""}, {"dsn": "host=x\x00"}, {"table": "Memory"}, {"table": "a;drop"}, {"table": "x" * 49},
    {"max_connections": 0}, {"max_connections": True}, {"connect_timeout_s": 0}, {"connect_timeout_s": float("nan")},
])
def test_construction_mistakes_are_refused(arguments: dict[str, Any]) -> None:
    """Issue 18: a bad DSN, table name, pool size or timeout is MEMORY_INVALID_INPUT at construction."""
    options: dict[str, Any] = {"dsn": "host=localhost", **arguments}
    with pytest.raises(DittoMemoryError) as raised:
        create_postgres_memory_store(options.pop("dsn"), **options)
    assert raised.value.code == "MEMORY_INVALID_INPUT"


async def test_huge_and_odd_records_are_stored_and_found(postgres_server: PostgresServer) -> None:
    """Issue 18: terms PostgreSQL cannot index (a 3,000-letter word) do not stop a write; NUL characters in
    content and metadata round-trip (jsonb refuses them) and metadata filters still match them."""
    async with create_postgres_memory_store(postgres_server.dsn, table=new_table()) as store:
        await store.write([MemoryWriteItem(id="long", content="x" * 3000 + " findable"),
                           MemoryWriteItem(id="nul", content="a\x00b word", metadata={"m": "v\x00w", "\ufffe": 1})])
        assert [hit.memory.id for hit in await store.search(MemorySearchInput(query="findable"))] == ["long"]
        (item,) = await store.get(ids=["nul"])
        assert item.content == "a\x00b word" and dict(item.metadata or {}) == {"m": "v\x00w", "\ufffe": 1}
        found = await store.search(MemorySearchInput(query="word", filter={"metadata": {"m": "v\x00w"}}))
        assert [hit.memory.id for hit in found] == ["nul"]
        assert await store.search(MemorySearchInput(query="word", filter={"metadata": {"m": "v\ufffe0w"}})) == ()
