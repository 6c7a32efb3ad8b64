"""Runs every function of ``examples/retrieval.py`` (the seed's "逐 API 使用示例") with real providers."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from examples import retrieval as ex

from ditto import create_ditto
from ditto.contracts import Context, ContextItem
from ditto.retrieval import (
    RetrievalCandidate,
    RetrievalError,
    RetrievalTargetRegistry,
    create_http_embedding_provider,
    create_retrieval,
    create_retrieval_worker,
)
from ditto.worker.memory import SqliteMemoryStore, create_memory_worker, create_sqlite_memory_store
from tests.support.openai_embeddings_server import openai_embeddings_server
from tests.support.uvicorn_thread import serve_app

DOCS = {
    "d1": "agent memory migration guide for 2024",
    "d2": "vector database index tuning",
    "d3": "hybrid retrieval fuses agent memory and keyword search",
    "d4": "cooking pasta at home",
    "d5": "智能体记忆迁移指南",
}
YAML = "workers:\n  retrieval:\n    searchLimit: 3\n    hybrid:\n      candidateLimit: 20\n"


@pytest.fixture
async def embedding() -> AsyncIterator[Any]:
    async with openai_embeddings_server() as (url, _state), \
            create_http_embedding_provider(url=url, model="hash-bow") as provider:
        yield provider


@pytest.fixture
def config_path(tmp_path: Path) -> Path:
    path = tmp_path / "ditto.yaml"
    path.write_text(YAML)
    return path


async def test_setup_search_resolve_cancel_descriptor(embedding: Any, config_path: Path) -> None:
    """RET-2/RET-3: setup_retrieval, retrieval_search, registry_resolve, cancel_retrieval, retrieval_descriptor."""
    vector = await ex.vector_search(embedding, DOCS)
    runtime, retrieval = ex.setup_retrieval(vector, config_path, {})
    assert [w.type for w in runtime.workers()] == ["RETRIEVAL"]
    no_limit = {"query": ex.request["query"], "target": ex.request["target"]}
    sdk = await retrieval.search(no_limit)
    routed_default = await runtime.invoke("RETRIEVAL.SEARCH", no_limit)
    assert len(sdk.output.candidates) == len(routed_default.output.candidates) == 3  # YAML searchLimit
    await runtime.close()
    found = await ex.retrieval_search(vector, config_path, {})
    assert found["local"].status == "success" and found["target"].name == "kb"
    assert found["candidates"][0].id in ("d1", "d3") and len(found["candidates"]) == 5
    text = ex.text_search(DOCS)
    raw = await ex.registry_resolve(text)
    assert raw.strategy == "keyword" and {c.id for c in raw.candidates} == {"d1", "d3"}
    cancelled = await ex.cancel_retrieval(vector)
    assert cancelled.status == "cancelled" and cancelled.error.code == "RETRIEVAL_CANCELLED"
    definition = ex.retrieval_descriptor(vector)  # "custom" strategy: the vector provider takes any name
    assert definition.capabilities == ("RETRIEVAL.SEARCH",)
    runtime = create_ditto(workers=[definition])
    routed = await runtime.invoke("RETRIEVAL.SEARCH", ex.request)
    assert routed.status == "success" and routed.output.strategy == "custom"
    bad = await runtime.invoke("RETRIEVAL.SEARCH", {"query": {"content": "x"}, "target": {"name": "elsewhere"}})
    assert bad.error is not None and bad.error.code == "RETRIEVAL_TARGET_NOT_FOUND"
    await runtime.close()


async def test_start_retrieval_and_filtered_search(embedding: Any, config_path: Path) -> None:
    """RET-2/RET-6: start_retrieval with a hybrid company-kb and a bm25 code index; search_with_filter."""
    index_docs = {**DOCS, "old": "agent memory notes from 2019"}
    from ditto.retrieval import InMemoryVectorIndex, create_vector_search_provider

    index = InMemoryVectorIndex()
    vectors = await ex.embed_texts(embedding, list(index_docs.values()))
    index.add([{"id": k, "vector": v, "content": t, "metadata": {"year": 2019 if k == "old" else 2024}}
               for (k, t), v in zip(index_docs.items(), vectors, strict=True)])
    vector = create_vector_search_provider(index, embedding=embedding)
    text = ex.text_search(index_docs)
    runtime = ex.start_retrieval(ex.hybrid_search(vector, text), ex.text_search(DOCS), config_path, {})
    candidates = await ex.search_with_filter(runtime)
    ids = [c.id for c in candidates]
    assert "old" not in ids and ids[0] in ("d1", "d3")
    code = await runtime.invoke("RETRIEVAL.SEARCH", {"query": {"content": "pasta"}, "target": {"name": "code-index"}})
    assert code.output.strategy == "bm25" and code.output.candidates[0].id == "d4"
    await runtime.close()


async def test_provider_examples(embedding: Any, tmp_path: Path) -> None:
    """RET-6: embed_texts, check_vector, native_vector_search, rerank_with_cosine, rerank_search,
    http_embedding, sql_search."""
    vectors = await ex.embed_texts(embedding, ["a b", "c"])
    assert len(vectors) == 2 and ex.check_vector(vectors[0], 32) == vectors[0]
    native = await ex.native_vector_search(embedding, DOCS)
    out = await native.search({"query": {"content": "pasta cooking"}, "target": {"name": "kb"}, "limit": 1})
    assert out.candidates[0].id == "d4"
    candidates = [RetrievalCandidate(id=k, content=v) for k, v in DOCS.items()]
    reranked = await ex.rerank_with_cosine(embedding, candidates)
    assert len(reranked) == 3 and reranked[0].id in ("d1", "d3")
    from ditto.retrieval import create_cosine_reranker

    provider = ex.rerank_search(ex.text_search(DOCS), create_cosine_reranker(embedding))
    ranked = await provider.search({"query": {"content": "agent memory"}, "target": {"name": "kb"}, "limit": 2})
    assert len(ranked.candidates) == 2
    async with openai_embeddings_server() as (url, state):
        env = {"DITTO_WORKER_RETRIEVAL_EMBEDDING_URL": url, "DITTO_WORKER_RETRIEVAL_EMBEDDING_MODEL": "hash-bow",
               "DITTO_WORKER_RETRIEVAL_EMBEDDING_BATCH_SIZE": "2"}
        assert len(await ex.http_embedding(env, ["x", "y", "z"])) == 3
        assert [len(r["input"]) for r in state.requests] == [2, 1]
    connection = sqlite3.connect(tmp_path / "kb.sqlite", check_same_thread=False)
    connection.execute("CREATE VIRTUAL TABLE docs USING fts5(body)")
    connection.executemany("INSERT INTO docs(body) VALUES (?)", [(t,) for t in DOCS.values()])
    connection.commit()
    try:
        sql = ex.sql_search(connection)
        result = await create_retrieval(RetrievalTargetRegistry({"kb": {"default_strategy": "fts", "providers": {
            "fts": sql}}})).search({"query": {"content": "pasta"}, "target": {"name": "kb"}})
        assert result.status == "success" and result.output.candidates[0].content == DOCS["d4"]
    finally:
        connection.close()


async def test_milvus_example(embedding: Any, tmp_path: Path) -> None:
    """RET-6: milvus_search over a Milvus Lite file with the schema the example expects."""
    from pymilvus import DataType, MilvusClient

    from tests.support.openai_embeddings_server import hashed_bow

    client = MilvusClient(str(tmp_path / "milvus.db"))
    try:
        schema = client.create_schema(auto_id=False)
        schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=64)
        schema.add_field("vector", DataType.FLOAT_VECTOR, dim=32)
        schema.add_field("text", DataType.VARCHAR, max_length=2000)
        index = client.prepare_index_params()
        index.add_index("vector", metric_type="COSINE", index_type="FLAT")
        client.create_collection("docs", schema=schema, index_params=index)
        client.insert("docs", [{"id": k, "vector": hashed_bow(v, 32), "text": v} for k, v in DOCS.items()])
        provider = ex.milvus_search(client, embedding)
        result = await create_retrieval(RetrievalTargetRegistry({"kb": {
            "default_strategy": "vector", "providers": {"vector": provider}}})).search(
            {"query": {"content": "pasta at home"}, "target": {"name": "kb"}, "limit": 2})
        assert result.status == "success" and result.output.candidates[0].id == "d4"
    finally:
        client.close()


async def test_context_examples() -> None:
    """RET-6 + CX-14: context_retrieval and remote_context_retrieval feed CONTEXT.SELECT's RAG strategy."""
    text = ex.text_search(DOCS)
    context = Context(items=(ContextItem(id="goal", content="migrate agent memory"),))
    local = await ex.select_with_retrieval(ex.context_retrieval(text, {"name": "kb"}), context)
    ids = [item.id for item in local.context.items]
    assert set(ids) == {"d1", "d3"}
    assert all(item.metadata["relevance"] > 0 for item in local.context.items)
    runtime = create_ditto(workers=[create_retrieval_worker(RetrievalTargetRegistry({"kb": {
        "default_strategy": "bm25", "providers": {"bm25": text}}}))])
    remote = await ex.select_with_retrieval(ex.remote_context_retrieval(runtime, {"name": "kb"}), context)
    assert [item.id for item in remote.context.items] == ids
    failing = ex.remote_context_retrieval(runtime, {"name": "unknown"})
    with pytest.raises(RetrievalError) as info:  # the NodeResult was checked, not treated as empty
        await ex.select_with_retrieval(failing, context)
    assert info.value.code == "RETRIEVAL_TARGET_NOT_FOUND"
    await runtime.close()


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteMemoryStore]:
    async with create_sqlite_memory_store(tmp_path / "memory.sqlite") as sqlite_store:
        yield sqlite_store


