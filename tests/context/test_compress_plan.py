"""COMPRESS's drop plan, pinned by hand-worked cases (CX-7): a callId group is ranked by its best member,
weighs the sum of its members' tokens, greedy drops are put back when they fit exactly, and a custom
compressor is asked with the effective limits after the protected items were checked."""

from __future__ import annotations

from typing import Any

import pytest

from ditto.worker.context import ContextError, create_context


async def _kept(sources: list[dict[str, Any]], **limits: Any) -> list[str]:
    client = create_context()
    context = await client.load({"sources": sources})
    return [item.id for item in (await client.compress({"context": context, **limits})).items]


async def test_a_group_ranks_by_its_best_priority_and_relevance() -> None:
    """CX-7: a callId group's drop key is the highest priority and the highest relevance of its members."""
    by_priority = [{"id": "c1", "content": "x", "metadata": {"callId": "k", "priority": 0, "relevance": 0.8}},
                   {"id": "c2", "content": "x", "metadata": {"callId": "k", "priority": 0.3}},
                   {"id": "s", "content": "x", "metadata": {"priority": 0.5}}]
    assert await _kept(by_priority, maxItems=2) == ["s"]  # the group (0.3) goes first; it cannot come back
    by_priority[1]["metadata"] = {"callId": "k", "priority": 0.6}
    assert await _kept(by_priority, maxItems=2) == ["c1", "c2"]
    by_relevance = [{"id": "c1", "content": "x", "metadata": {"callId": "k", "priority": 0.8}},
                    {"id": "c2", "content": "x", "metadata": {"callId": "k", "relevance": 0.3}},
                    {"id": "s", "content": "x", "metadata": {"priority": 0.8, "relevance": 0.5}}]
    assert await _kept(by_relevance, maxItems=2) == ["s"]


async def test_a_group_weighs_all_its_tokens() -> None:
    """CX-7: dropping a two-item group frees both items' tokens (1 + 1), which is what lets the rest fit."""
    sources = [{"id": "c1", "content": "x", "metadata": {"callId": "k"}},
               {"id": "c2", "content": "x", "metadata": {"callId": "k"}},
               {"id": "s", "content": "x", "metadata": {"priority": 1}}]
    assert await _kept(sources, maxTokens=1) == ["s"]
    assert await _kept(sources, maxTokens=2) == ["s"]
    assert await _kept(sources, maxTokens=3) == ["c1", "c2", "s"]


async def test_greedy_drops_are_put_back_when_they_fit_exactly() -> None:
    """CX-7: dropping the cheapest item first is not enough; once the big one is gone the cheap one fits
    again exactly at the budget and is put back."""
    sources = [{"id": "s1", "content": "x", "metadata": {"priority": 0}},
               {"id": "big", "content": "xxxxxx", "metadata": {"priority": 0.5}},  # 8 bytes → 2 tokens
               {"id": "s2", "content": "x", "metadata": {"priority": 1}},
               {"id": "s3", "content": "x", "metadata": {"priority": 1}}]
    assert await _kept(sources, maxTokens=3) == ["s1", "s2", "s3"]
    assert await _kept(sources, maxTokens=5) == ["s1", "big", "s2", "s3"]
    assert await _kept(sources, maxTokens=4) == ["big", "s2", "s3"]


class Recorder:
    def __init__(self) -> None:
        self.requests: list[Any] = []

    async def compress(self, request: Any) -> dict[str, Any]:
        self.requests.append(request)
        items = list(request.context.items)
        return {"items": [items[0], items[-1]]}


async def test_custom_compressor_gets_effective_limits_after_the_protected_check() -> None:
    """CX-7: the custom compressor is not called when the protected items alone exceed the token budget, and
    otherwise receives the request's limits tightened by the policy."""
    recorder = Recorder()
    client = create_context(policy={"maxItems": 3, "maxTokens": 50}, services={"compressor": recorder})
    context = await create_context().load({"sources": [
        {"id": "p", "content": "x" * 30, "metadata": {"protected": True}},
        *({"id": f"i{n}", "content": "x"} for n in range(4))]})
    with pytest.raises(ContextError) as refused:
        await client.compress({"context": context, "maxTokens": 5})
    assert refused.value.code == "BUDGET_UNSATISFIABLE" and recorder.requests == []
    compressed = await client.compress({"context": context, "maxItems": 100, "maxTokens": 1000})
    assert [item.id for item in compressed.items] == ["p", "i3"]
    (request,) = recorder.requests
    assert (request.max_items, request.max_tokens) == (3, 50)
