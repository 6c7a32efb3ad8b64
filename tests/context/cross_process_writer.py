"""One OS process of the cross-process test: N scoped UPDATEs, retrying only on STATE_CONFLICT.

Run as ``python -m tests.context.cross_process_writer URL NAME COUNT``; prints a
JSON object with the ids it committed and how many conflicts it saw.
"""

from __future__ import annotations

import asyncio
import json
import sys

from redis.asyncio import Redis

from ditto.worker.context import ContextError, create_context

SCOPE = {"sessionId": "cross-process"}


async def main(url: str, name: str, count: int) -> None:
    client = Redis.from_url(url)
    context = create_context(policy={"maxItems": 10_000}, redis={"client": client})
    committed: list[str] = []
    conflicts = 0
    try:
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
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
