"""Scoped UPDATE through the Redis store against the raw minimum (issue 3 goal: ≥ 0.7×).

Run: .venv/bin/python bench/context_redis_update.py [--ops 3000] [--items 10] [--url redis://...]

Without ``--url`` it starts a private ``redis-server`` on a free 127.0.0.1
port. Both paths run in the same process against the same server, one
sequential caller each, alternating rounds:

* raw: ``GET`` + ``EVALSHA`` of the store's own CAS script with a pre-serialised
  document (what any correct CAS-on-Redis client must send);
* SDK: ``create_context(redis=...).update({scope, add: [item]})`` - read,
  validate, merge (replace keeps the size constant), serialise, CAS.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
import uuid
from pathlib import Path

from redis.asyncio import Redis
from rich.console import Console
from rich.table import Table

from ditto.worker.context import context_scope_key, create_context
from ditto.worker.context.stores import CAS_SCRIPT, CAS_SCRIPT_SHA

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


async def raw_round(client: Redis, key: str, ops: int, body: str) -> float:
    started = time.perf_counter()
    for _ in range(ops):
        current = await client.get(key)
        version = current[12:48].decode()  # '{"version":"' is 12 characters, then 36
        new = str(uuid.uuid4())
        document = '{"version":"' + new + '","context":' + body + "}"
        written = await client.evalsha(CAS_SCRIPT_SHA, 1, key, '{"version":"' + version + '",', document, 3_600_000)
        assert written == 1
    return ops / (time.perf_counter() - started)


async def sdk_round(context: object, scope: dict[str, str], ops: int) -> float:
    started = time.perf_counter()
    for number in range(ops):
        await context.update({"scope": scope, "add": [{"id": f"item-{number % 10}",  # type: ignore[attr-defined]
                                                       "content": f"observation {number}"}]})
    return ops / (time.perf_counter() - started)


async def run(url: str, ops: int, items: int, rounds: int) -> None:
    client = Redis.from_url(url)
    try:
        await client.script_load(CAS_SCRIPT)
        context = create_context(redis={"client": client})
        sdk_scope = {"sessionId": "bench-sdk"}
        raw_scope = {"sessionId": "bench-raw"}
        sources = [{"id": f"item-{n}", "content": f"observation {n}", "metadata": {"n": n}} for n in range(items)]
        await context.load({"scope": sdk_scope, "sources": sources})
        await context.load({"scope": raw_scope, "sources": sources})
        raw_key = context_scope_key(raw_scope)
        stored = (await client.get(raw_key)).decode()
        body = stored[stored.index('"context":') + len('"context":'):-1]
        raw_rates, sdk_rates = [], []
        await raw_round(client, raw_key, 200, body)  # warm-up
        await sdk_round(context, sdk_scope, 200)
        for _ in range(rounds):
            raw_rates.append(await raw_round(client, raw_key, ops // rounds, body))
            sdk_rates.append(await sdk_round(context, sdk_scope, ops // rounds))
        raw, sdk = statistics.median(raw_rates), statistics.median(sdk_rates)
        ratio = statistics.median(s / r for s, r in zip(sdk_rates, raw_rates, strict=True))
        table = Table(title=f"Scoped UPDATE on Redis, {items}-item context, {ops} ops per path "
                            f"({rounds} alternating rounds; ratio = median of per-round ratios)")
        for column in ("path", "ops/s (median of rounds)", "µs/op", "ratio"):
            table.add_column(column, justify="right" if column != "path" else "left")
        table.add_row("raw redis-py GET + EVALSHA", f"{raw:,.0f}", f"{1e6 / raw:.0f}", "1.00")
        table.add_row("create_context(...).update({scope, add})", f"{sdk:,.0f}", f"{1e6 / sdk:.0f}",
                      f"{ratio:.2f}")
        Console().print(table)
    finally:
        await client.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ops", type=int, default=4000)
    parser.add_argument("--items", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--url")
    args = parser.parse_args()
    if args.url:
        asyncio.run(run(args.url, args.ops, args.items, args.rounds))
        return
    from tests.support.redis_server import redis_server

    with redis_server() as server:
        asyncio.run(run(server.url, args.ops, args.items, args.rounds))


if __name__ == "__main__":
    main()
