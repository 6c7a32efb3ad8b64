"""An index served as ``RETRIEVAL.SEARCH``: one target whose strategies are the index provider's.

``ditto serve --index DIR [--target NAME]`` runs this worker over HTTP; in Python::

    worker = create_index_retrieval_worker(open_index("docs.idx"), target="docs")
    runtime = create_ditto(workers=[worker])
    result = await runtime.invoke("RETRIEVAL.SEARCH", {"query": {"content": "restore"}, "target": {"name": "docs"}})

A request without ``strategy`` gets the provider's default (hybrid when the index has
vectors and their model is loaded, BM25 otherwise); strategies that need vectors are
registered only when they can run.
"""

from __future__ import annotations

from ...runtime import WorkerDefinition
from ..providers.embedding import EmbeddingProvider
from ..registry import RetrievalTargetRegistry
from ..worker import create_retrieval_worker
from .provider import create_index_search_provider
from .reader import SearchIndex

__all__ = ["create_index_retrieval_worker"]


def create_index_retrieval_worker(index: SearchIndex, *, target: str | None = None,
                                  embedding: EmbeddingProvider | None = None,
                                  concurrency: int | None = None) -> WorkerDefinition:
    """A RETRIEVAL worker serving ``index`` as target ``target`` (default: the index directory's name)."""
    provider = create_index_search_provider(index, embedding=embedding)
    strategies = ("bm25", "keyword", "vector", "hybrid", "rerank") if provider.vectors else ("bm25", "keyword")
    name = target or index.directory.resolve().name or "index"
    registry = RetrievalTargetRegistry({name: {"default_strategy": provider.default_strategy,
                                               "providers": dict.fromkeys(strategies, provider)}})
    return create_retrieval_worker(registry, concurrency=concurrency)
