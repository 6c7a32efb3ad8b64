"""The seed's ``examples/context.ts``, one async function per example (nothing runs at import).

``python examples/context.py`` runs the examples that need no server (LOAD, SELECT, UPDATE, COMPRESS,
execute, an in-memory cache, the error branch and the built-in strategies) and prints what each
returned; ``examples/chat_context.py`` is the Redis walk-through.

``tests/context/test_examples.py`` runs every function against a real
``redis-server``. Applications own their clients: each function that receives
a Redis client or a runtime leaves closing it to the caller unless it created
the runtime itself.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ditto import RuntimeClient, create_ditto, graph, load_runtime_config_file
from ditto.contracts import Context, ContextItem
from ditto.runtime import GraphResult, NodeResult, WorkerDefinition
from ditto.signal import CancelSignal
from ditto.worker.context import (
    ContextCompressor,
    ContextError,
    ContextFlowResult,
    ContextOptions,
    ContextScope,
    ContextServices,
    ContextStateStore,
    RagStrategyPipeline,
    RedisContextClient,
    context_load_node,
    context_options_from_config,
    context_scope_key,
    create_context,
    create_context_execution,
    create_context_operation_queue,
    create_context_worker,
    create_in_memory_context_store,
    create_rag_strategy,
    create_redis_context_store,
    default_select,
    deterministic_compress,
    is_protected_context_item,
    run_rag_flow,
    run_skill_flow,
)

# -- Creating the SDK and the worker -----------------------------------------------


def setup_context(client: RedisContextClient, config_path: str | Path = "ditto.yaml",
                  env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """YAML policy + cache settings, the application's Redis client, one SDK and one runtime."""
    config = load_runtime_config_file(config_path, dict(os.environ) if env is None else env)
    settings: ContextOptions = context_options_from_config(config, redis_client=client)
    return {
        "context": create_context(settings),
        "runtime": create_ditto(config=config, workers=[create_context_worker(settings, concurrency=16)]),
    }


# -- LOAD: messages, items and references ------------------------------------------


async def load_context() -> Context:
    return await create_context().load({"sources": [
        {"role": "system", "content": "Answer using the supplied evidence."},
        {"id": "goal", "content": "Explain the API", "metadata": {"currentGoal": True}},
        {"uri": "file:///workspace/api.md", "mediaType": "text/markdown"},
    ]})


# -- SELECT: inference and memory purposes --------------------------------------------


async def select_context(context: Context) -> dict[str, Any]:
    client = create_context()
    infer = await client.select({"context": context, "purpose": "infer", "query": "API", "limit": 8,
                                 "maxTokens": 2048})
    memory = await client.select({"context": context, "purpose": "memory", "limit": 4})
    return {"infer": infer, "memory": memory}  # ContextSelection, not NodeResult.


# -- UPDATE: increments and provenance ------------------------------------------------


async def update_context(context: Context) -> Context:
    return await create_context().update({
        "context": context,
        "removeIds": ["old"],
        "add": [{"id": "goal", "content": "Explain the cache", "metadata": {"currentGoal": True}}],
        "ingress": [{"id": "observation:call-1", "sourceNode": "INTERACTION.OBSERVE", "content": "file contents",
                     "metadata": {"callId": "call-1", "status": "success"}}],
    })


# -- COMPRESS: budgets ------------------------------------------------------------------


async def compress_context(context: Context) -> Context:
    return await create_context().compress({"context": context, "maxItems": 32, "maxTokens": 4096})


# -- execute: one entry point for the four leaves -----------------------------------------


async def execute_context() -> Context:
    return await create_context().execute("CONTEXT.LOAD", {"sources": [{"role": "user", "content": "hello"}]})


# -- The four nodes against a cache ---------------------------------------------------------


async def cached_context(store: ContextStateStore) -> dict[str, Any]:
    client = create_context(services={"stateStore": store})
    scope = {"sessionId": "tenant-a:session-1", "turnId": "turn-1"}
    await client.load({"scope": scope, "sources": [{"id": "goal", "content": "Review API"}]})
    await client.update({"scope": scope, "add": [{"id": "evidence", "content": "Relevant source"}]})
    selected = await client.select({"scope": scope, "purpose": "infer", "limit": 1})
    await client.compress({"scope": scope, "maxItems": 16})
    full = await client.load({"scope": scope})
    return {"selected": selected, "full": full}  # SELECT does not persist its projection.


