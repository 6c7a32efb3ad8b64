"""Hybrid and rerank providers (RET-5, RET-6): every refusal with its code and public message, the signal checks
before and after the branches, and what is passed through to inner providers, rerankers and embeddings.

Written against the mutation report (``scripts/mutation retrieval.hybrid retrieval.rerank``): each test pins a
behaviour a surviving mutant had changed unnoticed.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import pytest

from ditto import AbortController
from ditto.retrieval import (
    HybridBranch,
    RetrievalCandidate,
    RetrievalCandidateSource,
    RetrievalDefaults,
    RetrievalError,
    RetrievalExecutionContext,
    RetrievalHybridDefaults,
    RetrievalQuery,
    RetrievalSearchInput,
    create_cosine_reranker,
    create_hybrid_search_provider,
    create_rerank_search_provider,
    default_candidate_key,
    rerank_candidates,
    rrf_fuse,
)

from .providers import ListProvider, RawProvider, docs
from .test_embedding import CountingEmbedding

REQUEST = RetrievalSearchInput.model_validate({"query": {"content": "q"}, "target": {"name": "kb"}, "limit": 3})


def _refused(call: Callable[[], object], code: str, message: str) -> None:
    with pytest.raises(RetrievalError) as raised:
        call()
    assert (raised.value.code, raised.value.message) == (code, message)


async def _refused_async(call: Awaitable[object], code: str, message: str) -> None:
    with pytest.raises(RetrievalError) as raised:
        await call
    assert (raised.value.code, raised.value.message) == (code, message)


def _context(signal: Any = None, **defaults: Any) -> RetrievalExecutionContext:
    return RetrievalExecutionContext(signal=signal, defaults=RetrievalDefaults.model_validate(defaults))


class RecordingReranker:
    """Scores by a fixed table; records the query and context it was handed."""

    def __init__(self, scores: Sequence[Any], on_call: Callable[[], None] | None = None) -> None:
        self.scores = list(scores)
        self.calls: list[tuple[RetrievalQuery, RetrievalExecutionContext | None]] = []
        self.on_call = on_call

    async def rerank(self, query: RetrievalQuery, candidates: Sequence[RetrievalCandidate],
                     context: RetrievalExecutionContext | None = None) -> list[Any]:
        self.calls.append((query, context))
        if self.on_call is not None:
            self.on_call()
        return self.scores[:len(candidates)]


class AbortingProvider(ListProvider):
    """Answers normally but fires the caller's controller while doing so (a signal that fires mid-call)."""

    def __init__(self, candidates: list[dict[str, Any]], controller: AbortController) -> None:
        super().__init__(candidates)
        self.controller = controller

    async def search(self, input: RetrievalSearchInput, context: RetrievalExecutionContext | None = None
                     ) -> dict[str, Any]:
        self.controller.abort()
        return await super().search(input, context)


# -- hybrid ------------------------------------------------------------------------------------------------


def test_hybrid_construction_refusals() -> None:
    """RET-5/RET-6: bad hybrid options are RETRIEVAL_INVALID_INPUT with a message naming the option."""
    good = ListProvider(docs("a"))
    bad_int = "{} must be a positive integer"
    _refused(lambda: create_hybrid_search_provider([]), "RETRIEVAL_INVALID_INPUT",
             "a hybrid provider needs at least one branch")
    for value in (0, -1, True, 1.5, "3"):
        _refused(lambda value=value: create_hybrid_search_provider([good], candidate_limit=value),
                 "RETRIEVAL_INVALID_INPUT", bad_int.format("candidate_limit"))
        _refused(lambda value=value: create_hybrid_search_provider([good], rrf_k=value),
                 "RETRIEVAL_INVALID_INPUT", bad_int.format("rrf_k"))
    _refused(lambda: create_hybrid_search_provider([good], key="id"), "RETRIEVAL_INVALID_INPUT",  # type: ignore[arg-type]
             "key must be a function of a candidate")
    for branch in (object(), {"provider": object()}, HybridBranch(object())):  # type: ignore[arg-type]
        _refused(lambda branch=branch: create_hybrid_search_provider([good, branch]), "RETRIEVAL_INVALID_INPUT",
                 "every hybrid branch needs a provider with a search method")
    for weight in (0, -1.0, math.inf, math.nan, True, "1"):
        _refused(lambda weight=weight: create_hybrid_search_provider([{"provider": good, "weight": weight}]),
                 "RETRIEVAL_INVALID_INPUT", "branch weights must be positive finite numbers")
    assert create_hybrid_search_provider([good], candidate_limit=1, rrf_k=1).rrf_k == 1
    assert create_hybrid_search_provider([{"provider": good, "weight": 0.5}]).branches[0].weight == 0.5


