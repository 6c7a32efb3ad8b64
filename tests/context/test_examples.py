"""Every function of examples/context.py (the seed's examples/context.ts) against real components.

Redis is a real ``redis-server``; MEMORY is the real SQLite store; RETRIEVAL is
the real BM25 text provider. INTERACTION and INFER do not exist in this
project, so the tool example runs against two small local workers and the
INFER example against a local client object with the ``reasoning.sample`` shape.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from examples import context as examples
from redis.asyncio import Redis

from ditto import create_ditto
from ditto.contracts import Context, ContextSelection
from ditto.retrieval import RetrievalTargetRegistry, create_retrieval_worker
from ditto.retrieval.providers.text import create_text_search_provider
from ditto.runtime import WorkerDefinition
from ditto.worker.context import (
    ContextError,
    RedisContextStore,
    create_context,
    create_context_worker,
    create_in_memory_context_store,
    create_redis_context_store,
)
from ditto.worker.interaction import ToolError, create_interaction_worker
from ditto.worker.memory import create_memory, create_memory_worker, create_sqlite_memory_store

from .helpers import RecordingInfer


def _yaml(tmp_path: Path) -> Path:
    path = tmp_path / "ditto.yaml"
    path.write_text(
        "workers:\n  context:\n    policy:\n      maxItems: 64\n      duplicate: keep-first\n"
        "    cache:\n      ttlMs: 60000\n      keyPrefix: \"${PREFIX}\"\n"
        "    localCache:\n      ttlMs: 5000\n      maxEntries: 10\n    queue:\n      maxPending: 8\n"
    )
    return path


async def test_setup_load_select_update_compress_execute(redis_client: Redis, tmp_path: Path) -> None:
    """CX-1 CX-16: the seed's setup, LOAD, SELECT, UPDATE, COMPRESS and execute examples."""
    made = examples.setup_context(redis_client, _yaml(tmp_path), {"PREFIX": "example:"})
    assert made["context"].execution.policy.max_items == 64
    assert made["context"].execution.policy.duplicate == "keep-first"
    store = made["context"].execution.services.state_store
    assert isinstance(store, RedisContextStore) and store.key_prefix == "example:" and store.ttl_ms == 60000
    runtime = made["runtime"]
    assert runtime.workers()[0].concurrency == 16
    await runtime.close()

    loaded = await examples.load_context()
    assert [item.id.split(":")[0] for item in loaded.items] == ["message", "goal", "reference"]
    assert loaded.items[0].metadata == {"role": "system"}
    assert loaded.items[2].source is not None and loaded.items[2].source.uri == "file:///workspace/api.md"

    selected = await examples.select_context(loaded)
    assert isinstance(selected["infer"], ContextSelection) and selected["infer"].purpose == "infer"
    message, goal, reference = (item.id for item in loaded.items)
    # infer: the current goal (it also holds the query word) and the system message first, then the rest.
    assert selected["infer"].selected_item_ids == (goal, message, reference)
    # memory: nothing is marked for memory or excluded from it, so newer items rank first.
    assert selected["memory"].purpose == "memory"
    assert selected["memory"].selected_item_ids == (reference, goal, message)
    assert [item.id for item in selected["memory"].context.items] == [reference, goal, message]

    updated = await examples.update_context(loaded)
    assert [item.id for item in updated.items][-1] == "observation:call-1"
    assert updated.items[1].content == "Explain the cache"  # replace keeps the position
    assert updated.items[-1].metadata is not None and updated.items[-1].metadata["sourceNode"] == "INTERACTION.OBSERVE"

    compressed = await examples.compress_context(updated)
    assert compressed.items == updated.items

    executed = await examples.execute_context()
    assert executed.items[0].metadata == {"role": "user"} and executed.items[0].content == "hello"


async def test_cached_context_on_redis_and_in_memory(redis_client: Redis) -> None:
    """CX-9: the cached four-node flow; SELECT does not persist its projection."""
    for store in (create_redis_context_store(redis_client), create_in_memory_context_store()):
        result = await examples.cached_context(store)
        assert result["selected"].selected_item_ids == ("evidence",)  # newer items score higher
        assert [item.id for item in result["full"].items] == ["goal", "evidence"]


