"""The MEMORY SDK: inputs, outputs, injected search providers and application stores (MEM-1, MEM-3)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from ditto.contracts import FrozenDict
from ditto.signal import AbortController, CancelledBySignal, CancelSignal
from ditto.worker.memory import (
    DittoMemoryError,
    Memory,
    MemoryCallOptions,
    MemoryItem,
    MemoryResources,
    MemorySearchHit,
    MemorySearchInput,
    MemorySearchProvider,
    MemoryStore,
    MemoryWriteItem,
    SqliteMemoryStore,
    create_memory,
)

FIXED = "the memory backend failed"


class RecordingSearch:
    """An injected MemorySearchProvider that answers from a fixed list and records its calls."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.calls: list[tuple[MemorySearchInput, MemoryCallOptions | None]] = []

    async def search(self, input: MemorySearchInput, options: MemoryCallOptions | None = None) -> Any:
        self.calls.append((input, options))
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer


class ApplicationStore:
    """An application's own MemoryStore (the seed's ``applicationMemoryStore``), kept in a dict.

    ``tamper`` lets a test make it answer something a correct store never would.
    """

    def __init__(self) -> None:
        self.records: dict[str, MemoryItem] = {}
        self.tamper: str | None = None

    async def write(self, items: Sequence[MemoryWriteItem], options: MemoryCallOptions | None = None
                    ) -> list[MemoryItem]:
        stored = [MemoryItem(id=item.id or f"app-{len(self.records)}", key=item.key, content=item.content,
                             metadata=item.metadata) for item in items]
        for item in stored:
            self.records[item.id] = item
        if self.tamper == "write":
            return [*stored, stored[0]]
        return stored

    async def get(self, *, ids: Sequence[str] | None = None, keys: Sequence[str] | None = None,
                  options: MemoryCallOptions | None = None) -> list[Any]:
        if self.tamper == "get":
            return [{"id": "never-asked", "content": 1}]
        if ids is not None:
            return [self.records[i] for i in reversed(ids) if i in self.records]  # any order: the SDK sorts
        return [item for item in self.records.values() if keys is not None and item.key in keys]

    async def delete(self, *, ids: Sequence[str] | None = None, keys: Sequence[str] | None = None,
                     options: MemoryCallOptions | None = None) -> Any:
        if self.tamper == "delete":
            return True
        gone = [i for i in (ids or []) if self.records.pop(i, None) is not None]
        return len(gone)

    async def search(self, input: MemorySearchInput, options: MemoryCallOptions | None = None) -> list[Any]:
        return [{"memory": item, "score": 1.0} for item in self.records.values()][: input.limit or 10]


def test_store_and_provider_satisfy_the_protocols(store: SqliteMemoryStore) -> None:
    """MEM-1/MEM-3: the SQLite store is a MemoryStore; providers are MemorySearchProvider."""
    assert isinstance(store, MemoryStore)
    assert isinstance(ApplicationStore(), MemoryStore)
    assert isinstance(RecordingSearch([]), MemorySearchProvider)


async def test_resources_forms(store: SqliteMemoryStore) -> None:
    """MEM-1: create_memory accepts MemoryResources, a {store, search} dict or keywords; bad ones are refused."""
    provider = RecordingSearch([])
    for memory in (create_memory(MemoryResources(store=store, search=provider)),
                   create_memory({"store": store, "search": provider}), create_memory(store=store, search=provider)):
        assert isinstance(memory, Memory) and memory.store is store and memory.search_provider is provider
    for bad in ({"store": object()}, {"store": store, "extra": 1}, {"store": store, "search": object()}, {}):
        with pytest.raises(DittoMemoryError) as raised:
            create_memory(bad)
        assert raised.value.code == "MEMORY_INVALID_INPUT"
    with pytest.raises(DittoMemoryError):
        create_memory({"store": store}, store=store)