def test_rrf_fuse_refusals() -> None:
    """RET-6: rrf_fuse needs a positive integer k and one positive finite weight per ranking."""
    _refused(lambda: rrf_fuse([["a"]], key=str, rrf_k=0), "RETRIEVAL_INVALID_INPUT",
             "rrf_k must be a positive integer")
    _refused(lambda: rrf_fuse([["a"], ["b"]], key=str, weights=[1.0]), "RETRIEVAL_INVALID_INPUT",
             "rrf_fuse needs one weight per ranking")
    _refused(lambda: rrf_fuse([["a"]], key=str, weights=[math.inf]), "RETRIEVAL_INVALID_INPUT",
             "branch weights must be positive finite numbers")
    assert rrf_fuse([], key=str) == []


def test_default_candidate_key() -> None:
    """RET-6: the fusion key is (source.target, id or source.ref); a candidate with neither is refused."""
    assert default_candidate_key(RetrievalCandidate(id="x", content="c")) == (None, "x")
    with_source = RetrievalCandidate(id="x", content="c", source=RetrievalCandidateSource(target="kb", ref="r"))
    assert default_candidate_key(with_source) == ("kb", "x")
    by_ref = RetrievalCandidate(content="c", source=RetrievalCandidateSource(target="kb", ref="r"))
    assert default_candidate_key(by_ref) == ("kb", "r")
    _refused(lambda: default_candidate_key(RetrievalCandidate(content="c")), "RETRIEVAL_INVALID_BACKEND_OUTPUT",
             "hybrid fusion needs a candidate id or source.ref (or an explicit key function)")


async def test_hybrid_output_weights_and_rrf_k_from_defaults() -> None:
    """RET-6: branch weights reach the fusion, rrf_k comes from the defaults when not given, and the output
    carries the request's target and strategy without metadata."""
    left, right = ListProvider(docs("a", "b")), ListProvider(docs("b", "a"))
    provider = create_hybrid_search_provider([{"provider": left, "weight": 3}, right])
    request = REQUEST.model_copy(update={"strategy": "hybrid"})
    output = await provider.search(request, _context(hybrid={"rrfK": 1}))
    assert [c.id for c in output.candidates] == ["a", "b"]
    scores = [c.score for c in output.candidates]
    assert scores == pytest.approx([3 / 2 + 1 / 3, 3 / 3 + 1 / 2])  # k = 1 from the defaults, weight 3 on left
    assert output.strategy == "hybrid" and output.metadata is None and output.target == request.target
    equal = await create_hybrid_search_provider([left, right]).search(request)
    assert [c.score for c in equal.candidates] == pytest.approx([1 / 61 + 1 / 62] * 2)


async def test_hybrid_branch_returning_more_than_asked_is_refused() -> None:
    """RET-5: a branch answering with more candidates than its pool is RETRIEVAL_INVALID_BACKEND_OUTPUT."""
    greedy = RawProvider(lambda input: {"candidates": docs(*[str(i) for i in range((input.limit or 0) + 1)]),
                                        "target": {"name": "kb"}})
    provider = create_hybrid_search_provider([ListProvider(docs("a")), greedy], candidate_limit=5)
    await _refused_async(provider.search(REQUEST), "RETRIEVAL_INVALID_BACKEND_OUTPUT",
                         "a hybrid branch returned more candidates than asked")


