"""Hybrid search (RET-6): concurrent branches fused by weighted Reciprocal Rank Fusion (the default) or
a convex combination of min-max normalised scores.

``rrf_fuse`` is the default algorithm: a record's fused score is
``Σ_branch weight / (rrf_k + rank)`` with ``rank`` counted from 1 in each
branch it appears in. Raw branch scores are never added (they live on
different scales). Ties keep first-seen order (branch order, then rank), so
results are deterministic.

``convex_fuse`` (``fusion="convex"``) uses the scores as well as the order: each
branch's scores are normalised over the pool it returned (min-max, or z-scores
with ``normalization="zscore"``), and a record's fused score is
``Σ_branch weight × normalised score`` (a branch that did not return it adds as
much as its lowest item). Rank fusion throws away how far apart two scores are;
on SciFact that costs about one point of nDCG@10 (docs/design/retrieval.md,
"Hybrid fusion"). Every candidate then needs a score
(``RETRIEVAL_INVALID_BACKEND_OUTPUT`` otherwise), and ``rrf_k`` plays no part.

``create_text_vector_hybrid`` builds the BM25 + embeddings hybrid with the
settings chosen on SciFact's train queries (:data:`TEXT_VECTOR_TUNING`).

``create_hybrid_search_provider`` queries every branch concurrently with a pool
of at least ``max(request.limit, candidate_limit)`` candidates, waits for *all*
branches, and fails the whole call if any branch failed (the first failing
branch's error, in branch order, mapped like the SDK maps a provider's:
``RetrievalError`` kept, the signal's cancellation → CANCELLED/TIMEOUT,
anything else, a bare ``TimeoutError`` included → ``RETRIEVAL_BACKEND_ERROR``).
Records are identified by ``key``: default
``(source.target, id or source.ref)``; a candidate with neither id nor ref,
and no ``key`` function, is ``RETRIEVAL_INVALID_BACKEND_OUTPUT``.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol, TypeVar, runtime_checkable

from .._results import trusted_output, with_score
from ..config import DEFAULT_CANDIDATE_LIMIT, DEFAULT_RRF_K, MAX_CANDIDATE_LIMIT, context_limit, pick_number
from ..errors import (
    INVALID_BACKEND_OUTPUT,
    INVALID_INPUT,
    RetrievalArgumentError,
    RetrievalError,
    as_retrieval_error,
    check_signal,
)
from ..types import (
    RetrievalCandidate,
    RetrievalExecutionContext,
    RetrievalSearchInput,
    RetrievalSearchOutput,
    RetrievalSearchProvider,
)
from ..validation import coerce_input, parse_search_output

__all__ = [
    "TEXT_VECTOR_TUNING",
    "CandidateKey",
    "HybridBranch",
    "HybridFusion",
    "HybridNormalization",
    "HybridSearchProvider",
    "HybridTuning",
    "ScoringSearchProvider",
    "convex_fuse",
    "create_hybrid_search_provider",
    "create_text_vector_hybrid",
    "default_candidate_key",
    "rrf_fuse",
]

T = TypeVar("T")
CandidateKey = Callable[[RetrievalCandidate], Hashable]
HybridFusion = Literal["rrf", "convex"]
HybridNormalization = Literal["minmax", "zscore"]
_FUSIONS = ("rrf", "convex")
_NORMALIZATIONS = ("minmax", "zscore")


@runtime_checkable
class ScoringSearchProvider(Protocol):
    """A search provider that can also score given documents for a request's query (BM25, exact vectors).

    ``score_ids`` returns, in order, the score :meth:`search` would give each id (``None``: not a
    hit, filtered out, or unknown). A ``complete`` hybrid uses it to give a document one branch
    found the score the other branch has for it, instead of that branch's lowest.
    """

    async def search(self, input: RetrievalSearchInput | Mapping[str, Any],
                     context: RetrievalExecutionContext | None = None) -> RetrievalSearchOutput | Mapping[str, Any]:
        ...

    async def score_ids(self, input: RetrievalSearchInput, ids: Sequence[str],
                        context: RetrievalExecutionContext | None = None) -> Sequence[float | None]: ...


def _positive_int(value: Any, name: str, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise RetrievalError(INVALID_INPUT, f"{name} must be a positive integer")
    if maximum is not None and value > maximum:
        raise RetrievalError(INVALID_INPUT, f"{name} must be at most {maximum}")
    return value


def _positive_weight(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RetrievalError(INVALID_INPUT, "branch weights must be positive finite numbers")
    try:
        weight = float(value)  # an integer beyond a double (10**400) raises OverflowError here
    except OverflowError:
        weight = math.inf
    if not math.isfinite(weight) or weight <= 0:
        raise RetrievalError(INVALID_INPUT, "branch weights must be positive finite numbers")
    return weight


def rrf_fuse(rankings: Sequence[Sequence[T]], *, key: Callable[[T], Hashable],
             weights: Sequence[float] | None = None, rrf_k: int = DEFAULT_RRF_K) -> list[tuple[T, float]]:
    """Weighted RRF over ranked lists; returns ``(first-seen item, fused score)`` best first.

    Within one list only an item's first (best) occurrence counts.
    """
    rrf_k = _positive_int(rrf_k, "rrf_k")
    if weights is None:
        weights = [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise RetrievalError(INVALID_INPUT, "rrf_fuse needs one weight per ranking")
    checked = [_positive_weight(w) for w in weights]
    scores: dict[Hashable, float] = {}
    first: dict[Hashable, T] = {}
    for ranking, weight in zip(rankings, checked, strict=True):
        seen: set[Hashable] = set()
        for rank, item in enumerate(ranking, start=1):
            k = key(item)
            if k in seen:
                continue
            seen.add(k)
            if k not in first:
                first[k] = item
                scores[k] = 0.0
            scores[k] += weight / (rrf_k + rank)
    order = sorted(first, key=lambda k: -scores[k])  # stable: ties keep first-seen order
    return [(first[k], scores[k]) for k in order]


def convex_fuse(rankings: Sequence[Sequence[T]], *, key: Callable[[T], Hashable], score: Callable[[T], float],
                weights: Sequence[float] | None = None, normalization: HybridNormalization = "minmax"
                ) -> list[tuple[T, float]]:
    """Weighted sum of per-ranking normalised scores; ``(first-seen item, fused score)`` best first.

    In each ranking a score becomes ``(score − lowest) / spread``: the spread is the range
    for ``"minmax"`` (so the best is 1) and the standard deviation for ``"zscore"``; an item a
    ranking did not return counts as 0 there, like its lowest item (for z-scores that is the
    same ranking as ``z − z_lowest``). All scores equal: every returned item gets 1. Within
    one ranking only an item's first occurrence counts; ties keep first-seen order.
    """
    if normalization not in _NORMALIZATIONS:
        raise RetrievalError(INVALID_INPUT, "normalization must be 'minmax' or 'zscore'")
    if weights is None:
        weights = [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise RetrievalError(INVALID_INPUT, "convex_fuse needs one weight per ranking")
    checked = [_positive_weight(w) for w in weights]
    scores: dict[Hashable, float] = {}
    first: dict[Hashable, T] = {}
    for ranking, weight in zip(rankings, checked, strict=True):
        values = [score(item) for item in ranking]
        if not values:
            continue
        low = min(values)
        spread = max(values) - low if normalization == "minmax" else _pstdev(values)
        seen: set[Hashable] = set()
        for item, value in zip(ranking, values, strict=True):
            k = key(item)
            if k in seen:
                continue
            seen.add(k)
            if k not in first:
                first[k] = item
                scores[k] = 0.0
            scores[k] += weight * ((value - low) / spread if spread > 0 else 1.0)
    order = sorted(first, key=lambda k: -scores[k])  # stable: ties keep first-seen order
    return [(first[k], scores[k]) for k in order]


def _pstdev(values: Sequence[float]) -> float:
    """The population standard deviation in floats (``statistics.pstdev`` computes it in exact fractions,
    a hundred times slower: it ran every hybrid query's fusion)."""
    count = len(values)
    mean = math.fsum(values) / count
    return math.sqrt(math.fsum((value - mean) ** 2 for value in values) / count)


def _candidate_score(candidate: RetrievalCandidate) -> float:
    if candidate.score is None:
        raise RetrievalError(INVALID_BACKEND_OUTPUT, "convex fusion needs a score on every branch candidate")
    return candidate.score


def default_candidate_key(candidate: RetrievalCandidate) -> Hashable:
    """``(source.target, id or source.ref)``; refuses candidates with neither id nor ref."""
    source = candidate.source
    ident = candidate.id if candidate.id is not None else (source.ref if source is not None else None)
    if ident is None:
        raise RetrievalError(INVALID_BACKEND_OUTPUT,
                             "hybrid fusion needs a candidate id or source.ref (or an explicit key function)")
    return (source.target if source is not None else None, ident)


@dataclass(frozen=True, slots=True)
class HybridBranch:
    """One branch: a provider, its RRF ``weight`` and the ``strategy`` it is asked for."""

    provider: RetrievalSearchProvider
    weight: float = 1.0
    strategy: str | None = None
    name: str | None = None


def _as_branch(value: Any) -> HybridBranch:
    if isinstance(value, HybridBranch):
        branch = value
    elif isinstance(value, Mapping):
        branch = HybridBranch(**dict(value))
    else:
        branch = HybridBranch(value)
    if not callable(getattr(branch.provider, "search", None)):
        raise RetrievalArgumentError(INVALID_INPUT, "every hybrid branch needs a provider with a search method")
    try:
        _positive_weight(branch.weight)
    except RetrievalError as error:
        raise RetrievalArgumentError(INVALID_INPUT, error.message) from None
    return branch


class HybridSearchProvider:
    """The provider built by :func:`create_hybrid_search_provider`."""

    def __init__(self, branches: Sequence[HybridBranch], candidate_limit: int | None, rrf_k: int | None,
                 key: CandidateKey | None, fusion: HybridFusion = "rrf",
                 normalization: HybridNormalization = "minmax", complete: bool = False) -> None:
        self.branches = tuple(branches)
        self.candidate_limit = candidate_limit
        self.rrf_k = rrf_k
        self.key = key
        self.fusion: HybridFusion = fusion
        self.normalization: HybridNormalization = normalization
        self.complete = complete

    async def _branch(self, branch: HybridBranch, request: RetrievalSearchInput,
                      context: RetrievalExecutionContext | None, pool: int) -> tuple[RetrievalCandidate, ...]:
        output = parse_search_output(await branch.provider.search(request, context))
        if len(output.candidates) > pool:
            raise RetrievalError(INVALID_BACKEND_OUTPUT, "a hybrid branch returned more candidates than asked")
        return output.candidates

    async def search(self, input: RetrievalSearchInput | Mapping[str, Any],
                     context: RetrievalExecutionContext | None = None) -> RetrievalSearchOutput:
        input = coerce_input(input)
        signal = context.signal if context else None
        check_signal(signal)
        limit = context_limit(input, context)
        pool = max(limit, _positive_int(pick_number(self.candidate_limit, context, "hybrid", "candidate_limit",
                                                    DEFAULT_CANDIDATE_LIMIT), "candidate_limit", MAX_CANDIDATE_LIMIT))
        rrf_k = _positive_int(pick_number(self.rrf_k, context, "hybrid", "rrf_k", DEFAULT_RRF_K), "rrf_k")
        requests = [input.model_copy(update={"limit": pool, "strategy": branch.strategy})
                    for branch in self.branches]
        results = await asyncio.gather(
            *(self._branch(branch, request, context, pool) for branch, request in zip(self.branches, requests,
                                                                                         strict=True)),
            return_exceptions=True)
        for result in results:  # every branch has finished here; report the first failure in branch order
            if isinstance(result, BaseException):
                if not isinstance(result, Exception):  # task cancellation and the like: not a branch failure
                    raise result
                raise as_retrieval_error(result) from None
        check_signal(signal)
        rankings: list[Sequence[RetrievalCandidate]] = [r for r in results if not isinstance(r, BaseException)]
        weights = [b.weight for b in self.branches]
        if self.fusion == "convex":
            if self.complete:
                rankings = await self._complete(rankings, requests, context)
                check_signal(signal)
            fused = convex_fuse(rankings, key=self.key or default_candidate_key, score=_candidate_score,
                                weights=weights, normalization=self.normalization)
        else:
            fused = rrf_fuse(rankings, key=self.key or default_candidate_key, weights=weights, rrf_k=rrf_k)
        candidates = tuple(with_score(candidate, score) for candidate, score in fused[:limit])
        return trusted_output(candidates, input.target, input.strategy)

    async def _complete(self, rankings: list[Sequence[RetrievalCandidate]], requests: list[RetrievalSearchInput],
                        context: RetrievalExecutionContext | None) -> list[Sequence[RetrievalCandidate]]:
        """Each branch that can score by id also scores the candidates only the other branches found."""
        key = self.key or default_candidate_key
        union: dict[Hashable, RetrievalCandidate] = {}
        for ranking in rankings:
            for candidate in ranking:
                union.setdefault(key(candidate), candidate)

        async def complete(position: int) -> Sequence[RetrievalCandidate]:
            ranking = rankings[position]
            scorer = getattr(self.branches[position].provider, "score_ids", None)
            if not callable(scorer):
                return ranking
            have = {key(candidate) for candidate in ranking}
            missing = [candidate for k, candidate in union.items() if k not in have and candidate.id is not None]
            if not missing:
                return ranking
            scores = list(await scorer(requests[position], [candidate.id for candidate in missing], context))
            if len(scores) != len(missing):
                raise RetrievalError(INVALID_BACKEND_OUTPUT, "a hybrid branch scored a different number of ids")
            extra = []
            for candidate, score in zip(missing, scores, strict=True):
                if score is None:
                    continue
                if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
                    raise RetrievalError(INVALID_BACKEND_OUTPUT, "a hybrid branch gave a non-finite score")
                extra.append(with_score(candidate, float(score)))
            return (*ranking, *extra)

        results = await asyncio.gather(*(complete(position) for position in range(len(rankings))),
                                       return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                if not isinstance(result, Exception):
                    raise result
                raise as_retrieval_error(result) from None
        return [result for result in results if not isinstance(result, BaseException)]

    def __repr__(self) -> str:
        return f"<HybridSearchProvider branches={len(self.branches)} fusion={self.fusion}>"


def create_hybrid_search_provider(branches: Sequence[HybridBranch | RetrievalSearchProvider | Mapping[str, Any]],
                                  *, candidate_limit: int | None = None, rrf_k: int | None = None,
                                  key: CandidateKey | None = None, fusion: HybridFusion = "rrf",
                                  normalization: HybridNormalization = "minmax",
                                  complete: bool = False) -> HybridSearchProvider:
    """Fuse ``branches`` with weighted RRF, or (``fusion="convex"``) a weighted sum of their scores
    normalised per branch (``normalization``: ``"minmax"`` or ``"zscore"``; see :func:`convex_fuse`).
    ``complete=True`` (convex only) first asks each branch that is a :class:`ScoringSearchProvider`
    for its scores of the candidates only the other branches returned, so a document one branch
    missed is fused with its real score there rather than that branch's lowest; the branches must
    then share document ids.

    ``candidate_limit`` (constructor → ``defaults.hybrid.candidate_limit`` → 100, at most 10,000)
    is a lower bound for each branch's pool, never a cap below ``limit``.
    ``rrf_k`` (constructor → ``defaults.hybrid.rrf_k`` → 60) must be a positive
    integer. A branch is a :class:`HybridBranch`, a ``{provider, weight?,
    strategy?}`` mapping or a bare provider (weight 1)::

        provider = create_hybrid_search_provider([HybridBranch(vector_provider, weight=1.0),
                                                  HybridBranch(text_provider, weight=0.5, strategy="bm25")],
                                                 candidate_limit=100, rrf_k=60)
    """
    checked = [_as_branch(branch) for branch in branches]
    if not checked:
        raise RetrievalArgumentError(INVALID_INPUT, "a hybrid provider needs at least one branch")
    try:
        if candidate_limit is not None:
            _positive_int(candidate_limit, "candidate_limit", MAX_CANDIDATE_LIMIT)
        if rrf_k is not None:
            _positive_int(rrf_k, "rrf_k")
    except RetrievalError as error:
        raise RetrievalArgumentError(INVALID_INPUT, error.message) from None
    if key is not None and not callable(key):
        raise RetrievalArgumentError(INVALID_INPUT, "key must be a function of a candidate")
    if fusion not in _FUSIONS:
        raise RetrievalArgumentError(INVALID_INPUT, "fusion must be 'rrf' or 'convex'")
    if normalization not in _NORMALIZATIONS:
        raise RetrievalArgumentError(INVALID_INPUT, "normalization must be 'minmax' or 'zscore'")
    if not isinstance(complete, bool) or (complete and fusion != "convex"):
        raise RetrievalArgumentError(INVALID_INPUT, "complete must be a bool, and True only with fusion='convex'")
    return HybridSearchProvider(checked, candidate_limit, rrf_k, key, fusion, normalization, complete)


@dataclass(frozen=True, slots=True)
class HybridTuning:
    """How a two-branch (vector, text) hybrid fuses: what :func:`create_text_vector_hybrid` applies."""

    fusion: HybridFusion
    vector_weight: float
    text_weight: float
    candidate_limit: int
    rrf_k: int | None = None
    normalization: HybridNormalization = "minmax"
    complete: bool = False
    #: The text branch ranks with BM25's coordination factor, where it offers one (``coordinated()``).
    coordinate: bool = False


#: Chosen on SciFact ``qrels/train.tsv`` only, for BM25 + all-MiniLM-L6-v2 (``bench/hybrid_scifact.py``;
#: the grid and the test score are in docs/design/retrieval.md, "Hybrid fusion"): z-scores over pools of
#: 200, each branch completed with its own scores of the other's pool, BM25 with the coordination factor.
TEXT_VECTOR_TUNING: Final = HybridTuning(fusion="convex", vector_weight=0.75, text_weight=0.25, candidate_limit=200,
                                         normalization="zscore", complete=True, coordinate=True)


def create_text_vector_hybrid(text: RetrievalSearchProvider, vector: RetrievalSearchProvider, *,
                              tuning: HybridTuning = TEXT_VECTOR_TUNING, text_strategy: str | None = "bm25",
                              vector_strategy: str | None = None, key: CandidateKey | None = None
                              ) -> HybridSearchProvider:
    """BM25 (or another keyword provider) + embeddings, fused with ``tuning``::

        hybrid = create_text_vector_hybrid(create_text_search_provider(documents),
                                           create_vector_search_provider(index, embedding=embedder))
    """
    coordinated = getattr(text, "coordinated", None) if tuning.coordinate else None
    if callable(coordinated):
        text = coordinated()
    return create_hybrid_search_provider(
        [HybridBranch(vector, weight=tuning.vector_weight, strategy=vector_strategy),
         HybridBranch(text, weight=tuning.text_weight, strategy=text_strategy)],
        candidate_limit=tuning.candidate_limit, rrf_k=tuning.rrf_k, key=key, fusion=tuning.fusion,
        normalization=tuning.normalization, complete=tuning.complete)
