"""Several OS processes, killed writers, read-only and corrupt files: the store's failure modes (MEM-2)."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ditto.runtime import create_ditto
from ditto.worker.memory import (
    DittoMemoryError,
    MemorySearchInput,
    MemoryWriteItem,
    create_memory,
    create_memory_worker,
    create_sqlite_memory_store,
)

ROOT = Path(__file__).resolve().parents[2]
FIXED_MESSAGE = "the memory backend failed"


def child(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "tests.memory._child", *args], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def integrity(path: Path) -> tuple[str, int, int]:
    with sqlite3.connect(path) as raw:
        check = raw.execute("PRAGMA integrity_check").fetchone()[0]
        raw.execute("INSERT INTO memory_fts (memory_fts) VALUES ('integrity-check')")  # raises when out of sync
        records = raw.execute("SELECT count(*) FROM memory_records").fetchone()[0]
        indexed = raw.execute("SELECT count(*) FROM memory_fts").fetchone()[0]
    return check, records, indexed


def kill_inside_transaction(db_path: Path) -> int:
    """Start a child write, wait until it holds SQLite's write lock, SIGKILL it; returns its exit status."""
    process = child("slow-write", str(db_path))
    try:
        assert process.stdout is not None
        assert json.loads(process.stdout.readline()) == {"starting": True}
        probe = sqlite3.connect(db_path, isolation_level=None, timeout=0)
        deadline = time.monotonic() + 30
        while True:  # wait until the child holds the write lock, i.e. is inside its transaction
            try:
                probe.execute("BEGIN IMMEDIATE")
                probe.execute("ROLLBACK")
            except sqlite3.OperationalError:
                break
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.02)
        probe.close()
        time.sleep(0.2)
        process.send_signal(signal.SIGKILL)
        return process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()


def lock_down(path: Path, directory: Path) -> None:
    assert not Path(f"{path}-wal").exists()  # the last close checkpointed the WAL away
    path.chmod(0o444)
    directory.chmod(0o555)