async def test_hybrid_signal_checked_before_and_after_branches() -> None:
    """RET-5: an aborted signal stops the hybrid search before any branch runs; one that fires while the
    branches run ends the search cancelled even though every branch answered."""
    before = AbortController()
    before.abort()
    untouched = ListProvider(docs("a"))
    with pytest.raises(RetrievalError) as early:
        await create_hybrid_search_provider([untouched]).search(REQUEST, _context(before.signal))
    assert early.value.code == "RETRIEVAL_CANCELLED" and untouched.calls == []
    during = AbortController()
    answering = AbortingProvider(docs("a"), during)
    with pytest.raises(RetrievalError) as late:
        await create_hybrid_search_provider([answering, ListProvider(docs("b"))]).search(REQUEST,
                                                                                          _context(during.signal))
    assert late.value.code == "RETRIEVAL_CANCELLED" and len(answering.calls) == 1
    assert answering.calls[0][1] is not None and answering.calls[0][1].signal is during.signal


# -- rerank ------------------------------------------------------------------------------------------------


def test_rerank_construction_refusals() -> None:
    """RET-5/RET-6: the rerank provider needs a search provider, a reranker and a positive candidate_limit."""
    inner, reranker = ListProvider(docs("a")), RecordingReranker([1.0])
    _refused(lambda: create_rerank_search_provider(object(), reranker), "RETRIEVAL_INVALID_INPUT",  # type: ignore[arg-type]
             "create_rerank_search_provider needs a search provider")
    _refused(lambda: create_rerank_search_provider(inner, object()), "RETRIEVAL_INVALID_INPUT",  # type: ignore[arg-type]
             "create_rerank_search_provider needs a reranker")
    for value in (0, -2, True, 2.0, "5"):
        _refused(lambda value=value: create_rerank_search_provider(inner, reranker, candidate_limit=value),
                 "RETRIEVAL_INVALID_INPUT", "candidate_limit must be a positive integer")
    assert create_rerank_search_provider(inner, reranker, candidate_limit=1).candidate_limit == 1
    _refused(lambda: create_cosine_reranker(object()), "RETRIEVAL_INVALID_INPUT",  # type: ignore[arg-type]
             "create_cosine_reranker needs an embedding provider")


async def test_rerank_candidates_refuses_bad_scores() -> None:
    """RET-5: a score count unlike the candidates, or a score that is not a finite number (booleans included),
    is RETRIEVAL_INVALID_BACKEND_OUTPUT with a fixed message."""
    candidates = [RetrievalCandidate(id=i, content=i) for i in "ab"]
    short = RecordingReranker([1.0])
    await _refused_async(rerank_candidates(short, "q", candidates), "RETRIEVAL_INVALID_BACKEND_OUTPUT",
                         "the reranker returned a score count unlike the candidates")
    for bad in (math.nan, math.inf, True, "1", None):
        await _refused_async(rerank_candidates(RecordingReranker([1.0, bad]), "q", candidates),
                             "RETRIEVAL_INVALID_BACKEND_OUTPUT", "the reranker returned a non-finite score")
    ranked = await rerank_candidates(RecordingReranker([1, 2.5]), "q", candidates)
    assert [(c.id, c.score) for c in ranked] == [("b", 2.5), ("a", 1.0)]
    assert all(isinstance(c.score, float) for c in ranked)


async def test_rerank_candidates_signal_and_context() -> None:
    """RET-5: the reranker gets the query and the caller's context; an aborted signal stops before it runs,
    and one that fires while it runs ends the call cancelled."""
    candidates = [RetrievalCandidate(id="a", content="a")]
    before = AbortController()
    before.abort()
    reranker = RecordingReranker([1.0])
    with pytest.raises(RetrievalError) as early:
        await rerank_candidates(reranker, "q", candidates, context=_context(before.signal))
    assert early.value.code == "RETRIEVAL_CANCELLED" and reranker.calls == []
    during = AbortController()
    firing = RecordingReranker([1.0], on_call=during.abort)
    context = _context(during.signal)
    with pytest.raises(RetrievalError) as late:
        await rerank_candidates(firing, {"text": "q"}, candidates, context=context)
    assert late.value.code == "RETRIEVAL_CANCELLED"
    (query, seen), = firing.calls
    assert query.content == {"text": "q"} and seen is context


