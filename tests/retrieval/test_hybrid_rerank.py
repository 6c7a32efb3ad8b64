"""Weighted RRF, the hybrid provider and reranking (RET-6), checked against hand-computed values."""

from __future__ import annotations

import asyncio
import itertools
import math
import statistics
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ditto import AbortController
from ditto.retrieval import (
    HybridBranch,
    RetrievalCandidate,
    RetrievalError,
    RetrievalExecutionContext,
    RetrievalQuery,
    RetrievalTargetRegistry,
    create_cosine_reranker,
    create_hybrid_search_provider,
    create_rerank_search_provider,
    create_retrieval,
    rerank_candidates,
    rrf_fuse,
)
from ditto.retrieval.providers.hybrid import (
    TEXT_VECTOR_TUNING,
    HybridTuning,
    convex_fuse,
    create_text_vector_hybrid,
)

from .providers import FailingProvider, ListProvider, SlowProvider, docs
from .test_embedding import CountingEmbedding

REQUEST = {"query": {"content": "q"}, "target": {"name": "kb"}}


def _key(x: str) -> str:
    return x


def test_rrf_hand_computed() -> None:
    """RET-6: Σ weight/(rrf_k + rank), rank from 1; ids in one branch only; weights; ties; rrf_k effect."""
    fused = dict(rrf_fuse([["a", "b", "c"], ["b", "d"]], key=_key, rrf_k=60))
    assert fused["a"] == pytest.approx(1 / 61)
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert fused["c"] == pytest.approx(1 / 63)
    assert fused["d"] == pytest.approx(1 / 62)
    order = [item for item, _ in rrf_fuse([["a", "b", "c"], ["b", "d"]], key=_key)]
    assert order == ["b", "a", "d", "c"]  # d (1/62) beats c (1/63)
    weighted = dict(rrf_fuse([["a", "b"], ["b", "a"]], key=_key, weights=[3, 1], rrf_k=1))
    assert weighted["a"] == pytest.approx(3 / 2 + 1 / 3)
    assert weighted["b"] == pytest.approx(3 / 3 + 1 / 2)
    tie = rrf_fuse([["x", "y"], ["y", "x"]], key=_key, rrf_k=10)
    assert [i for i, _ in tie] == ["x", "y"] and tie[0][1] == pytest.approx(tie[1][1])  # first-seen wins ties
    # rrf_k: small k emphasises top ranks, large k lets cross-branch presence dominate.
    lists = [["solo", "x1", "x2", "both"], ["other", "y1", "y2", "both"]]  # both: rank 4 in each
    assert dict(rrf_fuse(lists, key=_key, rrf_k=1))["both"] == pytest.approx(2 / 5)  # < solo's 1/2
    small = [i for i, _ in rrf_fuse(lists, key=_key, rrf_k=1)]
    large = [i for i, _ in rrf_fuse(lists, key=_key, rrf_k=1000)]
    assert small[0] == "solo" and large[0] == "both"
    assert dict(rrf_fuse([["a", "a", "b"]], key=_key, rrf_k=60))["b"] == pytest.approx(1 / 63)  # dup keeps best
    for bad in ({"rrf_k": 0}, {"rrf_k": 1.5}, {"rrf_k": True}, {"weights": [0, 1]}, {"weights": [1]}):
        with pytest.raises(RetrievalError):
            rrf_fuse([["a"], ["b"]], key=_key, **bad)


class Rendezvous:
    """Lets each of ``parties`` branches finish only once all of them have started: sequential
    branches would never get there (the test times out instead of measuring wall-clock time)."""

    def __init__(self, parties: int) -> None:
        self.parties = parties
        self.arrived = 0
        self.all_started = asyncio.Event()

    async def arrive(self) -> None:
        self.arrived += 1
        if self.arrived == self.parties:
            self.all_started.set()
        await asyncio.wait_for(self.all_started.wait(), timeout=10)