def damage_pages(path: Path) -> None:
    """Keep the 100-byte header and first page, overwrite every later page with noise."""
    data = bytearray(path.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    data[page:] = random.Random(11).randbytes(len(data) - page)
    path.write_bytes(bytes(data))


def assert_hidden(error: DittoMemoryError, path: Path) -> None:
    text = f"{error} {error.message!r} {error!r}"
    assert error.code == "MEMORY_BACKEND_ERROR" and error.message == FIXED_MESSAGE
    for leak in (str(path), path.name, "SELECT", "INSERT", "sqlite", "database", "malformed", "readonly"):
        assert leak.lower() not in text.lower()


@pytest.mark.slow
async def test_two_processes_writing_concurrently_lose_nothing(db_path: Path) -> None:
    """MEM-2: two OS processes create one new file together and write 500 records each: nothing is lost."""
    flag = db_path.parent / "go"
    writers = [child("write", str(db_path), name, "500", str(flag)) for name in ("left", "right")]
    for process in writers:  # both are imported and ready: start them together
        assert process.stdout is not None
        assert json.loads(process.stdout.readline()) == {"ready": True}
    flag.touch()
    outputs = [await asyncio.to_thread(process.communicate, timeout=240) for process in writers]
    for process, (out, err) in zip(writers, outputs, strict=True):
        assert process.returncode == 0, err
        assert json.loads(out.strip().splitlines()[-1]) == {"written": 500}
    async with create_sqlite_memory_store(db_path) as store:
        for name in ("left", "right"):
            keys = [f"{name}:{index}" for index in range(500)]
            found = await store.get(keys=keys)
            assert [item.key for item in found] == keys
            assert found[123].content == f"record {name} number 123"
        listed = await store.search(MemorySearchInput(query=None, limit=10_000))
        assert len(listed) == 1000
        hits = await store.search(MemorySearchInput(query="right", limit=10_000))
        assert len(hits) == 500 and {hit.memory.key.split(":")[0] for hit in hits if hit.memory.key} == {"right"}
    assert integrity(db_path) == ("ok", 1000, 1000)
    with sqlite3.connect(db_path) as raw:  # the two writers really interleaved their transactions
        owners = [key.split(":")[0] for (key,) in raw.execute("SELECT key FROM memory_records ORDER BY seq")]
    assert sum(1 for a, b in itertools.pairwise(owners) if a != b) >= 2


@pytest.mark.slow
async def test_writer_killed_mid_transaction_leaves_file_consistent(db_path: Path) -> None:
    """MEM-2: SIGKILL of a process inside a write transaction: nothing of it persists, the file stays usable."""
    async with create_sqlite_memory_store(db_path) as store:
        await store.write([MemoryWriteItem(id=f"base{i}", key=f"base:{i}", content=f"baseline {i}") for i in range(20)])
    with sqlite3.connect(db_path) as raw:  # makes the child's transaction spin once its second item is inserted
        raw.execute("CREATE TABLE pad (x)")
        raw.executemany("INSERT INTO pad VALUES (?)", [(i,) for i in range(3000)])
        raw.execute("CREATE TRIGGER spin AFTER INSERT ON memory_records WHEN NEW.key = 'slow' BEGIN "
                    "SELECT count(*) FROM pad a, pad b, pad c; END")
    assert await asyncio.to_thread(kill_inside_transaction, db_path) == -signal.SIGKILL
    with sqlite3.connect(db_path) as raw:
        raw.execute("DROP TRIGGER spin")
    async with create_sqlite_memory_store(db_path) as store:
        assert await store.get(keys=["killed:first", "slow", "killed:last"]) == ()
        assert len(await store.get(keys=[f"base:{i}" for i in range(20)])) == 20
        best = (await store.search(MemorySearchInput(query="baseline 7")))[0]
        assert best.memory.id == "base7"
        assert len(await store.write([MemoryWriteItem(key="after", content="writable again")])) == 1
    assert integrity(db_path) == ("ok", 21, 21)


@pytest.fixture
def locked_dir() -> Iterator[Path]:
    """A directory outside pytest's private tmp tree so an unprivileged child can reach it."""
    directory = Path(tempfile.mkdtemp(prefix="ditto-memory-ro-", dir="/tmp"))
    try:
        yield directory
    finally:
        directory.chmod(0o755)
        shutil.rmtree(directory, ignore_errors=True)


@pytest.mark.slow
async def test_read_only_file_gives_backend_error_without_path(locked_dir: Path) -> None:
    """MEM-2: a non-root process facing a 0444 file in a 0555 directory gets MEMORY_BACKEND_ERROR, path hidden."""
    path = locked_dir / "memory.sqlite"
    async with create_sqlite_memory_store(path) as store:
        await store.write([MemoryWriteItem(key="k", content="alpha")])
    await asyncio.to_thread(lock_down, path, locked_dir)
    process = child("unprivileged", str(path))
    out, err = await asyncio.to_thread(process.communicate, timeout=60)
    assert process.returncode == 0, err
    report = json.loads(out.strip().splitlines()[-1])
    assert report["uid"] != 0
    for outcome in (report["write"], report["search"]):
        # Without write access SQLite cannot even set up WAL's shared memory: both calls fail, hidden.
        assert outcome == {"code": "MEMORY_BACKEND_ERROR", "message": FIXED_MESSAGE}
    await asyncio.to_thread(locked_dir.chmod, 0o755)
    async with create_sqlite_memory_store(path, read_only=True) as reader:
        assert await reader.get(keys=["blocked"]) == ()


async def test_corrupt_file_gives_backend_error_without_path(db_path: Path) -> None:
    """MEM-2: random bytes instead of a database: every call is MEMORY_BACKEND_ERROR with a fixed message."""
    await asyncio.to_thread(db_path.write_bytes, random.Random(7).randbytes(64 * 1024))
    async with create_sqlite_memory_store(db_path) as store:
        memory = create_memory(store=store)
        for call in (memory.write({"memories": [{"content": "x"}]}), memory.get({"ids": ["a"]}),
                     memory.search({"query": "x"}), memory.delete({"keys": ["k"]})):
            with pytest.raises(DittoMemoryError) as raised:
                await call
            assert_hidden(raised.value, db_path)
        runtime = create_ditto(workers=[create_memory_worker(store=store)])
        result = await runtime.invoke("MEMORY.SEARCH", {"query": "x", "limit": 5})
        assert result.status == "error" and result.error is not None
        assert (result.error.code, result.error.message) == ("MEMORY_BACKEND_ERROR", FIXED_MESSAGE)
        await runtime.close()


async def test_damaged_pages_give_backend_error_without_path(db_path: Path) -> None:
    """MEM-2: a valid header over damaged pages (malformed image) is MEMORY_BACKEND_ERROR, text hidden."""
    async with create_sqlite_memory_store(db_path) as store:
        await store.write([MemoryWriteItem(content=f"record number {i} " * 50) for i in range(200)])
    await asyncio.to_thread(damage_pages, db_path)
    async with create_sqlite_memory_store(db_path) as store:
        with pytest.raises(DittoMemoryError) as raised:
            await store.search(MemorySearchInput(query="record"))
        assert_hidden(raised.value, db_path)


async def test_path_that_is_a_directory_gives_backend_error(tmp_path: Path) -> None:
    """MEM-2: an unopenable path is MEMORY_BACKEND_ERROR without the path in the message."""
    target = tmp_path / "a-directory.sqlite"
    os.mkdir(target)
    async with create_sqlite_memory_store(target) as store:
        with pytest.raises(DittoMemoryError) as raised:
            await store.get(ids=["a"])
    assert_hidden(raised.value, target)
