"""The Redis ContextStateStore against real redis-server processes (CX-10, CX-11)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

from ditto import create_ditto
from ditto.contracts import Context
from ditto.worker.context import (
    ContextError,
    context_scope_key,
    create_context,
    create_context_worker,
    create_redis_context_store,
)
from ditto.worker.context.stores import CAS_SCRIPT_SHA
from tests.context.helpers import error_code
from tests.support.redis_server import RedisServer, redis_cluster, redis_server

ROOT = Path(__file__).resolve().parents[2]


async def test_json_string_per_scope_versions_and_ttl(redis_client: Redis) -> None:
    """CX-10 CX-11: one JSON string per scope key, UUID versions, create-only CAS, writes reset TTL, reads don't."""
    store = create_redis_context_store(redis_client, ttl_ms=5000)
    scope = {"sessionId": "s", "invocationId": "i"}
    key = context_scope_key(scope)
    assert key == store.key(scope) and key.startswith("ditto:context:")
    assert await store.get(scope) is None
    first = await store.compare_and_set(scope, None, {"items": [{"id": "a", "content": {"é": [1, 2.5]}}]})
    assert uuid.UUID(first.version).version == 4
    raw = await redis_client.get(key)
    assert await redis_client.type(key) == b"string"
    document = json.loads(raw)
    assert document == {"version": first.version, "context": {"items": [{"id": "a", "content": {"é": [1, 2.5]}}]}}
    assert await error_code(store.compare_and_set(scope, None, Context())) == "STATE_CONFLICT"
    assert await error_code(store.compare_and_set(scope, "not-the-version", Context())) == "STATE_CONFLICT"
    await redis_client.pexpire(key, 2000)
    fetched = await store.get(scope)
    assert fetched == first and await redis_client.pttl(key) <= 2000  # a read does not extend the TTL
    second = await store.compare_and_set(scope, first.version, fetched.context)
    assert second.version != first.version and 2000 < await redis_client.pttl(key) <= 5000  # a write resets it
    assert await error_code(store.compare_and_set(scope, first.version, Context())) == "STATE_CONFLICT"  # no ABA
    await redis_client.delete(key)
    assert await error_code(store.compare_and_set(scope, second.version, Context())) == "STATE_CONFLICT"  # expired
    prefixed = create_redis_context_store(redis_client, {"keyPrefix": "app:", "ttlMs": 100})
    await prefixed.compare_and_set(scope, None, Context())
    assert await redis_client.exists(context_scope_key(scope, "app:")) == 1
    await asyncio.sleep(0.2)
    assert await prefixed.get(scope) is None  # Redis expired it


async def test_corrupt_state_is_invalid_state(redis_client: Redis) -> None:
    """CX-11: corrupt stored data → INVALID_STATE, never an empty Context."""
    store = create_redis_context_store(redis_client)
    client = create_context(redis={"client": redis_client})
    scope = {"sessionId": "corrupt"}
    key = context_scope_key(scope)
    for value in (b"not json", b"\xff\xfe", json.dumps({"version": "v"}),
                  json.dumps({"version": "v", "context": {"items": [{"id": "", "content": 1}]}}),
                  json.dumps({"version": 3, "context": {"items": []}}),
                  json.dumps({"version": "v", "context": {"items": [{"id": "a", "content": 1}] * 2}}),
                  '{"version":"v","context":{"items":[{"id":"a","content":"\\ud800"}]}}',
                  '{"version":"v","context":{"items":[{"id":"a","content":1e400}]}}'):
        await redis_client.set(key, value)
        assert await error_code(store.get(scope)) == "INVALID_STATE"
        assert await error_code(client.load({"scope": scope})) == "INVALID_STATE"
        assert await error_code(client.update({"scope": scope, "add": []})) == "INVALID_STATE"
    await redis_client.delete(key)
    await redis_client.hset(key, "field", "value")
    assert await error_code(store.get(scope)) == "INVALID_STATE"


async def test_script_is_loaded_on_demand(redis_client: Redis) -> None:
    """CX-11: EVALSHA falls back to EVAL after SCRIPT FLUSH (a restarted or new node)."""
    store = create_redis_context_store(redis_client)
    await redis_client.script_flush()
    written = await store.compare_and_set({"turnId": "t"}, None, Context())
    assert written.context == Context()
    assert await redis_client.script_exists(CAS_SCRIPT_SHA) == [True]


async def test_a_get_and_eval_adapter_is_enough(redis_client: Redis) -> None:
    """CX-11: like the seed's "get/eval 两个转发函数", a client with only get() and eval() works (no evalsha)."""

    class GetEvalOnly:
        async def get(self, name: str) -> Any:
            return await redis_client.get(name)

        async def eval(self, script: str, numkeys: int, *keys_and_args: Any) -> Any:
            return await redis_client.eval(script, numkeys, *keys_and_args)

    store = create_redis_context_store(GetEvalOnly(), {"keyPrefix": "adapter:"})
    scope = {"sessionId": "adapter"}
    first = await store.compare_and_set(scope, None, {"items": [{"id": "a", "content": 1}]})
    assert await error_code(store.compare_and_set(scope, None, {"items": []})) == "STATE_CONFLICT"
    client = create_context(services={"stateStore": store})
    await client.update({"scope": scope, "expectedVersion": first.version, "add": [{"id": "b", "content": 2}]})
    latest = await store.get(scope)
    assert latest is not None and [item.id for item in latest.context.items] == ["a", "b"]
    with pytest.raises(ContextError):
        create_redis_context_store(object())