class RecordingBranch(ListProvider):
    def __init__(self, candidates: list[dict[str, Any]], delay: float = 0.0,
                 rendezvous: Rendezvous | None = None) -> None:
        super().__init__(candidates)
        self.delay = delay
        self.rendezvous = rendezvous
        self.finished = False

    async def search(self, input: Any, context: Any = None) -> dict[str, Any]:
        if self.rendezvous is not None:
            await self.rendezvous.arrive()
        await asyncio.sleep(self.delay)
        output = await super().search(input, context)
        self.finished = True
        return output


async def test_hybrid_provider_fuses_and_sizes_pool() -> None:
    """RET-6: branches queried concurrently with pool ≥ max(limit, candidate_limit); key = source target + id."""
    both = Rendezvous(2)
    vector = RecordingBranch(docs("a", "b", "c"), rendezvous=both)
    text = RecordingBranch(docs("b", "d"), rendezvous=both)
    hybrid = create_hybrid_search_provider([HybridBranch(vector, weight=1, strategy="vector"),
                                            {"provider": text, "weight": 1, "strategy": "bm25"}])
    retrieval = create_retrieval(RetrievalTargetRegistry({"kb": {"default_strategy": "hybrid",
                                                                 "providers": {"hybrid": hybrid}}}))
    result = await retrieval.search({**REQUEST, "limit": 3})  # sequential branches would time out
    assert result.status == "success" and result.output is not None
    assert [c.id for c in result.output.candidates] == ["b", "a", "d"]
    assert result.output.candidates[0].score == pytest.approx(1 / 62 + 1 / 61)
    assert [call[0].limit for call in vector.calls + text.calls] == [100, 100]
    assert [vector.calls[0][0].strategy, text.calls[0][0].strategy] == ["vector", "bm25"]
    await retrieval.search({**REQUEST, "limit": 250})
    assert vector.calls[-1][0].limit == 250
    tuned = create_retrieval(RetrievalTargetRegistry({"kb": {"default_strategy": "h", "providers": {
        "h": create_hybrid_search_provider([vector, text])}}}), defaults={"hybrid": {"candidateLimit": 20,
                                                                                    "rrfK": 1}})
    out = await tuned.search({**REQUEST, "limit": 2})
    assert vector.calls[-1][0].limit == 20
    assert out.output is not None and out.output.candidates[0].score == pytest.approx(1 / 3 + 1 / 2)
    fixed = create_retrieval(RetrievalTargetRegistry({"kb": {"default_strategy": "h", "providers": {
        "h": create_hybrid_search_provider([vector, text], candidate_limit=7)}}}),
        defaults={"hybrid": {"candidateLimit": 20}})
    await fixed.search({**REQUEST, "limit": 2})
    assert vector.calls[-1][0].limit == 7  # constructor beats defaults


def test_convex_fuse_hand_computed() -> None:
    """Issue 18: convex fusion min-max normalises each ranking's scores (best 1, worst 0), weights them and
    adds 0 for a branch that missed the item; equal scores all map to 1; ties keep first-seen order."""
    dense = [("a", 0.9), ("b", 0.7), ("c", 0.5)]
    text = [("c", 12.0), ("d", 4.0), ("a", 2.0)]
    fused = convex_fuse([dense, text], key=lambda hit: hit[0], score=lambda hit: hit[1], weights=[0.6, 0.4])
    scores = {hit[0]: value for hit, value in fused}
    assert scores == pytest.approx({"a": 0.6, "b": 0.3, "c": 0.4, "d": 0.4 * 0.2})
    assert [hit[0] for hit, _ in fused] == ["a", "c", "b", "d"]
    flat = convex_fuse([[("x", 3.0), ("y", 3.0)], []], key=lambda hit: hit[0], score=lambda hit: hit[1])
    assert [(hit[0], value) for hit, value in flat] == [("x", 1.0), ("y", 1.0)]
    with pytest.raises(RetrievalError) as raised:
        convex_fuse([dense], key=lambda hit: hit[0], score=lambda hit: hit[1], weights=[1.0, 1.0])
    assert raised.value.code == "RETRIEVAL_INVALID_INPUT"
    # z-scores: (score − lowest) / standard deviation, a missing item counting as the lowest.
    z = dict((hit[0], value) for hit, value in convex_fuse([dense, text], key=lambda hit: hit[0],
                                                           score=lambda hit: hit[1], normalization="zscore"))
    sd_dense, sd_text = statistics.pstdev([0.9, 0.7, 0.5]), statistics.pstdev([12.0, 4.0, 2.0])
    assert z == pytest.approx({"a": 0.4 / sd_dense, "b": 0.2 / sd_dense, "c": 10.0 / sd_text, "d": 2.0 / sd_text})
    with pytest.raises(RetrievalError):
        convex_fuse([dense], key=lambda hit: hit[0], score=lambda hit: hit[1], normalization="l2")  # type: ignore[arg-type]


