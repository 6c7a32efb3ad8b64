"""RETRIEVAL worker (optional package, seed 000): ``RETRIEVAL.SEARCH`` and its providers.

Nothing here is imported by ``import ditto`` or ``ditto.worker``; importing this
package registers nothing. Build a :class:`RetrievalTargetRegistry`, then use
:func:`create_retrieval` (direct SDK) or :func:`create_retrieval_worker`.

Names whose modules pull heavy or optional dependencies (the BM25/SQL/Milvus
backends, local embeddings) are resolved lazily on first attribute access, so ``import
ditto.retrieval`` stays cheap. The MEMORY adapters live in
``ditto.retrieval.adapters.memory``, as in the seed; the pieces a new provider is
built from in ``ditto.retrieval.providers.base``; output and input checks in
``ditto.retrieval.validation``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .._extras import missing_extra
from . import _requires  # noqa: F401  (first: a missing extra is reported before any provider imports numpy)
from .errors import RetrievalError
from .providers.embedding import EmbeddingProvider, embed_contents, validate_vector
from .providers.http_embedding import EmbeddingConfig, create_http_embedding_provider, embedding_config_from_env
from .providers.hybrid import HybridBranch, create_hybrid_search_provider
from .providers.rerank import RerankProvider, create_cosine_reranker, create_rerank_search_provider, rerank_candidates
from .providers.vector import InMemoryVectorIndex, VectorRecord, create_vector_search_provider
from .registry import RetrievalTargetRegistry
from .sdk import Retrieval, create_retrieval
from .types import (
    RetrievalCandidate,
    RetrievalCandidateSource,
    RetrievalDefaults,
    RetrievalExecutionContext,
    RetrievalProviderRegistry,
    RetrievalQuery,
    RetrievalSearchInput,
    RetrievalSearchOutput,
    RetrievalSearchProvider,
    RetrievalTarget,
)
from .worker import create_retrieval_worker, retrieval_search_node

if TYPE_CHECKING:
    from .providers.local_embedding import create_local_embedding_provider
    from .providers.milvus import MilvusSearchOptions, create_milvus_search_provider
    from .providers.pgvector import create_pgvector_provider
    from .providers.sql import SqlSearchOptions, create_sql_search_provider
    from .providers.text import TextSearchOptions, create_text_search_provider

#: Public names whose modules pull optional dependencies (bm25s, sqlite/psycopg/pymilvus glue, and
#: sentence-transformers/torch once a local model is built):
#: loaded on first access.
_LAZY: dict[str, str] = {
    "create_local_embedding_provider": ".providers.local_embedding",
    "TextSearchOptions": ".providers.text",
    "create_text_search_provider": ".providers.text",
    "SqlSearchOptions": ".providers.sql",
    "create_sql_search_provider": ".providers.sql",
    "MilvusSearchOptions": ".providers.milvus",
    "create_milvus_search_provider": ".providers.milvus",
    "create_pgvector_provider": ".providers.pgvector",
}

#: Names this package exported before its face was narrowed; they still resolve (from their home
#: module, shown here) but are not part of ``__all__``.
_MOVED: dict[str, str] = {
    "RETRIEVAL_ERROR_CODES": ".errors",
    "RETRIEVAL_SEARCH": ".sdk",
    "HttpEmbeddingProvider": ".providers.http_embedding",
    "MilvusSearchProvider": ".providers.milvus",
    "SqlSearchProvider": ".providers.sql",
    "TextSearchProvider": ".providers.text",
    "VectorHit": ".providers.vector",
    "RetrievalEmbeddingDefaults": ".types",
    "RetrievalHybridDefaults": ".types",
    "RetrievalRerankDefaults": ".types",
    "coerce_input": ".validation",
    "parse_search_input": ".validation",
    "parse_search_output": ".validation",
    "validate_search_output": ".validation",
    "compile_filter": ".filters",
    "merge_defaults": ".config",
    "resolve_limit": ".config",
    "default_candidate_key": ".providers.hybrid",
    "rrf_fuse": ".providers.hybrid",
    "RemoteRetrievalSearchProvider": ".adapters.memory",
    "create_memory_retrieval_provider": ".adapters.memory",
    "create_retrieval_memory_search_provider": ".adapters.memory",
    "map_memory_candidates": ".adapters.memory",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is not None:
        try:
            loaded = importlib.import_module(module, __name__)
        except ModuleNotFoundError as error:  # bm25s/jieba: the rest of the 'retrieval' extra
            raise missing_extra(error, "retrieval", f"ditto.retrieval.{name}") from None
        value = getattr(loaded, name)
        globals()[name] = value
        return value
    moved = _MOVED.get(name)
    if moved is not None:
        return getattr(importlib.import_module(moved, __name__), name)
    raise AttributeError(f"module 'ditto.retrieval' has no attribute {name!r}")


__all__ = [
    "EmbeddingConfig",
    "EmbeddingProvider",
    "HybridBranch",
    "InMemoryVectorIndex",
    "MilvusSearchOptions",
    "RerankProvider",
    "Retrieval",
    "RetrievalCandidate",
    "RetrievalCandidateSource",
    "RetrievalDefaults",
    "RetrievalError",
    "RetrievalExecutionContext",
    "RetrievalProviderRegistry",
    "RetrievalQuery",
    "RetrievalSearchInput",
    "RetrievalSearchOutput",
    "RetrievalSearchProvider",
    "RetrievalTarget",
    "RetrievalTargetRegistry",
    "SqlSearchOptions",
    "TextSearchOptions",
    "VectorRecord",
    "create_cosine_reranker",
    "create_http_embedding_provider",
    "create_hybrid_search_provider",
    "create_local_embedding_provider",
    "create_milvus_search_provider",
    "create_pgvector_provider",
    "create_rerank_search_provider",
    "create_retrieval",
    "create_retrieval_worker",
    "create_sql_search_provider",
    "create_text_search_provider",
    "create_vector_search_provider",
    "embed_contents",
    "embedding_config_from_env",
    "rerank_candidates",
    "retrieval_search_node",
    "validate_vector",
]
