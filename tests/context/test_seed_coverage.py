"""Behaviours of seed 001 that worked without a test saying so (issue 10): one test each, named by seed line."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest
from redis.asyncio import Redis

import ditto
import ditto.worker.context as context_module
from ditto import create_ditto
from ditto.contracts import Context, js_json_dumps
from ditto.signal import AbortController, CancelSignal
from ditto.worker.context import (
    ContextCallOptions,
    ContextError,
    ContextScope,
    StoredContext,
    create_context,
    create_context_execution,
    create_context_operation_queue,
    create_context_worker,
    create_in_memory_context_store,
    create_rag_strategy,
    create_redis_context_store,
    run_compress,
    run_load,
    run_select,
    run_update,
)
from tests.support.redis_server import RedisServer

from .helpers import error_code, until


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def tokens(content: Any) -> int:
    return math.ceil(len(js_json_dumps(content).encode("utf-8")) / 4)


async def test_create_context_opens_no_connection(redis_proc: RedisServer, redis_client: Redis) -> None:
    """CX-1 CX-11 (seed 001 line 5): createContext() connects nowhere; only scope calls reach the cache."""
    async def connections() -> int:
        return int((await redis_client.info("stats"))["total_connections_received"])

    before = await connections()
    application_client = Redis.from_url(redis_proc.url)
    try:
        client = create_context(redis={"client": application_client})
        loaded = await client.load({"sources": [{"id": "a", "content": "one"}]})
        await client.select({"context": loaded, "purpose": "infer"})
        await client.compress({"context": loaded, "maxItems": 1})
        create_context_worker(redis={"client": application_client})
        assert await connections() == before
        await client.load({"scope": {"sessionId": "s"}, "sources": []})
        assert await connections() == before + 1
    finally:
        await application_client.aclose()


async def test_preferred_items_may_still_be_skipped_by_budget() -> None:
    """CX-6 (seed 001 lines 20, 86): a system item ranks first but is skipped when it does not fit maxTokens."""
    client = create_context()
    context = await client.load({"sources": [
        {"role": "system", "content": "x" * 400},
        {"id": "goal", "content": "short goal", "metadata": {"currentGoal": True}},
        {"id": "note", "content": "a note"},
    ]})
    selection = await client.select({"context": context, "purpose": "infer", "maxTokens": 20})
    assert selection.selected_item_ids == ("goal", "note")
    everything = await client.select({"context": context, "purpose": "infer"})
    assert everything.selected_item_ids[:2] == ("goal", context.items[0].id)  # both preferred, ahead of the note


async def test_default_rules_are_not_a_permission_filter() -> None:
    """CX-6 (seed 001 line 21): private / memoryEligible=false exclude only for purpose memory, never for infer."""
    client = create_context()
    context = await client.load({"sources": [
        {"id": "secret", "content": "s", "metadata": {"private": True}},
        {"id": "no-memory", "content": "n", "metadata": {"memoryEligible": False}},
        {"id": "plain", "content": "p"},
    ]})
    infer = await client.select({"context": context, "purpose": "infer"})
    assert set(infer.selected_item_ids) == {"secret", "no-memory", "plain"}
    memory = await client.select({"context": context, "purpose": "memory"})
    assert memory.selected_item_ids == ("plain",)


async def test_relevance_raises_select_and_compress_retention() -> None:
    """CX-6 CX-7 (seed 001 lines 23, 88): a higher metadata.relevance ranks first and survives COMPRESS."""
    client = create_context()
    context = await client.load({"sources": [
        {"id": "relevant", "content": "old but relevant", "metadata": {"relevance": 0.9}},
        {"id": "plain", "content": "newer"},
        {"id": "newest", "content": "newest"},
    ]})
    selection = await client.select({"context": context, "purpose": "infer", "limit": 1})
    assert selection.selected_item_ids == ("relevant",)
    compressed = await client.compress({"context": context, "maxItems": 1})
    assert [item.id for item in compressed.items] == ["relevant"]
    without = await client.load({"sources": [{"id": "relevant", "content": "old but relevant"},
                                             {"id": "plain", "content": "newer"},
                                             {"id": "newest", "content": "newest"}]})
    assert [item.id for item in (await client.compress({"context": without, "maxItems": 1})).items] == ["newest"]


async def test_expected_version_on_an_expired_scope() -> None:
    """CX-9 (seed 001 line 37): expectedVersion fails once the scope expired; nothing is recreated."""
    clock = Clock()
    store = create_in_memory_context_store(ttl_ms=1_000, now=clock)
    client = create_context(services={"stateStore": store})
    scope = {"sessionId": "expiring"}
    await client.load({"scope": scope, "sources": [{"id": "a", "content": 1}]})
    written = await store.get(scope)
    assert written is not None
    clock.now = 1_000.0
    for call in (client.update({"scope": scope, "expectedVersion": written.version, "add": []}),
                 client.select({"scope": scope, "expectedVersion": written.version, "purpose": "infer"}),
                 client.compress({"scope": scope, "expectedVersion": written.version})):
        assert await error_code(call) == "CONTEXT_NOT_FOUND"
    assert await error_code(client.load({"scope": scope, "expectedVersion": written.version,
                                         "sources": []})) == "STATE_CONFLICT"
    assert await store.get(scope) is None


async def test_queue_default_max_pending_is_1024() -> None:
    """CX-13 (seed 001 lines 39, 408): the default queue holds 1024 waiting/running operations, then QUEUE_FULL."""
    queue = create_context_operation_queue()
    release = asyncio.Event()

    async def blocked() -> None:
        await release.wait()

    tasks = [asyncio.ensure_future(queue.enqueue({"sessionId": f"s{index % 3}"}, blocked)) for index in range(1024)]
    await until(lambda: queue.pending == 1024)
    with pytest.raises(ContextError) as caught:
        await queue.enqueue({"sessionId": "other"}, blocked)
    assert caught.value.code == "QUEUE_FULL"
    release.set()
    await asyncio.gather(*tasks)
    assert queue.pending == 0


async def test_rag_example_limit_8_and_max_tokens_3000() -> None:
    """CX-6 CX-14 (seed 001 line 43): of 20 retrieved items SELECT keeps at most 8 within 3000 estimated tokens."""
    short = [{"id": f"s{index}", "content": f"short evidence {index}"} for index in range(20)]
    long = [{"id": f"l{index}", "content": "word " * 1_000} for index in range(20)]

    def strategy(found: list[dict[str, Any]]) -> Any:
        return create_rag_strategy(retrieve=lambda stage: [{"item": item} for item in found])

    for found, expected in ((short, 8), (long, 2)):
        client = create_context(services={"ragStrategy": strategy(found)})
        for limit in (8, 20):
            selection = await client.select({"context": Context(), "purpose": "infer", "query": "evidence",
                                             "strategy": {"kind": "rag"}, "limit": limit, "maxTokens": 3000})
            assert len(selection.context.items) == (expected if limit == 8 or found is long else 20)
            assert sum(tokens(item.content) for item in selection.context.items) <= 3000


def test_factories_import_from_the_root_package() -> None:
    """CX-1 (seed 001 line 47): the factories come from ``ditto.worker.context`` and from ``ditto`` alike."""
    for name in ("create_context", "create_context_worker", "create_redis_context_store",
                 "create_in_memory_context_store", "create_context_operation_queue", "create_rag_strategy",
                 "create_context_execution", "context_scope_key", "default_select", "deterministic_compress",
                 "is_protected_context_item", "context_load_node", "context_update_node", "context_select_node",
                 "context_compress_node", "ContextError", "run_rag_flow", "run_skill_flow"):
        assert getattr(ditto, name) is getattr(context_module, name), name


async def test_policy_max_tokens_never_limits_load_or_update() -> None:
    """CX-2 (seed 001 lines 29, 52): policy.maxTokens bounds SELECT/COMPRESS only; LOAD/UPDATE never compress."""
    client = create_context(policy={"maxTokens": 1})
    context = await client.load({"sources": [{"id": "a", "content": "x" * 1_000}]})
    updated = await client.update({"context": context, "add": [{"id": "b", "content": "y" * 1_000}]})
    assert [item.id for item in updated.items] == ["a", "b"]
    assert (await client.select({"context": updated, "purpose": "infer"})).selected_item_ids == ()
    assert (await client.compress({"context": updated})).items == ()


async def test_redis_refused_together_with_a_state_store(redis_client: Redis) -> None:
    """CX-1 CX-11 (seed 001 line 56): ``redis`` and ``services.stateStore`` together are INVALID_INPUT."""
    store = create_in_memory_context_store()
    for factory in (create_context, create_context_worker):
        with pytest.raises(ContextError) as caught:
            factory(redis={"client": redis_client}, services={"stateStore": store})
        assert caught.value.code == "INVALID_INPUT"
        with pytest.raises(ContextError):
            factory({"redis": {"client": redis_client}, "services": {"state_store": store}})


async def test_services_factory_is_worker_only() -> None:
    """CX-15 (seed 001 lines 57-58): servicesFactory and concurrency are refused by the SDK, used by the worker."""
    calls: list[int] = []

    def factory() -> dict[str, Any]:
        calls.append(1)
        return {}

    with pytest.raises(ContextError) as caught:
        create_context({"servicesFactory": factory})
    assert caught.value.code == "INVALID_INPUT"
    runtime = create_ditto(workers=[create_context_worker(services_factory=factory)])
    try:
        result = await runtime.invoke("CONTEXT.LOAD", {"sources": []})
        assert result.status == "success" and calls == [1]
    finally:
        await runtime.close()


async def test_custom_compressor_output_is_bound_by_inline_and_token_limits() -> None:
    """CX-7 (seed 001 line 88): a compressor's output still meets maxInlineBytes and maxTokens."""
    source = await create_context().load({"sources": [{"id": "a", "content": "short"},
                                                      {"id": "b", "content": "short too"}]})
    too_big = create_context(policy={"maxInlineBytes": 16},
                             services={"compressor": lambda input: {"items": [{"id": "a", "content": "x" * 64}]}})
    assert await error_code(too_big.compress({"context": source, "maxItems": 1})) == "INVALID_PROVIDER_OUTPUT"
    too_long = create_context(services={"compressor": lambda input: {"items": [{"id": "a", "content": "x" * 400}]}})
    assert await error_code(too_long.compress({"context": source, "maxTokens": 10})) == "INVALID_PROVIDER_OUTPUT"
    fits = create_context(services={"compressor": lambda input: {"items": [{"id": "a", "content": "tiny"}]}})
    assert [item.content for item in (await fits.compress({"context": source, "maxTokens": 10})).items] == ["tiny"]