@given(st.lists(st.lists(st.tuples(st.sampled_from("abcdef"), st.integers(-1000, 1000).map(float)), max_size=6),
                min_size=1,
                max_size=3),
       st.sampled_from(["minmax", "zscore"]))
def test_convex_fuse_properties(rankings: list[list[tuple[str, float]]], normalization: Any) -> None:
    """Issue 18: every item appears once with a finite score; adding a constant to, or scaling by a positive
    number, every score of a ranking changes nothing (the fusion is scale-free per branch)."""
    fused = convex_fuse(rankings, key=lambda hit: hit[0], score=lambda hit: hit[1], normalization=normalization)
    assert sorted(hit[0] for hit, _ in fused) == sorted({hit[0] for ranking in rankings for hit in ranking})
    assert all(math.isfinite(value) and value >= 0 for _, value in fused)
    moved = [[(name, 3.0 * value + 7.0) for name, value in ranking] for ranking in rankings]
    again = convex_fuse(moved, key=lambda hit: hit[0], score=lambda hit: hit[1], normalization=normalization)
    assert [value for _, value in again] == pytest.approx([value for _, value in fused], rel=1e-6, abs=1e-6)


async def test_hybrid_convex_fusion_uses_scores() -> None:
    """Issue 18: ``fusion="convex"`` ranks by normalised scores where RRF sees only ranks, needs a score on
    every candidate, and any other fusion name is refused."""
    first = [{"id": "a", "content": "a", "score": 1.0}, {"id": "b", "content": "b", "score": 0.9},
             {"id": "c", "content": "c", "score": 0.0}]
    second = [{"id": "c", "content": "c", "score": 10.0}, {"id": "b", "content": "b", "score": 2.0},
              {"id": "a", "content": "a", "score": 0.0}]
    branches = [ListProvider(first), ListProvider(second)]
    convex = await create_hybrid_search_provider(branches, fusion="convex").search(REQUEST)
    rrf = await create_hybrid_search_provider(branches).search(REQUEST)
    assert [c.id for c in convex.candidates] == ["b", "a", "c"]  # b: 0.9 + 0.2; a: 1 + 0; c: 0 + 1
    assert convex.candidates[0].score == pytest.approx(1.1)
    assert [c.id for c in rrf.candidates] == ["a", "c", "b"]  # b's two second places lose to a first place
    unscored = create_hybrid_search_provider([ListProvider(docs("a"))], fusion="convex")
    with pytest.raises(RetrievalError) as raised:
        await unscored.search(REQUEST)
    assert raised.value.code == "RETRIEVAL_INVALID_BACKEND_OUTPUT"
    with pytest.raises(RetrievalError) as raised:
        create_hybrid_search_provider(branches, fusion="sum")  # type: ignore[arg-type]
    assert raised.value.code == "RETRIEVAL_INVALID_INPUT" and isinstance(raised.value, ValueError)
    with pytest.raises(RetrievalError) as raised:
        create_hybrid_search_provider(branches, fusion="convex", normalization="rank")  # type: ignore[arg-type]
    assert raised.value.code == "RETRIEVAL_INVALID_INPUT" and isinstance(raised.value, ValueError)


