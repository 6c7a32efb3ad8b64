"""A ``RetrievalSearchProvider`` over an opened index: ``bm25``, ``keyword``, ``vector``, ``hybrid``, ``rerank``.

* ``bm25`` — BM25 (Lucene variant) over the passages, any query term; ``keyword``: every term.
* ``vector`` — the query embedded by the index's model, exact cosine (:meth:`SearchIndex.search_vectors`).
* ``hybrid`` — both, fused by :func:`~ditto.retrieval.providers.hybrid.create_text_vector_hybrid`
  with the fusion chosen on SciFact's train queries (:data:`TEXT_VECTOR_TUNING`: z-scored
  scores, 0.75 vector / 0.25 BM25 with the coordination factor, pools of 200 each completed with the
  other branch's scores) unless ``tuning`` says otherwise.
* ``rerank`` — BM25's ``candidate_limit`` best, reordered by the embedding's cosine
  (:func:`~ditto.retrieval.create_rerank_search_provider` with the cosine reranker).

Without ``strategy`` a request gets ``hybrid`` when the index has vectors and an
embedding provider was given, ``bm25`` otherwise. The strategies that need vectors
answer ``RETRIEVAL_STRATEGY_UNSUPPORTED`` on an index without them.

Candidates: ``id`` (the passage id), ``content`` (the passage text), ``score``,
``source.ref`` (``path#L<first>-L<last>`` for a file's passage, the record id for a
record), and ``metadata``: the passage's own (a record's metadata, a file's ``path`` and
``suffix``: what ``filter`` sees) plus ``path``, ``lineStart``, ``lineEnd``, ``start``,
``end``, ``heading`` and ``sha256`` (the passage text's hash).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from os import PathLike
from typing import Any, Final

from .._results import trusted_candidate, trusted_output, trusted_source
from ..config import context_limit
from ..engines.bm25 import IndexedDocument, MatchMode
from ..engines.filters import parse_filter
from ..errors import INVALID_INPUT, STRATEGY_UNSUPPORTED, RetrievalError, as_retrieval_error, check_signal
from ..providers.base import begin_search, query_text
from ..providers.embedding import EmbeddingProvider, embed_contents
from ..providers.hybrid import TEXT_VECTOR_TUNING, HybridTuning, ScoringSearchProvider, create_text_vector_hybrid
from ..providers.rerank import create_cosine_reranker, create_rerank_search_provider
from ..types import RetrievalCandidateSource, RetrievalExecutionContext, RetrievalSearchInput, RetrievalSearchOutput
from .errors import INDEX_MODEL_MISMATCH, SearchIndexError
from .reader import SearchIndex

__all__ = ["INDEX_STRATEGIES", "IndexSearchProvider", "create_index_search_provider"]

INDEX_STRATEGIES: Final = ("bm25", "keyword", "vector", "hybrid", "rerank")
_VECTOR_STRATEGIES: Final = frozenset({"vector", "hybrid", "rerank"})
#: Indexes at least this large search in a worker thread (a small one costs less than the thread hop).
_OFFLOAD: Final = 20_000


#: Per (target, passage id): the candidate source (immutable, shared by every result) and where the
#: passage text starts in the engine's copy; bounded.
_SOURCE_CACHE_LIMIT: Final = 200_000


def _source(document: IndexedDocument, target: str) -> RetrievalCandidateSource:
    meta = document.metadata
    assert meta is not None
    path = meta["path"]
    from_file = document.id.startswith(f"{path}#") and document.id[len(path) + 1:].isdigit()
    ref = f"{path}#L{meta['lineStart']}-L{meta['lineEnd']}" if from_file else document.id  # a record: its id
    return trusted_source(target, ref)


def _blank(text: str) -> bool:
    """A query of nothing but white space and NUL: an embedding of it is no question, whatever vector it is."""
    return not text.strip(" \t\r\n\x00\x0b\x0c")


def _text_start(document: IndexedDocument) -> int:
    """Where the passage text starts in the engine's search text (the heading path, a newline, the passage)."""
    heading = document.metadata.get("heading") if document.metadata is not None else None
    return len(heading) + 1 if heading else 0


