"""YAML wiring and the Redis URL helper (CX-16); the worker served over real HTTP (CX-1, RT-8)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ditto import create_ditto, create_http_transport, create_worker_http_app, load_runtime_config_file
from ditto.errors import ConfigError
from ditto.worker.context import (
    ContextError,
    InMemoryContextStore,
    InProcessContextQueue,
    RedisContextStore,
    context_options_from_config,
    context_worker_from_env,
    create_context,
    create_context_redis_client,
    create_context_worker,
    run_rag_flow,
    run_skill_flow,
)
from tests.support.redis_server import RedisServer
from tests.support.uvicorn_thread import serve_app

YAML = """
workers:
  context:
    policy: {maxItems: 5, max_tokens: 100, duplicate: reject, missingRemoval: reject, maxInlineBytes: 1000}
    cache: {ttlMs: 1234, keyPrefix: "cfg:"}
    local_cache: {ttl_ms: 500, maxEntries: 3}
    queue: {maxPending: 7}
"""


def _config(tmp_path: Path) -> object:
    path = tmp_path / "ditto.yaml"
    path.write_text(YAML)
    return load_runtime_config_file(path, {})


async def test_yaml_sections_become_options(tmp_path: Path, redis_proc: RedisServer) -> None:
    """CX-16: workers.context.policy/cache/local_cache/queue wire into the SDK and worker."""
    config = _config(tmp_path)
    local = create_context(context_options_from_config(config))  # type: ignore[arg-type]
    policy = local.execution.policy
    assert (policy.max_items, policy.max_tokens, policy.duplicate, policy.missing_removal,
            policy.max_inline_bytes) == (5, 100, "reject", "reject", 1000)
    store = local.execution.services.state_store
    assert isinstance(store, InMemoryContextStore) and (store.ttl_ms, store.max_entries) == (500, 3)
    queue = local.execution.services.operation_queue
    assert isinstance(queue, InProcessContextQueue) and queue.max_pending == 7

    client = create_context_redis_client({"DITTO_WORKER_CONTEXT_REDIS_URL": redis_proc.url})
    try:
        shared = create_context(context_options_from_config(config, redis_client=client))  # type: ignore[arg-type]
        redis_store = shared.execution.services.state_store
        assert isinstance(redis_store, RedisContextStore)
        assert (redis_store.ttl_ms, redis_store.key_prefix) == (1234, "cfg:")
        await shared.load({"scope": {"sessionId": "yaml"}, "sources": [{"id": "a", "content": 1}]})
        assert await client.exists(redis_store.key({"sessionId": "yaml"})) == 1

        definition = context_worker_from_env(config, {"DITTO_WORKER_CONTEXT_REDIS_URL": redis_proc.url})  # type: ignore[arg-type]
        runtime = create_ditto(workers=[definition, create_context_worker(config)])  # type: ignore[arg-type]
        result = await runtime.invoke("CONTEXT.LOAD", {"scope": {"sessionId": "yaml"}})
        assert result.status == "success" and [i.id for i in result.output.items] == ["a"]
        await runtime.close()
    finally:
        await client.aclose()
    with pytest.raises(ConfigError) as caught:
        create_context_redis_client({})
    assert caught.value.code == "CONFIG_MISSING_ENV"


async def test_worker_served_over_http(tmp_path: Path) -> None:
    """CX-1 RT-8: the CONTEXT worker behind the HTTP transport; flows work against the remote replica."""
    server_runtime = create_ditto(workers=[create_context_worker()])
    app = create_worker_http_app(server_runtime, token="secret")
    async with serve_app(app) as url:
        client_runtime = create_ditto(transports=[create_http_transport(id="ctx", url=url, token="secret")])
        client_runtime.register_remote(address=server_runtime.workers()[0].address, transport_id="ctx",
                                       capabilities=["CONTEXT.LOAD", "CONTEXT.UPDATE", "CONTEXT.SELECT",
                                                     "CONTEXT.COMPRESS"])
        try:
            skill = await run_skill_flow(client_runtime, sources=[{"id": "s", "content": {"steps": ["a", "b"]},
                                                                   "metadata": {"tags": ["x"]}}])
            assert skill.context.items[0].content == {"steps": ("a", "b")}
            failed = await client_runtime.invoke("CONTEXT.SELECT", {"context": skill.context, "purpose": "memory",
                                                                    "strategy": {"kind": "provider", "name": "x"}})
            assert failed.status == "error" and failed.error is not None
            assert failed.error.code == "STRATEGY_UNAVAILABLE"
            with pytest.raises(ContextError) as caught:
                await run_rag_flow(client_runtime, context=skill.context, query="a")
            assert caught.value.code == "STRATEGY_UNAVAILABLE"
        finally:
            await client_runtime.close()
    await server_runtime.close()
