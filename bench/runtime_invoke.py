"""In-process `runtime.invoke` overhead against a direct `await handler(input)`.

Run: .venv/bin/python bench/runtime_invoke.py [--calls 200000]

Prints median/p99 per-call latency of both paths over batches, and the
overhead (invoke − direct). Goal (issue 2): median overhead ≤ 30 µs.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

from rich.console import Console
from rich.table import Table

from ditto import AbortController, WorkerDefinition, create_ditto


async def noop(input: Any) -> Any:
    return input


async def measure(label: str, call: Any, calls: int, batch: int) -> tuple[str, float, float]:
    for _ in range(1000):  # warm-up
        await call()
    per_call: list[float] = []
    for _ in range(calls // batch):
        started = time.perf_counter_ns()
        for _ in range(batch):
            await call()
        per_call.append((time.perf_counter_ns() - started) / batch / 1000)
    per_call.sort()
    return label, statistics.median(per_call), per_call[int(len(per_call) * 0.99) - 1]


async def main(calls: int, batch: int) -> None:
    runtime = create_ditto(workers=[WorkerDefinition("BENCH", {"BENCH.NOOP": noop})])
    limited = create_ditto(workers=[WorkerDefinition("BENCH", {"BENCH.NOOP": noop}, concurrency=64)])
    handler = runtime.workers() and runtime._replicas[0].handlers["BENCH.NOOP"]  # the normalised handler
    signal = AbortController().signal

    async def direct() -> Any:
        return await noop({"x": 1})

    async def via_handler() -> Any:
        return await handler({"x": 1}, None)

    async def invoke() -> Any:
        return await runtime.invoke("BENCH.NOOP", {"x": 1})

    async def invoke_limited() -> Any:
        return await limited.invoke("BENCH.NOOP", {"x": 1})

    async def invoke_signal() -> Any:
        return await runtime.invoke("BENCH.NOOP", {"x": 1}, signal=signal)

    rows = [await measure(*args, calls, batch) for args in [
        ("direct await handler(input)", direct), ("await normalised handler", via_handler),
        ("runtime.invoke", invoke), ("runtime.invoke (concurrency=64)", invoke_limited),
        ("runtime.invoke (signal=)", invoke_signal)]]
    base = rows[0][1]
    table = Table(title=f"In-process invoke overhead ({calls:,} calls, batches of {batch})")
    for column in ("path", "median µs/call", "p99 µs/call", "overhead µs (median)"):
        table.add_column(column, justify="right" if column != "path" else "left")
    for label, median, p99 in rows:
        table.add_row(label, f"{median:.2f}", f"{p99:.2f}", f"{median - base:.2f}")
    Console(width=140).print(table)
    await runtime.close()
    await limited.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200_000)
    parser.add_argument("--batch", type=int, default=1000)
    options = parser.parse_args()
    asyncio.run(main(options.calls, options.batch))