class CountingStore:
    """A ContextStateStore (the public protocol) around the real in-memory store, counting calls."""

    def __init__(self) -> None:
        self.inner = create_in_memory_context_store()
        self.gets = 0
        self.writes = 0

    async def get(self, scope: ContextScope, options: ContextCallOptions | None = None) -> StoredContext | None:
        self.gets += 1
        return await self.inner.get(scope, options)

    async def compare_and_set(self, scope: ContextScope, expected_version: str | None, next: Context,
                              options: ContextCallOptions | None = None) -> StoredContext:
        self.writes += 1
        return await self.inner.compare_and_set(scope, expected_version, next, options)


async def test_at_most_one_read_and_one_cas_per_change() -> None:
    """CX-9 CX-10 (seed 001 line 101): each scoped call reads once and writes at most once, with no retry."""
    store = CountingStore()
    client = create_context(services={"stateStore": store})
    scope = {"sessionId": "count"}
    expected = {
        "load-sources": (client.load({"scope": scope, "sources": [{"id": "a", "content": 1}]}), 1),
        "update": (client.update({"scope": scope, "add": [{"id": "b", "content": 2}]}), 1),
        "select": (client.select({"scope": scope, "purpose": "infer"}), 0),
        "compress": (client.compress({"scope": scope, "maxItems": 1}), 1),
        "load-read": (client.load({"scope": scope}), 0),
    }
    for call, writes in expected.values():
        store.gets = store.writes = 0
        await call
        assert (store.gets, store.writes) == (1, writes)
    store.gets = store.writes = 0

    class Racing:
        async def compress(self, input: Any, options: Any = None) -> Any:
            current = await store.inner.get(scope)  # another writer moves the version meanwhile
            assert current is not None
            await store.inner.compare_and_set(scope, current.version, current.context)
            return input.context

    racing = create_context(services={"stateStore": store, "compressor": Racing()})
    assert await error_code(racing.compress({"scope": scope})) == "STATE_CONFLICT"
    assert (store.gets, store.writes) == (1, 1)  # no automatic retry


