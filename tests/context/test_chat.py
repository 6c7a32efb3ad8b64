"""Issue 20: CONTEXT as a chat's memory — UPDATE ``add`` takes messages as LOAD does, the opt-in
``update_with_retry`` after ``STATE_CONFLICT`` (CX-9: no automatic retry inside the worker), and the
runnable ``examples/chat_context.py`` against a real redis-server."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from examples import chat_context
from hypothesis import given, settings
from hypothesis import strategies as st
from redis.asyncio import Redis

from ditto.contracts import Message
from ditto.worker.context import (
    ContextArgumentError,
    ContextError,
    ContextUpdateRequest,
    create_context,
    create_in_memory_context_store,
    create_redis_context_store,
    update_with_retry,
)
from ditto.worker.context.retry import backoff_delay

from ..support.redis_server import RedisServer

ROOT = Path(__file__).resolve().parents[2]


async def test_update_add_maps_messages_exactly_as_load_does() -> None:
    """CX-4/CX-5, issue 20: ``{role, content, name?}`` and ``Message`` in ``add`` get LOAD's stable id and metadata."""
    client = create_context()
    turn = {"role": "user", "content": "When do backups run?", "name": "ana"}
    loaded = await client.load({"sources": [turn]})
    added = await client.update({"context": {"items": []}, "add": [turn]})
    assert added.items == loaded.items
    assert added.items[0].metadata == {"role": "user", "name": "ana"}
    typed = await client.update(ContextUpdateRequest(context={"items": []},
                                                     add=[Message(role="user", content="When do backups run?",
                                                                  name="ana")]))
    assert typed.items == loaded.items


async def test_the_same_message_twice_is_one_item_and_ids_keep_two() -> None:
    """CX-2 duplicate=replace: a message's id is its content hash, so 'ok' twice is one item; an id keeps both."""
    client = create_context()
    ok = {"role": "user", "content": "ok"}
    once = await client.update({"context": {"items": []}, "add": [ok, {"role": "assistant", "content": "fine"}]})
    twice = await client.update({"context": once, "add": [ok]})
    assert [item.id for item in twice.items] == [item.id for item in once.items]
    kept = await client.update({"context": twice, "add": [{"id": "turn-3", "content": "ok",
                                                            "metadata": {"role": "user"}}]})
    assert [item.content for item in kept.items] == ["ok", "fine", "ok"]
    with pytest.raises(ContextError) as caught:
        await create_context(policy={"duplicate": "reject"}).update({"context": once, "add": [ok]})
    assert caught.value.code == "DUPLICATE_ITEM"


@pytest.mark.parametrize("entry", [
    {"role": "user"}, {"role": "", "content": "x"}, {"role": 3, "content": "x"},
    {"role": "user", "content": "x", "extra": 1}, {"role": "user", "content": float("nan")},
])
async def test_malformed_messages_in_add_are_invalid_input(entry: dict[str, Any]) -> None:
    """CX-8: a bad message in ``add`` is INVALID_INPUT naming its position, never a raw exception."""
    with pytest.raises(ContextError) as caught:
        await create_context().update({"context": {"items": []}, "add": [{"id": "a", "content": 1}, entry]})
    assert caught.value.code == "INVALID_INPUT" and "add[1]" in caught.value.message


async def test_update_with_retry_gives_up_after_its_attempts_with_state_conflict() -> None:
    """CX-9: a builder pinned to a stale version conflicts on every try; the last STATE_CONFLICT is raised."""
    store = create_in_memory_context_store()
    client = create_context(services={"stateStore": store})
    scope = {"sessionId": "s"}
    await client.load({"scope": scope, "sources": [{"id": "a", "content": 1}]})
    calls: list[int] = []

    def stale(current: Any) -> dict[str, Any]:
        calls.append(len(current.items))
        return {"expectedVersion": "not-the-version", "add": [{"id": "b", "content": 2}]}

    with pytest.raises(ContextError) as caught:
        await update_with_retry(client, stale, scope=scope, attempts=3, base_delay_s=0, max_delay_s=0)
    assert caught.value.code == "STATE_CONFLICT" and calls == [1, 1, 1]
    stored = await store.get(scope)
    assert stored is not None and [item.id for item in stored.context.items] == ["a"]


async def test_update_with_retry_builder_decides_and_other_errors_are_not_retried() -> None:
    """The builder sees the current context; ``None`` gives up; a non-conflict error is raised on the first try."""
    client = create_context(services={"stateStore": create_in_memory_context_store()})
    scope = {"sessionId": "s"}
    await client.load({"scope": scope, "sources": [{"id": "a", "content": 1}]})
    assert await update_with_retry(client, lambda current: None, scope=scope) is None

    async def add_once(current: Any) -> dict[str, Any] | None:
        return None if any(item.id == "b" for item in current.items) else {"add": [{"id": "b", "content": 2}]}

    updated = await update_with_retry(client, add_once, scope=scope)
    assert updated is not None and [item.id for item in updated.items] == ["a", "b"]
    tries: list[int] = []

    def too_big(current: Any) -> dict[str, Any]:
        tries.append(1)
        return {"add": [{"id": "c", "content": "x" * 70_000}]}

    with pytest.raises(ContextError) as caught:
        await update_with_retry(client, too_big, scope=scope, attempts=5)
    assert caught.value.code == "INLINE_LIMIT_EXCEEDED" and tries == [1]


