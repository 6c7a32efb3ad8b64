"""RETRIEVAL worker (optional package, seed 000): ``RETRIEVAL.SEARCH`` and its providers.

Nothing here is imported by ``import ditto`` or ``ditto.worker``; importing this
package registers nothing. Build a :class:`RetrievalTargetRegistry`, then use
:func:`create_retrieval` (direct SDK) or :func:`create_retrieval_worker`.

Names whose modules pull heavy or optional dependencies (the BM25/SQL/Milvus
backends, the MEMORY adapters) are resolved lazily on first attribute access,
so ``import ditto.retrieval`` stays cheap; ``ditto.retrieval.adapters.memory``
remains their canonical home, as in the seed.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .config import merge_defaults, resolve_limit
from .errors import RETRIEVAL_ERROR_CODES, RetrievalError
from .filters import compile_filter
from .providers.embedding import EmbeddingProvider, embed_contents, validate_vector
from .providers.http_embedding import (
    EmbeddingConfig,
    HttpEmbeddingProvider,
    create_http_embedding_provider,
    embedding_config_from_env,
)
from .providers.hybrid import HybridBranch, create_hybrid_search_provider, default_candidate_key, rrf_fuse
from .providers.rerank import (
    RerankProvider,
    create_cosine_reranker,
    create_rerank_search_provider,
    rerank_candidates,
)
from .providers.vector import InMemoryVectorIndex, VectorHit, VectorRecord, create_vector_search_provider
from .registry import RetrievalTargetRegistry
from .sdk import RETRIEVAL_SEARCH, Retrieval, create_retrieval
from .types import (
    RetrievalCandidate,
    RetrievalCandidateSource,
    RetrievalDefaults,
    RetrievalEmbeddingDefaults,
    RetrievalExecutionContext,
    RetrievalHybridDefaults,
    RetrievalProviderRegistry,
    RetrievalQuery,
    RetrievalRerankDefaults,
    RetrievalSearchInput,
    RetrievalSearchOutput,
    RetrievalSearchProvider,
    RetrievalTarget,
)
from .validation import coerce_input, parse_search_input, parse_search_output, validate_search_output
from .worker import create_retrieval_worker, retrieval_search_node

if TYPE_CHECKING:
    from .adapters.memory import (
        RemoteRetrievalSearchProvider,
        create_memory_retrieval_provider,
        create_retrieval_memory_search_provider,
        map_memory_candidates,
    )
    from .providers.milvus import MilvusSearchOptions, MilvusSearchProvider, create_milvus_search_provider
    from .providers.sql import SqlSearchOptions, SqlSearchProvider, create_sql_search_provider
    from .providers.text import TextSearchOptions, TextSearchProvider, create_text_search_provider

_LAZY: dict[str, str] = {
    "RemoteRetrievalSearchProvider": ".adapters.memory",
    "create_memory_retrieval_provider": ".adapters.memory",
    "create_retrieval_memory_search_provider": ".adapters.memory",
    "map_memory_candidates": ".adapters.memory",
    "TextSearchOptions": ".providers.text",
    "TextSearchProvider": ".providers.text",
    "create_text_search_provider": ".providers.text",
    "SqlSearchOptions": ".providers.sql",
    "SqlSearchProvider": ".providers.sql",
    "create_sql_search_provider": ".providers.sql",
    "MilvusSearchOptions": ".providers.milvus",
    "MilvusSearchProvider": ".providers.milvus",
    "create_milvus_search_provider": ".providers.milvus",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ditto.retrieval' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "RETRIEVAL_ERROR_CODES",
    "RETRIEVAL_SEARCH",
    "EmbeddingConfig",
    "EmbeddingProvider",
    "HttpEmbeddingProvider",
    "HybridBranch",
    "InMemoryVectorIndex",
    "MilvusSearchOptions",
    "MilvusSearchProvider",
    "RemoteRetrievalSearchProvider",
    "RerankProvider",
    "Retrieval",
    "RetrievalCandidate",
    "RetrievalCandidateSource",
    "RetrievalDefaults",
    "RetrievalEmbeddingDefaults",
    "RetrievalError",
    "RetrievalExecutionContext",
    "RetrievalHybridDefaults",
    "RetrievalProviderRegistry",
    "RetrievalQuery",
    "RetrievalRerankDefaults",
    "RetrievalSearchInput",
    "RetrievalSearchOutput",
    "RetrievalSearchProvider",
    "RetrievalTarget",
    "RetrievalTargetRegistry",
    "SqlSearchOptions",
    "SqlSearchProvider",
    "TextSearchOptions",
    "TextSearchProvider",
    "VectorHit",
    "VectorRecord",
    "coerce_input",
    "compile_filter",
    "create_cosine_reranker",
    "create_http_embedding_provider",
    "create_hybrid_search_provider",
    "create_memory_retrieval_provider",
    "create_milvus_search_provider",
    "create_rerank_search_provider",
    "create_retrieval",
    "create_retrieval_memory_search_provider",
    "create_retrieval_worker",
    "create_sql_search_provider",
    "create_text_search_provider",
    "create_vector_search_provider",
    "default_candidate_key",
    "embed_contents",
    "embedding_config_from_env",
    "map_memory_candidates",
    "merge_defaults",
    "parse_search_input",
    "parse_search_output",
    "rerank_candidates",
    "resolve_limit",
    "retrieval_search_node",
    "rrf_fuse",
    "validate_search_output",
    "validate_vector",
]
