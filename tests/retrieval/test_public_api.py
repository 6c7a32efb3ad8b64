"""The public face of ditto.retrieval, its memory adapters, its provider kit and ditto.testing: exactly
these names, each importable, nothing public left unlisted (RET-2, RET-6, RET-7)."""

from __future__ import annotations

import importlib
import subprocess
import sys
import types

import pytest

EXPECTED: dict[str, set[str]] = {
    "ditto.retrieval": {
        "EmbeddingConfig", "EmbeddingProvider", "HybridBranch", "InMemoryVectorIndex", "MilvusSearchOptions",
        "RerankProvider", "Retrieval", "RetrievalCandidate", "RetrievalCandidateSource", "RetrievalDefaults",
        "RetrievalError", "RetrievalExecutionContext", "RetrievalProviderRegistry", "RetrievalQuery",
        "RetrievalSearchInput", "RetrievalSearchOutput", "RetrievalSearchProvider", "RetrievalTarget",
        "RetrievalTargetRegistry", "SqlSearchOptions", "TextSearchOptions", "VectorRecord", "create_cosine_reranker",
        "create_http_embedding_provider", "create_hybrid_search_provider", "create_local_embedding_provider",
        "create_milvus_search_provider", "create_pgvector_provider", "create_rerank_search_provider",
        "create_retrieval", "create_retrieval_worker", "create_sql_search_provider", "create_text_search_provider",
        "create_vector_search_provider", "embed_contents", "embedding_config_from_env", "rerank_candidates",
        "retrieval_search_node", "validate_vector",
    },
    "ditto.retrieval.adapters.memory": {
        "MapOutput", "MemoryRetrievalProvider", "RemoteRetrievalSearchProvider", "RetrievalMemorySearchProvider",
        "create_memory_retrieval_provider", "create_retrieval_memory_search_provider", "map_memory_candidates",
    },
    "ditto.retrieval.providers.base": {
        "as_retrieval_error", "await_with_signal", "begin_search", "check_signal", "context_limit", "context_signal",
        "pick_number", "query_text", "run_blocking",
    },
    "ditto.testing": {"MemoryStoreContract", "ResearchSourceContract", "RetrievalProviderContract"},
}

# Module-level type variables used in signatures are not part of the face (constants have no __module__).
_TYPING_HELPERS = {"T", "TYPE_CHECKING"}


@pytest.mark.parametrize("package", sorted(EXPECTED))
def test_exported_members(package: str) -> None:
    """RET-2: ``__all__`` is exactly the documented set, every name resolves, nothing public is unlisted."""
    module = importlib.import_module(package)
    assert set(module.__all__) == EXPECTED[package]
    assert {name for name in module.__all__ if not hasattr(module, name)} == set()
    defined_here = {
        name for name, value in vars(module).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
        and str(getattr(value, "__module__", "")).startswith(package)
    }
    assert defined_here - set(module.__all__) <= _TYPING_HELPERS, defined_here - set(module.__all__)


def test_every_spec_name_is_importable() -> None:
    """RET-1…RET-7: every name the spec and the seed's imports use resolves where they say; names that left
    ``__all__`` still resolve from ``ditto.retrieval``."""
    import ditto.retrieval as retrieval
    import ditto.retrieval.adapters.memory as adapters

    for name in ("RemoteRetrievalSearchProvider", "create_memory_retrieval_provider",
                 "create_retrieval_memory_search_provider", "map_memory_candidates"):
        assert getattr(adapters, name) is getattr(retrieval, name)
    for name in ("RETRIEVAL_ERROR_CODES", "coerce_input", "parse_search_input", "parse_search_output",
                 "validate_search_output", "merge_defaults", "resolve_limit", "compile_filter", "rrf_fuse",
                 "default_candidate_key", "VectorHit", "RetrievalEmbeddingDefaults", "RetrievalHybridDefaults",
                 "RetrievalRerankDefaults", "TextSearchProvider", "SqlSearchProvider", "MilvusSearchProvider",
                 "HttpEmbeddingProvider", "RETRIEVAL_SEARCH"):
        assert getattr(retrieval, name) is not None
    with pytest.raises(AttributeError):
        retrieval.no_such_name  # noqa: B018


def test_ditto_testing_imports_nothing_optional() -> None:
    """RET-2/MEM-1: ``import ditto.testing`` loads neither RETRIEVAL, its engines nor pytest; a contract loads its
    own worker only when named."""
    code = ("import sys, ditto.testing\n"
            "print(sorted(m for m in ('ditto.retrieval', 'numpy', 'bm25s', 'pytest') if m in sys.modules))\n"
            "ditto.testing.MemoryStoreContract\n"
            "print('ditto.retrieval' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0] == "[]" and out[1] == "False"