async def test_text_vector_hybrid_applies_its_tuning() -> None:
    """Issue 18: ``create_text_vector_hybrid`` asks the vector branch (no strategy) and the text branch
    (``bm25``) for the tuned pool and fuses with the tuned weights and normalisation."""
    vector = RecordingBranch([{"id": "a", "content": "a", "score": 0.9}, {"id": "b", "content": "b", "score": 0.1}])
    text = RecordingBranch([{"id": "b", "content": "b", "score": 8.0}, {"id": "a", "content": "a", "score": 7.0}])
    hybrid = create_text_vector_hybrid(text, vector)
    assert (hybrid.fusion, hybrid.normalization) == (TEXT_VECTOR_TUNING.fusion, TEXT_VECTOR_TUNING.normalization)
    out = await hybrid.search({**REQUEST, "limit": 2})
    assert [vector.calls[0][0].limit, text.calls[0][0].limit] == [TEXT_VECTOR_TUNING.candidate_limit] * 2
    assert [vector.calls[0][0].strategy, text.calls[0][0].strategy] == [None, "bm25"]
    # a: vector 0.8/0.4 = 2 z-units; b: text 1/0.5 = 2 z-units: the heavier branch wins (the recording
    # branches cannot score by id, so completing adds nothing here).
    heavier = "a" if TEXT_VECTOR_TUNING.vector_weight > TEXT_VECTOR_TUNING.text_weight else "b"
    assert [c.id for c in out.candidates] == [heavier, "b" if heavier == "a" else "a"]
    assert out.candidates[0].score == pytest.approx(
        max(TEXT_VECTOR_TUNING.vector_weight, TEXT_VECTOR_TUNING.text_weight) * 2.0)
    rrf = create_text_vector_hybrid(text, vector, tuning=HybridTuning("rrf", 1.0, 1.0, 5, rrf_k=1))
    assert (await rrf.search(REQUEST)).candidates[0].score == pytest.approx(1 / 2 + 1 / 3)


async def test_hybrid_keys() -> None:
    """RET-6: same id from different source targets stays separate; ref works; no id/ref needs a key."""
    left = ListProvider([{"id": "1", "content": "x", "source": {"target": "wiki"}},
                         {"content": "r", "source": {"target": "kb", "ref": "row-9"}}])
    right = ListProvider([{"id": "1", "content": "y", "source": {"target": "code"}},
                          {"content": "r2", "source": {"target": "kb", "ref": "row-9"}}])
    out = await create_hybrid_search_provider([left, right]).search(
        create_retrieval_input({**REQUEST, "limit": 10}))
    assert [c.content for c in out.candidates] == ["r", "x", "y"]  # row-9 fused (2/62); the two "1"s apart
    assert out.candidates[0].score == pytest.approx(2 / 62) and out.candidates[1].score == pytest.approx(1 / 61)
    anonymous = ListProvider([{"content": "no id"}])
    with pytest.raises(RetrievalError) as info:
        await create_hybrid_search_provider([anonymous]).search(create_retrieval_input(REQUEST))
    assert info.value.code == "RETRIEVAL_INVALID_BACKEND_OUTPUT"
    keyed = create_hybrid_search_provider([anonymous, ListProvider([{"content": "no id"}])],
                                          key=lambda c: str(c.content))
    out = await keyed.search(create_retrieval_input(REQUEST))
    assert len(out.candidates) == 1 and out.candidates[0].score == pytest.approx(2 / 61)


def create_retrieval_input(raw: dict[str, Any]) -> Any:
    from ditto.retrieval import parse_search_input

    return parse_search_input(raw)


