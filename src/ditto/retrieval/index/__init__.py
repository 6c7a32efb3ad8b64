"""A persistent search index in one directory: BM25 arrays, passages and vectors (SQLite + sqlite-vec).

Build or update one with :func:`update_index` (``ditto index SOURCE… --index DIR``),
open it with :func:`open_index` and search it through
:func:`create_index_search_provider` (``bm25``, ``keyword``, ``vector``, ``hybrid``,
``rerank``), like any other RETRIEVAL provider::

    summary = await update_index("docs.idx", ["docs/"])
    with open_index("docs.idx") as index:
        provider = create_index_search_provider(index)
        output = await provider.search({"query": {"content": "backup retention"}, "target": {"name": "docs"}})

Layout (``format_version`` 1)::

    DIR/manifest.json          the published state: format version, generation, analyzer, embedding model
    DIR/.lock                  the writer lock (flock)
    DIR/g-000042/index.sqlite  files (with their bytes), passages, vectors (vec0), sentence vectors
    DIR/g-000042/bm25/         the BM25 arrays (ditto.retrieval.engines.BM25Index.save)
"""

from .errors import INDEX_ERROR_CODES, SearchIndexError
from .manifest import FORMAT_VERSION, EmbeddingInfo, Manifest
from .provider import INDEX_STRATEGIES, IndexSearchProvider, create_index_search_provider
from .reader import SearchIndex, open_index
from .sources import INDEX_LIMITS, IndexLimits, PassageRow
from .writer import IndexSummary, update_index, update_index_sync

__all__ = [
    "FORMAT_VERSION",
    "INDEX_ERROR_CODES",
    "INDEX_LIMITS",
    "INDEX_STRATEGIES",
    "EmbeddingInfo",
    "IndexLimits",
    "IndexSearchProvider",
    "IndexSummary",
    "Manifest",
    "PassageRow",
    "SearchIndex",
    "SearchIndexError",
    "create_index_search_provider",
    "open_index",
    "update_index",
    "update_index_sync",
]