class IndexSearchProvider:
    """Searches a :class:`~ditto.retrieval.index.SearchIndex` (see the module docs for the strategies)."""

    strategies: tuple[str, ...] = INDEX_STRATEGIES

    def __init__(self, index: SearchIndex, embedding: EmbeddingProvider | None, *, tuning: HybridTuning,
                 candidate_limit: int, coordinate: bool = False) -> None:
        self.index = index
        self.embedding = embedding
        self.coordinate = coordinate
        self._parts: dict[tuple[str, str], tuple[RetrievalCandidateSource, int]] = {}
        #: The last vector query's text and vector: a complete hybrid scores the same query right after.
        self._last: tuple[str, Sequence[float]] | None = None
        self._hybrid = create_text_vector_hybrid(_Branch(self, "bm25"), _Branch(self, "vector"), tuning=tuning,
                                                 text_strategy="bm25", vector_strategy="vector")
        self._rerank = create_rerank_search_provider(_Branch(self, "bm25"), create_cosine_reranker(embedding),
                                                     candidate_limit=candidate_limit) if embedding else None

    def branch(self, strategy: str) -> ScoringSearchProvider:
        """One of ``bm25``, ``keyword`` or ``vector`` as a provider of its own that can also score given ids
        (``score_ids``), for composing a hybrid of your own, e.g. across two indexes of the same passages
        built with different models::

            fused = create_hybrid_search_provider(
                [HybridBranch(english.branch("bm25"), weight=0.35),
                 HybridBranch(english.branch("vector"), weight=0.325),
                 HybridBranch(multilingual.branch("vector"), weight=0.325)],
                fusion="convex", normalization="zscore", complete=True)

        A ``bm25`` or ``keyword`` branch ranks as the provider does (with the coordination factor when it was
        created with ``coordinate=True``). Candidates of two indexes are the same record when their passage
        ids are: two indexes of the same folder cut by the same version of this library.
        """
        if strategy not in ("bm25", "keyword", "vector"):
            raise RetrievalError(STRATEGY_UNSUPPORTED, "a branch is one of bm25, keyword, vector")
        if strategy == "vector" and not self.vectors:
            raise RetrievalError(STRATEGY_UNSUPPORTED, "vector needs an index built with --embed and its "
                                                       "embedding model")
        return _Branch(self, strategy)

    @property
    def vectors(self) -> bool:
        """Whether the vector strategies can run (the index has vectors and an embedding provider was given)."""
        return self.embedding is not None and self.index.embedding is not None

    @property
    def default_strategy(self) -> str:
        return "hybrid" if self.vectors else "bm25"

    async def search(self, input: RetrievalSearchInput | Mapping[str, Any],
                     context: RetrievalExecutionContext | None = None) -> RetrievalSearchOutput:
        request, signal = begin_search(input, context)
        strategy = request.strategy or self.default_strategy
        if strategy not in INDEX_STRATEGIES:
            raise RetrievalError(STRATEGY_UNSUPPORTED, f"an index supports {', '.join(INDEX_STRATEGIES)}")
        if strategy in _VECTOR_STRATEGIES and not self.vectors:
            raise RetrievalError(STRATEGY_UNSUPPORTED, f"{strategy} needs an index built with --embed and its "
                                                       "embedding model")
        try:
            if strategy in ("bm25", "keyword", "vector"):
                output = await self._direct(request, strategy, context)
            elif strategy == "hybrid":
                output = await self._hybrid.search(request.model_copy(update={"strategy": None}), context)
            else:
                assert self._rerank is not None
                output = await self._rerank.search(request.model_copy(update={"strategy": "bm25"}), context)
        except RetrievalError:
            raise
        except Exception as error:  # a backend failure: logged once here, hidden from the caller
            raise as_retrieval_error(error) from None
        check_signal(signal)
        return trusted_output(output.candidates, request.target, request.strategy)

    async def _direct(self, request: RetrievalSearchInput, strategy: str,
                      context: RetrievalExecutionContext | None, coordinate: bool = False) -> RetrievalSearchOutput:
        text = query_text(request, "An index")
        conditions = parse_filter(request.filter) if request.filter else ()
        limit = context_limit(request, context)
        signal = context.signal if context is not None else None
        if strategy == "vector" and _blank(text):
            hits = []  # nothing asked: no nearest passages (BM25 finds no term in it either)
        elif strategy == "vector":
            info = self.index.embedding
            assert self.embedding is not None and info is not None
            [vector] = await embed_contents(self.embedding, [text], dimensions=info.dimensions, context=context,
                                            query=True)
            self._last = (text, vector)
            nearest = await self._run(
                lambda: self.index.search_vectors(vector, limit=limit, conditions=conditions), offload=True)
            found = (self.index.bm25.get(passage_id) for passage_id, _ in nearest)
            hits = [(document, score) for document, (_, score) in zip(found, nearest, strict=True)
                    if document is not None]
        else:
            mode: MatchMode = "all" if strategy == "keyword" else "any"
            hits = await self._run(lambda: self.index.bm25.search(text, limit=limit, mode=mode,
                                                                  conditions=conditions,
                                                                  coordinate=coordinate or self.coordinate),
                                   offload=len(self.index) >= _OFFLOAD)
        check_signal(signal)
        target = request.target.name
        parts = self._parts
        if len(parts) > _SOURCE_CACHE_LIMIT:
            parts.clear()
        candidates = []
        for document, score in hits:
            key = (target, document.id)
            cached = parts.get(key)
            if cached is None:
                cached = parts[key] = (_source(document, target), _text_start(document))
            source, start = cached
            content = document.content[start:] if start else document.content
            candidates.append(trusted_candidate(document.id, content, score, source, document.metadata))
        return trusted_output(tuple(candidates), request.target, strategy)

    async def _score(self, request: RetrievalSearchInput, strategy: str, ids: Sequence[str],
                     context: RetrievalExecutionContext | None, coordinate: bool = False) -> list[float | None]:
        """What :meth:`_direct` would score each of ``ids`` (``None``: not a hit or filtered out)."""
        text = query_text(request, "An index")
        conditions = parse_filter(request.filter) if request.filter else ()
        if strategy == "vector" and _blank(text):
            return [None] * len(ids)
        if strategy == "vector":
            info = self.index.embedding
            assert self.embedding is not None and info is not None
            last = self._last
            if last is not None and last[0] == text:
                vector = last[1]
            else:
                [vector] = await embed_contents(self.embedding, [text], dimensions=info.dimensions,
                                                context=context, query=True)
            return list(await self._run(lambda: self.index.score_vectors(vector, ids, conditions), offload=True))
        mode: MatchMode = "all" if strategy == "keyword" else "any"
        return list(await self._run(lambda: self.index.bm25.score(text, ids, mode=mode, conditions=conditions,
                                                                  coordinate=coordinate or self.coordinate),
                                    offload=len(self.index) >= _OFFLOAD))

    @staticmethod
    async def _run(function: Any, *, offload: bool) -> Any:
        """Run an index read, in a worker thread when the index is large (failures reach :meth:`search`)."""
        return await asyncio.to_thread(function) if offload else function()