async def test_hybrid_branch_failure_waits_for_others() -> None:
    """RET-6: a failing branch fails the whole call, but only after the other branches finished."""
    slow = RecordingBranch(docs("a"), delay=0.2)
    hybrid = create_hybrid_search_provider([FailingProvider(RuntimeError("secret")), slow])
    result = await create_retrieval(RetrievalTargetRegistry({"kb": {"default_strategy": "h", "providers": {
        "h": hybrid}}})).search(REQUEST)
    assert slow.finished
    assert result.error is not None and result.error.code == "RETRIEVAL_BACKEND_ERROR"
    assert "secret" not in result.error.message
    denied = create_hybrid_search_provider([slow, FailingProvider(RetrievalError("RETRIEVAL_PERMISSION_DENIED"))])
    with pytest.raises(RetrievalError) as info:
        await denied.search(create_retrieval_input(REQUEST))
    assert info.value.code == "RETRIEVAL_PERMISSION_DENIED"
    bad = create_hybrid_search_provider([ListProvider([{"id": "x"}])])  # content missing
    with pytest.raises(RetrievalError) as info:
        await bad.search(create_retrieval_input(REQUEST))
    assert info.value.code == "RETRIEVAL_INVALID_BACKEND_OUTPUT"


async def test_hybrid_cancellation_reaches_branches() -> None:
    """RET-5: the signal reaches every branch and a cancelled hybrid call stops its branches."""
    one, two = SlowProvider(5), SlowProvider(5)
    retrieval = create_retrieval(RetrievalTargetRegistry({"kb": {"default_strategy": "h", "providers": {
        "h": create_hybrid_search_provider([one, two])}}}))
    controller = AbortController()
    task = asyncio.create_task(retrieval.search(REQUEST, context={"signal": controller.signal}))
    await one.started.wait()
    await two.started.wait()
    controller.abort()
    result = await task
    assert result.status == "cancelled"
    assert one.cancelled and two.cancelled
    assert one.signals == [controller.signal] and two.signals == [controller.signal]


class FixedReranker:
    def __init__(self, scores: Sequence[float]) -> None:
        self.scores = list(scores)
        self.seen: list[int] = []

    async def rerank(self, query: RetrievalQuery, candidates: Sequence[RetrievalCandidate],
                     context: RetrievalExecutionContext | None = None) -> list[float]:
        self.seen.append(len(candidates))
        return self.scores[:len(candidates)]


async def test_rerank_candidates_and_provider() -> None:
    """RET-6: rerank orders by reranker score (stable ties), pool ≥ final limit, candidate_limit default 100."""
    candidates = [RetrievalCandidate(id=i, content=i) for i in "abcd"]
    ranked = await rerank_candidates(FixedReranker([0.1, 0.9, 0.5, 0.9]), "q", candidates, limit=3)
    assert [c.id for c in ranked] == ["b", "d", "c"] and ranked[0].score == 0.9
    inner = ListProvider(docs(*[str(i) for i in range(300)]))
    reranker = FixedReranker([float(i % 7) for i in range(300)])
    provider = create_rerank_search_provider(inner, reranker)
    retrieval = create_retrieval(RetrievalTargetRegistry({"kb": {"default_strategy": "r", "providers": {
        "r": provider}}}))
    result = await retrieval.search({**REQUEST, "limit": 8})
    assert inner.calls[-1][0].limit == 100 and reranker.seen[-1] == 100
    assert result.output is not None and [c.id for c in result.output.candidates][:3] == ["6", "13", "20"]
    await retrieval.search({**REQUEST, "limit": 150})
    assert inner.calls[-1][0].limit == 150
    yaml_tuned = create_retrieval(RetrievalTargetRegistry({"kb": {"default_strategy": "r", "providers": {
        "r": provider}}}), defaults={"rerank": {"candidateLimit": 50}})
    await yaml_tuned.search({**REQUEST, "limit": 8})
    assert inner.calls[-1][0].limit == 50
    for bad in ([0.1], [float("nan")] * 100):
        broken = create_rerank_search_provider(inner, FixedReranker(bad), candidate_limit=100)
        with pytest.raises(RetrievalError) as info:
            await broken.search(create_retrieval_input({**REQUEST, "limit": 5}))
        assert info.value.code == "RETRIEVAL_INVALID_BACKEND_OUTPUT"


