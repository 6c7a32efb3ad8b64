"""SELECT ``order``: ranking order by default, working-set order on request (CX-6, seed 001 lines 80, 143)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ditto import create_ditto
from ditto.contracts import Context
from ditto.worker.context import (
    ContextSelectRequest,
    create_context,
    create_context_worker,
    create_rag_strategy,
    run_rag_flow,
)

from .helpers import RecordingInfer, error_code

CHAT: list[dict[str, Any]] = [
    {"id": "q1", "content": "What does the API return?", "metadata": {"role": "user"}},
    {"id": "a1", "content": "The API returns JSON.", "metadata": {"role": "assistant"}},
    {"id": "q2", "content": "And the cache?", "metadata": {"role": "user", "currentGoal": True}},
]


async def test_default_is_ranking_order_and_context_order_is_the_chat() -> None:
    """CX-6 (seed 001 lines 80, 143): the default keeps the ranking; ``order: "context"`` gives the chat order."""
    client = create_context()
    context = await client.load({"sources": CHAT})
    ranked = await client.select({"context": context, "purpose": "infer"})
    assert ranked.selected_item_ids == ("q2", "a1", "q1")
    chat = await client.select({"context": context, "purpose": "infer", "order": "context"})
    assert chat.selected_item_ids == ("q1", "a1", "q2")
    assert [item.id for item in chat.context.items] == ["q1", "a1", "q2"]
    typed = await client.select(ContextSelectRequest(context=context, purpose="infer", order="context"))
    assert typed.selected_item_ids == chat.selected_item_ids


async def test_context_order_keeps_the_same_choice() -> None:
    """CX-6 (seed 001 line 80): the limit and budget pick by ranking first; only the output order changes."""
    client = create_context()
    context = await client.load({"sources": CHAT})
    ranked = await client.select({"context": context, "purpose": "infer", "limit": 2})
    chat = await client.select({"context": context, "purpose": "infer", "limit": 2, "order": "context"})
    assert ranked.selected_item_ids == ("q2", "a1")
    assert chat.selected_item_ids == ("a1", "q2")


async def test_rag_items_outside_the_working_set_follow_in_ranking_order() -> None:
    """CX-6 CX-14 RT-8 (seed 001 lines 127, 145): retrieved items not in the context come after, in rank order."""
    async def retrieve(stage: Any) -> list[dict[str, Any]]:
        return [{"item": {"id": "doc-2", "content": "two"}}, {"item": {"id": "a1", "content": "x"}},
                {"item": {"id": "doc-1", "content": "one"}}, {"item": {"id": "q1", "content": "y"}}]

    services = {"ragStrategy": create_rag_strategy(retrieve=retrieve)}
    runtime = create_ditto(workers=[create_context_worker(services=services)])
    try:
        context = await create_context().load({"sources": CHAT})
        flow = await run_rag_flow(runtime, context=context, query="api", order="context")
        assert flow.output.selected_item_ids == ("q1", "a1", "doc-2", "doc-1")
        plain = await run_rag_flow(runtime, context=context, query="api")
        assert plain.output.selected_item_ids == ("doc-2", "a1", "doc-1", "q1")
    finally:
        await runtime.close()


async def test_bad_order_is_invalid_input() -> None:
    """CX-8: an unknown order is INVALID_INPUT."""
    client = create_context()
    for order in ("chronological", 1, ["context"]):
        assert await error_code(client.select({"context": Context(), "purpose": "infer", "order": order})) \
            == "INVALID_INPUT"


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=5), min_size=1, max_size=12),
       st.integers(min_value=0, max_value=12), st.sampled_from(["infer", "memory"]))
async def test_context_order_is_a_permutation_in_working_set_order(priorities: list[int], limit: int,
                                                                   purpose: str) -> None:
    """CX-6: for any context, ``order: "context"`` returns the ranking's items sorted by working-set position."""
    client = create_context()
    context = await client.load({"sources": [
        {"id": f"i{index}", "content": f"item {index}", "metadata": {"priority": priority}}
        for index, priority in enumerate(priorities)]})
    ranked = await client.select({"context": context, "purpose": purpose, "limit": limit})
    chat = await client.select({"context": context, "purpose": purpose, "limit": limit, "order": "context"})
    position = {item.id: index for index, item in enumerate(context.items)}
    assert chat.selected_item_ids == tuple(sorted(ranked.selected_item_ids, key=position.__getitem__))


async def test_infer_example_hands_the_model_the_chat_in_order() -> None:
    """CX-6 (seed 001 line 143): SELECT purpose=infer → messages → INFER reads q1, a1, q2 (not q2, a1, q1)."""
    from examples import context as examples

    infer = RecordingInfer()
    context = await create_context().load({"sources": CHAT})
    await examples.context_to_infer(context, infer, {"name": "model"})
    assert [message["content"] for message in infer.seen[0]["messages"][:3]] == [item["content"] for item in CHAT]
