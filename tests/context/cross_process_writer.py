"""One OS process of the cross-process test: N scoped UPDATEs, retrying only on STATE_CONFLICT.

Run as ``python -m tests.context.cross_process_writer URL NAME COUNT WRITERS``; prints a
JSON object with the ids it committed and how many conflicts it saw. The writers
wait for each other on a Redis counter before the first UPDATE, so a slow
interpreter start cannot let one finish before the other begins.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

from redis.asyncio import Redis

from ditto.worker.context import ContextError, create_context

SCOPE = {"sessionId": "cross-process"}
READY_KEY = "cross-process:ready"


async def _start_together(client: Redis, writers: int) -> None:
    await client.incr(READY_KEY)
    deadline = time.monotonic() + 60
    while int(await client.get(READY_KEY) or 0) < writers:
        if time.monotonic() > deadline:
            raise TimeoutError("the other writers did not start")
        await asyncio.sleep(0.001)


async def main(url: str, name: str, count: int, writers: int) -> None:
    client = Redis.from_url(url)
    context = create_context(policy={"maxItems": 10_000}, redis={"client": client})
    committed: list[str] = []
    conflicts = 0
    try:
        await _start_together(client, writers)
        for number in range(count):
            item_id = f"{name}-{number}"
            while True:
                try:
                    await context.update({"scope": SCOPE, "add": [{"id": item_id, "content": number}]})
                except ContextError as error:
                    if error.code != "STATE_CONFLICT":
                        raise
                    conflicts += 1
                    continue
                committed.append(item_id)
                break
    finally:
        await client.aclose()
    print(json.dumps({"committed": committed, "conflicts": conflicts}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
