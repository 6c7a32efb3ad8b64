"""Workers served by benchmark processes (`ditto serve --worker bench._workers:make`)."""

from __future__ import annotations

from typing import Any

from ditto import WorkerDefinition


async def noop(input: Any) -> Any:
    return input


def make() -> WorkerDefinition:
    return WorkerDefinition("BENCH", {"BENCH.NOOP": noop})
