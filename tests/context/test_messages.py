"""CONTEXT refusals with their public messages (CX-2, CX-5, CX-6, CX-7, CX-8, CX-10).

The other CONTEXT tests check codes; these pin the message a caller reads for each refusal, so a refusal
raised from the wrong branch (same code, other reason) is caught too.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from redis.asyncio import Redis

from ditto.worker.context import (
    ContextError,
    RedisContextStore,
    create_context,
)

ITEMS = [{"id": "a", "content": "alpha"}, {"id": "b", "content": "bravo"}]


async def _refusal(call: Callable[[], Awaitable[Any]] | Callable[[], Any]) -> tuple[str, str]:
    with pytest.raises(ContextError) as caught:
        result = call()
        if isinstance(result, Awaitable):
            await result
    return caught.value.code, caught.value.message


class Compressor:
    """A custom compressor that answers with the items whose ids it was given."""

    def __init__(self, keep: list[str] | None = None, extra: list[dict[str, Any]] | None = None) -> None:
        self.keep = keep
        self.extra = extra or []

    async def compress(self, request: Any) -> dict[str, Any]:
        kept = [item for item in request.context.items if self.keep is None or item.id in self.keep]
        return {"items": [*kept, *self.extra]}


class Selector:
    def __init__(self, answer: Any) -> None:
        self.answer = answer

    async def select(self, request: Any) -> Any:
        return self.answer


async def test_policy_refusals() -> None:
    """CX-2: each bad policy value names the field and its allowed values."""
    cases = [
        ({"maxItems": 0}, "policy.maxItems: Input should be greater than or equal to 1"),
        ({"maxItems": 1_000_001}, "policy.maxItems: Input should be less than or equal to 1000000"),
        ({"maxInlineBytes": True}, "policy.maxInlineBytes: Input should be a valid integer"),
        ({"maxTokens": 0}, "policy.maxTokens: Input should be greater than or equal to 1"),
        ({"duplicate": "merge"}, "policy.duplicate: Input should be 'replace', 'keep-first' or 'reject'"),
        ({"missingRemoval": "warn"}, "policy.missingRemoval: Input should be 'ignore' or 'reject'"),
    ]
    for policy, message in cases:
        assert await _refusal(lambda policy=policy: create_context(policy=policy)) == ("INVALID_INPUT", message)
    edges = create_context(policy={"maxItems": 1_000_000, "maxInlineBytes": 1, "maxTokens": 1}).execution.policy
    assert (edges.max_items, edges.max_inline_bytes, edges.max_tokens) == (1_000_000, 1, 1)


async def test_select_refusals() -> None:
    """CX-6/CX-8: strategy and request refusals name what is wrong."""
    client = create_context()
    context = await client.load({"sources": ITEMS})
    base = {"context": context, "purpose": "infer"}
    cases: list[tuple[dict[str, Any], tuple[str, str]]] = [
        ({"purpose": "infer"}, ("INVALID_INPUT", "context is required")),
        ({"context": context, "purpose": "learn"}, ("INVALID_INPUT", "purpose must be infer or memory")),
        ({**base, "strategy": "default"}, ("INVALID_INPUT", "strategy must be an object")),
        ({**base, "strategy": {"kind": 3}}, ("INVALID_INPUT", "strategy.kind must be a string")),
        ({**base, "strategy": {"kind": "magic"}},
         ("STRATEGY_UNAVAILABLE", "the selection strategy 'magic' is not supported")),
        ({**base, "strategy": {"kind": "default", "name": "x", "options": {}}},
         ("INVALID_INPUT", "strategy default does not take name, options")),
        ({**base, "strategy": {"kind": "provider"}}, ("INVALID_INPUT", "strategy provider needs a name")),
        ({**base, "strategy": {"kind": "provider", "name": "x", "options": [1]}},
         ("INVALID_INPUT", "strategy.options must be an object")),
        ({**base, "strategy": {"kind": "provider", "name": "x"}},
         ("STRATEGY_UNAVAILABLE", "strategy provider needs services.selector")),
        ({**base, "strategy": {"kind": "rag"}}, ("STRATEGY_UNAVAILABLE", "strategy rag needs services.ragStrategy")),
    ]
    for request, expected in cases:
        assert await _refusal(lambda request=request: client.select(request)) == expected, request
    broken = create_context(services={"selector": Selector({"items": []})})
    assert await _refusal(lambda: broken.select({**base, "strategy": {"kind": "provider", "name": "x"}})) == (
        "INVALID_PROVIDER_OUTPUT", "the selector must return an array of context items")


async def test_compress_refusals() -> None:
    """CX-7: COMPRESS refusals, for the built-in compressor and a custom one that breaks the rules."""
    client = create_context()
    protected = await client.load({"sources": [{"id": "p", "content": "x" * 40, "metadata": {"protected": True}},
                                               {"id": "q", "content": "y", "metadata": {"pending": True}},
                                               {"id": "c1", "content": "one", "metadata": {"callId": "k"}},
                                               {"id": "c2", "content": "two", "metadata": {"callId": "k"}},
                                               {"id": "free", "content": "z"}]})
    assert await _refusal(lambda: client.compress({"maxItems": 1})) == ("INVALID_INPUT", "context is required")
    budget = ("BUDGET_UNSATISFIABLE", "the protected items alone do not fit the item or token budget")
    assert await _refusal(lambda: client.compress({"context": protected, "maxItems": 1})) == budget
    assert await _refusal(lambda: client.compress({"context": protected, "maxTokens": 5})) == budget
    kept = await client.compress({"context": protected, "maxItems": 2})
    assert [item.id for item in kept.items] == ["p", "q"]  # exactly the protected ones fit
    cases: list[tuple[Compressor, dict[str, Any], str]] = [
        (Compressor(extra=[{"id": "new", "content": 1}]), {},
         "the compressor added items that were not in the context"),
        (Compressor(keep=["q", "c1", "c2", "free"]), {}, "the compressor dropped a protected item"),
        (Compressor(keep=["p", "q", "c1"]), {}, "the compressor split a callId group"),
        (Compressor(), {"maxItems": 4}, "the compressor output exceeds maxItems"),
        (Compressor(keep=["p", "q", "free"]), {"maxTokens": 12}, "the compressor output exceeds maxTokens"),
    ]
    for compressor, limits, message in cases:
        custom = create_context(services={"compressor": compressor})
        assert await _refusal(lambda custom=custom, limits=limits: custom.compress(
            {"context": protected, **limits})) == ("INVALID_PROVIDER_OUTPUT", message)
    fits = create_context(services={"compressor": Compressor(keep=["p", "q", "free"])})
    assert [i.id for i in (await fits.compress({"context": protected, "maxTokens": 13})).items] == ["p", "q", "free"]


async def test_merge_refusals() -> None:
    """CX-2/CX-5: item limit, inline limit, duplicates and missing removals name the item and the limit."""
    strict = create_context(policy={"maxItems": 2, "maxInlineBytes": 8, "duplicate": "reject",
                                    "missingRemoval": "reject"})
    context = await strict.load({"sources": ITEMS})
    assert await _refusal(lambda: strict.update({"context": context, "add": [{"id": "c", "content": 1}]})) == (
        "ITEM_LIMIT_EXCEEDED", "the context would hold 3 items; the limit is 2")
    assert await _refusal(lambda: strict.update({"context": context, "removeIds": ["a"],
                                                 "add": [{"id": "c", "content": "123456789"}]})) == (
        "INLINE_LIMIT_EXCEEDED", "item 'c' has more than 8 bytes of inline content")
    assert await _refusal(lambda: strict.update({"context": context, "add": [{"id": "a", "content": 1}]})) == (
        "DUPLICATE_ITEM", "an item with id 'a' already exists")
    assert await _refusal(lambda: strict.update({"context": context, "removeIds": ["zz"]})) == (
        "MISSING_ITEM", "cannot remove 'zz': no such item")
    exact = await strict.update({"context": context, "removeIds": ["a"], "add": [{"id": "c", "content": "123456"}]})
    assert [item.id for item in exact.items] == ["b", "c"]  # 8 bytes with its quotes: at the limit, accepted


def test_redis_store_construction_refusals() -> None:
    """CX-10: the Redis store refuses a client without get/eval, a TTL outside 1..2147483647 and a
    non-string prefix."""
    client = Redis()  # not connected: construction does no I/O
    cases: list[tuple[Callable[[], Any], str]] = [
        (lambda: RedisContextStore(object()), "the Redis store needs a client with get() and eval()"),  # type: ignore[arg-type]
        (lambda: RedisContextStore(None), "the Redis store needs a client with get() and eval()"),  # type: ignore[arg-type]
        (lambda: RedisContextStore(client, ttl_ms=0), "ttlMs must be an integer from 1 to 2147483647"),
        (lambda: RedisContextStore(client, ttl_ms=2_147_483_648), "ttlMs must be an integer from 1 to 2147483647"),
        (lambda: RedisContextStore(client, ttl_ms=True), "ttlMs must be an integer from 1 to 2147483647"),
        (lambda: RedisContextStore(client, key_prefix=5), "keyPrefix must be a string"),  # type: ignore[arg-type]
    ]
    for attempt, message in cases:
        with pytest.raises(ContextError) as caught:
            attempt()
        assert (caught.value.code, caught.value.message) == ("INVALID_INPUT", message)
    edges = RedisContextStore(client, ttl_ms=2_147_483_647, key_prefix="")
    assert (edges.ttl_ms, edges.key_prefix) == (2_147_483_647, "")
    assert RedisContextStore(client, ttl_ms=1).ttl_ms == 1


async def test_load_and_update_shape_refusals() -> None:
    """CX-1/CX-5: LOAD's sources and UPDATE's lists must be arrays (a string, bytes or object is not), and an
    ingress item needs its content; each refusal names the field."""
    client = create_context()
    for sources in ("text", b"xy", {"id": "a", "content": 1}, 5):
        assert await _refusal(lambda sources=sources: client.load({"sources": sources})) == (
            "INVALID_INPUT", "sources must be an array")
    context = await client.load({"sources": ITEMS})
    for field in ("add", "removeIds", "ingress"):
        for value in ("ab", b"ab", {"id": "x"}):
            assert await _refusal(lambda field=field, value=value: client.update(
                {"context": context, field: value})) == ("INVALID_INPUT", f"{field} must be an array")
    assert await _refusal(lambda: client.update({"context": context, "ingress": [
        {"id": "obs", "sourceNode": "INTERACTION.OBSERVE"}]})) == ("INVALID_INPUT", "ingress[0].content is required")
    observed = await client.update({"context": context, "ingress": [
        {"id": "obs", "sourceNode": "INTERACTION.OBSERVE", "content": None}]})
    assert observed.items[-1].id == "obs" and observed.items[-1].content is None
