"""Reranking (RET-6): ``RerankProvider``, ``create_cosine_reranker``, ``rerank_candidates``,
``create_rerank_search_provider``.

A reranker scores candidates against the query; ``rerank_candidates`` orders
by that score (ties keep retrieval order), writes it into ``score`` and keeps
the top ``limit``. The search provider first widens the inner pool to
``max(limit, candidate_limit)`` — reranking cannot find evidence outside it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .._results import trusted_output, with_score
from ..config import DEFAULT_CANDIDATE_LIMIT, MAX_CANDIDATE_LIMIT, context_limit, pick_number
from ..errors import INVALID_BACKEND_OUTPUT, INVALID_INPUT, RetrievalArgumentError, RetrievalError, check_signal
from ..types import (
    RetrievalCandidate,
    RetrievalExecutionContext,
    RetrievalQuery,
    RetrievalSearchInput,
    RetrievalSearchOutput,
    RetrievalSearchProvider,
)
from ..validation import coerce_input, parse_search_output
from .embedding import EmbeddingProvider, embed_contents

__all__ = [
    "CosineReranker",
    "RerankProvider",
    "RerankSearchProvider",
    "create_cosine_reranker",
    "create_rerank_search_provider",
    "rerank_candidates",
]


@runtime_checkable
class RerankProvider(Protocol):
    """Returns one finite relevance score per candidate, in candidate order (higher is better)."""

    async def rerank(self, query: RetrievalQuery, candidates: Sequence[RetrievalCandidate],
                     context: RetrievalExecutionContext | None = None) -> Sequence[float]: ...


def _embeds_queries_apart(embedding: EmbeddingProvider) -> bool:
    """Whether the provider has a query side of its own (``embed_queries``, unless it says it is symmetric)."""
    return callable(getattr(embedding, "embed_queries", None)) and bool(getattr(embedding, "asymmetric", True))


class CosineReranker:
    """Embeds the query and the candidate contents, scores by cosine similarity.

    Not a cross-encoder: inject another :class:`RerankProvider` for model judges.
    """

    def __init__(self, embedding: EmbeddingProvider, batch_size: int | None = None) -> None:
        self.embedding = embedding
        self.batch_size = batch_size

    async def rerank(self, query: RetrievalQuery, candidates: Sequence[RetrievalCandidate],
                     context: RetrievalExecutionContext | None = None) -> list[float]:
        if not candidates:
            return []
        texts = [c.content for c in candidates]
        if _embeds_queries_apart(self.embedding):  # E5: the query is embedded as a query
            [question] = await embed_contents(self.embedding, [query.content], batch_size=self.batch_size,
                                              context=context, query=True)
            vectors = [question, *await embed_contents(self.embedding, texts, batch_size=self.batch_size,
                                                       dimensions=len(question), context=context)]
        else:  # one call for the query and the candidates
            vectors = await embed_contents(self.embedding, [query.content, *texts], batch_size=self.batch_size,
                                           context=context)
        matrix = np.asarray(vectors, dtype=np.float64)
        norms = np.linalg.norm(matrix, axis=1)
        norms[norms == 0.0] = 1.0  # a zero vector scores 0 against everything
        unit = matrix / norms[:, None]
        return [float(x) for x in (unit[1:] @ unit[0]).tolist()]

    def __repr__(self) -> str:
        return f"<CosineReranker {self.embedding!r}>"


def create_cosine_reranker(embedding: EmbeddingProvider, *, batch_size: int | None = None) -> CosineReranker:
    """A reranker ordering candidates by cosine similarity of query and content embeddings (not a cross-encoder)::

        reranker = create_cosine_reranker(create_http_embedding_provider(url=url, model="bge-small"))
        provider = create_rerank_search_provider(create_text_search_provider(documents), reranker)
    """
    if not callable(getattr(embedding, "embed", None)):
        raise RetrievalArgumentError(INVALID_INPUT, "create_cosine_reranker needs an embedding provider")
    return CosineReranker(embedding, batch_size)


async def rerank_candidates(reranker: RerankProvider, query: RetrievalQuery | Any,
                            candidates: Sequence[RetrievalCandidate], *, limit: int | None = None,
                            context: RetrievalExecutionContext | None = None) -> list[RetrievalCandidate]:
    """Score ``candidates`` with ``reranker`` and return them best first (top ``limit``).

    A reranker that returns the wrong number of scores or a non-finite score is
    ``RETRIEVAL_INVALID_BACKEND_OUTPUT``.
    """
    if not isinstance(query, RetrievalQuery):
        query = RetrievalQuery(content=query)
    check_signal(context.signal if context else None)
    scores = list(await reranker.rerank(query, candidates, context))
    if len(scores) != len(candidates):
        raise RetrievalError(INVALID_BACKEND_OUTPUT, "the reranker returned a score count unlike the candidates")
    for score in scores:
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
            raise RetrievalError(INVALID_BACKEND_OUTPUT, "the reranker returned a non-finite score")
    check_signal(context.signal if context else None)
    order = sorted(range(len(candidates)), key=lambda i: -scores[i])
    if limit is not None:
        order = order[:limit]
    return [with_score(candidates[i], float(scores[i])) for i in order]


class RerankSearchProvider:
    """The provider built by :func:`create_rerank_search_provider`."""

    def __init__(self, provider: RetrievalSearchProvider, reranker: RerankProvider,
                 candidate_limit: int | None) -> None:
        self.provider = provider
        self.reranker = reranker
        self.candidate_limit = candidate_limit

    async def search(self, input: RetrievalSearchInput | Mapping[str, Any],
                     context: RetrievalExecutionContext | None = None) -> RetrievalSearchOutput:
        input = coerce_input(input)
        check_signal(context.signal if context else None)
        limit = context_limit(input, context)
        pool = max(limit, pick_number(self.candidate_limit, context, "rerank", "candidate_limit",
                                      DEFAULT_CANDIDATE_LIMIT))
        inner = parse_search_output(await self.provider.search(input.model_copy(update={"limit": pool}), context))
        if len(inner.candidates) > pool:
            raise RetrievalError(INVALID_BACKEND_OUTPUT, "the inner provider returned more candidates than asked")
        ranked = await rerank_candidates(self.reranker, input.query, inner.candidates, limit=limit, context=context)
        return trusted_output(tuple(ranked), input.target, input.strategy, inner.metadata)

    def __repr__(self) -> str:
        return f"<RerankSearchProvider {self.provider!r}>"


def create_rerank_search_provider(provider: RetrievalSearchProvider, reranker: RerankProvider, *,
                                  candidate_limit: int | None = None) -> RerankSearchProvider:
    """Retrieve ``max(limit, candidate_limit)`` candidates from ``provider``, rerank, keep ``limit``.

    ``candidate_limit``: constructor → ``defaults.rerank.candidate_limit`` → 100 (at most 10,000)::

        provider = create_rerank_search_provider(text_provider, create_cosine_reranker(embedding),
                                                 candidate_limit=50)
    """
    if not callable(getattr(provider, "search", None)):
        raise RetrievalArgumentError(INVALID_INPUT, "create_rerank_search_provider needs a search provider")
    if not callable(getattr(reranker, "rerank", None)):
        raise RetrievalArgumentError(INVALID_INPUT, "create_rerank_search_provider needs a reranker")
    if candidate_limit is not None and (isinstance(candidate_limit, bool) or not isinstance(candidate_limit, int)
                                        or candidate_limit < 1):
        raise RetrievalArgumentError(INVALID_INPUT, "candidate_limit must be a positive integer")
    if candidate_limit is not None and candidate_limit > MAX_CANDIDATE_LIMIT:
        raise RetrievalArgumentError(INVALID_INPUT, f"candidate_limit must be at most {MAX_CANDIDATE_LIMIT}")
    return RerankSearchProvider(provider, reranker, candidate_limit)
