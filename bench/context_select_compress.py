"""SELECT and COMPRESS on 10,000 items of mixed size (issue 3 goal: ≤ 20 ms each).

Run: .venv/bin/python bench/context_select_compress.py [--items 10000] [--runs 30] [--clock cpu]

``--clock cpu`` times with ``time.process_time`` and reports the fastest sample
beside the median: on a shared, loaded box that compares two versions of the
code far more steadily than wall time (run them interleaved, same
``PYTHONHASHSEED``).

The context is built once through LOAD (as an application would); each timed
call is a full SDK call: input parsing, ranking / grouping, token estimation
and the frozen output snapshot. Also timed: calls on a context that was *not*
produced by this package (plain dicts), which pay for validating and freezing
every item each time.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import random
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

from rich.console import Console
from rich.table import Table

from ditto.contracts import Context
from ditto.worker.context import create_context

WORDS = ("api", "cache", "redis", "context", "select", "compress", "token", "budget", "retrieval", "memory",
         "session", "turn", "graph", "worker", "policy", "evidence", "source", "reference", "summary", "tool",
         "observation", "answer", "question", "system", "goal")


def make_sources(count: int, seed: int = 7) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    sources: list[dict[str, Any]] = []
    for index in range(count):
        size = rng.choice((3, 8, 20, 60, 200))  # words: a mix of short and long items
        text = " ".join(rng.choice(WORDS) for _ in range(size))
        metadata: dict[str, Any] = {}
        if rng.random() < 0.3:
            metadata["priority"] = rng.randint(0, 5)
        if rng.random() < 0.3:
            metadata["relevance"] = round(rng.random(), 3)
        if rng.random() < 0.1:
            metadata["callId"] = f"call-{index // 3}"
        if rng.random() < 0.01:
            metadata["protected"] = True
        content: Any = text if rng.random() < 0.8 else {"title": text[:30], "body": text, "n": index}
        sources.append({"id": f"item-{index}", "content": content, **({"metadata": metadata} if metadata else {})})
    return sources


#: The clock (``--clock``): wall time by default, CPU time of this process with ``cpu``.
CLOCK: Callable[[], float] = time.perf_counter


def summary(samples: list[float]) -> tuple[float, float]:
    """(median, p95) of wall-clock samples; (median, min) of CPU-time samples."""
    samples.sort()
    if CLOCK is time.process_time:
        return statistics.median(samples), samples[0]
    return statistics.median(samples), samples[max(0, int(len(samples) * 0.95) - 1)]


async def timed(call: Callable[[], Awaitable[Any]], runs: int) -> tuple[float, float]:
    samples = []
    for _ in range(runs):
        gc.collect()  # each sample starts from a clean heap, as timeit does by disabling GC
        started = CLOCK()
        await call()
        samples.append((CLOCK() - started) * 1000)
    return summary(samples)


async def main(items: int, runs: int) -> None:
    sources = make_sources(items)
    client = create_context(policy={"maxItems": max(items + runs, 256)})
    started = CLOCK()
    context = await client.load({"sources": sources})
    load_ms = (CLOCK() - started) * 1000
    select = {"context": context, "purpose": "infer", "query": "redis cache token budget", "limit": 64,
              "maxTokens": 8000}
    compress = {"context": context, "maxItems": items // 2, "maxTokens": items * 10}
    plain = {"items": sources}

    async def fresh(request: dict[str, Any], call: Callable[[Any], Awaitable[Any]]) -> tuple[float, float]:
        # A new Context per run, as after an UPDATE: per-context rankings/groups are rebuilt,
        # per-item facts (sizes, terms, metadata flags) are reused.
        samples = []
        for run in range(runs):
            updated = await client.update({"context": context, "add": [{"id": f"new-{run}", "content": "x"}]})
            gc.collect()
            started = CLOCK()
            await call({**request, "context": updated})
            samples.append((CLOCK() - started) * 1000)
        return summary(samples)

    rows = [
        ("LOAD (validate + freeze, once)", load_ms, load_ms),
        ("SELECT infer, query, limit 64, maxTokens 8000", *await timed(lambda: client.select(select), runs)),
        (f"COMPRESS maxItems {items // 2}, maxTokens {items * 10}", *await timed(lambda: client.compress(compress),
                                                                                   runs)),
        ("SELECT on a new context after an UPDATE", *await fresh(select, client.select)),
        ("COMPRESS on a new context after an UPDATE", *await fresh(compress, client.compress)),
        ("SELECT on a plain-dict context (validates all)",
         *await timed(lambda: client.select({**select, "context": plain}), max(3, runs // 3))),
        ("COMPRESS on a plain-dict context (validates all)",
         *await timed(lambda: client.compress({**compress, "context": plain}), max(3, runs // 3))),
    ]
    kept = await client.compress(compress)
    selected = await client.select(select)
    assert isinstance(kept, Context) and len(kept.items) <= items // 2
    table = Table(title=f"CONTEXT on {items} mixed-size items ({runs} runs, ms)")
    table.add_column("operation")
    table.add_column("median ms", justify="right")
    table.add_column("min ms" if CLOCK is time.process_time else "p95 ms", justify="right")
    for label, median, p95 in rows:
        table.add_row(label, f"{median:.2f}", f"{p95:.2f}")
    Console().print(table)
    print(f"selected {len(selected.selected_item_ids)} items; compress kept {len(kept.items)} of {items}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    args = parser.parse_args()
    if args.clock == "cpu":
        CLOCK = time.process_time
    asyncio.run(main(args.items, args.runs))
