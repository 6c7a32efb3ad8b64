"""MEMORY ⇄ RETRIEVAL adapters (RET-7), end to end through runtimes with both workers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from ditto import AbortController, ExecutionContext, WorkerDefinition, create_ditto
from ditto.retrieval import (
    InMemoryVectorIndex,
    RetrievalTargetRegistry,
    create_retrieval,
    create_retrieval_worker,
    create_vector_search_provider,
)
from ditto.retrieval.adapters.memory import (
    RemoteRetrievalSearchProvider,
    create_memory_retrieval_provider,
    create_retrieval_memory_search_provider,
    map_memory_candidates,
)
from ditto.worker.memory import (
    DittoMemoryError,
    MemorySearchInput,
    SqliteMemoryStore,
    create_memory_worker,
    create_sqlite_memory_store,
)

from .providers import FailingProvider, ListProvider, SlowProvider
from .test_embedding import CountingEmbedding

MEMORIES = [
    {"id": "m1", "key": "pref:lang", "content": "the user prefers Python for agent memory tooling",
     "metadata": {"kind": "preference"}},
    {"id": "m2", "key": "pref:food", "content": "the user likes spicy noodles"},
    {"id": "m3", "content": "agent memory migration finished in 2024", "metadata": {"kind": "fact"}},
]


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteMemoryStore]:
    async with create_sqlite_memory_store(tmp_path / "memory.sqlite") as sqlite_store:
        yield sqlite_store


def _retrieval_worker(provider: Any, strategy: str = "keyword") -> WorkerDefinition:
    return create_retrieval_worker(RetrievalTargetRegistry({"agent-memory": {
        "default_strategy": strategy, "providers": {strategy: provider}}}))


async def test_remote_provider_end_to_end(store: SqliteMemoryStore) -> None:
    """RET-7: MEMORY.SEARCH → RemoteRetrievalSearchProvider → RETRIEVAL.SEARCH → the MEMORY store's search,
    default mapping (candidate.content is a full MemoryItem) keeps id/key/content/metadata and score."""
    runtime = create_ditto(workers=[_retrieval_worker(create_memory_retrieval_provider(store))])
    remote = RemoteRetrievalSearchProvider(target={"name": "agent-memory"}, runtime=runtime)
    runtime.register(create_memory_worker(store=store, search=remote))
    written = await runtime.invoke("MEMORY.WRITE", {"memories": MEMORIES})
    assert written.status == "success"
    result = await runtime.invoke("MEMORY.SEARCH", {"query": "agent memory", "limit": 5})
    assert result.status == "success", result.error
    hits = result.output
    assert {hit.memory.id for hit in hits} == {"m1", "m3"}
    first = next(hit for hit in hits if hit.memory.id == "m1")
    assert first.memory.key == "pref:lang" and first.memory.metadata == {"kind": "preference"}
    assert first.memory.content == MEMORIES[0]["content"]
    assert first.metadata is not None and first.metadata["source"] == {"target": "agent-memory", "ref": "m1"}
    await runtime.close()


async def test_query_mapping_passes_fields_unchanged() -> None:
    """RET-7: MemorySearchInput.query → query.content; strategy/filter/limit/options unchanged; target fixed."""
    recorder = ListProvider([{"id": "m9", "content": {"id": "m9", "content": "x", "key": "k"}, "score": 2.0}],
                            target_name="agent-memory")
    runtime = create_ditto(workers=[_retrieval_worker(recorder, "semantic")])
    remote = RemoteRetrievalSearchProvider(target={"name": "agent-memory", "namespace": "tenant-a"},
                                           runtime=runtime)
    hits = await remote.search(MemorySearchInput(query={"text": "q", "vector": [0.1]}, limit=3,
                                                 filter={"keyPrefix": "pref:"}, strategy="semantic",
                                                 options={"ef": 64}))
    request, _context = recorder.calls[-1]
    assert request.query.content == {"text": "q", "vector": [0.1]}
    assert (request.limit, request.filter, request.strategy, request.options) == (
        3, {"keyPrefix": "pref:"}, "semantic", {"ef": 64})
    assert (request.target.name, request.target.namespace) == ("agent-memory", "tenant-a")
    assert [(h.memory.id, h.memory.key, h.score) for h in hits] == [("m9", "k", 2.0)]
    await runtime.close()


async def test_failures_hide_remote_text_and_skip_mapper(store: SqliteMemoryStore) -> None:
    """RET-7: a failed RETRIEVAL.SEARCH reaches MEMORY as MEMORY_BACKEND_ERROR without the remote text,
    and map_output is not called; a bad default mapping is MEMORY_BACKEND_ERROR too."""
    calls: list[Any] = []

    def mapper(output: Any) -> list[Any]:
        calls.append(output)
        return []

    runtime = create_ditto(workers=[_retrieval_worker(FailingProvider(RuntimeError("dsn=postgres://u:pw@h")))])
    runtime.register(create_memory_worker(store=store, search=RemoteRetrievalSearchProvider(
        target={"name": "agent-memory"}, runtime=runtime, map_output=mapper)))
    result = await runtime.invoke("MEMORY.SEARCH", {"query": "x"})
    assert result.status == "error" and result.error is not None
    assert result.error.code == "MEMORY_BACKEND_ERROR" and "pw@h" not in result.error.message
    assert calls == []
    bad_content = create_ditto(workers=[_retrieval_worker(ListProvider([{"id": "x", "content": "just text"}]))])
    bad_content.register(create_memory_worker(store=store, search=RemoteRetrievalSearchProvider(
        target={"name": "agent-memory"}, runtime=bad_content)))
    result = await bad_content.invoke("MEMORY.SEARCH", {"query": "x"})
    assert result.error is not None and result.error.code == "MEMORY_BACKEND_ERROR"
    unknown_target = RemoteRetrievalSearchProvider(target={"name": "elsewhere"}, runtime=bad_content)
    with pytest.raises(DittoMemoryError) as info:
        await unknown_target.search(MemorySearchInput(query="x"))
    assert info.value.code == "MEMORY_BACKEND_ERROR"
    orphan = RemoteRetrievalSearchProvider(target={"name": "agent-memory"})  # no runtime anywhere
    with pytest.raises(DittoMemoryError) as info:
        await orphan.search(MemorySearchInput(query="x"))
    assert info.value.code == "MEMORY_BACKEND_ERROR"
    for rt in (runtime, bad_content):
        await rt.close()


async def test_custom_mapper_sync_and_async(store: SqliteMemoryStore) -> None:
    """RET-7: map_output receives the whole output once; sync or async; its hits are returned."""
    seen: list[int] = []

    async def mapper(output: Any) -> list[dict[str, Any]]:
        seen.append(len(output.candidates))
        return [{"memory": {"id": c.id, "content": c.content}, "score": c.score} for c in output.candidates]

    provider = ListProvider([{"id": "a", "content": "A", "score": 1.0}, {"id": "b", "content": "B"}])
    runtime = create_ditto(workers=[_retrieval_worker(provider)])
    remote = RemoteRetrievalSearchProvider(target={"name": "agent-memory"}, runtime=runtime, map_output=mapper)
    hits = await remote.search(MemorySearchInput(query="q"))
    assert seen == [2] and [(h.memory.id, h.memory.content, h.score) for h in hits] == [("a", "A", 1.0),
                                                                                        ("b", "B", None)]
    sync = RemoteRetrievalSearchProvider(target={"name": "agent-memory"}, runtime=runtime,
                                         map_output=lambda out: [{"memory": {"id": "z", "content": 1}}])
    assert [h.memory.id for h in await sync.search(MemorySearchInput(query="q"))] == ["z"]
    await runtime.close()


async def test_runtime_inherited_inside_worker_execution() -> None:
    """RET-7: built inside a worker call without runtime=, the adapter uses that execution's runtime,
    which carries the parent call's signal to RETRIEVAL."""
    slow = SlowProvider(5.0)
    runtime = create_ditto(workers=[_retrieval_worker(slow)])
    fast = ListProvider([{"id": "m", "content": {"id": "m", "content": "hello"}}])
    runtime2 = create_ditto(workers=[_retrieval_worker(fast)])

    async def handler(input: Any, ctx: ExecutionContext) -> Any:
        remote = RemoteRetrievalSearchProvider(target={"name": "agent-memory"})
        return [hit.memory.id for hit in await remote.search(MemorySearchInput(query=input["q"]))]

    runtime2.register(WorkerDefinition("APP", {"APP.RECALL": handler}))
    result = await runtime2.invoke("APP.RECALL", {"q": "hello"})
    assert result.status == "success" and result.output == ["m"]
    runtime.register(WorkerDefinition("APP", {"APP.RECALL": handler}))
    controller = AbortController()
    import asyncio

    task = asyncio.create_task(runtime.invoke("APP.RECALL", {"q": "x"}, signal=controller.signal))
    await slow.started.wait()
    assert slow.signals[0] is not None  # the parent's signal reached the RETRIEVAL provider
    controller.abort()
    assert (await task).status == "cancelled"
    assert slow.cancelled
    await runtime.close()
    await runtime2.close()


