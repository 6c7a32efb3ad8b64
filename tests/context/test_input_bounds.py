"""CONTEXT bounds item ids and metadata (issue 19 finding 11), without changing what the seed allows."""

from __future__ import annotations

from typing import Any

import pytest

from ditto.contracts import ContextItem
from ditto.worker.context import MAX_ITEM_ID_LENGTH, MAX_METADATA_BYTES, ContextError, create_context


def _update(**fields: Any) -> dict[str, Any]:
    return {"context": {"items": []}, **fields}


BAD_IDS = ["a\x00b", "x" * 1_000_000, "x" * (MAX_ITEM_ID_LENGTH + 1)]


@pytest.mark.parametrize("bad_id", BAD_IDS, ids=["nul", "1mb", "cap+1"])
async def test_ids_with_nul_or_over_the_cap_are_invalid_input(bad_id: str) -> None:
    """Issue 19 finding 11: an item id holding NUL, or longer than MAX_ITEM_ID_LENGTH (a megabyte), is refused
    everywhere an id enters: LOAD items, UPDATE add, ingress, removeIds and an input context."""
    client = create_context()
    calls = [
        client.load({"sources": [{"id": bad_id, "content": "x"}]}),
        client.update(_update(add=[{"id": bad_id, "content": "x"}])),
        client.update(_update(ingress=[{"id": bad_id, "sourceNode": "MEMORY.SEARCH", "content": "x"}])),
        client.update(_update(removeIds=[bad_id])),
        client.select({"purpose": "infer", "context": {"items": [{"id": bad_id, "content": "x"}]}}),
    ]
    for call in calls:
        with pytest.raises(ContextError) as refused:
            await call
        assert refused.value.code == "INVALID_INPUT"
        assert len(refused.value.message) < 300


async def test_an_id_at_the_cap_is_accepted() -> None:
    """Issue 19 finding 11: the cap itself is an allowed id, and ordinary ids are unchanged."""
    client = create_context()
    longest = "x" * MAX_ITEM_ID_LENGTH
    loaded = await client.load({"sources": [{"id": longest, "content": "x"}, ContextItem(id="ü-1", content=1)]})
    assert [item.id for item in loaded.items] == [longest, "ü-1"]


@pytest.mark.parametrize("metadata", [{"k": "x" * (MAX_METADATA_BYTES + 1)}, {f"k{n}": n for n in range(100_000)},
                                      {"k": ["ü" * 33_000]}], ids=["5mb-string", "100k-keys", "multibyte"])
async def test_metadata_over_the_cap_is_invalid_input(metadata: dict[str, Any]) -> None:
    """Issue 19 finding 11: metadata whose JSON is over MAX_METADATA_BYTES (UTF-8 bytes: a long string, 100k keys,
    multi-byte text) is refused in LOAD, UPDATE add and ingress, with INVALID_INPUT, not INLINE_LIMIT_EXCEEDED
    (the seed reserves that for content)."""
    client = create_context()
    calls = [
        client.load({"sources": [{"id": "a", "content": "x", "metadata": metadata}]}),
        client.update(_update(add=[ContextItem(id="a", content="x", metadata=metadata)])),
        client.update(_update(ingress=[{"id": "a", "sourceNode": "MEMORY.SEARCH", "content": "x",
                                        "metadata": metadata}])),
    ]
    for call in calls:
        with pytest.raises(ContextError) as refused:
            await call
        assert refused.value.code == "INVALID_INPUT" and "metadata" in refused.value.message


async def test_metadata_at_the_cap_is_accepted() -> None:
    """Issue 19 finding 11: metadata of exactly MAX_METADATA_BYTES is kept as it is."""
    client = create_context()
    metadata = {"k": "x" * (MAX_METADATA_BYTES - len('{"k":""}'))}
    loaded = await client.load({"sources": [{"id": "a", "content": "x", "metadata": metadata}]})
    assert loaded.items[0].metadata == metadata
