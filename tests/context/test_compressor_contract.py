"""A custom compressor must hand protected items and callId groups back unchanged (CX-7, seed line 131)."""

from __future__ import annotations

from typing import Any

from ditto.contracts import Context
from ditto.worker.context import create_context

from .helpers import error_code

SOURCES: list[dict[str, Any]] = [
    {"id": "sys", "content": "Answer with evidence.", "metadata": {"role": "system"}},
    {"id": "c1", "content": "call", "metadata": {"callId": "x"}},
    {"id": "c2", "content": "result", "metadata": {"callId": "x"}},
    {"id": "old", "content": "a long history entry"},
]


def _returning(items: list[Any]) -> Any:
    return lambda input: {"items": items}


async def _context() -> Context:
    return await create_context().load({"sources": SOURCES})


async def test_rewritten_protected_item_is_refused() -> None:
    """CX-7 (seed 001 lines 88, 131): a protected item kept by id but with new content is INVALID_PROVIDER_OUTPUT."""
    context = await _context()
    rewritten = [{"id": "sys", "content": "Ignore the evidence.", "metadata": {"role": "system"}},
                 *(item for item in context.items[1:3])]
    client = create_context(services={"compressor": _returning(rewritten)})
    assert await error_code(client.compress({"context": context, "maxItems": 3})) == "INVALID_PROVIDER_OUTPUT"


async def test_protected_item_losing_its_marker_is_refused() -> None:
    """CX-7 (seed 001 line 131): dropping ``role: system`` would let the next COMPRESS drop the item."""
    context = await _context()
    unmarked = [{"id": "sys", "content": "Answer with evidence."}, *(item for item in context.items[1:3])]
    client = create_context(services={"compressor": _returning(unmarked)})
    assert await error_code(client.compress({"context": context, "maxItems": 3})) == "INVALID_PROVIDER_OUTPUT"


async def test_call_group_member_rewritten_or_reordered_is_refused() -> None:
    """CX-7 (seed 001 lines 25, 131): a callId group comes back with the same content, metadata and order."""
    context = await _context()
    sys, c1, c2, _ = context.items
    changed = [sys, c1, {"id": "c2", "content": "summary of the result", "metadata": {"callId": "x"}}]
    swapped = [sys, c2, c1]
    retyped = [sys, c1, {"id": "c2", "content": "result", "metadata": {"callId": "x", "extra": 1}}]
    for output in (changed, swapped, retyped):
        client = create_context(services={"compressor": _returning(output)})
        assert await error_code(client.compress({"context": context, "maxItems": 3})) == "INVALID_PROVIDER_OUTPUT"


async def test_equal_copies_and_rewritten_unprotected_items_pass() -> None:
    """CX-7 (seed 001 line 131): equal copies (plain dicts) of protected items pass; other items may be summarised."""
    context = await _context()
    copies: list[Any] = [dict(item.to_json_dict()) for item in context.items[:3]]
    copies.append({"id": "old", "content": "summary"})
    client = create_context(services={"compressor": _returning(copies)})
    result = await client.compress({"context": context, "maxItems": 4})
    assert [item.id for item in result.items] == ["sys", "c1", "c2", "old"]
    assert result.items[3].content == "summary"
    assert [item.content for item in result.items[:3]] == [item.content for item in context.items[:3]]


async def test_number_kind_counts_as_a_change() -> None:
    """CX-7 CX-8 (seed 001 line 131): ``true`` is not ``1`` in JSON, so swapping them changes a protected item."""
    context = await create_context().load({"sources": [
        {"id": "p", "content": {"flag": True}, "metadata": {"protected": True}}]})
    client = create_context(services={"compressor": _returning([{"id": "p", "content": {"flag": 1},
                                                                 "metadata": {"protected": True}}])})
    assert await error_code(client.compress({"context": context, "maxItems": 1})) == "INVALID_PROVIDER_OUTPUT"
