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
