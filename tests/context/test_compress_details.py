"""COMPRESS details a caller can observe (CX-7): the exact refusal for each way a custom compressor breaks the
contract, the request fields' refusals, how a callId group's re-retrievable flag decides its drop rank, and
which items count as protected."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

import pytest

from ditto.contracts import Context
from ditto.worker.context import (
    ContextError,
    create_context,
    create_context_execution,
    deterministic_compress,
    is_protected_context_item,
)

PROTECTED_CHANGED = ("INVALID_PROVIDER_OUTPUT", "the compressor changed a protected item")
MEMBER_CHANGED = ("INVALID_PROVIDER_OUTPUT", "the compressor changed a callId group member")
REORDERED = ("INVALID_PROVIDER_OUTPUT", "the compressor reordered a callId group")


async def _refusal(awaitable: Awaitable[Any]) -> tuple[str, str]:
    with pytest.raises(ContextError) as caught:
        await awaitable
    return caught.value.code, caught.value.message


def _answering(answer: Any) -> Any:
    async def compress(request: Any) -> Any:
        return answer
    return compress


async def _load(sources: list[dict[str, Any]]) -> Context:
    return await create_context().load({"sources": sources})


async def _compress_with(answer: Any, context: Context, **limits: Any) -> Context:
    return await create_context(services={"compressor": _answering(answer)}).compress({"context": context, **limits})


async def test_changed_or_reordered_kept_groups_are_named() -> None:
    """CX-7: a rewritten protected item, a rewritten callId member and a reordered callId group are refused with
    their own messages, also when an earlier plain item or a wholly dropped group comes first."""
    context = await _load([
        {"id": "plain", "content": "first"},
        {"id": "d1", "content": "gone", "metadata": {"callId": "dropped"}},
        {"id": "d2", "content": "gone too", "metadata": {"callId": "dropped"}},
        {"id": "sys", "content": "rules", "metadata": {"role": "system"}},
        {"id": "c1", "content": "call", "metadata": {"callId": "x"}},
        {"id": "c2", "content": "result", "metadata": {"callId": "x"}}])
    plain, _, _, sys, c1, c2 = context.items
    rules = {"id": "sys", "content": "other rules", "metadata": {"role": "system"}}
    assert await _refusal(_compress_with({"items": [plain, rules, c1, c2]}, context)) == PROTECTED_CHANGED
    member = {"id": "c2", "content": "summary", "metadata": {"callId": "x"}}
    assert await _refusal(_compress_with({"items": [plain, sys, c1, member]}, context)) == MEMBER_CHANGED
    assert await _refusal(_compress_with({"items": [plain, sys, c2, c1]}, context)) == REORDERED
    moved = await _compress_with({"items": [sys, c1, c2, {"id": "plain", "content": "edited"}]}, context)
    assert [item.id for item in moved.items] == ["sys", "c1", "c2", "plain"]  # only a group's own order counts
    kept = await _compress_with({"items": [{"id": "plain", "content": "edited"}, sys, c1, c2]}, context)
    assert [(item.id, item.content) for item in kept.items] == [
        ("plain", "edited"), ("sys", "rules"), ("c1", "call"), ("c2", "result")]


async def test_protected_call_group_member_is_named_as_protected() -> None:
    """CX-7: a callId group holding a protected member is a protected group; changing any member is reported
    as a change to a protected item."""
    context = await _load([{"id": "c1", "content": "call", "metadata": {"callId": "x", "protected": True}},
                           {"id": "c2", "content": "result", "metadata": {"callId": "x"}}])
    c1, _ = context.items
    assert await _refusal(_compress_with(
        {"items": [c1, {"id": "c2", "content": "new", "metadata": {"callId": "x"}}]}, context)) == PROTECTED_CHANGED


async def test_malformed_compressor_output_is_refused_by_name() -> None:
    """CX-7: a compressor answer that is not an object or whose items are not an array is INVALID_PROVIDER_OUTPUT
    naming the compressor output."""
    context = await _load([{"id": "a", "content": "x"}])
    assert await _refusal(_compress_with({"items": "a"}, context)) == (
        "INVALID_PROVIDER_OUTPUT", "compressor output.items must be an array")
    assert await _refusal(_compress_with(["a"], context)) == (
        "INVALID_PROVIDER_OUTPUT", "compressor output must be an object")
    assert await _refusal(_compress_with({"items": [], "extra": 1}, context)) == (
        "INVALID_PROVIDER_OUTPUT", "compressor output has an unknown field 'extra'")


async def test_request_field_refusals_name_the_field() -> None:
    """CX-7: a bad maxItems or maxTokens names that field; an unknown field or a non-object input is refused."""
    client = create_context()
    context = await _load([{"id": "a", "content": "x"}])
    for field in ("maxItems", "maxTokens"):
        code, message = await _refusal(client.compress({"context": context, field: -1}))
        assert code == "INVALID_INPUT" and message.startswith(f"{field} must be an integer from 0 to ")
    assert await _refusal(client.compress({"context": context, "budget": 1})) == (
        "INVALID_INPUT", "input has an unknown field 'budget'")
    assert await _refusal(client.compress(["context"])) == ("INVALID_INPUT", "input must be an object")
    assert (await client.compress({"context": context, "max_items": 0, "maxTokens": None})).items == ()


async def test_a_group_is_re_retrievable_only_when_every_member_is() -> None:
    """CX-7: among equal priority and relevance, re-retrievable groups go first; a callId group counts as
    re-retrievable only if all its members are, whichever member is not."""
    def sources(first: bool, second: bool) -> list[dict[str, Any]]:
        return [{"id": "x1", "content": "a", "metadata": {"callId": "x", "retrievable": first}},
                {"id": "x2", "content": "a", "metadata": {"callId": "x", "retrievable": second}},
                {"id": "y1", "content": "a", "metadata": {"callId": "y", "retrievable": True}},
                {"id": "y2", "content": "a", "metadata": {"callId": "y", "retrievable": True}}]

    client = create_context()
    for first, second in ((True, False), (False, True), (False, False)):
        context = await client.load({"sources": sources(first, second)})
        kept = await client.compress({"context": context, "maxItems": 2})
        assert [item.id for item in kept.items] == ["x1", "x2"], (first, second)
    context = await client.load({"sources": sources(True, True)})
    assert [item.id for item in (await client.compress({"context": context, "maxItems": 2})).items] == ["y1", "y2"]


def test_protected_items_are_recognised_in_both_forms() -> None:
    """CX-7: is_protected_context_item reads a dict or an item; empty, missing or non-object metadata is not
    protected."""
    assert is_protected_context_item({"id": "a", "content": "x", "metadata": {"role": "system"}})
    assert is_protected_context_item({"id": "a", "content": "x", "metadata": {"protected": True}})
    for metadata in ({}, None, "system", ["protected"], {"role": "user"}):
        assert not is_protected_context_item({"id": "a", "content": "x", "metadata": metadata}), metadata
    assert not is_protected_context_item({"id": "a", "content": "x"})
    assert not is_protected_context_item(object())


async def test_direct_compression_names_a_bad_input() -> None:
    """CX-7: the built-in compressor called directly refuses an unknown field or a non-object input by name."""
    execution = create_context_execution()
    context = await _load([{"id": "a", "content": "x"}])
    assert await _refusal(deterministic_compress({"context": context, "budget": 1}, execution)) == (
        "INVALID_INPUT", "input has an unknown field 'budget'")
    assert await _refusal(deterministic_compress("context", execution)) == ("INVALID_INPUT", "input must be an object")


async def test_an_older_unretrievable_group_goes_before_a_newer_single_item() -> None:
    """CX-7: with equal priority and relevance and neither re-retrievable, the group whose latest member is older
    is dropped first, whether it is a callId group or a single item."""
    client = create_context()
    context = await client.load({"sources": [{"id": "g1", "content": "a", "metadata": {"callId": "g"}},
                                             {"id": "g2", "content": "a", "metadata": {"callId": "g"}},
                                             {"id": "s", "content": "a"}]})
    assert [item.id for item in (await client.compress({"context": context, "maxItems": 2})).items] == ["s"]
    context = await client.load({"sources": [{"id": "s", "content": "a"},
                                             {"id": "g1", "content": "a", "metadata": {"callId": "g"}},
                                             {"id": "g2", "content": "a", "metadata": {"callId": "g"}}]})
    assert [item.id for item in (await client.compress({"context": context, "maxItems": 2})).items] == ["g1", "g2"]


async def test_put_back_counts_every_group_it_restores() -> None:
    """CX-7: putting dropped groups back adds each one's tokens to the total, so a later, cheaper group that would
    overflow the budget stays out: the result never exceeds maxTokens."""
    client = create_context()
    context = await client.load({"sources": [{"id": "a", "content": "x", "metadata": {"priority": 0}},
                                             {"id": "b", "content": "x", "metadata": {"priority": 0.1}},
                                             {"id": "c", "content": "xxxxxx", "metadata": {"priority": 0.2}},
                                             {"id": "d", "content": "xxxxxx", "metadata": {"priority": 1}}]})
    kept = await client.compress({"context": context, "maxTokens": 3})
    assert [item.id for item in kept.items] == ["b", "d"]