async def test_sdk_round_trip_with_camel_and_snake_case(store: SqliteMemoryStore) -> None:
    """MEM-1: write/get/search/delete take the node inputs and return frozen snapshots."""
    memory = create_memory(store=store)
    written = await memory.write({"memories": [
        {"id": "pref", "key": "knowledge:acme:language", "content": "The user prefers British English",
         "metadata": {"tenant": "acme"}},
        {"content": {"kind": "knowledge", "text": "Deployments happen on Tuesdays"}},
    ]})
    assert isinstance(written, tuple) and all(isinstance(item, MemoryItem) for item in written)
    assert written[0].id == "pref" and len(written[1].id) == 32
    got = await memory.get({"keys": ["knowledge:acme:language"]})
    assert got == (written[0],)
    hits = await memory.search({"query": "language preference English", "limit": 5,
                                "filter": {"keyPrefix": "knowledge:acme:"}})
    assert [hit.memory.id for hit in hits] == ["pref"] and isinstance(hits[0], MemorySearchHit)
    assert hits[0].score is not None and hits[0].score > 0
    deleted = await memory.delete({"ids": ["pref", written[1].id, "missing"]})
    assert deleted == {"deleted": 2} and isinstance(deleted, FrozenDict)
    with pytest.raises(TypeError):
        deleted["deleted"] = 5  # type: ignore[index]


async def test_get_strict_mode_raises_not_found(store: SqliteMemoryStore) -> None:
    """MEM-1: GET omits missing records; with strict=true a missing one is MEMORY_NOT_FOUND."""
    memory = create_memory(store=store)
    await memory.write({"memories": [{"id": "a", "content": 1}]})
    assert [item.id for item in await memory.get({"ids": ["a", "b"]})] == ["a"]
    assert [item.id for item in await memory.get({"ids": ["a"], "strict": True})] == ["a"]
    with pytest.raises(DittoMemoryError) as raised:
        await memory.get({"ids": ["a", "b"], "strict": True})
    assert raised.value.code == "MEMORY_NOT_FOUND" and "b" not in raised.value.message.split()


async def test_injected_search_replaces_store_search(store: SqliteMemoryStore) -> None:
    """MEM-3: an injected provider answers MEMORY.SEARCH; limit is filled in, strategy/filter/options pass through."""
    provider = RecordingSearch([
        {"memory": {"id": "m1", "content": {"text": "from provider"}, "metadata": {"a": 1}}, "score": 0.9,
         "metadata": {"source": {"uri": "kb://1"}}},
        MemorySearchHit(memory=MemoryItem(id="m2", key="k2", content="second")),
    ])
    memory = create_memory(store=store, search=provider)
    signal = CancelSignal()
    hits = await memory.search({"query": {"text": "anything"}, "strategy": "vector", "filter": {"anyField": [1]},
                                "options": {"ef": 64}}, signal=signal)
    assert [(hit.memory.id, hit.score) for hit in hits] == [("m1", 0.9), ("m2", None)]
    assert hits[0].metadata == {"source": {"uri": "kb://1"}}
    with pytest.raises(TypeError):
        hits[0].memory.content["text"] = "changed"
    ((request, options),) = provider.calls
    assert isinstance(request, MemorySearchInput) and request.limit == 10
    assert (request.strategy, request.filter, request.options) == ("vector", {"anyField": [1]}, {"ef": 64})
    assert options is not None and options.signal is signal
    assert await store.search(MemorySearchInput(query="anything")) == ()  # the store was not asked


@pytest.mark.parametrize("answer", [
    {"memory": {"id": "x", "content": 1}},  # a single hit instead of a list
    "hits", None, 5,
    [{"score": 1.0}],  # no memory
    [{"memory": {"content": "no id"}}],
    [{"memory": {"id": "", "content": 1}}],
    [{"memory": {"id": "x", "content": 1}, "score": float("nan")}],
    [{"memory": {"id": "x", "content": 1}, "score": "high"}],
    [{"memory": {"id": "x", "content": {1, 2}}}],
    [{"memory": {"id": "x", "content": 1}, "unexpected": True}],
    [{"memory": {"id": f"x{i}", "content": i}} for i in range(3)],  # more than the limit of 2
])
async def test_invalid_provider_output_is_backend_error(store: SqliteMemoryStore, answer: Any) -> None:
    """MEM-3: a provider's output is validated; anything malformed is MEMORY_BACKEND_ERROR."""
    memory = create_memory(store=store, search=RecordingSearch(answer))
    with pytest.raises(DittoMemoryError) as raised:
        await memory.search({"query": "q", "limit": 2})
    assert (raised.value.code, raised.value.message) == ("MEMORY_BACKEND_ERROR", FIXED)


async def test_provider_exception_text_is_hidden(store: SqliteMemoryStore) -> None:
    """MEM-1/MEM-3: a provider's own exception becomes MEMORY_BACKEND_ERROR with a fixed message."""
    secret = RuntimeError("connect to postgres://admin:hunter2@10.0.0.7/kb failed")
    memory = create_memory(store=store, search=RecordingSearch(secret))
    with pytest.raises(DittoMemoryError) as raised:
        await memory.search({"query": "q"})
    assert (raised.value.code, raised.value.message) == ("MEMORY_BACKEND_ERROR", FIXED)
    assert "hunter2" not in repr(raised.value) and raised.value.__cause__ is None


