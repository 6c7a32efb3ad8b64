"""CONTEXT as a chat's memory, on Redis: load a conversation, append turns, keep it within a budget.

Run it against a Redis server (the application owns the client)::

    python examples/chat_context.py redis://127.0.0.1:6379/0

or with ``DITTO_WORKER_CONTEXT_REDIS_URL`` set. It prints, step by step, what the cached chat holds.
``docs/context.md`` ("Keeping a chat") explains each step.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from typing import Any

from redis.asyncio import Redis

from ditto.contracts import Context
from ditto.worker.context import (
    ContextError,
    create_context,
    create_context_operation_queue,
    create_redis_context_store,
    update_with_retry,
)


def show(step: str, context: Context) -> None:
    """One line per item: its role (or id), then its content."""
    print(f"-- {step}: {len(context.items)} item(s)")
    for item in context.items[:8]:
        role = (item.metadata or {}).get("role", item.id)
        content = item.content if isinstance(item.content, str) else json.dumps(item.content)
        print(f"   {role:>9}: {content[:60]}")
    if len(context.items) > 8:
        print(f"   ... and {len(context.items) - 8} more")


async def chat(client: Any) -> dict[str, Any]:
    store = create_redis_context_store(client, ttl_ms=600_000, key_prefix="example:chat:")
    context = create_context(services={"stateStore": store})
    scope = {"sessionId": f"chat-{uuid.uuid4().hex[:8]}"}

    # LOAD with sources creates (or replaces!) the chat: the system prompt and the first turn.
    loaded = await context.load({"scope": scope, "sources": [
        {"role": "system", "content": "You answer questions about the backup policy."},
        {"role": "user", "content": "How long are backups kept?"},
    ]})
    show("loaded", loaded)

    # Later turns are appended with UPDATE, in the same {role, content} shape LOAD took.
    # A file the user attaches is an item too; a second LOAD would have erased the chat.
    await context.update({"scope": scope, "add": [
        {"role": "assistant", "content": "Backups are kept for 30 days."},
        {"id": "file:policy.md", "content": "Backups run nightly at 02:00.",
         "source": {"uri": "file:///policy.md", "mediaType": "text/markdown"}},
    ]})
    # A message's id is the hash of its role and content: "ok" twice is one item ...
    await context.update({"scope": scope, "add": [{"role": "user", "content": "ok"}]})
    same = await context.update({"scope": scope, "add": [{"role": "user", "content": "ok"}]})
    show("after 'ok' twice", same)
    # ... unless the application gives each turn its own id (the role goes in metadata, as LOAD puts it).
    kept = await context.update({"scope": scope, "add": [
        {"id": "turn-6", "content": "ok", "metadata": {"role": "user"}},
    ]})
    show("with an id of its own", kept)

    # Twenty writers at once: each UPDATE reads, computes and commits one compare-and-set, so all but
    # one of those that overlap fail with STATE_CONFLICT, and nothing of theirs is written.
    async def plain(number: int) -> str:
        try:
            await context.update({"scope": scope, "add": [{"role": "user", "content": f"plain {number}"}]})
        except ContextError as error:
            return error.code
        return "ok"

    plain_codes = await asyncio.gather(*(plain(n) for n in range(20)))
    # In one process, a queue runs the updates of a scope one after the other: no conflict at all.
    queued = create_context(services={"stateStore": store, "operationQueue": create_context_operation_queue()})
    await asyncio.gather(*(queued.update({"scope": scope, "add": [{"role": "user", "content": f"queued {n}"}]})
                           for n in range(20)))
    # Across processes, the application may choose to retry: re-read, wait a jittered moment, try again.
    await asyncio.gather(*(update_with_retry(context, {"scope": scope,
                                                       "add": [{"role": "user", "content": f"retried {n}"}]},
                                             attempts=12, base_delay_s=0.005, max_delay_s=0.2)
                           for n in range(20)))
    full = await context.load({"scope": scope})
    contents = [item.content for item in full.items]
    landed = {kind: sum(1 for content in contents if str(content).startswith(kind + " "))
              for kind in ("plain", "queued", "retried")}
    print(f"-- 20 writers at once: plain updates {plain_codes.count('ok')} landed, "
          f"{plain_codes.count('STATE_CONFLICT')} STATE_CONFLICT; queued {landed['queued']}/20; "
          f"update_with_retry {landed['retried']}/20")

    # For the model: SELECT a token budget (it writes nothing). The system prompt is preferred.
    chosen = await context.select({"scope": scope, "purpose": "infer", "maxTokens": 60, "order": "context"})
    show("selected for a 60-token prompt", chosen.context)
    # To shrink what is stored: COMPRESS keeps the system prompt (protected) and drops the oldest turns first.
    compressed = await context.compress({"scope": scope, "maxItems": 4})
    show("compressed to 4 items", compressed)
    return {"scope": scope, "plain": plain_codes, "landed": landed, "selected": chosen.selected_item_ids,
            "compressed": [item.id for item in compressed.items]}


async def main(url: str) -> dict[str, Any]:
    client = Redis.from_url(url)
    try:
        return await chat(client)
    finally:
        await client.aclose()


if __name__ == "__main__":
    address = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("DITTO_WORKER_CONTEXT_REDIS_URL")
    if not address:
        sys.exit("usage: python examples/chat_context.py redis://HOST:PORT/DB (or set DITTO_WORKER_CONTEXT_REDIS_URL)")
    asyncio.run(main(address))
