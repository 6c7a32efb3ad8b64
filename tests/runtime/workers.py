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


def make() -> list[WorkerDefinition]:
    return [WorkerDefinition("TEST", {
        "TEST.ECHO": echo, "TEST.PID": pid, "TEST.SLEEP": sleep, "TEST.BAD_OUTPUT": bad_output,
        "TEST.FAIL": fail,
    }, concurrency=64)]
