"""The seed's ``examples/retrieval.ts`` in Python: one function per API (nothing runs at import).

``python examples/retrieval.py`` runs the ones that need no service (BM25, SQLite FTS5 (its ids
are row numbers), the registry, a routed call and an error) on five sample documents and prints what each found.

``request`` is shared: ``query.content = "agent memory"``, ``target.name = "kb"``,
``limit = 5``; a ``provider`` argument must understand that target's queries.
Databases, models and services are injected by the application; the
functions create no hidden backend. ``tests/retrieval/test_examples.py`` runs
every function with real providers (the numpy vector index, the embedded BM25
engine, an SQLite FTS5 file, a local OpenAI-compatible embeddings server and
the CONTEXT/MEMORY workers).
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ditto import (
    AbortController,
    DittoError,
    RuntimeClient,
    create_ditto,
    create_http_transport,
    load_runtime_config_file,
)
from ditto.retrieval import (
    RETRIEVAL_ERROR_CODES,
    EmbeddingProvider,
    HybridBranch,
    InMemoryVectorIndex,
    MilvusSearchOptions,
    RerankProvider,
    Retrieval,
    RetrievalCandidate,
    RetrievalError,
    RetrievalExecutionContext,
    RetrievalSearchOutput,
    RetrievalSearchProvider,
    RetrievalTarget,
    RetrievalTargetRegistry,
    SqlSearchOptions,
    create_cosine_reranker,
    create_http_embedding_provider,
    create_hybrid_search_provider,
    create_milvus_search_provider,
    create_rerank_search_provider,
    create_retrieval,
    create_retrieval_worker,
    create_sql_search_provider,
    create_text_search_provider,
    create_vector_search_provider,
    embed_contents,
    embedding_config_from_env,
    parse_search_output,
    rerank_candidates,
    retrieval_search_node,
    validate_vector,
)
from ditto.retrieval.adapters.memory import (
    RemoteRetrievalSearchProvider,
    create_memory_retrieval_provider,
    create_retrieval_memory_search_provider,
    map_memory_candidates,
)
from ditto.runtime import NodeResult, Runtime, WorkerDefinition
from ditto.transport import HttpTransport, create_worker_http_app
from ditto.worker.context import RagStrategyPipeline, create_context, create_rag_strategy
from ditto.worker.memory import MemorySearchHit, MemoryStore, create_memory_worker

request: dict[str, Any] = {"query": {"content": "agent memory"}, "target": {"name": "kb"}, "limit": 5}


def _output_or_raise(result: NodeResult[Any]) -> Any:
    """The seed's ``if (result.status !== "success" || !result.output) throw new Error(code ?? status)``.

    A routed call may also end ``rejected``/``cancelled``/``timeout`` with the runtime's own code, which
    a ``RetrievalError`` cannot carry: those raise a plain :class:`DittoError`.
    """
    if result.status != "success" or result.output is None:
        code = result.error.code if result.error is not None else result.status
        error = RetrievalError if code in RETRIEVAL_ERROR_CODES else DittoError
        raise error(code, f"RETRIEVAL.SEARCH ended {result.status}")
    return result.output


# -- 按需启用: explicit opt-in ---------------------------------------------------------


def start_retrieval(kb_provider: RetrievalSearchProvider, code_provider: RetrievalSearchProvider,
                    config_path: str | Path = "ditto.yaml", env: Mapping[str, str] | None = None) -> Runtime:
    """Two targets with their own default strategies; the runtime's YAML is the worker's defaults layer."""
    config = load_runtime_config_file(config_path, dict(os.environ) if env is None else env)
    providers = RetrievalTargetRegistry({
        "company-kb": {"default_strategy": "hybrid", "providers": {"hybrid": kb_provider}},
        "code-index": {"default_strategy": "bm25", "providers": {"bm25": code_provider}},
    })
    return create_ditto(config=config, workers=[create_retrieval_worker(providers=providers, concurrency=8)])


# -- create_retrieval / create_retrieval_worker --------------------------------------------


def setup_retrieval(provider: RetrievalSearchProvider, config_path: str | Path = "ditto.yaml",
                    env: Mapping[str, str] | None = None) -> tuple[Runtime, Retrieval]:
    """One registry, a worker with concurrency 4 and a direct SDK sharing the YAML defaults."""
    config = load_runtime_config_file(config_path, dict(os.environ) if env is None else env)
    providers = RetrievalTargetRegistry({"kb": {"default_strategy": "vector", "providers": {"vector": provider}}})
    runtime = create_ditto(config=config, workers=[create_retrieval_worker(providers=providers, concurrency=4)])
    retrieval = create_retrieval(providers=providers, defaults=config.retrieval)
    return runtime, retrieval


# -- retrieval.search / RETRIEVAL.SEARCH ---------------------------------------------------


async def retrieval_search(provider: RetrievalSearchProvider, config_path: str | Path = "ditto.yaml",
                           env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Local SDK and routed call side by side; no match still keeps target/strategy."""
    runtime, retrieval = setup_retrieval(provider, config_path, env)
    try:
        local = await retrieval.search(request)
        output = _output_or_raise(await runtime.invoke("RETRIEVAL.SEARCH", request))
        return {"local": local, "candidates": output.candidates, "target": output.target}
    finally:
        await runtime.close()