async def test_rerank_over_hybrid_pool_sizes() -> None:
    """RET-6 (seed example): limit 8, hybrid branches candidate_limit 100, outer rerank candidate_limit 50."""
    left, right = ListProvider(docs(*[f"l{i}" for i in range(200)])), ListProvider(docs(*[f"r{i}" for i in range(200)]))
    hybrid = create_hybrid_search_provider([left, right], candidate_limit=100)
    reranker = FixedReranker([1.0] * 200)
    provider = create_rerank_search_provider(hybrid, reranker, candidate_limit=50)
    out = await provider.search(create_retrieval_input({**REQUEST, "limit": 8}))
    assert left.calls[-1][0].limit == 100 and reranker.seen[-1] == 50 and len(out.candidates) == 8


class QuerySideEmbedding(CountingEmbedding):
    """A model with a query side of its own (as E5's prefixes): a query vector is its passage vector reversed."""

    def __init__(self) -> None:
        super().__init__(dimensions=64)
        self.queries: list[list[str]] = []

    async def embed_queries(self, contents: Sequence[Any], context: Any = None) -> Any:
        self.queries.append([str(c) for c in contents])
        return [tuple(reversed(v)) for v in await self.embed(contents, context)]


async def test_cosine_reranker_embeds_the_query_on_its_query_side() -> None:
    """RET-6 (issue 18): for a provider with ``embed_queries`` the reranker embeds the query there, in a call of
    its own, and the candidates as passages; a provider without one keeps the single call."""
    model = QuerySideEmbedding()
    candidates = [RetrievalCandidate(id="1", content="cooking pasta"),
                  RetrievalCandidate(id="2", content="agent memory migration plan")]
    await rerank_candidates(create_cosine_reranker(model), "agent memory migration", candidates)
    assert model.queries == [["agent memory migration"]]
    assert model.batches == [1, 2]


async def test_cosine_reranker() -> None:
    """RET-6: create_cosine_reranker embeds query and candidates and orders by cosine similarity."""
    model = CountingEmbedding(dimensions=64)
    reranker = create_cosine_reranker(model)
    candidates = [RetrievalCandidate(id="1", content="cooking pasta"),
                  RetrievalCandidate(id="2", content="agent memory migration plan"),
                  RetrievalCandidate(id="3", content="memory")]
    ranked = await rerank_candidates(reranker, "agent memory migration", candidates)
    assert ranked[0].id == "2" and ranked[-1].id == "1"
    assert model.batches == [4]
    assert await reranker.rerank(RetrievalQuery(content="q"), []) == []


async def test_signal_reaches_embedding_through_hybrid_and_rerank() -> None:
    """RET-5/RET-6: one signal travels SDK → rerank → hybrid → vector → HTTP embedding; firing it aborts
    the in-flight embedding request (the server is still sleeping) and the call ends cancelled."""
    from ditto.retrieval import InMemoryVectorIndex, create_http_embedding_provider, create_vector_search_provider
    from tests.support.openai_embeddings_server import EmbeddingServerState, hashed_bow, openai_embeddings_server

    async with openai_embeddings_server(EmbeddingServerState(slow_seconds=3.0)) as (url, state), \
            create_http_embedding_provider(url=url, model="slow", timeout_ms=10_000) as slow_embedding:
        index = InMemoryVectorIndex()
        index.add([{"id": "a", "vector": hashed_bow("agent memory", 32), "content": "agent memory"}])
        vector = create_vector_search_provider(index, embedding=slow_embedding)
        provider = create_rerank_search_provider(
            create_hybrid_search_provider([vector, ListProvider(docs("a"))]),
            create_cosine_reranker(slow_embedding))
        retrieval = create_retrieval(RetrievalTargetRegistry({"kb": {"default_strategy": "r", "providers": {
            "r": provider}}}))
        controller = AbortController()
        loop = asyncio.get_running_loop()
        loop.call_later(0.2, controller.abort)
        started = loop.time()
        result = await retrieval.search(REQUEST, context={"signal": controller.signal})
        assert result.status == "cancelled" and result.error is not None
        assert result.error.code == "RETRIEVAL_CANCELLED"
        assert loop.time() - started < 1.5  # did not wait for the 3 s embedding answer
        assert len(state.requests) == 1  # the query embedding was in flight when the signal fired


