"""The stored context document and the stores' limits (CX-10, CX-12): what a second store instance reads back
from Redis, which corrupt documents are INVALID_STATE, and the in-memory store's TTL and capacity edges."""

from __future__ import annotations

import json
from typing import Any

import pytest
from redis.asyncio import Redis

from ditto.worker.context import (
    ContextError,
    create_context,
    create_in_memory_context_store,
    create_redis_context_store,
)
from tests.context.helpers import error_code

SCOPE = {"sessionId": "doc"}


async def test_a_fresh_store_reads_back_sources_and_metadata(redis_client: Redis) -> None:
    """CX-10: a context written by one store instance is read back whole by another (no cache in between):
    content, source uri/mediaType/digest and metadata."""
    writer = create_context(services={"stateStore": create_redis_context_store(redis_client)})
    written = await writer.load({"scope": SCOPE, "sources": [
        {"id": "a", "content": {"k": [1, 2.5, "é"]}, "metadata": {"tags": ["x"], "n": None}},
        {"uri": "file:///doc.md", "mediaType": "text/markdown", "digest": "sha256:00"},
        {"uri": "https://example.org/page"},
        {"id": "plain", "content": None},
    ]})
    reader = create_context(services={"stateStore": create_redis_context_store(redis_client)})
    read = await reader.load({"scope": SCOPE})
    assert read == written
    assert read.items[0].metadata == {"tags": ("x",), "n": None}
    assert read.items[1].source is not None
    assert (read.items[1].source.uri, read.items[1].source.media_type, read.items[1].source.digest) == (
        "file:///doc.md", "text/markdown", "sha256:00")
    assert read.items[2].source is not None and read.items[2].source.media_type is None
    assert read.items[3].metadata is None and read.items[3].source is None


def _document(items: Any, **extra: Any) -> str:
    return json.dumps({"version": "v1", "context": {"items": items}, **extra})


@pytest.mark.parametrize("raw", [
    "not json", "NaN", json.dumps({"version": "v1"}), _document([], extra=1), json.dumps({"version": "", "context":
                                                                                          {"items": []}}),
    json.dumps({"version": "v1", "context": {"items": {}}}), json.dumps({"version": "v1", "context": []}),
    json.dumps({"version": "v1", "context": {"items": [], "more": 1}}),
    _document([{"id": "a"}]), _document([{"id": "a", "content": 1, "extra": 2}]), _document(["a"]),
    _document([{"id": "", "content": 1}]), _document([{"content": 1}]),
    _document([{"id": "a", "content": 1, "metadata": [1]}]), _document([{"id": "a", "content": 1, "source": 5}]),
    _document([{"id": "a", "content": 1}, {"id": "a", "content": 2}]),
    '{"version":"v1","context":{"items":[{"id":"a","content":NaN}]}}',
    '{"version":"v1","context":{"items":[{"id":"a","content":1,"metadata":{"k":Infinity}}]}}',
])
async def test_corrupt_documents_are_invalid_state(redis_client: Redis, raw: str) -> None:
    """CX-10: a stored document of any other shape is INVALID_STATE, never an empty or partial context."""
    store = create_redis_context_store(redis_client)
    await redis_client.set(store.key(SCOPE), raw)
    client = create_context(services={"stateStore": store})
    assert await error_code(client.load({"scope": SCOPE})) == "INVALID_STATE"


async def test_valid_hand_written_document_is_read(redis_client: Redis) -> None:
    """CX-10: the document format is plain JSON: a hand-written one with source and metadata reads back."""
    store = create_redis_context_store(redis_client)
    await redis_client.set(store.key(SCOPE), _document([
        {"id": "a", "content": "x", "metadata": {"k": 1}, "source": {"uri": "urn:a", "mediaType": "text/plain"}}]))
    (item,) = (await create_context(services={"stateStore": store}).load({"scope": SCOPE})).items
    assert (item.id, item.content, item.metadata, item.source.uri if item.source else None) == (
        "a", "x", {"k": 1}, "urn:a")


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def test_in_memory_store_edges() -> None:
    """CX-12: TTL and capacity accept 1 and their maxima; an entry expires exactly at its TTL; replacing an
    existing scope never evicts another one; a full store evicts the least recently used."""
    for ttl in (1, 2_147_483_647):
        assert create_in_memory_context_store(ttl_ms=ttl).ttl_ms == ttl
    assert create_in_memory_context_store(max_entries=1).max_entries == 1
    assert create_in_memory_context_store(max_entries=2**53 - 1).max_entries == 2**53 - 1
    for bad in ({"ttl_ms": 0}, {"ttl_ms": 2_147_483_648}, {"ttl_ms": True}, {"max_entries": 0},
                {"max_entries": 2**53}, {"max_entries": 1.0}):
        with pytest.raises(ContextError) as refused:
            create_in_memory_context_store(**bad)
        assert refused.value.code == "INVALID_INPUT"
    clock = Clock()
    store = create_in_memory_context_store(ttl_ms=1000, max_entries=2, now=clock)
    client = create_context(services={"stateStore": store})
    await client.load({"scope": {"sessionId": "a"}, "sources": [{"id": "x", "content": 1}]})
    clock.now = 999.0
    assert len((await client.load({"scope": {"sessionId": "a"}})).items) == 1
    clock.now = 1000.0
    assert await error_code(client.load({"scope": {"sessionId": "a"}})) == "CONTEXT_NOT_FOUND"
    await client.load({"scope": {"sessionId": "a"}, "sources": []})
    await client.load({"scope": {"sessionId": "b"}, "sources": []})
    await client.load({"scope": {"sessionId": "a"}, "sources": [{"id": "y", "content": 2}]})  # replace: no eviction
    assert len(store) == 2
    assert (await client.load({"scope": {"sessionId": "b"}})).items == ()
    await client.load({"scope": {"sessionId": "c"}, "sources": []})  # full: "a" is least recently used
    assert await error_code(client.load({"scope": {"sessionId": "a"}})) == "CONTEXT_NOT_FOUND"
    assert (await client.load({"scope": {"sessionId": "b"}})).items == ()