async def search_with_filter(runtime: RuntimeClient) -> Sequence[RetrievalCandidate]:
    """The seed's routed call with strategy, filter and limit; a failure raises with its code."""
    result = await runtime.invoke("RETRIEVAL.SEARCH", {
        "query": {"content": "agent memory migration"},
        "target": {"name": "company-kb"},
        "strategy": "hybrid",
        "filter": {"year": {"gte": 2024}},
        "limit": 20,
    })
    return parse_search_output(_output_or_raise(result)).candidates


# -- RetrievalTargetRegistry.resolve -------------------------------------------------------


async def registry_resolve(provider: RetrievalSearchProvider) -> Any:
    """The resolved provider passes the strategy in and fills it in the raw output (errors raise)."""
    providers = RetrievalTargetRegistry({"kb": {"default_strategy": "keyword", "providers": {"keyword": provider}}})
    selected = providers.resolve({"name": "kb"})
    return await selected.search({**request, "limit": 5})  # raw output; strategy is "keyword"


# -- search(input, runtime_defaults, context) ----------------------------------------------


async def cancel_retrieval(provider: RetrievalSearchProvider) -> Any:
    """runtime_defaults is a fallback layer; context carries the signal only."""
    providers = RetrievalTargetRegistry({"kb": {"default_strategy": "custom", "providers": {"custom": provider}}})
    retrieval = create_retrieval(providers=providers, defaults={"search_limit": 5})
    controller = AbortController()
    controller.abort()
    return await retrieval.search(request, {"search_limit": 10}, {"signal": controller.signal})


# -- node descriptor type / define ---------------------------------------------------------


def retrieval_descriptor(provider: RetrievalSearchProvider) -> WorkerDefinition:
    """A custom handler reusing the SDK's validation and NodeResult wrapping (nothing registered)."""
    providers = RetrievalTargetRegistry({"kb": {"default_strategy": "custom", "providers": {"custom": provider}}})
    retrieval = create_retrieval(providers=providers)

    async def handler(input: Any) -> RetrievalSearchOutput:
        result = await retrieval.search(input)
        if result.status != "success" or result.output is None:
            raise RetrievalError(result.error.code if result.error else "RETRIEVAL_BACKEND_ERROR",
                                 result.error.message if result.error else None)
        return result.output

    return retrieval_search_node.define("RETRIEVAL", handler)  # type: ignore[arg-type]


# -- with CONTEXT ----------------------------------------------------------------------------


