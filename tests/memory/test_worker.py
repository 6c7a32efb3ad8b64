"""The MEMORY worker inside a runtime: nodes, graphs, signals, delegation and HTTP (MEM-1, MEM-3)."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

from ditto.runtime import (
    ExecutionContext,
    NodeResult,
    WorkerDefinition,
    create_ditto,
    current_execution,
    graph,
)
from ditto.signal import AbortController
from ditto.transport.http_app import create_worker_http_app
from ditto.transport.http_client import create_http_transport
from ditto.worker.memory import (
    MemoryCallOptions,
    MemorySearchInput,
    SqliteMemoryStore,
    create_memory_worker,
    memory_delete_node,
    memory_get_node,
    memory_search_node,
    memory_write_node,
)
from tests.support.uvicorn_thread import serve_app


def test_node_descriptors_and_definition(store: SqliteMemoryStore) -> None:
    """MEM-1: the worker offers MEMORY.WRITE/GET/SEARCH/DELETE; descriptors name them."""
    assert [d.type for d in (memory_write_node, memory_get_node, memory_search_node, memory_delete_node)] == [
        "MEMORY.WRITE", "MEMORY.GET", "MEMORY.SEARCH", "MEMORY.DELETE"]
    definition = create_memory_worker(store=store, concurrency=3)
    assert definition.type == "MEMORY" and definition.concurrency == 3
    assert set(definition.capabilities) == {"MEMORY.WRITE", "MEMORY.GET", "MEMORY.SEARCH", "MEMORY.DELETE"}
    assert create_memory_worker({"store": store}).capabilities == definition.capabilities


async def test_nodes_through_the_runtime(store: SqliteMemoryStore) -> None:
    """MEM-1: the four nodes answer through create_ditto/invoke with NodeResults; errors are results."""
    runtime = create_ditto(workers=[create_memory_worker(store=store)])
    written = await runtime.invoke("MEMORY.WRITE", {"memories": [
        {"key": "knowledge:acme:language", "content": "The user prefers British English"},
        {"key": "retrieval:req1:queries", "content": {"queries": ["language preference"]}},
    ]})
    assert written.status == "success" and len(written.output) == 2
    found = await runtime.invoke("MEMORY.SEARCH", {"query": "language preference", "limit": 5})
    assert found.status == "success"
    assert {hit.memory.key for hit in found.output} == {"knowledge:acme:language", "retrieval:req1:queries"}
    scoped = await runtime.invoke("MEMORY.SEARCH", {"query": "language preference",
                                                    "filter": {"keyPrefix": "knowledge:acme:"}})
    assert [hit.memory.key for hit in scoped.output] == ["knowledge:acme:language"]
    got = await runtime.invoke("MEMORY.GET", {"keys": ["retrieval:req1:queries"]})
    assert got.output[0].content == {"queries": ("language preference",)}
    assert (await runtime.invoke("MEMORY.DELETE", {"keys": ["retrieval:req1:queries"]})).output == {"deleted": 1}
    bad = await runtime.invoke("MEMORY.GET", {"ids": ["a"], "keys": ["b"]})
    assert bad.status == "error" and bad.error is not None and bad.error.code == "MEMORY_INVALID_INPUT"
    missing = await runtime.invoke("MEMORY.GET", {"ids": ["nope"], "strict": True})
    assert missing.error is not None and missing.error.code == "MEMORY_NOT_FOUND"
    await runtime.close()
    # The runtime never closes the application's store.
    assert len(await store.get(keys=["knowledge:acme:language"])) == 1


async def test_seed_memory_to_context_graph(store: SqliteMemoryStore) -> None:
    """MEM-1: the seed's graph: MEMORY.SEARCH {query, limit: 5} → map hit.memory.id/content/score downstream."""
    async def to_ingress(input: Any) -> Any:
        return input

    runtime = create_ditto(workers=[create_memory_worker(store=store),
                                    WorkerDefinition("APP", {"APP.INGRESS": to_ingress})])
    await runtime.invoke("MEMORY.WRITE", {"memories": [
        {"id": "lang", "content": "language preference: British English"},
        {"id": "tz", "content": {"timezone": "Europe/London", "note": "preference for mornings"}},
    ]})

    def ingress(_query: Any, deps: Any) -> Any:
        search: NodeResult[Any] = deps["search"]
        if search.status != "success" or search.output is None:
            raise RuntimeError(search.error.code if search.error else search.status)
        return [{"id": f"memory:{hit.memory.id}", "sourceNode": "MEMORY.SEARCH",
                 "content": hit.memory.content if isinstance(hit.memory.content, str) else str(hit.memory.content),
                 "metadata": {"memoryId": hit.memory.id,
                              **({} if hit.score is None else {"relevance": hit.score})}}
                for hit in search.output]

    plan = (graph("memory-context")
            .node("search", "MEMORY.SEARCH", [], lambda query, _deps: {"query": query, "limit": 5})
            .node("context", "APP.INGRESS", ["search"], ingress))
    result = await runtime.run(plan, "language preference")
    assert result.status == "success"
    entries = result["context"].output
    assert [entry["id"] for entry in entries] == ["memory:lang", "memory:tz"]
    assert all(entry["metadata"]["relevance"] > 0 for entry in entries)
    await runtime.close()