class _Branch:
    """One strategy of the provider as a provider of its own (hybrid and rerank compose these)."""

    def __init__(self, owner: IndexSearchProvider, strategy: str, coordinate: bool = False) -> None:
        self._owner = owner
        self._strategy = strategy
        self._coordinate = coordinate

    def coordinated(self) -> _Branch:
        """The same branch ranking with BM25's coordination factor (what a coordinating tuning asks for)."""
        return _Branch(self._owner, self._strategy, coordinate=True)

    async def search(self, input: RetrievalSearchInput | Mapping[str, Any],
                     context: RetrievalExecutionContext | None = None) -> RetrievalSearchOutput:
        request, _ = begin_search(input, context)
        return await self._owner._direct(request, self._strategy, context, self._coordinate)

    async def score_ids(self, input: RetrievalSearchInput | Mapping[str, Any], ids: Sequence[str],
                        context: RetrievalExecutionContext | None = None) -> list[float | None]:
        request, _ = begin_search(input, context)
        return await self._owner._score(request, self._strategy, list(ids), context, self._coordinate)


def create_index_search_provider(index: SearchIndex, *, embedding: EmbeddingProvider | None = None,
                                 tuning: HybridTuning = TEXT_VECTOR_TUNING,
                                 candidate_limit: int = 100, coordinate: bool = False) -> IndexSearchProvider:
    """A search provider over ``index``; ``embedding`` (the index's model) enables vector, hybrid and rerank::

        index = open_index("docs.idx")
        provider = create_index_search_provider(index)
        output = await provider.search({"query": {"content": "backup retention"}, "target": {"name": "docs"}})

    ``tuning`` is how ``hybrid`` fuses (``HybridTuning``: RRF or convex, weights, pools);
    ``candidate_limit`` is the pool ``rerank`` reorders; ``coordinate`` multiplies every BM25 score
    (``bm25``, ``keyword`` and the BM25 side of ``hybrid`` and ``rerank``) by the idf-weighted share of
    the query's terms the passage holds (see ``BM25Index.search``): research over documents uses it,
    so an index ranks a folder's passages as the in-memory documents search does.
    An embedding provider whose ``model_id`` or ``dimensions`` differ from the index's
    is refused (``INDEX_MODEL_MISMATCH``).
    """
    if isinstance(index, (str, bytes, PathLike)) or not hasattr(index, "bm25"):  # a path, not an opened index
        raise RetrievalError(INVALID_INPUT, "index must be an opened index: create_index_search_provider("
                                            "open_index(path))")
    info = index.embedding
    if embedding is not None and info is not None:
        model = getattr(embedding, "model_id", None)
        dimensions = getattr(embedding, "dimensions", None)
        if (model is not None and model != info.model) or (dimensions is not None and dimensions != info.dimensions):
            raise SearchIndexError(INDEX_MODEL_MISMATCH, f"the index's vectors are {info.dimensions}-dimensional, "
                                                         f"from {info.model}; the embedding provider is {model} "
                                                         f"({dimensions} dimensions)")
    if not isinstance(tuning, HybridTuning):
        raise RetrievalError(INVALID_INPUT, "tuning must be a HybridTuning")
    return IndexSearchProvider(index, embedding, tuning=tuning, candidate_limit=candidate_limit,
                               coordinate=coordinate)