async def test_reused_adapter_follows_the_current_execution() -> None:
    """RET-7: an adapter built inside one worker call and kept for later calls uses the *current*
    execution's runtime, so it carries the current call's signal, not the finished (and here
    cancelled) first call's signal."""
    import asyncio

    fast = ListProvider([{"id": "m", "content": {"id": "m", "content": "hello"}}])
    runtime = create_ditto(workers=[_retrieval_worker(fast)])
    kept: list[RemoteRetrievalSearchProvider] = []
    first_started = asyncio.Event()

    async def handler(input: Any, ctx: ExecutionContext) -> Any:
        if not kept:
            kept.append(RemoteRetrievalSearchProvider(target={"name": "agent-memory"}))
            first_started.set()
            await asyncio.sleep(10)  # the first call is cancelled here
        return [hit.memory.id for hit in await kept[0].search(MemorySearchInput(query="hello"))]

    runtime.register(WorkerDefinition("APP", {"APP.RECALL": handler}))
    controller = AbortController()
    first = asyncio.create_task(runtime.invoke("APP.RECALL", {}, signal=controller.signal))
    await first_started.wait()
    controller.abort()
    assert (await first).status == "cancelled"
    later = await runtime.invoke("APP.RECALL", {})
    assert later.status == "success" and later.output == ["m"], later.error
    assert fast.calls[-1][1] is not None and fast.calls[-1][1].signal is None  # no stale signal
    await runtime.close()