async def test_redis_store_with_explicit_version(redis_client: Redis) -> None:
    """CX-11: explicit versions through the store, the key is prefix + SHA-256."""
    result = await examples.redis_store(redis_client)
    assert result["key"].startswith("app:context:") and len(result["key"]) == len("app:context:") + 64
    assert [item.id for item in result["latest"].context.items] == ["a", "b"]
    assert await redis_client.exists(result["key"]) == 1
    assert 0 < await redis_client.pttl(result["key"]) <= 60_000


async def test_custom_services_provider_selector_and_compressor() -> None:
    """CX-15: injected estimator, selector and compressor."""

    class KeepProtected:
        async def compress(self, input: Any, options: Any = None) -> Context:
            return Context(items=tuple(item for item in input.context.items if item.metadata))

    services = examples.context_services(KeepProtected())
    client = create_context(services=services)
    context = await client.load({"sources": [{"id": "a", "content": "one", "metadata": {"protected": True}},
                                             {"id": "b", "content": "two"}]})
    picked = await client.select({"context": context, "purpose": "infer",
                                  "strategy": {"kind": "provider", "name": "latest"}})
    assert picked.selected_item_ids == ("b", "a")
    with pytest.raises(ContextError) as caught:
        await client.select({"context": context, "purpose": "infer", "strategy": {"kind": "provider", "name": "x"}})
    assert caught.value.code == "STRATEGY_UNAVAILABLE"
    compressed = await client.compress({"context": context, "maxItems": 1})
    assert [item.id for item in compressed.items] == ["a"]


async def test_rag_context_and_retrieval_provider_reuse() -> None:
    """CX-14: a RAG strategy over a search function and over a real RETRIEVAL text provider."""
    corpus = [{"id": "doc-api", "content": "The API returns JSON"}, {"id": "doc-cache", "content": "Redis cache TTL"}]

    async def search(query: Any) -> list[dict[str, Any]]:
        return [entry for entry in corpus if str(query).lower() in entry["content"].lower()]

    context = Context()
    selection = await examples.rag_context(context, search)
    assert selection.selected_item_ids == ("doc-api",)

    provider = create_text_search_provider([{"id": d["id"], "content": d["content"]} for d in corpus])
    strategy = examples.context_retrieval(provider, {"name": "docs"})
    chosen = await create_context(services={"ragStrategy": strategy}).select(
        {"context": context, "purpose": "infer", "query": "redis cache", "strategy": {"kind": "rag"}})
    assert chosen.selected_item_ids[0] == "doc-cache"
    relevance = chosen.context.items[0].metadata
    assert relevance is not None and relevance["relevance"] > 0

    registry = RetrievalTargetRegistry({"docs": {"default_strategy": "keyword", "providers": {"keyword": provider}}})
    runtime = create_ditto(workers=[create_retrieval_worker(registry)])
    try:
        remote = examples.remote_context_retrieval(runtime, {"name": "docs"})
        delegated = await create_context(services={"ragStrategy": remote}).select(
            {"context": context, "purpose": "infer", "query": "json api", "strategy": {"kind": "rag"}})
        assert delegated.selected_item_ids[0] == "doc-api"
    finally:
        await runtime.close()


async def test_context_to_infer_maps_items_to_messages() -> None:
    """CX-6: SELECT purpose=infer → messages for an INFER client."""
    infer = RecordingInfer()
    context = await create_context().load({"sources": [{"id": "a", "content": {"k": 1}}, {"id": "b", "content": "t"}]})
    assert await examples.context_to_infer(context, infer, {"name": "model"}) == "sampled"
    messages = infer.seen[0]["messages"]
    assert {m["content"] for m in messages[:2]} == {'{"k": 1}', "t"}
    assert messages[-1]["content"] == "Explain the evidence."


async def test_memory_graph_and_context_to_memory(tmp_path: Path) -> None:
    """CX-5: MEMORY.SEARCH → mapping → CONTEXT.UPDATE ingress; SELECT purpose=memory → MEMORY.WRITE."""
    store = create_sqlite_memory_store(tmp_path / "memory.sqlite")
    memory = create_memory(store=store)
    await memory.write({"memories": [{"id": "pref", "content": "User language preference: English"}]})
    result = await examples.memory_to_context(create_memory_worker(store=store))
    context = result.output("context")
    assert [item.id for item in context.items] == ["memory:pref"]
    assert context.items[0].metadata["sourceNode"] == "MEMORY.SEARCH"

    working = await create_context().load({"sources": [
        {"id": "keep", "content": "Prefers concise answers", "metadata": {"memoryCandidate": True}},
        {"id": "secret", "content": "token", "metadata": {"private": True}},
    ]})
    written = await examples.context_to_memory(working, memory)
    assert [item.metadata["contextItemId"] for item in written] == ["keep"]


