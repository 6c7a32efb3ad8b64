"""Scoped cache routing (CX-9), the in-memory store (CX-10, CX-12) and the operation queue (CX-13)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ditto.contracts import Context
from ditto.signal import AbortController, CancelledBySignal
from ditto.worker.context import (
    ContextCallOptions,
    ContextError,
    ContextScope,
    StoredContext,
    context_scope_key,
    create_context,
    create_context_operation_queue,
    create_in_memory_context_store,
)
from tests.context.helpers import error_code, until


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


async def test_scope_rules() -> None:
    """CX-9: scope needs one non-empty id, excludes context, and LOAD{scope} reads or CONTEXT_NOT_FOUND."""
    store = create_in_memory_context_store()
    client = create_context(services={"stateStore": store})
    assert await error_code(client.load({"scope": {}, "sources": []})) == "INVALID_INPUT"
    assert await error_code(client.load({"scope": {"sessionId": ""}, "sources": []})) == "INVALID_INPUT"
    assert await error_code(client.load({"scope": {"sessionId": 3}, "sources": []})) == "INVALID_INPUT"
    scope = {"session_id": "s", "turnId": "t"}
    assert await error_code(client.load({"scope": scope})) == "CONTEXT_NOT_FOUND"
    assert await error_code(client.update({"scope": scope, "add": []})) == "CONTEXT_NOT_FOUND"
    assert await error_code(client.select({"scope": scope, "purpose": "infer"})) == "CONTEXT_NOT_FOUND"
    assert await error_code(client.compress({"scope": scope})) == "CONTEXT_NOT_FOUND"
    assert await store.get(scope) is None  # nothing was created by a miss
    assert await error_code(client.update({"scope": scope, "context": {"items": []}})) == "INVALID_INPUT"
    assert await error_code(client.update({"context": {"items": []}, "expectedVersion": "v"})) == "INVALID_INPUT"
    await client.load({"scope": scope, "sources": [{"id": "a", "content": 1}]})
    assert [i.id for i in (await client.load({"scope": scope})).items] == ["a"]
    # Each field is part of the key: no fallback from a turn to its session.
    assert await error_code(client.load({"scope": {"sessionId": "s"}})) == "CONTEXT_NOT_FOUND"
    assert context_scope_key({"sessionId": "a"}) != context_scope_key({"turnId": "a"})
    assert context_scope_key(ContextScope(session_id="a")).startswith("ditto:context:")
    # LOAD{scope, sources: []} empties the scope explicitly.
    assert (await client.load({"scope": scope, "sources": []})).items == ()
    assert (await client.load({"scope": scope})).items == ()


async def test_scoped_read_and_resolve_references() -> None:
    """CX-4 CX-9: resolveReferences=true needs sources (INVALID_INPUT); false is just the default on a read."""
    client = create_context(services={"stateStore": create_in_memory_context_store()})
    scope = {"sessionId": "read"}
    await client.load({"scope": scope, "sources": [{"id": "a", "content": 1}]})
    assert [i.id for i in (await client.load({"scope": scope, "resolveReferences": False})).items] == ["a"]
    assert await error_code(client.load({"scope": scope, "resolveReferences": True})) == "INVALID_INPUT"
    assert await error_code(client.load({"scope": scope, "resolveReferences": "yes"})) == "INVALID_INPUT"


async def test_scoped_writes_use_cas_on_the_version_read() -> None:
    """CX-9: UPDATE/COMPRESS read → compute → one CAS; SELECT never writes; expectedVersion adds a check."""
    store = create_in_memory_context_store()
    client = create_context(services={"stateStore": store})
    scope = {"sessionId": "cas"}
    await client.load({"scope": scope, "sources": [{"id": "a", "content": 1}, {"id": "b", "content": 2}]})
    first = await store.get(scope)
    assert first is not None
    await client.select({"scope": scope, "purpose": "infer", "limit": 1})
    assert (await store.get(scope)) == first  # SELECT wrote nothing
    updated = await client.update({"scope": scope, "expectedVersion": first.version,
                                   "add": [{"id": "c", "content": 3}]})
    second = await store.get(scope)
    assert second is not None and second.version != first.version and second.context == updated
    assert await error_code(client.update({"scope": scope, "expectedVersion": first.version, "add": []})) == (
        "STATE_CONFLICT")
    assert await error_code(client.select({"scope": scope, "expectedVersion": first.version,
                                      "purpose": "infer"})) == "STATE_CONFLICT"
    assert await error_code(client.load({"scope": scope, "expectedVersion": first.version,
                                    "sources": []})) == "STATE_CONFLICT"
    compressed = await client.compress({"scope": scope, "maxItems": 1})
    assert [i.id for i in compressed.items] == ["c"]  # the oldest groups go first
    assert [i.id for i in (await client.load({"scope": scope})).items] == ["c"]

    class Racing:
        """A store whose scope changes between read and write (another replica wins)."""

        async def get(self, scope: Any, options: Any) -> StoredContext | None:
            return await store.get(scope)

        async def compare_and_set(self, scope: Any, expected: str | None, next: Context, options: Any) -> Any:
            current = await store.get(scope)
            assert current is not None
            await store.compare_and_set(scope, current.version, current.context)
            return await store.compare_and_set(scope, expected, next)

    racing = create_context(services={"stateStore": Racing()})
    before = await store.get(scope)
    assert await error_code(racing.update({"scope": scope, "add": [{"id": "z", "content": 0}]})) == "STATE_CONFLICT"
    after = await store.get(scope)
    assert after is not None and after.context == before.context  # no retry, nothing of ours written


async def test_missing_store_and_cancel_before_commit() -> None:
    """CX-9: no store → STATE_STORE_UNAVAILABLE; a cancelled call does not commit."""
    assert await error_code(create_context().update({"scope": {"sessionId": "x"}, "add": []})) == (
        "STATE_STORE_UNAVAILABLE")
    store = create_in_memory_context_store()
    controller = AbortController()

    def estimate(content: Any) -> int:
        controller.abort()  # cancel mid-computation, before the CAS
        return 1

    client = create_context(services={"stateStore": store, "tokenEstimator": estimate})
    scope = {"sessionId": "cancel"}
    await client.load({"scope": scope, "sources": [{"id": "a", "content": 1}, {"id": "b", "content": 2}]})
    version = (await store.get(scope)).version  # type: ignore[union-attr]
    with pytest.raises(CancelledBySignal):
        await client.compress({"scope": scope, "maxTokens": 1}, signal=controller.signal)
    assert (await store.get(scope)).version == version  # type: ignore[union-attr]


async def test_in_memory_store_ttl_lru_and_eviction() -> None:
    """CX-10 CX-12: create-only CAS, random versions, TTL reset on write only, LRU on read, eviction."""
    clock = Clock()
    store = create_in_memory_context_store({"ttlMs": 1000, "maxEntries": 2}, now=clock)
    a, b, c = {"sessionId": "a"}, {"sessionId": "b"}, {"sessionId": "c"}
    first = await store.compare_and_set(a, None, {"items": [{"id": "x", "content": [1]}]})
    assert await error_code(store.compare_and_set(a, None, Context())) == "STATE_CONFLICT"
    assert await error_code(store.compare_and_set(a, "other", Context())) == "STATE_CONFLICT"
    again = await store.compare_and_set(a, first.version, first.context)
    assert again.version != first.version and len(again.version) == 36
    assert isinstance(again.context.items[0].content, tuple)  # immutable snapshot
    clock.now += 900
    assert await store.get(a) is not None  # reading does not extend the TTL ...
    clock.now += 200
    assert await store.get(a) is None  # ... so it expires 1000 ms after the last write
    await store.compare_and_set(a, None, Context())
    await store.compare_and_set(b, None, Context())
    assert await store.get(a) is not None  # a is now the most recently used
    await store.compare_and_set(c, None, Context())  # evicts b, the least recently used
    assert await store.get(b) is None and await store.get(a) is not None and await store.get(c) is not None
    clock.now += 5000
    await store.compare_and_set(b, None, Context())  # expired entries are cleared before LRU eviction
    assert len(store) == 1
    assert await error_code(store.compare_and_set(b, None, {"items": [{"id": "", "content": 1}]})) == "INVALID_INPUT"
    for bad in ({"ttlMs": 0}, {"ttlMs": 2_147_483_648}, {"maxEntries": 0}, {"maxEntries": 2**53}):
        with pytest.raises(ContextError):
            create_in_memory_context_store(bad)


async def test_queue_serialises_per_scope_and_bounds_capacity() -> None:
    """CX-13: per-scope serial, scopes independent, QUEUE_FULL at capacity, capacity released on failure."""
    queue = create_context_operation_queue(3)  # CX-13: max_pending, positionally
    log: list[str] = []
    gate = asyncio.Event()

    def op(name: str, wait: bool = False, fail: bool = False) -> Any:
        async def run() -> str:
            log.append(f"start {name}")
            if wait:
                await gate.wait()
            log.append(f"end {name}")
            if fail:
                raise RuntimeError(name)
            return name

        return run

    one = asyncio.create_task(queue.enqueue({"sessionId": "s"}, op("1", wait=True, fail=True)))
    two = asyncio.create_task(queue.enqueue({"sessionId": "s"}, op("2")))
    other = asyncio.create_task(queue.enqueue({"sessionId": "t"}, op("other")))
    await until(lambda: len(log) >= 3 and queue.pending == 2)
    assert log == ["start 1", "start other", "end other"]  # same scope waits, other scope runs
    assert await other == "other"
    three = asyncio.create_task(queue.enqueue({"sessionId": "s"}, op("3")))
    await asyncio.sleep(0)
    assert queue.pending == 3
    assert await error_code(queue.enqueue({"sessionId": "u"}, op("4"))) == "QUEUE_FULL"
    gate.set()
    with pytest.raises(RuntimeError):
        await one
    assert await two == "2" and await three == "3"
    assert log[-4:] == ["start 2", "end 2", "start 3", "end 3"]
    assert queue.pending == 0
    assert await queue.enqueue({"sessionId": "s"}, op("5")) == "5"


async def test_queue_checks_cancellation_at_enqueue_and_start() -> None:
    """CX-13: cancellation is checked at enqueue and at start; a cancelled waiter holds its slot until then."""
    queue = create_context_operation_queue({"maxPending": 2})
    controller = AbortController()
    controller.abort()
    with pytest.raises(CancelledBySignal):
        await queue.enqueue({"sessionId": "s"}, lambda: asyncio.sleep(0), ContextCallOptions(controller.signal))
    assert queue.pending == 0
    gate = asyncio.Event()
    later = AbortController()
    ran: list[str] = []

    async def blocker() -> None:
        await gate.wait()

    async def never() -> None:
        ran.append("never")

    first = asyncio.create_task(queue.enqueue({"sessionId": "s"}, blocker))
    waiting = asyncio.create_task(queue.enqueue({"sessionId": "s"}, never, ContextCallOptions(later.signal)))
    await asyncio.sleep(0)
    later.abort()
    assert queue.pending == 2
    assert await error_code(queue.enqueue({"sessionId": "x"}, never)) == "QUEUE_FULL"
    gate.set()
    await first
    with pytest.raises(CancelledBySignal):
        await waiting
    assert ran == [] and queue.pending == 0


async def test_cancelled_waiter_keeps_its_slot_until_the_operations_ahead_end() -> None:
    """CX-13: a waiter cancelled by its caller (task cancel or an SDK signal) still holds capacity until its turn."""
    queue = create_context_operation_queue(max_pending=3)
    store = create_in_memory_context_store()
    client = create_context(services={"stateStore": store, "operationQueue": queue})
    scope = {"sessionId": "s"}
    await client.load({"scope": scope, "sources": []})
    gate = asyncio.Event()
    ran: list[str] = []

    async def blocker() -> None:
        await gate.wait()

    async def never() -> None:
        ran.append("never")

    first = asyncio.create_task(queue.enqueue(scope, blocker))
    waiting = asyncio.create_task(queue.enqueue(scope, never))
    controller = AbortController()
    through_sdk = asyncio.create_task(client.update({"scope": scope, "add": [{"id": "x", "content": 1}]},
                                                    signal=controller.signal))
    await until(lambda: queue.pending == 3)
    waiting.cancel()
    controller.abort()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    with pytest.raises(CancelledBySignal):
        await through_sdk
    assert queue.pending == 3
    assert await error_code(queue.enqueue({"sessionId": "other"}, never)) == "QUEUE_FULL"
    gate.set()
    await first
    await until(lambda: queue.pending == 0)  # the held slots are freed once the lane is free
    assert ran == []
    assert (await client.load({"scope": scope})).items == ()  # the cancelled UPDATE never committed


async def test_sdk_uses_the_queue_for_scoped_calls() -> None:
    """CX-13: the SDK wraps scoped calls in services.operation_queue, so local updates do not conflict."""
    store = create_in_memory_context_store()
    queue = create_context_operation_queue()
    calls: list[Any] = []

    class Recording:
        async def enqueue(self, scope: Any, operation: Any, options: Any) -> Any:
            calls.append(scope)
            return await queue.enqueue(scope, operation, options)

    client = create_context(services={"stateStore": store, "operationQueue": Recording()})
    scope = {"sessionId": "q"}
    await client.load({"scope": scope, "sources": []})
    await asyncio.gather(*(client.update({"scope": scope, "add": [{"id": f"i{n}", "content": n}]})
                           for n in range(20)))
    assert len((await client.load({"scope": scope})).items) == 20
    assert len(calls) == 22 and all(isinstance(scope, ContextScope) for scope in calls)


class ReadTogetherStore:
    """A ContextStateStore (the public protocol) around the real in-memory store whose reads of one scope wait
    for each other: every writer has read the same version before any writer compares-and-sets."""

    def __init__(self, inner: Any, writers: int) -> None:
        self.inner = inner
        self.barrier = asyncio.Barrier(writers)
        self.armed = False

    async def get(self, scope: Any, options: Any = None) -> Any:
        current = await self.inner.get(scope, options)
        if self.armed:
            await asyncio.wait_for(self.barrier.wait(), 5)
        return current

    async def compare_and_set(self, scope: Any, expected: Any, next: Any, options: Any = None) -> Any:
        return await self.inner.compare_and_set(scope, expected, next, options)


async def test_unqueued_concurrent_writers_conflict_and_never_lose_an_update() -> None:
    """CX-10 CX-13: two writers without a queue that read the same version: exactly one commits, the other fails
    with STATE_CONFLICT, and the committed context holds the winner's item and not the loser's."""
    store = ReadTogetherStore(create_in_memory_context_store(), writers=2)
    client = create_context(services={"stateStore": store})
    scope = {"sessionId": "race"}
    await client.load({"scope": scope, "sources": [{"id": "base", "content": 0}]})
    store.armed = True
    results = await asyncio.gather(*(client.update({"scope": scope, "add": [{"id": name, "content": name}]})
                                     for name in ("left", "right")), return_exceptions=True)
    store.armed = False
    wins = [(name, r) for name, r in zip(("left", "right"), results, strict=True) if isinstance(r, Context)]
    losses = [(name, r) for name, r in zip(("left", "right"), results, strict=True) if not isinstance(r, Context)]
    assert len(wins) == 1 and len(losses) == 1, results
    (winner, _), (loser, error) = wins[0], losses[0]
    assert isinstance(error, ContextError) and error.code == "STATE_CONFLICT"
    final = await client.load({"scope": scope})
    assert [item.id for item in final.items] == ["base", winner] and loser not in {i.id for i in final.items}


async def test_signal_reaches_store_and_queue() -> None:
    """CX-9 CX-10 CX-13: the call's signal is passed to stateStore.get/compare_and_set and queue.enqueue."""
    inner = create_in_memory_context_store()
    queue = create_context_operation_queue()
    seen: list[tuple[str, Any]] = []

    class Store:
        async def get(self, scope: Any, options: Any) -> Any:
            seen.append(("get", options.signal))
            return await inner.get(scope, options)

        async def compare_and_set(self, scope: Any, expected: Any, next: Any, options: Any) -> Any:
            seen.append(("cas", options.signal))
            return await inner.compare_and_set(scope, expected, next, options)

    class Queue:
        async def enqueue(self, scope: Any, operation: Any, options: Any) -> Any:
            seen.append(("enqueue", options.signal))
            return await queue.enqueue(scope, operation, options)

    controller = AbortController()
    client = create_context(services={"stateStore": Store(), "operationQueue": Queue()})
    await client.load({"scope": {"sessionId": "sig"}, "sources": []}, signal=controller.signal)
    assert seen == [("enqueue", controller.signal), ("get", controller.signal), ("cas", controller.signal)]