async def test_runtime_signal_reaches_a_running_sqlite_statement(store: SqliteMemoryStore, db_path: Path) -> None:
    """MEM-1/MEM-2: invoke(timeout=...) stops a stuck write (status timeout); nothing is stored, the store recovers."""
    with sqlite3.connect(db_path) as raw:
        raw.execute("SELECT 1")
    await store.get(ids=["create-schema"])
    with sqlite3.connect(db_path) as raw:
        raw.execute("CREATE TABLE pad (x)")
        raw.executemany("INSERT INTO pad VALUES (?)", [(i,) for i in range(2000)])
        raw.execute("CREATE TRIGGER spin AFTER INSERT ON memory_records WHEN NEW.key = 'slow' BEGIN "
                    "SELECT count(*) FROM pad a, pad b, pad c; END")
    runtime = create_ditto(workers=[create_memory_worker(store=store)])
    loop = asyncio.get_running_loop()
    started = loop.time()
    result = await runtime.invoke("MEMORY.WRITE", {"memories": [{"id": "a", "content": 1},
                                                                {"id": "b", "key": "slow", "content": 2}]},
                                  timeout=0.3)
    assert result.status == "timeout" and result.error is not None
    assert result.error.code in {"TIMEOUT", "MEMORY_TIMEOUT"}
    # The interrupted thread releases the write lock promptly: the next write does not wait for the trigger.
    after = await runtime.invoke("MEMORY.WRITE", {"memories": [{"id": "after", "content": 3}]}, timeout=10)
    assert after.status == "success" and loop.time() - started < 10
    assert (await runtime.invoke("MEMORY.GET", {"ids": ["a", "b", "after"]})).output[0].id == "after"
    controller = AbortController()
    controller.abort()
    cancelled = await runtime.invoke("MEMORY.SEARCH", {"query": "x"}, signal=controller.signal)
    assert cancelled.status == "cancelled"
    await runtime.close()