async def test_flows_errors_direct_strategies_and_custom_descriptor() -> None:
    """RT-8 CX-8 CX-15: flows, the error branch, built-in strategies, a custom descriptor."""

    async def retrieve(input: Any) -> list[dict[str, Any]]:
        return [{"item": item} for item in input.items]

    from ditto.worker.context import create_rag_strategy

    flow = await examples.context_flows({"ragStrategy": create_rag_strategy(retrieve=retrieve)})
    assert flow.output.selected_item_ids == ("review-skill",)
    assert [item.id for item in flow.context.items] == ["review-skill"]

    assert await examples.context_errors() == "STATE_STORE_UNAVAILABLE"

    context = await create_context().load({"sources": [
        {"role": "system", "content": "rules"}, *({"id": f"i{n}", "content": n} for n in range(10)),
    ]})
    direct = await examples.direct_strategies(context)
    assert direct["ordered"][0].metadata == {"role": "system"}
    assert len(direct["compressed"].items) == 8 and direct["compressed"].items[0].metadata == {"role": "system"}
    assert direct["protected_ids"] == [context.items[0].id]

    definition = examples.custom_context_load
    assert isinstance(definition, WorkerDefinition) and definition.capabilities == ("CONTEXT.LOAD",)
    runtime = create_ditto(workers=[definition])
    try:
        result = await runtime.invoke("CONTEXT.LOAD", {"sources": [{"id": "x", "content": 1}]})
        assert result.status == "success" and result.output.items[0].id == "x"
    finally:
        await runtime.close()


async def test_tool_observation_into_cached_context(redis_client: Redis) -> None:
    """CX-9, INT-1, INT-3: a real INTERACTION tool's observation enters the cached context through
    CONTEXT.UPDATE with a scope; a failed tool is kept out of the working set."""

    def read(path: str) -> str:
        if path != "notes.txt":
            raise ToolError(f"no file {path}")
        return "file contents"

    store = create_redis_context_store(redis_client)
    runtime = create_ditto(workers=[create_interaction_worker(tools=[read]),
                                    create_context_worker(services={"stateStore": store})])
    scope = {"sessionId": "tools"}
    try:
        await create_context(services={"stateStore": store}).load({"scope": scope, "sources": []})
        call = {"id": "call-7", "name": "read", "arguments": {"path": "notes.txt"}}
        result = await examples.tool_to_cached_context(runtime, scope, call)
        assert result.status == "success"
        stored = await store.get(scope)
        assert stored is not None
        item = stored.context.items[0]
        assert item.id == "observation:call-7" and item.content == "file contents"
        assert item.metadata == {"callId": "call-7", "source": "tool:read", "status": "success",
                                 "sourceNode": "INTERACTION.OBSERVE"}
        with pytest.raises(RuntimeError, match="INTERACTION_TOOL_FAILED"):
            await examples.tool_to_cached_context(runtime, scope, {"id": "call-8", "name": "read",
                                                                   "arguments": {"path": "missing"}})
        after = await store.get(scope)
        assert after is not None and [entry.id for entry in after.context.items] == ["observation:call-7"]
    finally:
        await runtime.close()


async def test_local_cache_queue_and_reference_loading(tmp_path: Path) -> None:
    """CX-4 CX-12 CX-13 CX-16: YAML local cache + queue, resolveReferences, concurrent scoped updates."""
    result = await examples.local_cache_and_queue(_yaml(tmp_path), {"PREFIX": "x:"})
    assert result["queued"] == "application operation"
    items = result["snapshot"].context.items
    assert items[0].content == "Explain the retrieval pipeline" and items[0].source.uri == "urn:goal"
    assert {item.id for item in items[1:]} == {"a", "b"}
    assert len(result["selected"].selected_item_ids) == 2