async def test_memory_examples(store: SqliteMemoryStore, embedding: Any) -> None:
    """RET-7: remote_memory_search, memory_as_retrieval, retrieval_as_memory_search, default_memory_mapping."""
    runtime = create_ditto(workers=[create_memory_worker(store=store)])
    await runtime.invoke("MEMORY.WRITE", {"memories": [
        {"id": "m1", "key": "k1", "content": "agent memory lives in sqlite"},
        {"id": "m2", "content": "noodles for lunch"}]})
    registry = ex.memory_as_retrieval(store)
    result = await create_retrieval(registry).search({"query": {"content": "noodles"}, "target": {"name": "memories"}})
    [hit] = ex.default_memory_mapping(result.output)
    assert hit.memory.id == "m2" and hit.memory.content == "noodles for lunch"
    await runtime.close()
    retrieval_runtime = create_ditto(workers=[create_retrieval_worker(RetrievalTargetRegistry({"agent-memory": {
        "default_strategy": "bm25", "providers": {"bm25": ex.text_search({"m1": "agent memory lives in sqlite",
                                                                           "m2": "noodles for lunch"})}}}))])
    retrieval_runtime.register(ex.remote_memory_search(retrieval_runtime, store))
    found = await retrieval_runtime.invoke("MEMORY.SEARCH", {"query": "agent memory"})
    assert found.status == "success" and found.output[0].memory.id == "m1"
    assert found.output[0].metadata["source"] == {"target": "agent-memory", "ref": "m1"}
    await retrieval_runtime.close()
    native = await ex.native_vector_search(embedding, {"m1": "agent memory lives in sqlite",
                                                       "m2": "noodles for lunch"})
    local = create_ditto(workers=[ex.retrieval_as_memory_search(native, store)])
    with_vectors = await local.invoke("MEMORY.SEARCH", {"query": "noodles lunch", "limit": 1})
    # The index stores plain text, not full MemoryItems: the default mapping refuses it (no invented records).
    assert with_vectors.error is not None and with_vectors.error.code == "MEMORY_BACKEND_ERROR"
    await local.close()


