"""Worker factories used by runtime tests, also loadable by ``ditto serve --worker``."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from ditto.runtime import ExecutionContext, WorkerDefinition
from ditto.signal import CancelledBySignal


async def echo(input: Any) -> Any:
    return input


async def pid(_input: Any) -> dict[str, int]:
    return {"pid": os.getpid()}


async def sleep(input: Any, ctx: ExecutionContext) -> dict[str, Any]:
    """Sleep ``input["ms"]`` milliseconds, cooperating with the signal."""
    await asyncio.sleep(float(input.get("ms", 0)) / 1000)
    if ctx.signal is not None:
        ctx.signal.raise_if_aborted()
    return {"slept": input.get("ms", 0), "pid": os.getpid()}


async def bad_output(_input: Any) -> Any:
    return {"value": object()}


async def fail(_input: Any) -> Any:
    raise RuntimeError("secret-db-password=hunter2 at 10.0.0.7")


async def cancel_aware(input: Any, ctx: ExecutionContext) -> Any:
    while True:
        if ctx.signal is not None and ctx.signal.aborted:
            raise CancelledBySignal(ctx.signal.reason or "CANCELLED", "stopped")
        await asyncio.sleep(0.005)


async def record(input: Any) -> dict[str, Any]:
    """Append ``input["id"]`` to the file named by ``DITTO_TEST_CALL_LOG`` (one unbuffered write, so it
    survives a SIGKILL), then sleep ``input["ms"]``: the server-side proof of which calls ran here."""
    fd = os.open(os.environ["DITTO_TEST_CALL_LOG"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, f"{input['id']}\n".encode())
    finally:
        os.close(fd)
    await asyncio.sleep(float(input.get("ms", 0)) / 1000)
    return {"id": input["id"], "pid": os.getpid()}


def make_recording() -> list[WorkerDefinition]:
    return [WorkerDefinition("REC", {"REC.CALL": record})]


def make() -> list[WorkerDefinition]:
    return [WorkerDefinition("TEST", {
        "TEST.ECHO": echo, "TEST.PID": pid, "TEST.SLEEP": sleep, "TEST.BAD_OUTPUT": bad_output,
        "TEST.FAIL": fail,
    }, concurrency=64)]