async def test_provider_memory_error_passes_through(store: SqliteMemoryStore) -> None:
    """MEM-3: a provider that raises DittoMemoryError keeps its own code and public message."""
    memory = create_memory(store=store, search=RecordingSearch(DittoMemoryError("MEMORY_NOT_FOUND", "no index yet")))
    with pytest.raises(DittoMemoryError) as raised:
        await memory.search({"query": "q"})
    assert (raised.value.code, raised.value.message) == ("MEMORY_NOT_FOUND", "no index yet")


async def test_provider_cancellation_maps_to_memory_codes(store: SqliteMemoryStore) -> None:
    """MEM-3: a provider stopped by its signal surfaces as MEMORY_CANCELLED / MEMORY_TIMEOUT."""
    for code, expected in (("CANCELLED", "MEMORY_CANCELLED"), ("TIMEOUT", "MEMORY_TIMEOUT")):
        memory = create_memory(store=store, search=RecordingSearch(CancelledBySignal(code, "stopped")))
        with pytest.raises(DittoMemoryError) as raised:
            await memory.search({"query": "q"})
        assert raised.value.code == expected


async def test_aborted_signal_fails_before_any_port_call(store: SqliteMemoryStore) -> None:
    """MEM-1: every SDK method checks its signal first (MEMORY_CANCELLED / MEMORY_TIMEOUT)."""
    provider = RecordingSearch([])
    memory = create_memory(store=store, search=provider)
    controller = AbortController()
    controller.abort()
    calls = (memory.write({"memories": [{"content": 1}]}, signal=controller.signal),
             memory.get({"ids": ["a"]}, signal=controller.signal),
             memory.search({"query": "q"}, signal=controller.signal),
             memory.delete({"ids": ["a"]}, signal=controller.signal))
    for call in calls:
        with pytest.raises(DittoMemoryError) as raised:
            await call
        assert raised.value.code == "MEMORY_CANCELLED"
    assert provider.calls == []
    timed_out = CancelSignal.timeout(0.001)
    await asyncio.sleep(0.05)
    with pytest.raises(DittoMemoryError) as raised:
        await memory.get({"ids": ["a"]}, signal=timed_out)
    assert raised.value.code == "MEMORY_TIMEOUT" and raised.value.status == "timeout"


async def test_application_store_outputs_are_checked_and_ordered() -> None:
    """MEM-1: an application store's answers are validated and put in request order by the SDK."""
    app = ApplicationStore()
    memory = create_memory(store=app)
    await memory.write({"memories": [{"id": "a", "content": 1}, {"id": "b", "key": "kb", "content": 2}]})
    assert [item.id for item in await memory.get({"ids": ["a", "b", "a"]})] == ["a", "b"]
    assert [item.id for item in await memory.get({"keys": ["kb"]})] == ["b"]
    assert [hit.memory.id for hit in await memory.search({"query": "anything", "limit": 1})] == ["a"]
    for tamper, call in (("write", memory.write({"memories": [{"content": 3}]})),
                         ("get", memory.get({"ids": ["a"]})),
                         ("delete", memory.delete({"ids": ["a"]}))):
        app.tamper = tamper
        with pytest.raises(DittoMemoryError) as raised:
            await call
        assert (raised.value.code, raised.value.message) == ("MEMORY_BACKEND_ERROR", FIXED)
    app.tamper = None
    assert await memory.delete({"ids": ["a"]}) == {"deleted": 1}


async def test_typed_models_are_accepted(store: SqliteMemoryStore) -> None:
    """MEM-1: inputs may be the typed models as well as dicts."""
    from ditto.worker.memory import MemoryDeleteInput, MemoryGetInput, MemoryWriteInput

    memory = create_memory(store=store)
    (item,) = await memory.write(MemoryWriteInput(memories=(MemoryWriteItem(id="t", content="typed words"),)))
    assert await memory.get(MemoryGetInput(ids=("t",))) == (item,)
    assert [hit.memory.id for hit in await memory.search(MemorySearchInput(query="typed"))] == ["t"]
    assert await memory.delete(MemoryDeleteInput(ids=("t",))) == {"deleted": 1}