async def test_store_defaults(redis_client: Redis) -> None:
    """CX-11 CX-12 (seed 001 lines 103, 406): Redis TTL 3,600,000 ms; in-memory 3,600,000 ms and 1000 scopes."""
    redis_store = create_redis_context_store(redis_client)
    await redis_store.compare_and_set({"sessionId": "ttl"}, None, Context())
    ttl = await redis_client.pttl(redis_store.key({"sessionId": "ttl"}))
    assert 3_590_000 < ttl <= 3_600_000
    assert redis_store.key({"sessionId": "ttl"}).startswith("ditto:context:")

    clock = Clock()
    memory = create_in_memory_context_store(now=clock)
    for index in range(1000):
        await memory.compare_and_set({"sessionId": f"s{index}"}, None, Context())
    assert len(memory) == 1000
    await memory.compare_and_set({"sessionId": "one-more"}, None, Context())
    assert len(memory) == 1000 and await memory.get({"sessionId": "s0"}) is None  # least recently used left
    clock.now = 3_599_999.0
    assert await memory.get({"sessionId": "one-more"}) is not None
    clock.now = 3_600_000.0
    assert await memory.get({"sessionId": "one-more"}) is None


async def test_low_level_node_functions() -> None:
    """CX-15 (seed 001 line 138): the four low-level functions take an explicit input and a ContextExecution."""
    execution = create_context_execution({"maxItems": 3, "duplicate": "reject"})
    loaded = await run_load({"sources": [{"role": "system", "content": "rules"}, {"id": "a", "content": "one"}]},
                            execution)
    assert len(loaded.items) == 2 and loaded.items[0].metadata == {"role": "system"}
    updated = await run_update({"context": loaded, "add": [{"id": "b", "content": "two"}]}, execution)
    assert [item.id for item in updated.items][1:] == ["a", "b"]
    with pytest.raises(ContextError) as caught:
        await run_update({"context": updated, "add": [{"id": "a", "content": "again"}]}, execution)
    assert caught.value.code == "DUPLICATE_ITEM"
    selection = await run_select({"context": updated, "purpose": "infer", "limit": 2}, execution)
    assert selection.selected_item_ids[0] == loaded.items[0].id and len(selection.selected_item_ids) == 2
    compressed = await run_compress({"context": updated, "maxItems": 2}, execution)
    assert [item.id for item in compressed.items] == [loaded.items[0].id, "b"]
    with pytest.raises(ContextError) as caught:
        await run_load({"scope": {"sessionId": "s"}, "sources": []}, execution)
    assert caught.value.code == "INVALID_INPUT"  # no cache routing in the low-level functions


