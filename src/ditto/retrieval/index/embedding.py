"""The local embedding model an index is built and searched with (the ``embed`` extra), loaded once per process.

``ditto index --embed`` and ``ditto search --strategy vector|hybrid|rerank`` name a
model (or take the default); a search over an index uses the model its manifest
records. Loading a model costs seconds, so one provider per model id is kept for the
process: the second research task of a run, or the second search of a server, pays
nothing. Vectors are kept in an on-disk cache (``$DITTO_EMBEDDING_CACHE_DIR``, else
the user cache folder's ``ditto/embeddings``; ``off`` disables it) keyed by the model
and the SHA-256 of each text, so re-indexing an unchanged corpus, or indexing it into
a second directory, does not run the model again.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import threading
from pathlib import Path
from typing import Any, Final

from ..providers.embedding import EmbeddingProvider
from .errors import INDEX_UNAVAILABLE, SearchIndexError

__all__ = ["CACHE_ENV", "embedding_available", "embedding_cache_dir", "local_embedding"]

CACHE_ENV: Final = "DITTO_EMBEDDING_CACHE_DIR"

_LOADED: dict[str | None, EmbeddingProvider] = {}
_LOCK = threading.Lock()


def _factory() -> Any:
    try:
        module = importlib.import_module("ditto.retrieval.providers.local_embedding")
    except ImportError:
        return None
    return getattr(module, "create_local_embedding_provider", None)


def embedding_available() -> bool:
    """Whether a local embedding model can be loaded here (the ``embed`` extra is installed)."""
    if _factory() is None:
        return False
    return any(importlib.util.find_spec(runtime) is not None for runtime in ("onnxruntime", "sentence_transformers"))


def embedding_cache_dir() -> Path | None:
    """Where the local model's vectors are cached: ``$DITTO_EMBEDDING_CACHE_DIR`` (``off``: nowhere),
    else the user cache folder's ``ditto/embeddings``."""
    given = os.environ.get(CACHE_ENV)
    if given:
        return None if given.strip().lower() == "off" else Path(given)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("ditto")) / "embeddings"


def local_embedding(model: str | None = None) -> EmbeddingProvider:
    """The local embedding provider for ``model`` (``None``: the library's default), loaded once per process."""
    with _LOCK:
        provider = _LOADED.get(model)
        if provider is None:
            factory = _factory()
            if factory is None:
                raise SearchIndexError(INDEX_UNAVAILABLE, "embeddings need the embed extra: "
                                                          "pip install 'ditto-agents[embed]'")
            try:
                provider = factory(model, cache_dir=embedding_cache_dir())
            except ImportError:
                raise SearchIndexError(INDEX_UNAVAILABLE, "embeddings need the embed extra: "
                                                          "pip install 'ditto-agents[embed]'") from None
            _LOADED[model] = provider
            model_id = getattr(provider, "model_id", None)
            if isinstance(model_id, str):
                _LOADED.setdefault(model_id, provider)
        return provider
