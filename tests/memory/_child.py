"""Child processes for the MEMORY multi-process tests (run as ``python -m tests.memory._child``).

Each mode uses the real store from a separate OS process and prints one JSON
line with what it observed, so the parent test can assert on it.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path

from ditto.worker.memory import (
    DittoMemoryError,
    MemoryStore,
    create_memory,
    create_postgres_memory_store,
    create_sqlite_memory_store,
)

NOBODY = 65534


def _wait_for_start(start_flag: str) -> None:
    """Say we are imported and ready, then wait for the parent to start every writer at once."""
    print(json.dumps({"ready": True}), flush=True)
    deadline = time.monotonic() + 30
    while not Path(start_flag).exists() and time.monotonic() < deadline:
        time.sleep(0.005)


def _open(path: str) -> MemoryStore:
    """A SQLite file, or ``postgres:<table>:<conninfo>`` for the PostgreSQL store."""
    if path.startswith("postgres:"):
        _, table, dsn = path.split(":", 2)
        return create_postgres_memory_store(dsn, table=table)
    return create_sqlite_memory_store(path, busy_timeout_ms=30_000)


async def _write_many(path: str, prefix: str, count: int) -> None:
    """Write ``count`` records, one transaction each; every tenth also races for a key all writers share."""
    store = _open(path)
    memory = create_memory(store=store)
    for index in range(count):
        records = [{"key": f"{prefix}:{index}", "content": f"record {prefix} number {index}"}]
        if path.startswith("postgres:") and index % 10 == 0:
            records.append({"id": f"{prefix}-shared-{index}", "key": f"shared:{index // 10 % 5}",
                            "content": f"shared by {prefix}"})
        await memory.write({"memories": records})
    await store.close()  # type: ignore[attr-defined]
    print(json.dumps({"written": count}), flush=True)


async def _slow_write(path: str) -> None:
    """Start a write whose 'slow' item makes a trigger spin inside the transaction."""
    store = create_sqlite_memory_store(path)
    memory = create_memory(store=store)
    print(json.dumps({"starting": True}), flush=True)
    await memory.write({"memories": [{"key": "killed:first", "content": "never committed"},
                                     {"key": "slow", "content": "spins in a trigger"},
                                     {"key": "killed:last", "content": "never committed"}]})
    print(json.dumps({"finished": True}), flush=True)  # not reached: the parent kills us


async def _outcome(call: object) -> dict[str, str]:
    try:
        await call  # type: ignore[misc]
    except DittoMemoryError as error:
        return {"code": error.code, "message": error.message}
    return {"code": "OK", "message": ""}


async def _unprivileged(path: str) -> None:
    """As a non-root user, write to and read from a read-only file in a read-only directory."""
    await asyncio.to_thread(lambda: None)  # load the executor's modules while /root is still readable
    if os.geteuid() == 0:  # root ignores file modes: become nobody (after importing everything)
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
    store = create_sqlite_memory_store(path)
    memory = create_memory(store=store)
    write = await _outcome(memory.write({"memories": [{"key": "blocked", "content": "x"}]}))
    search = await _outcome(memory.search({"query": "alpha"}))
    await store.close()
    print(json.dumps({"uid": os.geteuid(), "write": write, "search": search}), flush=True)


def main() -> None:
    mode, path, *rest = sys.argv[1:]
    if mode == "write":
        _wait_for_start(rest[2])
        asyncio.run(_write_many(path, rest[0], int(rest[1])))
    elif mode == "slow-write":
        asyncio.run(_slow_write(path))
    elif mode == "unprivileged":
        asyncio.run(_unprivileged(path))
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