async def test_update_with_retry_refuses_what_cannot_be_retried() -> None:
    """A pinned expectedVersion, a missing scope or a builder returning a scope are construction mistakes."""
    client = create_context(services={"stateStore": create_in_memory_context_store()})
    for request, scope in (({"scope": {"sessionId": "s"}, "expectedVersion": "v", "add": []}, None),
                           ({"add": []}, None), (lambda current: {}, None), ("add", None),
                           ({"scope": {"sessionId": "s"}, "add": []}, {"sessionId": "s"})):
        with pytest.raises(ContextArgumentError):
            await update_with_retry(client, request, scope=scope)  # type: ignore[arg-type]
    await client.load({"scope": {"sessionId": "s"}, "sources": []})
    with pytest.raises(ContextArgumentError):
        await update_with_retry(client, lambda current: {"scope": {"sessionId": "t"}}, scope={"sessionId": "s"})


@settings(max_examples=60, deadline=None)
@given(attempts=st.one_of(st.integers(max_value=0), st.integers(min_value=21), st.booleans(), st.floats(),
                          st.none(), st.just(2**70)),
       delay=st.one_of(st.floats(max_value=-1e-9), st.floats(min_value=60.0001), st.just(float("nan")),
                       st.just(float("inf")), st.booleans(), st.text()))
async def test_update_with_retry_bounds_its_numbers(attempts: Any, delay: Any) -> None:
    """Bad attempts (≤0, >20, bool, float, huge) and delays (negative, >60 s, NaN, ±inf, bool, text) are refused."""
    client = create_context()
    request = {"scope": {"sessionId": "s"}, "add": []}
    with pytest.raises(ContextArgumentError):
        await update_with_retry(client, request, attempts=attempts)
    with pytest.raises(ContextArgumentError):
        await update_with_retry(client, request, base_delay_s=delay)
    with pytest.raises(ContextArgumentError):
        await update_with_retry(client, request, max_delay_s=delay)


@given(attempt=st.integers(min_value=0, max_value=10_000), base=st.floats(0, 60), cap=st.floats(0, 60),
       seed=st.integers(0, 2**32))
def test_backoff_is_jittered_within_its_cap(attempt: int, base: float, cap: float, seed: int) -> None:
    """The wait is in [0, min(cap, base * 2**attempt)], also for huge attempt numbers (no overflow)."""
    delay = backoff_delay(attempt, base, cap, random.Random(seed))
    assert 0.0 <= delay <= min(cap, base * 2.0 ** min(attempt, 62))


async def test_the_chat_example_on_redis(redis_client: Redis) -> None:
    """Issue 20: the example's story holds on a real redis-server: one 'ok', an id'd second 'ok', plain
    concurrent updates conflict, the queue and update_with_retry land all 20, COMPRESS keeps the system prompt."""
    result = await chat_context.chat(redis_client)
    assert result["plain"].count("STATE_CONFLICT") >= 1
    assert set(result["plain"]) <= {"ok", "STATE_CONFLICT"}
    assert result["landed"]["queued"] == 20 and result["landed"]["retried"] == 20
    assert result["landed"]["plain"] == result["plain"].count("ok")
    store = create_redis_context_store(redis_client, key_prefix="example:chat:")
    stored = await store.get(result["scope"])
    assert stored is not None
    assert [item.id for item in stored.context.items] == result["compressed"]
    assert stored.context.items[0].metadata == {"role": "system"} and len(result["compressed"]) == 4


def test_the_chat_example_prints_its_steps(redis_proc: RedisServer) -> None:
    """``python examples/chat_context.py URL`` prints each step; without a URL it says how to run it."""
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "chat_context.py"), redis_proc.url],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "-- after 'ok' twice: 5 item(s)" in done.stdout
    assert "-- with an id of its own: 6 item(s)" in done.stdout
    assert "queued 20/20; update_with_retry 20/20" in done.stdout
    assert "system: You answer questions about the backup policy." in done.stdout.split("compressed to 4")[1]
    bare = subprocess.run([sys.executable, str(ROOT / "examples" / "chat_context.py")], capture_output=True,
                          text=True, timeout=60, cwd=ROOT,
                          env={k: v for k, v in os.environ.items() if k != "DITTO_WORKER_CONTEXT_REDIS_URL"})
    assert bare.returncode != 0 and "usage:" in bare.stderr
