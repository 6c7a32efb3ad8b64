"""Workers for the ``ditto serve`` operations tests (drain, metrics), loadable by ``--worker``."""

from __future__ import annotations

import asyncio
from typing import Any

from ditto.runtime import WorkerDefinition


async def hold(input: Any) -> dict[str, Any]:
    """Sleep ``input["ms"]`` milliseconds and answer the call's ``n``: a call that is in flight for a while."""
    await asyncio.sleep(float(input["ms"]) / 1000)
    return {"n": input["n"]}


async def boom(_input: Any) -> Any:
    raise RuntimeError("the node failed")


def make() -> list[WorkerDefinition]:
    return [WorkerDefinition("OPS", {"OPS.HOLD": hold, "OPS.BOOM": boom}, concurrency=512)]


def memory() -> list[WorkerDefinition]:
    """A MEMORY worker over SQLite at ``$DITTO_TEST_MEMORY_PATH``."""
    import os

    from ditto.worker.memory import create_memory_worker, create_sqlite_memory_store

    return [create_memory_worker(store=create_sqlite_memory_store(os.environ["DITTO_TEST_MEMORY_PATH"]))]