def context_retrieval(provider: RetrievalSearchProvider, target: RetrievalTarget | Mapping[str, Any]
                      ) -> RagStrategyPipeline:
    """A CONTEXT RAG strategy reusing a RETRIEVAL provider; candidates mapped to stable ContextItems."""

    async def retrieve(input: Any, options: Any = None) -> list[dict[str, Any]]:
        context = RetrievalExecutionContext(signal=getattr(options, "signal", None))
        raw = await provider.search({"query": {"content": input.query if input.query is not None else ""},
                                     "target": target, "limit": 10}, context)
        output = parse_search_output(raw)
        items = []
        for candidate in output.candidates:
            item_id = candidate.id or (candidate.source.ref if candidate.source else None)
            if not item_id:
                raise ValueError("Map retrieval candidates to stable Context IDs")
            content = candidate.content if isinstance(candidate.content, str) else \
                json.dumps(candidate.content, ensure_ascii=False, separators=(",", ":"))
            metadata = {} if candidate.score is None else {"relevance": candidate.score}
            items.append({"item": {"id": item_id, "content": content, "metadata": metadata}})
        return items

    return create_rag_strategy(retrieve={"retrieve": retrieve})


def remote_context_retrieval(runtime: RuntimeClient, target: RetrievalTarget | Mapping[str, Any]
                             ) -> RagStrategyPipeline:
    """The same strategy delegating to RETRIEVAL.SEARCH through a runtime (local or HTTP)."""

    class _Remote:
        async def search(self, input: Any, context: RetrievalExecutionContext | None = None) -> Any:
            return _output_or_raise(await runtime.invoke(
                "RETRIEVAL.SEARCH", input, signal=context.signal if context is not None else None))

    return context_retrieval(_Remote(), target)


async def select_with_retrieval(strategy: RagStrategyPipeline, context: Any) -> Any:
    """CONTEXT.SELECT with the RAG strategy (a view; nothing is written back)."""
    return await create_context(services={"rag_strategy": strategy}).select(
        {"context": context, "purpose": "infer", "query": "agent memory", "strategy": {"kind": "rag"}, "limit": 5})


# -- providers: embeddings, vector, text, hybrid, rerank -------------------------------------


async def embed_texts(embedding: EmbeddingProvider, texts: Sequence[str]) -> list[tuple[float, ...]]:
    """Sequential bounded batches (batch_size is payload size, not parallelism), each vector checked."""
    return await embed_contents(embedding, texts, batch_size=64)


def check_vector(value: Any, dimensions: int) -> tuple[float, ...]:
    """Count/finite/dimension checks; a wrong vector raises RETRIEVAL_INVALID_EMBEDDING, never truncated."""
    return validate_vector(value, dimensions=dimensions)


async def vector_search(embedding: EmbeddingProvider, documents: Mapping[str, str]) -> RetrievalSearchProvider:
    """External embeddings into an exact in-memory numpy index (cosine)."""
    index = InMemoryVectorIndex(metric="cosine")
    vectors = await embed_contents(embedding, list(documents.values()))
    index.add([{"id": key, "vector": vector, "content": text}
               for (key, text), vector in zip(documents.items(), vectors, strict=True)])
    return create_vector_search_provider(index, embedding=embedding)


async def native_vector_search(embedding: EmbeddingProvider, documents: Mapping[str, str]
                               ) -> RetrievalSearchProvider:
    """Index-native embedding (the index embeds documents and queries itself); exclusive with embedding=."""
    index = InMemoryVectorIndex(embedding=embedding)
    await index.add_contents([{"id": key, "content": text} for key, text in documents.items()])
    return create_vector_search_provider(index, native_embedding=True)


def text_search(documents: Mapping[str, str]) -> RetrievalSearchProvider:
    """Embedded BM25 (bm25s): English stemming/stop words, CJK segmentation."""
    return create_text_search_provider([{"id": key, "content": text} for key, text in documents.items()])


