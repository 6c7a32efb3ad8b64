"""Vector search (RET-6): ``create_vector_search_provider`` and an exact in-memory index.

The provider takes a query that is already a vector, or text embedded either by
an external :class:`EmbeddingProvider` *or* by the index itself
(``native_embedding=True``) — never both. :class:`InMemoryVectorIndex` is an
exact (brute-force) numpy index with cosine, dot-product or L2 scoring and
metadata filters, so vector search works with no server; for millions of
vectors inject a database-backed index with the same two methods.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from numbers import Real
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from ...contracts import freeze_json
from .._results import trusted_candidate, trusted_output, trusted_source
from ..config import context_limit
from ..errors import INVALID_EMBEDDING, INVALID_INPUT, RetrievalArgumentError, RetrievalError, check_signal
from ..filters import compile_filter
from ..types import (
    RetrievalExecutionContext,
    RetrievalSearchInput,
    RetrievalSearchOutput,
)
from ..validation import coerce_input
from .embedding import EmbeddingProvider, Vector, check_dimensions, embed_contents, validate_vector

__all__ = [
    "InMemoryVectorIndex",
    "NativeEmbeddingIndex",
    "VectorHit",
    "VectorIndex",
    "VectorMetric",
    "VectorRecord",
    "VectorSearchProvider",
    "create_vector_search_provider",
]

VectorMetric = Literal["cosine", "dot", "l2"]
_METRICS = ("cosine", "dot", "l2")


@dataclass(frozen=True, slots=True)
class VectorRecord:
    """One indexed item: a vector plus what a candidate returns (content, metadata)."""

    id: str
    vector: Sequence[float] | npt.NDArray[np.floating[Any]]
    content: Any = None
    metadata: Mapping[str, Any] | None = field(default=None)


@dataclass(frozen=True, slots=True)
class VectorHit:
    """A scored index hit. Higher ``score`` is better for every metric (L2 is negated)."""

    id: str
    score: float
    content: Any = None
    metadata: Mapping[str, Any] | None = None


@runtime_checkable
class VectorIndex(Protocol):
    async def search_vector(self, vector: Vector, *, limit: int, filter: Mapping[str, Any] | None,
                            context: RetrievalExecutionContext | None = None) -> Sequence[VectorHit]: ...


@runtime_checkable
class NativeEmbeddingIndex(Protocol):
    """An index that embeds query text itself (database-native embedding)."""

    async def search_text(self, content: Any, *, limit: int, filter: Mapping[str, Any] | None,
                          context: RetrievalExecutionContext | None = None) -> Sequence[VectorHit]: ...


def _frozen(value: Any) -> Any:
    """Store JSON-like values read-only, so a caller mutating a result cannot change the index."""
    return freeze_json(value) if isinstance(value, (Mapping, list, tuple)) else value


def _is_vector_query(value: Any) -> bool:
    if isinstance(value, np.ndarray):
        return True
    return (isinstance(value, (list, tuple)) and len(value) > 0
            and all(isinstance(x, Real) and not isinstance(x, bool) for x in value))


class InMemoryVectorIndex:
    """Exact nearest-neighbour search over a numpy matrix.

    ``metric``: ``cosine`` (default; vectors normalised once at build time),
    ``dot`` or ``l2`` (score = −Euclidean distance so higher is better). Ties
    keep insertion order. With ``embedding`` the index also embeds documents
    (:meth:`add_contents`) and query text (:meth:`search_text`), acting like a
    database with native embedding. Adding an existing id replaces it.
    """

    def __init__(self, *, metric: VectorMetric = "cosine", dimensions: int | None = None,
                 embedding: EmbeddingProvider | None = None, batch_size: int | None = None) -> None:
        if metric not in _METRICS:
            raise RetrievalArgumentError(INVALID_INPUT, f"metric must be one of {', '.join(_METRICS)}")
        self.metric: VectorMetric = metric
        self.dimensions = check_dimensions(dimensions)
        self._embedding = embedding
        self._batch_size = batch_size
        self._ids: list[str] = []
        self._rows: dict[str, int] = {}
        self._vectors: list[npt.NDArray[np.float64]] = []
        self._contents: list[Any] = []
        self._metadata: list[Mapping[str, Any] | None] = []
        self._matrix: npt.NDArray[np.float64] | None = None

    def __len__(self) -> int:
        return len(self._ids)

    def add(self, records: Sequence[VectorRecord | Mapping[str, Any]]) -> None:
        """Add or replace records (``{id, vector, content?, metadata?}``); vectors are validated."""
        prepared = []
        for position, raw in enumerate(records):
            record = raw if isinstance(raw, VectorRecord) else VectorRecord(**dict(raw))
            if not isinstance(record.id, str) or not record.id:
                raise RetrievalError(INVALID_INPUT, f"record {position} needs a non-empty string id")
            vector = validate_vector(record.vector, index=position, dimensions=self.dimensions)
            if self.dimensions is None:
                self.dimensions = len(vector)
            array = np.asarray(vector, dtype=np.float64)
            if self.metric == "cosine":
                norm = float(np.linalg.norm(array))
                if norm == 0.0:
                    raise RetrievalError(INVALID_EMBEDDING, f"record {position} is a zero vector (cosine)")
                array = array / norm
            prepared.append((record, array))
        for record, array in prepared:
            row = self._rows.get(record.id)
            if row is None:
                self._rows[record.id] = len(self._ids)
                self._ids.append(record.id)
                self._vectors.append(array)
                self._contents.append(_frozen(record.content))
                self._metadata.append(_frozen(record.metadata))
            else:
                self._vectors[row] = array
                self._contents[row] = _frozen(record.content)
                self._metadata[row] = _frozen(record.metadata)
        self._matrix = None

    async def add_contents(self, items: Sequence[Mapping[str, Any]],
                           context: RetrievalExecutionContext | None = None) -> None:
        """Embed ``{id, content, metadata?}`` items with the index's embedding provider and add them."""
        if self._embedding is None:
            raise RetrievalError(INVALID_INPUT, "this index has no embedding provider")
        vectors = await embed_contents(self._embedding, [item["content"] for item in items],
                                       batch_size=self._batch_size, dimensions=self.dimensions, context=context)
        self.add([VectorRecord(item["id"], vector, item["content"], item.get("metadata"))
                  for item, vector in zip(items, vectors, strict=True)])

    def remove(self, ids: Sequence[str]) -> int:
        """Remove records by id; returns how many existed."""
        drop = {i for i in ids if i in self._rows}
        if not drop:
            return 0
        keep = [row for row, rid in enumerate(self._ids) if rid not in drop]
        self._ids = [self._ids[row] for row in keep]
        self._vectors = [self._vectors[row] for row in keep]
        self._contents = [self._contents[row] for row in keep]
        self._metadata = [self._metadata[row] for row in keep]
        self._rows = {rid: row for row, rid in enumerate(self._ids)}
        self._matrix = None
        return len(drop)

    def _scores(self, query: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        if self._matrix is None:
            self._matrix = np.vstack(self._vectors) if self._vectors else np.zeros((0, self.dimensions or 1))
        if self.metric == "l2":
            distances: npt.NDArray[np.float64] = np.linalg.norm(self._matrix - query, axis=1)
            return -distances
        scores: npt.NDArray[np.float64] = self._matrix @ query
        return scores

    def _query_vector(self, vector: Sequence[float]) -> npt.NDArray[np.float64]:
        checked = validate_vector(vector, dimensions=self.dimensions)
        query = np.asarray(checked, dtype=np.float64)
        if self.metric == "cosine":
            norm = float(np.linalg.norm(query))
            if norm == 0.0:
                raise RetrievalError(INVALID_EMBEDDING, "the query is a zero vector (cosine)")
            query = query / norm
        return query

    def query(self, vector: Sequence[float], *, limit: int, filter: Mapping[str, Any] | None = None
              ) -> list[VectorHit]:
        """Synchronous exact search (the async methods wrap this)."""
        query = self._query_vector(vector)
        predicate = compile_filter(filter)
        if not self._ids or limit < 1:
            return []
        scores = self._scores(query)
        if predicate is not None:
            allowed = np.fromiter((predicate(meta) for meta in self._metadata), dtype=bool, count=len(self._ids))
            rows = np.flatnonzero(allowed)
        else:
            rows = np.arange(len(self._ids))
        order = rows[np.argsort(-scores[rows], kind="stable")][:limit]
        return [VectorHit(self._ids[row], float(scores[row]), self._contents[row], self._metadata[row])
                for row in order.tolist()]

    async def search_vector(self, vector: Vector, *, limit: int, filter: Mapping[str, Any] | None,
                            context: RetrievalExecutionContext | None = None) -> list[VectorHit]:
        check_signal(context.signal if context else None)
        return self.query(vector, limit=limit, filter=filter)

    def score_vector(self, vector: Sequence[float], ids: Sequence[str], *,
                     filter: Mapping[str, Any] | None = None) -> list[float | None]:
        """The score :meth:`query` gives each of ``ids`` (``None``: unknown id or filtered out)."""
        query = self._query_vector(vector)
        predicate = compile_filter(filter)
        rows = [self._rows.get(record_id) for record_id in ids]
        known = [row for row in rows if row is not None]
        if not known:
            return [None] * len(rows)
        if self._matrix is None:
            self._scores(query)  # builds the matrix
        assert self._matrix is not None
        picked = self._matrix[known]
        values = (-np.linalg.norm(picked - query, axis=1) if self.metric == "l2" else picked @ query).tolist()
        found = dict(zip(known, values, strict=True))
        return [found[row] if row is not None and (predicate is None or predicate(self._metadata[row])) else None
                for row in rows]

    async def search_text(self, content: Any, *, limit: int, filter: Mapping[str, Any] | None,
                          context: RetrievalExecutionContext | None = None) -> list[VectorHit]:
        if self._embedding is None:
            raise RetrievalError(INVALID_INPUT, "this index has no native embedding")
        [vector] = await embed_contents(self._embedding, [content], batch_size=self._batch_size,
                                        dimensions=self.dimensions, context=context, query=True)
        return await self.search_vector(vector, limit=limit, filter=filter, context=context)


class VectorSearchProvider:
    """The ``RetrievalSearchProvider`` built by :func:`create_vector_search_provider`."""

    def __init__(self, index: Any, embedding: EmbeddingProvider | None, native_embedding: bool,
                 dimensions: int | None, batch_size: int | None) -> None:
        self.index = index
        self.embedding = embedding
        self.native_embedding = native_embedding
        self.dimensions = dimensions
        self.batch_size = batch_size
        #: The last text query and its vector: a complete hybrid asks for the same query's scores right after.
        self._last: tuple[str, Vector] | None = None

    async def _embed(self, content: Any, context: RetrievalExecutionContext | None, *, reuse: bool = False
                     ) -> Vector:
        """The query's vector; ``reuse``: the last search's, when it was for the same text."""
        assert self.embedding is not None
        last = self._last
        if reuse and last is not None and isinstance(content, str) and last[0] == content:
            return last[1]
        [vector] = await embed_contents(self.embedding, [content], batch_size=self.batch_size,
                                        dimensions=self.dimensions, context=context, query=True)
        if isinstance(content, str):
            self._last = (content, vector)
        return vector

    async def score_ids(self, input: RetrievalSearchInput | Mapping[str, Any], ids: Sequence[str],
                        context: RetrievalExecutionContext | None = None) -> list[float | None]:
        """The score :meth:`search` gives each of ``ids`` (``None`` for all when the index cannot score by id)."""
        input = coerce_input(input)
        check_signal(context.signal if context else None)
        scorer = getattr(self.index, "score_vector", None)
        content = input.query.content
        if not callable(scorer) or not (_is_vector_query(content) or self.embedding is not None):
            return [None] * len(ids)
        vector = validate_vector(content, dimensions=self.dimensions) if _is_vector_query(content) else \
            await self._embed(content, context, reuse=True)
        scores: list[float | None] = scorer(vector, list(ids), filter=input.filter)
        return [score if score is not None and math.isfinite(score) else None for score in scores]

    async def search(self, input: RetrievalSearchInput | Mapping[str, Any],
                     context: RetrievalExecutionContext | None = None) -> RetrievalSearchOutput:
        input = coerce_input(input)
        signal = context.signal if context else None
        check_signal(signal)
        content = input.query.content
        limit = context_limit(input, context)
        if _is_vector_query(content):
            vector = validate_vector(content, dimensions=self.dimensions)
            hits = await self.index.search_vector(vector, limit=limit, filter=input.filter, context=context)
        elif self.embedding is not None:
            vector = await self._embed(content, context)
            hits = await self.index.search_vector(vector, limit=limit, filter=input.filter, context=context)
        elif self.native_embedding:
            hits = await self.index.search_text(content, limit=limit, filter=input.filter, context=context)
        else:
            raise RetrievalError(INVALID_INPUT, "this vector provider needs a vector query")
        check_signal(signal)
        target = input.target.name
        candidates = tuple(
            trusted_candidate(hit.id, hit.content, hit.score if math.isfinite(hit.score) else None,
                              trusted_source(target, hit.id), hit.metadata)
            for hit in list(hits)[:limit])
        return trusted_output(candidates, input.target, input.strategy)

    def __repr__(self) -> str:
        mode = "native" if self.native_embedding else "external" if self.embedding else "vector-only"
        return f"<VectorSearchProvider {mode}>"


def create_vector_search_provider(index: VectorIndex | NativeEmbeddingIndex, *,
                                  embedding: EmbeddingProvider | None = None, native_embedding: bool = False,
                                  dimensions: int | None = None, batch_size: int | None = None
                                  ) -> VectorSearchProvider:
    """A vector ``RetrievalSearchProvider`` over ``index``.

    ``embedding`` (external model) and ``native_embedding=True`` (the index
    embeds text) are mutually exclusive. With neither, queries must be vectors.
    ``dimensions`` checks query vectors; ``batch_size`` goes to ``embed_contents``::

        index = InMemoryVectorIndex(metric="cosine")
        index.add([{"id": "d1", "vector": vector, "content": "Agent memory migration guide"}])
        provider = create_vector_search_provider(index, embedding=embedder)
    """
    if embedding is not None and native_embedding:
        raise RetrievalArgumentError(INVALID_INPUT, "use either an embedding provider or native embedding, not both")
    if native_embedding and not callable(getattr(index, "search_text", None)):
        raise RetrievalArgumentError(INVALID_INPUT, "native embedding needs an index with search_text")
    if not native_embedding and not callable(getattr(index, "search_vector", None)):
        raise RetrievalArgumentError(INVALID_INPUT, "the index needs a search_vector method")
    if embedding is not None and not callable(getattr(embedding, "embed", None)):
        raise RetrievalArgumentError(INVALID_INPUT, "the embedding provider needs an embed method")
    return VectorSearchProvider(index, embedding, native_embedding, check_dimensions(dimensions), batch_size)