async def test_signal_reaches_selector_rag_stages_compressor_and_estimator() -> None:
    """CX-1 (seed 001 line 434): the caller's signal reaches selector, embed/retrieve/rank, compressor, estimator."""
    seen: dict[str, CancelSignal | None] = {}
    controller = AbortController()

    def record(name: str, result: Any) -> Any:
        def port(value: Any, options: ContextCallOptions) -> Any:
            seen[name] = options.signal
            return result(value) if callable(result) else result
        return port

    rag = create_rag_strategy(embed=record("embed", [0.1]),
                              retrieve=record("retrieve", lambda stage: [{"item": {"id": "d", "content": "doc"}}]),
                              rank=record("rank", lambda stage: list(stage.candidates)))
    client = create_context(services={
        "selector": record("selector", lambda request: list(request.context.items)),
        "ragStrategy": rag,
        "compressor": record("compressor", lambda request: request.context),
        "tokenEstimator": record("estimator", 1),
    })
    context = await create_context().load({"sources": [{"id": "a", "content": "one"}]})
    signal = controller.signal
    await client.select({"context": context, "purpose": "infer", "maxTokens": 5,
                         "strategy": {"kind": "provider", "name": "mine"}}, signal=signal)
    await client.select({"context": context, "purpose": "infer", "strategy": {"kind": "rag"}}, signal=signal)
    await client.compress({"context": context, "maxTokens": 5}, signal=signal)
    assert set(seen) == {"selector", "embed", "retrieve", "rank", "compressor", "estimator"}
    assert all(value is signal for value in seen.values())
