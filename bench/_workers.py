"""Workers served by benchmark processes (`ditto serve --worker bench._workers:make`)."""

from __future__ import annotations

import os
from typing import Any

from ditto import WorkerDefinition


async def noop(input: Any) -> Any:
    return input


def make() -> WorkerDefinition:
    return WorkerDefinition("BENCH", {"BENCH.NOOP": noop})


async def record(input: Any) -> Any:
    """Append the call's id to ``DITTO_BENCH_CALL_LOG`` (one unbuffered write, kept through a SIGKILL)."""
    fd = os.open(os.environ["DITTO_BENCH_CALL_LOG"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, f"{input['id']}\n".encode())
    finally:
        os.close(fd)
    return input


def make_recording() -> WorkerDefinition:
    return WorkerDefinition("BENCH", {"BENCH.RECORD": record})