@given(st.lists(st.lists(st.sampled_from("abcdefgh"), max_size=8), min_size=1, max_size=4),
       st.integers(min_value=1, max_value=500), st.data())
def test_rrf_properties(rankings: list[list[str]], rrf_k: int, data: st.DataObject) -> None:
    """RET-6 (hypothesis): each key once, scores = Σ w/(k + first rank), best first, ties in first-seen order."""
    weights = data.draw(st.lists(st.floats(min_value=0.01, max_value=10), min_size=len(rankings),
                                 max_size=len(rankings)))
    fused = rrf_fuse(rankings, key=_key, weights=weights, rrf_k=rrf_k)
    keys = [item for item, _ in fused]
    assert len(keys) == len(set(keys)) == len({x for r in rankings for x in r})
    for item, score in fused:
        expected = sum(w / (rrf_k + r.index(item) + 1) for r, w in zip(rankings, weights, strict=True) if item in r)
        assert score == pytest.approx(expected)
    scores = [score for _, score in fused]
    assert scores == sorted(scores, reverse=True)
    first_seen = list(dict.fromkeys(x for r in rankings for x in r))
    for (a, sa), (b, sb) in itertools.pairwise(fused):
        if sa == sb:
            assert first_seen.index(a) < first_seen.index(b)


class SignalCheckingBranch:
    """Waits for ``go``, then checks the call's signal the usual way (``raise_if_aborted``)."""

    def __init__(self) -> None:
        self.go = asyncio.Event()

    async def search(self, input: Any, context: RetrievalExecutionContext | None = None) -> Any:
        await self.go.wait()
        assert context is not None and context.signal is not None
        context.signal.raise_if_aborted()
        return {"candidates": [], "target": {"name": "kb"}}


def _fired_event(signal: Any) -> asyncio.Event:
    """An event set (on this loop) when ``signal`` fires, whichever thread fires it."""
    fired = asyncio.Event()
    loop = asyncio.get_running_loop()
    signal.add_callback(lambda _signal: loop.call_soon_threadsafe(fired.set))
    return fired


async def test_hybrid_branch_cancelled_by_signal_is_cancelled_not_backend_error() -> None:
    """RET-5/RET-6: a branch stopping with the signal's own CancelledBySignal (deadline or abort) makes the
    hybrid call RETRIEVAL_CANCELLED / RETRIEVAL_TIMEOUT, not a generic RETRIEVAL_BACKEND_ERROR."""
    from ditto import CancelSignal

    for signal, code in ((None, "RETRIEVAL_CANCELLED"), (CancelSignal.timeout(0.01), "RETRIEVAL_TIMEOUT")):
        controller = AbortController()
        branch = SignalCheckingBranch()
        hybrid = create_hybrid_search_provider([ListProvider(docs("a")), branch])
        context = RetrievalExecutionContext(signal=signal or controller.signal)
        assert context.signal is not None
        fired = _fired_event(context.signal)
        task = asyncio.create_task(hybrid.search(create_retrieval_input(REQUEST), context))
        controller.abort()
        await fired.wait()  # the deadline signal fires on its own
        branch.go.set()
        with pytest.raises(RetrievalError) as info:
            await task
        assert info.value.code == code