def hybrid_search(vector: RetrievalSearchProvider, text: RetrievalSearchProvider) -> RetrievalSearchProvider:
    """Weighted RRF over concurrent branches: Σ weight/(rrf_k + rank)."""
    return create_hybrid_search_provider([HybridBranch(vector, weight=1.0), HybridBranch(text, weight=0.5,
                                                                                          strategy="bm25")],
                                         candidate_limit=100, rrf_k=60)


async def rerank_with_cosine(embedding: EmbeddingProvider, candidates: Sequence[RetrievalCandidate]
                             ) -> list[RetrievalCandidate]:
    """Cosine rerank (not a cross-encoder); returns the best 3."""
    return await rerank_candidates(create_cosine_reranker(embedding), "agent memory", candidates, limit=3)


def rerank_search(provider: RetrievalSearchProvider, reranker: RerankProvider) -> RetrievalSearchProvider:
    """Widen the pool to max(limit, 50), rerank, keep limit."""
    return create_rerank_search_provider(provider, reranker, candidate_limit=50)


async def http_embedding(env: Mapping[str, str], texts: Sequence[str]) -> list[tuple[float, ...]]:
    """OpenAI-compatible /v1/embeddings from DITTO_WORKER_RETRIEVAL_EMBEDDING_* in the given mapping."""
    async with create_http_embedding_provider(embedding_config_from_env(env)) as provider:
        return await embed_contents(provider, texts)


def sql_search(connection: sqlite3.Connection) -> RetrievalSearchProvider:
    """Database-native full text (SQLite FTS5) over the application's own connection."""
    return create_sql_search_provider(connection, SqlSearchOptions(dialect="sqlite", table="docs",
                                                                   content_column="body"))


def milvus_search(client: Any, embedding: EmbeddingProvider) -> RetrievalSearchProvider:
    """Vector search in the application's pymilvus ``MilvusClient`` (server or Milvus Lite)."""
    return create_milvus_search_provider(client, MilvusSearchOptions(collection="docs", dimensions=32),
                                         embedding=embedding)


# -- MEMORY adapters -------------------------------------------------------------------------


def remote_memory_search(runtime: RuntimeClient, store: MemoryStore) -> WorkerDefinition:
    """MEMORY.SEARCH delegated to RETRIEVAL.SEARCH; this app's candidate.id is the Memory id."""

    def map_output(output: RetrievalSearchOutput) -> list[dict[str, Any]]:
        hits = []
        for candidate in output.candidates:
            if not candidate.id:
                raise ValueError("Missing Memory ID")
            memory: dict[str, Any] = {"id": candidate.id, "content": candidate.content}
            if candidate.metadata is not None:
                memory["metadata"] = candidate.metadata
            hit: dict[str, Any] = {"memory": memory, "metadata": {
                "source": candidate.source.model_dump(exclude_none=True) if candidate.source else None}}
            if candidate.score is not None:
                hit["score"] = candidate.score
            hits.append(hit)
        return hits

    search = RemoteRetrievalSearchProvider(runtime=runtime, target={"name": "agent-memory"}, map_output=map_output)
    return create_memory_worker(store=store, search=search)


def memory_as_retrieval(store: MemoryStore) -> RetrievalTargetRegistry:
    """MEMORY's own search offered as a RETRIEVAL target (candidate.content is the full MemoryItem)."""
    return RetrievalTargetRegistry({"memories": {"default_strategy": "keyword", "providers": {
        "keyword": create_memory_retrieval_provider(store)}}})


def retrieval_as_memory_search(provider: RetrievalSearchProvider, store: MemoryStore) -> WorkerDefinition:
    """A RETRIEVAL provider used as MEMORY's search in process (no extra hop)."""
    return create_memory_worker(store=store, search=create_retrieval_memory_search_provider(
        provider, target={"name": "agent-memory"}))


def default_memory_mapping(output: RetrievalSearchOutput) -> list[MemorySearchHit]:
    """When candidate.content is a complete MemoryItem, the default mapping keeps key/content/metadata."""
    return map_memory_candidates(output)


# -- standalone service ------------------------------------------------------------------------