# -- Redis store and explicit versions --------------------------------------------------------


async def redis_store(client: RedisContextClient) -> dict[str, Any]:
    store = create_redis_context_store(client, ttl_ms=60_000, key_prefix="app:context:")
    scope = {"sessionId": "session-2"}
    before = await store.get(scope)
    written = await store.compare_and_set(scope, None if before is None else before.version,
                                          {"items": [{"id": "a", "content": "one"}]})
    # A stale version fails with STATE_CONFLICT; the application decides whether to retry.
    context = create_context(services={"stateStore": store})
    await context.update({"scope": scope, "expectedVersion": written.version,
                          "add": [{"id": "b", "content": "two"}]})
    return {"key": context_scope_key(scope, "app:context:"), "latest": await store.get(scope)}


# -- Injecting custom services -----------------------------------------------------------------


def context_services(compressor: ContextCompressor) -> ContextServices:
    class LatestSelector:
        async def select(self, input: Any, options: Any = None) -> list[ContextItem]:
            if input.strategy.kind != "provider" or input.strategy.name != "latest":
                raise ContextError("STRATEGY_UNAVAILABLE", "Unknown selector")
            return list(reversed(input.context.items))

    return ContextServices(
        token_estimator=lambda content: -(-len(json.dumps(content, ensure_ascii=False, separators=(",", ":"))) // 4),
        selector=LatestSelector(),
        compressor=compressor,
    )


# -- RAG strategy ---------------------------------------------------------------------------------


async def rag_context(context: Context, search: Callable[[Any], Awaitable[Sequence[ContextItem]]]) -> Any:
    async def retrieve(input: Any) -> list[dict[str, Any]]:
        return [{"item": item} for item in await search(input.query)]

    rag_strategy = create_rag_strategy(retrieve=retrieve)
    return await create_context(services={"ragStrategy": rag_strategy}).select({
        "context": context, "purpose": "infer", "query": "API", "strategy": {"kind": "rag"}, "limit": 5,
    })


# -- Reusing a RETRIEVAL provider --------------------------------------------------------------------


def context_retrieval(provider: Any, target: Any) -> RagStrategyPipeline:
    """Map RETRIEVAL candidates to ContextItems with stable ids; the score becomes ``relevance``."""

    async def retrieve(input: Any) -> list[dict[str, Any]]:
        output = await provider.search({"query": {"content": input.query if input.query is not None else ""},
                                        "target": target, "limit": 10})
        candidates = output["candidates"] if isinstance(output, Mapping) else output.candidates
        mapped = []
        for candidate in candidates:
            fields = candidate if isinstance(candidate, Mapping) else candidate.model_dump()
            source = fields.get("source") or {}
            item_id = fields.get("id") or source.get("ref")
            if not item_id:
                raise ValueError("Map retrieval candidates to stable Context IDs")
            content = fields["content"]
            score = fields.get("score")
            mapped.append({"item": {
                "id": item_id,
                "content": content if isinstance(content, str) else json.dumps(content),
                "metadata": {} if score is None else {"relevance": score},
            }})
        return mapped

    return create_rag_strategy(retrieve=retrieve)


# -- Passing a selection to INFER ----------------------------------------------------------------------


async def context_to_infer(context: Context, infer: Any, model: Any) -> Any:
    """``infer`` is an INFER client (``infer.reasoning.sample``); INFER items differ from working items.

    ``order: "context"`` keeps the chosen items in working-set order, so the model
    reads the conversation as it happened rather than in ranking order.
    """
    selected = await create_context().select({"context": context, "purpose": "infer", "limit": 16,
                                              "order": "context"})
    messages = [{"role": "user", "content": item.content if isinstance(item.content, str)
                 else json.dumps(item.content)} for item in selected.context.items]
    messages.append({"role": "user", "content": "Explain the evidence."})
    return await infer.reasoning.sample({"model": model, "messages": messages})


# -- MEMORY and a Context graph ------------------------------------------------------------------------


async def memory_to_context(memory_worker: WorkerDefinition) -> GraphResult:
    """MEMORY.SEARCH → check the NodeResult → explicit mapping → CONTEXT.UPDATE."""
    runtime = create_ditto(workers=[memory_worker, create_context_worker()])

    def to_update(_query: str, deps: Mapping[str, NodeResult[Any]]) -> dict[str, Any]:
        search = deps["search"]
        if search.status != "success" or search.output is None:
            raise RuntimeError(search.error.code if search.error else search.status)
        return {"context": {"items": []}, "ingress": [{
            "id": f"memory:{hit.memory.id}",
            "sourceNode": "MEMORY.SEARCH",
            "content": hit.memory.content if isinstance(hit.memory.content, str) else json.dumps(hit.memory.content),
            "metadata": {"memoryId": hit.memory.id, **({} if hit.score is None else {"relevance": hit.score})},
        } for hit in search.output]}

    plan = (graph("memory-context")
            .node("search", "MEMORY.SEARCH", [], lambda query, _deps: {"query": query, "limit": 5})
            .node("context", "CONTEXT.UPDATE", ["search"], to_update))
    try:
        return await runtime.run(plan, "language preference")
    finally:
        await runtime.close()


# -- RAG and Skill flows ---------------------------------------------------------------------------------


async def context_flows(services: Any) -> ContextFlowResult[Any]:
    runtime = create_ditto(workers=[create_context_worker(services=services)])
    try:
        skill = await run_skill_flow(runtime, sources=[{"id": "review-skill", "content": "Check correctness."}])
        return await run_rag_flow(runtime, context=skill.context, query="API", limit=5)
    finally:
        await runtime.close()


# -- Error branches -----------------------------------------------------------------------------------------


async def context_errors() -> str:
    try:
        await create_context().load({"scope": {"sessionId": "one"}})
    except ContextError as error:
        return error.code  # STATE_STORE_UNAVAILABLE
    raise AssertionError("a scope without a store must fail")


# -- Reusing the built-in strategies ----------------------------------------------------------------------------


async def direct_strategies(context: Context) -> dict[str, Any]:
    execution = create_context_execution({"maxItems": 16})
    ordered = default_select({"context": context, "purpose": "infer"})
    compressed = await deterministic_compress({"context": context, "maxItems": 8}, execution)
    return {"ordered": ordered, "compressed": compressed,
            "protected_ids": [item.id for item in context.items if is_protected_context_item(item)]}


# -- A custom node descriptor ---------------------------------------------------------------------------------


async def _custom_load(input: Any, _execution: Any) -> Context:
    return await create_context().load(input)


custom_context_load: WorkerDefinition = context_load_node.define("CONTEXT", _custom_load)


# -- Writing long-term MEMORY -------------------------------------------------------------------------------------


async def context_to_memory(context: Context, memory: Any) -> Any:
    """SELECT purpose=memory, then MEMORY.WRITE through the MEMORY SDK (``create_memory``)."""
    selected = await create_context().select({"context": context, "purpose": "memory", "limit": 8})
    return await memory.write({"memories": [
        {"content": item.content, "metadata": {"contextItemId": item.id}} for item in selected.context.items
    ]})


# -- Tool observations into the cache ----------------------------------------------------------------------------


async def tool_to_cached_context(runtime: RuntimeClient, scope: ContextScope | Mapping[str, Any],
                                 call: Mapping[str, Any]) -> NodeResult[Any]:
    result = await runtime.invoke("INTERACTION.ACT.TOOL", {"call": call})
    observed = await runtime.invoke("INTERACTION.OBSERVE", {"result": result})
    # The application chooses whether failed observations should enter its working set.
    if observed.status != "success" or observed.output is None:
        raise RuntimeError(observed.error.code if observed.error else observed.status)
    observation = observed.output
    if observation.status != "success":
        raise RuntimeError(observation.error.code if observation.error else observation.status)
    return await runtime.invoke("CONTEXT.UPDATE", {"scope": scope, "ingress": [{
        "id": f"observation:{call['id']}", "sourceNode": "INTERACTION.OBSERVE",
        "content": observation.message.content,
        "metadata": {"callId": call["id"], "source": observation.source, "status": observation.status},
    }]})


# -- Delegating to a separate RETRIEVAL worker -----------------------------------------------------------------------


def remote_context_retrieval(runtime: RuntimeClient, target: Any) -> RagStrategyPipeline:
    class RemoteSearch:
        async def search(self, input: Any) -> Any:
            result = await runtime.invoke("RETRIEVAL.SEARCH", input)
            if result.status != "success" or result.output is None:
                raise RuntimeError(result.error.code if result.error else result.status)
            return result.output

    return context_retrieval(RemoteSearch(), target)


# -- Local cache, queue and reference loading ----------------------------------------------------------------------


async def local_cache_and_queue(config_path: str | Path, env: Mapping[str, str] | None = None) -> dict[str, Any]:
    config = load_runtime_config_file(config_path, dict(os.environ) if env is None else env)
    store = create_in_memory_context_store(config.context.local_cache)
    queue = create_context_operation_queue(config.context.queue)

    class GoalResolver:
        async def resolve(self, reference: Any, options: Any = None) -> str:
            if options is not None:
                options.raise_if_aborted()
            if reference.uri != "urn:goal":
                raise ValueError("Unknown reference")
            return "Explain the retrieval pipeline"

    context = create_context(services={"stateStore": store, "operationQueue": queue,
                                       "referenceResolver": GoalResolver()})
    scope = {"sessionId": "example"}
    await context.load({"scope": scope, "sources": [{"uri": "urn:goal"}], "resolveReferences": True})
    await asyncio.gather(*(context.update({"scope": scope, "add": [{"id": i, "content": i}]}) for i in ("a", "b")))
    selected = await context.select({"scope": scope, "purpose": "infer", "limit": 2},
                                    signal=CancelSignal.timeout(5))
    snapshot = await store.get(scope)
    if snapshot is not None:
        await store.compare_and_set(scope, snapshot.version, snapshot.context)
    queued = await queue.enqueue(scope, _application_operation)
    return {"selected": selected, "snapshot": await store.get(scope), "queued": queued}


async def _application_operation() -> str:
    return "application operation"


# -- python examples/context.py ---------------------------------------------------------------------------------


def _items(context: Context) -> list[str]:
    """``id-prefix: content`` per item: message and reference ids are long hashes, so only their kind is shown."""
    shown = []
    for item in context.items:
        name = item.id.split(":")[0] if ":" in item.id else item.id
        content = item.content if isinstance(item.content, str) else json.dumps(item.content, ensure_ascii=False)
        shown.append(f"{name}: {content[:50]}")
    return shown


async def main() -> dict[str, Any]:
    loaded = await load_context()
    selected = await select_context(loaded)
    updated = await update_context(loaded)
    cached = await cached_context(create_in_memory_context_store())
    direct = await direct_strategies(await create_context().load({"sources": [
        {"role": "system", "content": "rules"}, *({"id": f"note-{n}", "content": f"note {n}"} for n in range(10)),
    ]}))
    return {
        "LOAD (a message, an item, a reference)": _items(loaded),
        "SELECT purpose=infer": _items(selected["infer"].context),
        "SELECT purpose=memory, limit 4": _items(selected["memory"].context),
        "UPDATE (replace goal, add an observation)": _items(updated),
        "COMPRESS maxItems=32 (nothing to drop)": _items(await compress_context(updated)),
        "execute('CONTEXT.LOAD')": _items(await execute_context()),
        "cached scope: SELECT limit 1": _items(cached["selected"].context),
        "cached scope: stored after COMPRESS": _items(cached["full"]),
        "scope without a store": await context_errors(),
        "deterministic_compress of 11 items to 8": _items(direct["compressed"]),
    }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main()), indent=2, ensure_ascii=False))


__all__ = [
    "cached_context",
    "compress_context",
    "context_errors",
    "context_flows",
    "context_retrieval",
    "context_services",
    "context_to_infer",
    "context_to_memory",
    "custom_context_load",
    "direct_strategies",
    "execute_context",
    "load_context",
    "local_cache_and_queue",
    "memory_to_context",
    "rag_context",
    "redis_store",
    "remote_context_retrieval",
    "select_context",
    "setup_context",
    "tool_to_cached_context",
    "update_context",
]
