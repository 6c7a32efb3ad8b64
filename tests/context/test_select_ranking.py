"""SELECT's default ranking weights and provider output handling, pinned by hand-computed orders (CX-6).

score = priority + relevance + 1.0 × (share of query terms in the item) + 0.1 × position / (n - 1), with
the preferred group (system/protected/currentGoal for infer) first; each case below sits on a boundary of
those weights, so a changed weight or divisor changes the order.
"""

from __future__ import annotations

from typing import Any

import pytest

from ditto.worker.context import ContextError, create_context


async def _order(sources: list[dict[str, Any]], **request: Any) -> list[str]:
    client = create_context()
    context = await client.load({"sources": sources})
    selection = await client.select({"context": context, "purpose": "infer", **request})
    return list(selection.selected_item_ids)


async def test_position_weight_is_a_tenth_spread_over_the_context() -> None:
    """CX-6: the newest of n items gets +0.1 and the others 0.1·i/(n-1): a priority of 0.11 beats the newest
    of three, 0.06 does not beat it; of two items the newer gets the full 0.1."""
    three = [{"id": "old", "content": "x", "metadata": {"priority": 0.11}}, {"id": "mid", "content": "y"},
             {"id": "new", "content": "z"}]
    assert await _order(three) == ["old", "new", "mid"]
    three[0]["metadata"] = {"priority": 0.06}
    assert await _order(three) == ["new", "old", "mid"]  # 0.1 > 0.06 > 0.05
    two = [{"id": "old", "content": "x", "metadata": {"priority": 0.07}}, {"id": "new", "content": "z"}]
    assert await _order(two) == ["new", "old"]
    one = [{"id": "only", "content": "x"}]
    assert await _order(one) == ["only"]


async def test_query_share_is_one_over_the_number_of_query_terms() -> None:
    """CX-6: matching one of two query terms adds 0.5, less than a priority of 0.6 and more than 0.4."""
    sources = [{"id": "prio", "content": "nothing", "metadata": {"priority": 0.6}},
               {"id": "match", "content": "alpha"}, {"id": "none", "content": "other"}]
    assert await _order(sources, query="alpha bravo") == ["prio", "match", "none"]
    sources[0]["metadata"] = {"priority": 0.4}
    assert await _order(sources, query="alpha bravo") == ["match", "prio", "none"]


async def test_preferred_items_are_ranked_by_score_too() -> None:
    """CX-6: inside the preferred group (system, protected, current goal) the score orders items, not their
    position alone."""
    sources = [{"id": "sys", "content": "rules", "metadata": {"role": "system"}},
               {"id": "goal", "content": "find the alpha report", "metadata": {"currentGoal": True}},
               {"id": "keep", "content": "other", "metadata": {"protected": True}},
               {"id": "plain", "content": "alpha"}]
    assert await _order(sources, query="rules") == ["sys", "keep", "goal", "plain"]
    assert await _order(sources, query="alpha") == ["goal", "keep", "sys", "plain"]


async def test_order_option() -> None:
    """CX-6: order "context" returns the same choice in working-set order; anything else is refused."""
    sources = [{"id": "a", "content": "x"}, {"id": "b", "content": "alpha"}, {"id": "c", "content": "y"}]
    assert await _order(sources, query="alpha", limit=2) == ["b", "c"]
    assert await _order(sources, query="alpha", limit=2, order="ranking") == ["b", "c"]
    assert await _order(sources, limit=2) == ["c", "b"]  # newest first
    assert await _order(sources, limit=2, order="context") == ["b", "c"]
    assert await _order(sources, query="alpha", order="context") == ["a", "b", "c"]
    with pytest.raises(ContextError) as refused:
        await _order(sources, order="newest")
    assert (refused.value.code, refused.value.message) == ("INVALID_INPUT", "order must be ranking or context")


class Selector:
    def __init__(self, answer: Any) -> None:
        self.answer = answer

    async def select(self, request: Any) -> Any:
        return self.answer


async def test_provider_output_is_checked_and_deduplicated() -> None:
    """CX-6: a selector's answer must be a list of items within the inline limit; a repeated id counts once
    and the items after it are still considered."""
    client = create_context(policy={"maxInlineBytes": 10})
    context = await client.load({"sources": [{"id": "a", "content": "x"}]})
    request = {"context": context, "purpose": "infer", "strategy": {"kind": "provider", "name": "s"}}
    for answer in ("abc", b"abc", {"items": []}, 5):
        picky = create_context(policy={"maxInlineBytes": 10}, services={"selector": Selector(answer)})
        with pytest.raises(ContextError) as refused:
            await picky.select(request)
        assert (refused.value.code, refused.value.message) == (
            "INVALID_PROVIDER_OUTPUT", "the selector must return an array of context items")
    bulky = create_context(policy={"maxInlineBytes": 10},
                           services={"selector": Selector([{"id": "big", "content": "x" * 20}])})
    with pytest.raises(ContextError) as too_big:
        await bulky.select(request)
    assert too_big.value.code == "INVALID_PROVIDER_OUTPUT"
    repeated = create_context(services={"selector": Selector([{"id": "a", "content": 1}, {"id": "a", "content": 2},
                                                               {"id": "b", "content": 3}])})
    chosen = await repeated.select({**request, "limit": 5})
    assert chosen.selected_item_ids == ("a", "b") and chosen.context.items[0].content == 1


async def test_plain_dict_context_ranks_by_query_like_a_loaded_one() -> None:
    """CX-6: a context passed as plain dicts (scanned once, not memoised) ranks query matches first too."""
    client = create_context()
    items = [{"id": "a", "content": "alpha report"}, {"id": "b", "content": "bravo"}, {"id": "c", "content": "x"}]
    plain = await client.select({"context": {"items": items}, "purpose": "infer", "query": "alpha"})
    loaded = await client.select({"context": await client.load({"sources": items}), "purpose": "infer",
                                  "query": "alpha"})
    assert plain.selected_item_ids == loaded.selected_item_ids == ("a", "c", "b")
