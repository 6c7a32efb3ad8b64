"""The CONTEXT worker through a real runtime (CX-1, CX-15, RT-4) and the flows (RT-8)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ditto import create_ditto
from ditto.contracts import Context, ContextSelection
from ditto.runtime import WorkerDefinition
from ditto.signal import AbortController
from ditto.worker.context import (
    ContextError,
    context_compress_node,
    context_load_node,
    context_select_node,
    context_update_node,
    create_context,
    create_context_worker,
    create_in_memory_context_store,
    create_rag_strategy,
    run_rag_flow,
    run_skill_flow,
)
from tests.context.helpers import until


async def test_four_nodes_and_error_codes_in_node_results() -> None:
    """CX-1: create_context_worker registers LOAD/UPDATE/SELECT/COMPRESS; failures are NodeResult errors."""
    runtime = create_ditto(workers=[create_context_worker()])
    try:
        info = runtime.workers()[0]
        assert info.type == "CONTEXT" and set(info.capabilities) == {
            "CONTEXT.LOAD", "CONTEXT.UPDATE", "CONTEXT.SELECT", "CONTEXT.COMPRESS"}
        loaded = await runtime.invoke("CONTEXT.LOAD", {"sources": [{"id": "a", "content": "alpha"}]})
        assert loaded.status == "success" and isinstance(loaded.output, Context)
        updated = await runtime.invoke("CONTEXT.UPDATE", {"context": loaded.output, "add": [{"id": "b", "content": 2}]})
        selected = await runtime.invoke("CONTEXT.SELECT", {"context": updated.output, "purpose": "infer", "limit": 1})
        assert isinstance(selected.output, ContextSelection) and selected.output.selected_item_ids == ("b",)
        compressed = await runtime.invoke("CONTEXT.COMPRESS", {"context": updated.output, "max_items": 1})
        assert [i.id for i in compressed.output.items] == ["b"]
        cases = [
            ("CONTEXT.SELECT", {"context": {"items": []}, "purpose": "nope"}, "INVALID_INPUT"),
            ("CONTEXT.SELECT", {"context": {"items": []}, "purpose": "infer", "strategy": {"kind": "rag"}},
             "STRATEGY_UNAVAILABLE"),
            ("CONTEXT.LOAD", {"scope": {"sessionId": "x"}}, "STATE_STORE_UNAVAILABLE"),
            ("CONTEXT.UPDATE", {"context": loaded.output, "ingress": [{"id": "i", "content": 1}]}, "INVALID_INPUT"),
            ("CONTEXT.COMPRESS", {"context": {"items": [{"id": "s", "content": "x" * 40,
                                                         "metadata": {"role": "system"}}]}, "maxTokens": 1},
             "BUDGET_UNSATISFIABLE"),
        ]
        for node, payload, code in cases:
            result = await runtime.invoke(node, payload)
            assert result.status == "error" and result.error is not None and result.error.code == code, (node, code)
    finally:
        await runtime.close()


async def test_services_factory_runs_once_per_replica_and_concurrency() -> None:
    """CX-15: servicesFactory creates services once per local replica and wins over services."""
    made: list[Any] = []

    def factory() -> dict[str, Any]:
        store = create_in_memory_context_store()
        made.append(store)
        return {"stateStore": store}

    shared = create_in_memory_context_store()
    definition = create_context_worker(services={"stateStore": shared}, services_factory=factory, concurrency=2)
    assert made == []
    runtime = create_ditto(workers=[definition, definition])
    try:
        assert len(made) == 2
        assert [w.concurrency for w in runtime.workers()] == [2, 2]
        scope = {"sessionId": "replica"}
        first = await runtime.invoke("CONTEXT.LOAD", {"scope": scope, "sources": [{"id": "a", "content": 1}]})
        assert first.status == "success"
        assert await shared.get(scope) is None  # the factory's services were used, not `services`
        assert sum(1 for store in made if len(store) == 1) == 1
    finally:
        await runtime.close()
    plain = create_context_worker(services={"stateStore": shared})
    runtime = create_ditto(workers=[plain, plain])  # no factory: every replica shares the services
    try:
        for _ in range(2):
            await runtime.invoke("CONTEXT.LOAD", {"scope": {"sessionId": "s"}, "sources": []})
        assert len(shared) == 1
    finally:
        await runtime.close()
    with pytest.raises(ContextError):
        create_context_worker(concurrency=0)
    with pytest.raises(ContextError):
        create_context({"concurrency": 3})


async def test_concurrency_rejects_when_full_and_signal_reaches_ports() -> None:
    """CX-1 CX-15: concurrency caps top-level calls; ctx.signal reaches ports; runtime is passed on."""
    gate = asyncio.Event()
    seen: list[Any] = []

    async def resolve(reference: Any, options: Any) -> str:
        seen.append(options)
        await gate.wait()
        return "body"

    runtime = create_ditto(workers=[create_context_worker(services={"referenceResolver": resolve}, concurrency=1)])
    try:
        request = {"sources": [{"uri": "urn:x"}], "resolveReferences": True}
        controller = AbortController()
        first = asyncio.create_task(runtime.invoke("CONTEXT.LOAD", request, signal=controller.signal))
        await until(lambda: bool(seen))
        busy = await runtime.invoke("CONTEXT.LOAD", request)
        assert busy.status == "rejected"
        assert seen[0].signal is controller.signal and seen[0].runtime is not None
        controller.abort()
        cancelled = await first
        assert cancelled.status == "cancelled"
        gate.set()
        done = await runtime.invoke("CONTEXT.LOAD", request)
        assert done.status == "success" and done.output.items[0].content == "body"
    finally:
        await runtime.close()


def test_node_descriptors() -> None:
    """RT-4: descriptors carry the node type and define a one-node worker without registering it."""
    assert [d.type for d in (context_load_node, context_select_node, context_update_node, context_compress_node)] == [
        "CONTEXT.LOAD", "CONTEXT.SELECT", "CONTEXT.UPDATE", "CONTEXT.COMPRESS"]

    async def handler(input: Any, ctx: Any) -> Any:
        return await create_context().select(input)

    definition = context_select_node.define("CONTEXT", handler)
    assert isinstance(definition, WorkerDefinition) and definition.capabilities == ("CONTEXT.SELECT",)


async def test_run_rag_flow_and_run_skill_flow() -> None:
    """RT-8: run_skill_flow LOADs (and UPDATEs) through the runtime; run_rag_flow SELECTs with the rag strategy."""
    requests: list[Any] = []

    async def retrieve(input: Any) -> list[dict[str, Any]]:
        requests.append(input)
        return [{"item": item, "score": 0.5} for item in reversed(input.items)]

    runtime = create_ditto(workers=[create_context_worker(services={"ragStrategy": create_rag_strategy(
        retrieve=retrieve)})])
    try:
        base = await create_context().load({"sources": [{"id": "task", "content": "Review"}]})
        skill = await run_skill_flow(runtime, sources=[{"id": "skill", "content": "Check correctness."}],
                                     context=base)
        assert [i.id for i in skill.output.items] == ["skill"]
        assert [i.id for i in skill.context.items] == ["task", "skill"]
        rag = await run_rag_flow(runtime, context=skill.context, query="API", corpus={"uri": "urn:docs"},
                                 limit=1, max_tokens=100, options={"k": 3})
        assert rag.output.selected_item_ids == ("skill",) and rag.context == skill.context
        assert requests[0].query == "API" and requests[0].corpus.uri == "urn:docs" and requests[0].options == {"k": 3}
        assert rag.output.context.items[0].metadata is None  # the score is not merged into the item
        with pytest.raises(ContextError) as caught:
            await run_rag_flow(create_ditto(workers=[create_context_worker()]), context=base, query="x")
        assert caught.value.code == "STRATEGY_UNAVAILABLE"
    finally:
        await runtime.close()


async def test_rag_strategy_stages_and_output_checks() -> None:
    """CX-14: embed → retrieve → rank, first item per id, candidate output validated."""
    order: list[str] = []

    class Embed:
        async def embed(self, input: Any, options: Any) -> list[float]:
            order.append("embed")
            return [0.1, 0.2]

    class Retrieve:
        async def retrieve(self, input: Any, options: Any) -> list[Any]:
            order.append("retrieve")
            assert input.embedding == [0.1, 0.2]
            return [{"item": {"id": "a", "content": 1}, "score": 1}, {"item": {"id": "b", "content": 2}},
                    {"item": {"id": "a", "content": "dup"}}]

    class Rank:
        async def rank(self, input: Any, options: Any) -> list[Any]:
            order.append("rank")
            return list(reversed(input.candidates))

    strategy = create_rag_strategy(embed=Embed(), retrieve=Retrieve(), rank=Rank())
    client = create_context(services={"ragStrategy": strategy})
    picked = await client.select({"context": {"items": []}, "purpose": "infer", "query": "q",
                                  "strategy": {"kind": "rag"}})
    assert order == ["embed", "retrieve", "rank"]
    assert [(i.id, i.content) for i in picked.context.items] == [("a", "dup"), ("b", 2)]
    for bad in ([{"score": 1}], [{"item": {"id": "a", "content": 1}, "score": float("nan")}], {"item": 1},
                [{"item": {"id": "", "content": 1}}]):
        broken = create_context(services={"ragStrategy": create_rag_strategy(retrieve=lambda input, b=bad: b)})
        with pytest.raises(ContextError) as caught:
            await broken.select({"context": {"items": []}, "purpose": "infer", "strategy": {"kind": "rag"}})
        assert caught.value.code == "INVALID_PROVIDER_OUTPUT"
    with pytest.raises(ContextError):
        create_rag_strategy(retrieve=None)