async def test_concurrency_limit_rejects_when_busy(store: SqliteMemoryStore, db_path: Path) -> None:
    """MEM-1: create_memory_worker(concurrency=1) rejects a second concurrent call at once."""
    await store.get(ids=["create-schema"])
    runtime = create_ditto(workers=[create_memory_worker(store=store, concurrency=1)])
    holder = sqlite3.connect(db_path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process's writer: the first call waits for the lock
    first = asyncio.create_task(runtime.invoke("MEMORY.WRITE", {"memories": [{"id": "w", "content": 1}]}))
    await asyncio.sleep(0.1)
    second = await runtime.invoke("MEMORY.GET", {"ids": ["w"]})
    assert second.status == "rejected"
    holder.execute("COMMIT")
    holder.close()
    assert (await first).status == "success"
    await runtime.close()


class DelegatingSearch:
    """A provider that, like the seed's RemoteRetrievalSearchProvider, calls another node through the
    runtime of the MEMORY execution it serves (no runtime passed in)."""

    async def search(self, input: MemorySearchInput, options: MemoryCallOptions | None = None) -> Any:
        execution = current_execution()
        assert execution is not None and execution.node == "MEMORY.SEARCH"
        result = await execution.runtime.invoke("KB.SEARCH", {"query": {"content": input.query},
                                                              "limit": input.limit})
        if result.status != "success":
            raise RuntimeError(f"remote said: {result.error}")
        return [{"memory": {"id": candidate["id"], "content": candidate["content"]}, "score": candidate["score"],
                 "metadata": {"source": "kb"}} for candidate in result.output["candidates"]]


async def test_injected_provider_delegates_through_the_current_execution(store: SqliteMemoryStore) -> None:
    """MEM-3: an injected provider replaces the store's search, may call other nodes, and its failures are hidden."""
    async def kb_search(input: Any, context: ExecutionContext) -> Any:
        if input["query"]["content"] == "fail":
            raise RuntimeError("secret backend text")
        if input["query"]["content"] == "slow":
            await asyncio.sleep(5)
        return {"candidates": [{"id": "m1", "content": "remote memory", "score": 0.7}][: input["limit"]]}

    runtime = create_ditto(workers=[create_memory_worker(store=store, search=DelegatingSearch()),
                                    WorkerDefinition("KB", {"KB.SEARCH": kb_search})])
    found = await runtime.invoke("MEMORY.SEARCH", {"query": "anything", "limit": 5})
    assert found.status == "success"
    assert [(hit.memory.id, hit.score, hit.metadata) for hit in found.output] == [("m1", 0.7, {"source": "kb"})]
    failed = await runtime.invoke("MEMORY.SEARCH", {"query": "fail"})
    assert failed.error is not None
    assert (failed.error.code, failed.error.message) == ("MEMORY_BACKEND_ERROR", "the memory backend failed")
    slow = await runtime.invoke("MEMORY.SEARCH", {"query": "slow"}, timeout=0.2)  # the signal is inherited
    assert slow.status == "timeout"
    await runtime.close()


async def test_memory_worker_over_http(store: SqliteMemoryStore) -> None:
    """MEM-1: served over the HTTP transport, outputs arrive as camelCase JSON with the same shapes."""
    server = create_ditto(workers=[create_memory_worker(store=store)])
    app = create_worker_http_app(server, token="s3cret")
    async with serve_app(app) as url:
        client = create_ditto(transports=[create_http_transport(id="memory-host", url=url, token="s3cret")])
        (replica,) = server.workers()
        client.register_remote(address=replica.address, transport_id="memory-host",
                               capabilities=["MEMORY.WRITE", "MEMORY.GET", "MEMORY.SEARCH", "MEMORY.DELETE"])
        written = await client.invoke("MEMORY.WRITE", {"memories": [
            {"id": "h1", "key": "knowledge:acme:x", "content": {"text": "remote words"}, "metadata": {"a": 1}}]})
        assert written.status == "success"
        assert written.output == [{"id": "h1", "key": "knowledge:acme:x", "content": {"text": "remote words"},
                                   "metadata": {"a": 1}}]
        hits = await client.invoke("MEMORY.SEARCH", {"query": "words", "limit": 5})
        assert hits.output[0]["memory"]["id"] == "h1" and hits.output[0]["score"] > 0
        assert (await client.invoke("MEMORY.DELETE", {"ids": ["h1"]})).output == {"deleted": 1}
        bad = await client.invoke("MEMORY.SEARCH", {"query": "x", "filter": {"tenant": "acme"}})
        assert bad.error is not None and bad.error.code == "MEMORY_INVALID_INPUT"
        await client.close()
    await server.close()