async def test_in_process_adapter_over_vector_provider(store: SqliteMemoryStore) -> None:
    """RET-7: create_retrieval_memory_search_provider makes a RETRIEVAL provider MEMORY's search (no hop)."""
    model = CountingEmbedding(dimensions=64)
    index = InMemoryVectorIndex(embedding=model)
    await index.add_contents([{"id": m["id"], "content": m} for m in MEMORIES])
    vector = create_vector_search_provider(index, native_embedding=True)
    search = create_retrieval_memory_search_provider(vector, target={"name": "agent-memory"})
    runtime = create_ditto(workers=[create_memory_worker(store=store, search=search)])
    result = await runtime.invoke("MEMORY.SEARCH", {"query": "spicy noodles", "limit": 1})
    assert result.status == "success" and result.output[0].memory.id == "m2"
    failing = create_retrieval_memory_search_provider(FailingProvider(RuntimeError("secret")),
                                                      target={"name": "agent-memory"})
    runtime.register(create_memory_worker(store=store, search=failing))
    await runtime.close()
    only_failing = create_ditto(workers=[create_memory_worker(store=store, search=failing)])
    result = await only_failing.invoke("MEMORY.SEARCH", {"query": "x"})
    assert result.error is not None and result.error.code == "MEMORY_BACKEND_ERROR"
    assert "secret" not in result.error.message
    await only_failing.close()


async def test_memory_store_as_retrieval_provider(store: SqliteMemoryStore) -> None:
    """RET-7: create_memory_retrieval_provider exposes MEMORY search to RETRIEVAL; map_memory_candidates
    turns its candidates back into MemorySearchHits."""
    runtime = create_ditto(workers=[create_memory_worker(store=store)])
    await runtime.invoke("MEMORY.WRITE", {"memories": MEMORIES})
    retrieval = create_retrieval(RetrievalTargetRegistry({"memories": {
        "default_strategy": "keyword", "providers": {"keyword": create_memory_retrieval_provider(store)}}}))
    result = await retrieval.search({"query": {"content": "noodles"}, "target": {"name": "memories"},
                                     "filter": {"key": "pref:food"}})
    assert result.status == "success" and result.output is not None
    [candidate] = result.output.candidates
    assert candidate.id == "m2" and candidate.source is not None and candidate.source.ref == "m2"
    [hit] = map_memory_candidates(result.output)
    assert (hit.memory.id, hit.memory.key, hit.memory.content) == ("m2", "pref:food", "the user likes spicy noodles")
    bad = await retrieval.search({"query": {"content": "noodles"}, "target": {"name": "memories"},
                                  "filter": {"unsupported": {"regex": "x"}}})
    assert bad.status == "error" and bad.error is not None and bad.error.code == "RETRIEVAL_INVALID_INPUT"
    await runtime.close()