async def test_runtime_close_does_not_close_the_client(redis_client: Redis) -> None:
    """CX-11: the application owns the client; runtime.close() leaves it open."""
    runtime = create_ditto(workers=[create_context_worker(redis={"client": redis_client, "ttlMs": 60000})])
    scope = {"sessionId": "owner"}
    loaded = await runtime.invoke("CONTEXT.LOAD", {"scope": scope, "sources": [{"id": "a", "content": 1}]})
    assert loaded.status == "success"
    await runtime.close()
    assert await redis_client.ping() is True


async def test_redis_cluster_three_masters() -> None:
    """CX-11: the single-key CAS script works on a real 3-master Redis Cluster."""
    with redis_cluster(3) as servers:
        client = RedisCluster(host="127.0.0.1", port=servers[0].port)
        try:
            context = create_context(redis={"client": client})
            scopes = [{"sessionId": f"tenant:{n}"} for n in range(12)]
            for n, scope in enumerate(scopes):
                await context.load({"scope": scope, "sources": [{"id": "a", "content": n}]})
                await context.update({"scope": scope, "add": [{"id": "b", "content": n}]})
            for n, scope in enumerate(scopes):
                loaded = await context.load({"scope": scope})
                assert [(i.id, i.content) for i in loaded.items] == [("a", n), ("b", n)]
            holders = {server.port for server in servers
                       for scope in scopes if server.cli("CLUSTER", "COUNTKEYSINSLOT",
                                                         server.cli("CLUSTER", "KEYSLOT", context_scope_key(scope)))
                       != "0"}
            assert len(holders) >= 2  # the keys really live on different masters
            store = context.execution.services.state_store
            stale = await store.get(scopes[0])
            await context.update({"scope": scopes[0], "add": [{"id": "c", "content": 0}]})
            assert await error_code(store.compare_and_set(scopes[0], stale.version, Context())) == "STATE_CONFLICT"
        finally:
            await client.aclose()


async def test_redis_stopped_mid_test_fails_clearly() -> None:
    """CX-11: Redis going away → STATE_STORE_UNAVAILABLE with a safe message (no empty Context, no success)."""
    with redis_server() as server:
        client = Redis.from_url(server.url, socket_connect_timeout=1, socket_timeout=1)
        try:
            context = create_context(redis={"client": client})
            scope = {"sessionId": "outage"}
            await context.load({"scope": scope, "sources": [{"id": "a", "content": 1}]})
            server.stop()
            runtime = create_ditto(workers=[create_context_worker(redis={"client": client})])
            for call in (context.load({"scope": scope}), context.update({"scope": scope, "add": []}),
                         context.select({"scope": scope, "purpose": "infer"}), context.compress({"scope": scope})):
                with pytest.raises(ContextError) as caught:
                    await call
                assert caught.value.code == "STATE_STORE_UNAVAILABLE"
                assert str(server.port) not in caught.value.message and "refused" not in caught.value.message
            result = await runtime.invoke("CONTEXT.SELECT", {"scope": scope, "purpose": "infer"})
            assert result.status == "error" and result.error is not None
            assert result.error.code == "STATE_STORE_UNAVAILABLE" and result.output is None
            await runtime.close()
        finally:
            await client.aclose()


def test_two_processes_500_updates_each_lose_nothing(redis_proc: RedisServer) -> None:
    """CX-9 CX-11: 2 OS processes × 500 UPDATEs on one scope, retry only on STATE_CONFLICT: no lost update."""
    import redis as sync_redis

    sync = sync_redis.Redis.from_url(redis_proc.url)
    sync.flushdb()
    sync.close()

    async def seed() -> None:
        client = Redis.from_url(redis_proc.url)
        try:
            await create_context(redis={"client": client}).load({"scope": {"sessionId": "cross-process"},
                                                                  "sources": []})
        finally:
            await client.aclose()

    asyncio.run(seed())
    started = time.monotonic()
    processes = [subprocess.Popen([sys.executable, "-m", "tests.context.cross_process_writer", redis_proc.url,
                                   name, "500", "2"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                 for name in ("p1", "p2")]
    reports = []
    for process in processes:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err.decode()
        reports.append(json.loads(out))
    elapsed = time.monotonic() - started

    async def final() -> Context:
        client = Redis.from_url(redis_proc.url)
        try:
            return await create_context(policy={"maxItems": 10_000}, redis={"client": client}).load(
                {"scope": {"sessionId": "cross-process"}})
        finally:
            await client.aclose()

    context = asyncio.run(final())
    ids = [item.id for item in context.items]
    committed = reports[0]["committed"] + reports[1]["committed"]
    assert len(ids) == len(set(ids)) == 1000
    assert set(ids) == set(committed)
    for name in ("p1", "p2"):  # each writer's own items keep its commit order
        assert [i for i in ids if i.startswith(name)] == [f"{name}-{n}" for n in range(500)]
    assert reports[0]["conflicts"] + reports[1]["conflicts"] > 0  # the writers really raced
    assert elapsed < 60, elapsed


async def test_reused_snapshot_only_when_bytes_are_identical(redis_client: Redis) -> None:
    """CX-11: a store reuses its parsed snapshot only for the exact bytes it last saw; other writers win."""
    mine = create_redis_context_store(redis_client)
    theirs = create_redis_context_store(redis_client)
    scope = {"sessionId": "shared"}
    written = await mine.compare_and_set(scope, None, {"items": [{"id": "a", "content": 1}]})
    assert await mine.get(scope) is written  # read-after-own-write: same immutable snapshot
    changed = await theirs.compare_and_set(scope, written.version, {"items": [{"id": "b", "content": 2}]})
    seen = await mine.get(scope)
    assert seen is not None and seen.version == changed.version and [i.id for i in seen.context.items] == ["b"]
    await redis_client.delete(context_scope_key(scope))
    assert await mine.get(scope) is None