async def test_service_examples() -> None:
    """RET-8: retrieval_service_app served by uvicorn; connect_retrieval_service registers the replica."""
    serving = create_ditto(workers=[create_retrieval_worker(RetrievalTargetRegistry({"kb": {
        "default_strategy": "bm25", "providers": {"bm25": ex.text_search(DOCS)}}}))])
    with pytest.raises(RuntimeError):
        ex.retrieval_service_app(serving, {})
    app = ex.retrieval_service_app(serving, {"DITTO_TRANSPORT_HTTP_WORKER_TOKEN": "t0ken"})
    async with serve_app(app) as url:
        caller, transport = ex.connect_retrieval_service(url, serving.workers()[0].address, "t0ken")
        result = await caller.invoke("RETRIEVAL.SEARCH", ex.request)
        assert result.status == "success" and result.output["candidates"][0]["id"] in ("d1", "d3")
        await caller.close()
        await transport.aclose()
    await serving.close()


async def test_routed_failures_raise_ditto_error_with_the_runtime_code() -> None:
    """RET-2: the examples' routed calls raise DittoError(code) for any non-success status, also the
    runtime's own codes (here WORKER_BUSY while the only slot is busy), never a ValueError from building
    a RetrievalError with a non-RETRIEVAL code."""
    from ditto import DittoError

    from .providers import SlowProvider

    slow = SlowProvider(5)
    registry = RetrievalTargetRegistry({"company-kb": {"default_strategy": "hybrid", "providers": {"hybrid": slow}}})
    runtime = create_ditto(workers=[create_retrieval_worker(providers=registry, concurrency=1)])
    busy = asyncio.create_task(runtime.invoke("RETRIEVAL.SEARCH", {"query": {"content": "x"},
                                                                   "target": {"name": "company-kb"}}))
    await slow.started.wait()
    with pytest.raises(DittoError) as info:
        await ex.search_with_filter(runtime)
    assert info.value.code == "WORKER_BUSY" and not isinstance(info.value, RetrievalError)
    busy.cancel()
    await asyncio.gather(busy, return_exceptions=True)
    await runtime.close()