async def test_rerank_provider_passes_query_context_and_inner_metadata() -> None:
    """RET-6: the rerank provider asks the inner provider with the caller's context, reranks against the
    request's query, takes its limit from the defaults when the request has none, and keeps the inner
    output's metadata and the request's strategy."""
    inner = RawProvider(lambda input: {"candidates": docs("a", "b", "c")[:input.limit], "target": {"name": "kb"},
                                       "metadata": {"engine": "inner"}})
    reranker = RecordingReranker([0.1, 0.9, 0.5])
    provider = create_rerank_search_provider(inner, reranker, candidate_limit=3)
    request = REQUEST.model_copy(update={"limit": None, "strategy": "reranked",
                                         "query": RetrievalQuery(content="the question")})
    context = _context(searchLimit=2)
    output = await provider.search(request, context)
    assert [c.id for c in output.candidates] == ["b", "c"]  # limit 2 from the defaults
    assert output.metadata == {"engine": "inner"} and output.strategy == "reranked"
    (query, seen), = reranker.calls
    assert query.content == "the question" and seen is context
    recorder = ListProvider(docs("a"))
    await create_rerank_search_provider(recorder, RecordingReranker([1.0])).search(REQUEST, context)
    assert recorder.calls[0][1] is context


async def test_rerank_provider_refuses_oversized_inner_answers_and_honours_signal() -> None:
    """RET-5: an inner provider answering beyond the pool is RETRIEVAL_INVALID_BACKEND_OUTPUT; an aborted
    signal stops the rerank provider before the inner provider runs."""
    greedy = RawProvider(lambda input: {"candidates": docs(*[str(i) for i in range((input.limit or 0) + 1)]),
                                        "target": {"name": "kb"}})
    provider = create_rerank_search_provider(greedy, RecordingReranker([1.0] * 10), candidate_limit=4)
    await _refused_async(provider.search(REQUEST), "RETRIEVAL_INVALID_BACKEND_OUTPUT",
                         "the inner provider returned more candidates than asked")
    aborted = AbortController()
    aborted.abort()
    inner = ListProvider(docs("a"))
    with pytest.raises(RetrievalError) as raised:
        await create_rerank_search_provider(inner, RecordingReranker([1.0])).search(REQUEST, _context(aborted.signal))
    assert raised.value.code == "RETRIEVAL_CANCELLED" and inner.calls == []


async def test_cosine_reranker_scores_are_cosines() -> None:
    """RET-6: the cosine reranker returns cos(query, candidate) exactly (vectors of any length); a zero vector
    scores 0; its batch size, or the defaults' one, sizes the embedding calls."""
    table = {"q": [3.0, 4.0], "same": [6.0, 8.0], "orthogonal": [-4.0, 3.0], "half": [3.0, 0.0], "zero": [0.0, 0.0]}
    model = CountingEmbedding(answer=lambda contents: [table[c] for c in contents])
    reranker = create_cosine_reranker(model, batch_size=2)
    names = ["same", "orthogonal", "half", "zero"]
    scores = await reranker.rerank(RetrievalQuery(content="q"), [RetrievalCandidate(id=n, content=n) for n in names])
    assert scores == pytest.approx([1.0, 0.0, 0.6, 0.0])
    assert model.batches == [2, 2, 1]
    model.batches.clear()
    unsized = create_cosine_reranker(model)
    await unsized.rerank(RetrievalQuery(content="q"), [RetrievalCandidate(id=n, content=n) for n in names],
                         _context(embedding={"batchSize": 3}))
    assert model.batches == [3, 2]
    model.batches.clear()
    await unsized.rerank(RetrievalQuery(content="q"), [RetrievalCandidate(id=n, content=n) for n in names])
    assert model.batches == [5]


async def test_hybrid_refuses_an_unvalidated_rrf_k_from_the_defaults() -> None:
    """RET-6: defaults built without validation (``model_construct``) cannot smuggle a zero rrf_k into the
    fusion: the search refuses it with the same code and message as the constructor."""
    hybrid = RetrievalHybridDefaults.model_construct(rrf_k=0, candidate_limit=None)
    context = RetrievalExecutionContext.model_construct(signal=None,
                                                        defaults=RetrievalDefaults.model_construct(hybrid=hybrid))
    provider = create_hybrid_search_provider([ListProvider(docs("a"))])
    await _refused_async(provider.search(REQUEST, context), "RETRIEVAL_INVALID_INPUT",
                         "rrf_k must be a positive integer")