def retrieval_service_app(retrieval_runtime: Runtime, env: Mapping[str, str]) -> Any:
    """The ASGI app serving a RETRIEVAL-only runtime (run it with uvicorn or ``ditto serve``)."""
    token = env.get("DITTO_TRANSPORT_HTTP_WORKER_TOKEN")
    if not token:
        raise RuntimeError("Missing transport token")
    return create_worker_http_app(retrieval_runtime, token=token)


def connect_retrieval_service(url: str, address: str, token: str) -> tuple[Runtime, HttpTransport]:
    """The caller installs one transport per service address and registers the replica. The transport is
    the caller's to close (``await transport.aclose()`` after ``await runtime.close()``): a runtime never
    closes what it was given."""
    transport = create_http_transport(id="retrieval-service", url=url, token=token)
    runtime = create_ditto(transports=[transport])
    runtime.register_remote(address=address, transport_id=transport.id, capabilities=["RETRIEVAL.SEARCH"])
    return runtime, transport


# -- python examples/retrieval.py -----------------------------------------------------------------

SAMPLE = {
    "d1": "agent memory migration guide for 2024",
    "d2": "vector database index tuning",
    "d3": "hybrid retrieval fuses agent memory and keyword search",
    "d4": "cooking pasta at home",
    "d5": "智能体记忆迁移指南",
}


def _ranked(output: Any) -> list[str]:
    return [f"{candidate.id or candidate.content[:24]} ({candidate.score:.3f})" if candidate.score is not None
            else str(candidate.id) for candidate in parse_search_output(output).candidates]


async def main() -> dict[str, Any]:
    """The runnable part: every search below uses the five SAMPLE documents."""
    text = text_search(SAMPLE)
    one_line = create_retrieval(RetrievalTargetRegistry.single(text))
    found: dict[str, Any] = {"one line: search('agent memory')": _ranked(_output_or_raise(
        await one_line.search("agent memory")))}
    found["chinese: search('记忆迁移')"] = _ranked(_output_or_raise(await one_line.search("记忆迁移")))
    runtime = create_ditto(workers=[create_retrieval_worker(RetrievalTargetRegistry.single(text, target="kb"))])
    try:
        found["routed RETRIEVAL.SEARCH (target kb, limit 5)"] = _ranked(_output_or_raise(
            await runtime.invoke("RETRIEVAL.SEARCH", request)))
        missing = await runtime.invoke("RETRIEVAL.SEARCH", {**request, "target": {"name": "nowhere"}})
        found["unknown target"] = missing.error.code if missing.error else missing.status
    finally:
        await runtime.close()
    found["registry.resolve (strategy keyword)"] = _ranked(await registry_resolve(text))
    connection = sqlite3.connect(":memory:", check_same_thread=False)
    try:
        connection.execute("CREATE VIRTUAL TABLE docs USING fts5(body)")
        connection.executemany("INSERT INTO docs(body) VALUES (?)", [(body,) for body in SAMPLE.values()])
        fts = sql_search(connection)
        found["SQLite FTS5: 'pasta'"] = _ranked(await fts.search({"query": {"content": "pasta"},
                                                                 "target": {"name": "kb"}, "limit": 3}))
    finally:
        connection.close()
    return found


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main()), indent=2, ensure_ascii=False))


__all__ = [
    "cancel_retrieval",
    "check_vector",
    "connect_retrieval_service",
    "context_retrieval",
    "default_memory_mapping",
    "embed_texts",
    "http_embedding",
    "hybrid_search",
    "memory_as_retrieval",
    "milvus_search",
    "native_vector_search",
    "registry_resolve",
    "remote_context_retrieval",
    "remote_memory_search",
    "request",
    "rerank_search",
    "rerank_with_cosine",
    "retrieval_as_memory_search",
    "retrieval_descriptor",
    "retrieval_search",
    "retrieval_service_app",
    "search_with_filter",
    "select_with_retrieval",
    "setup_retrieval",
    "sql_search",
    "start_retrieval",
    "text_search",
    "vector_search",
]
