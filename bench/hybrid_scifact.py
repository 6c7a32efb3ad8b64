"""SciFact hybrid search: BM25 + all-MiniLM-L6-v2 through ``create_hybrid_search_provider``.

Usage::

    python bench/hybrid_scifact.py [--data ../shared/datasets/scifact] [--cache-dir DIR]

1. **Branches.** BM25 is our text provider (k1=1.2, b=0.75, English stop words and
   stemmer); dense is an exact in-memory cosine index over the provider's vectors
   (``title + " " + text``; the corpus vectors come from the embedding cache,
   by default the library's own, ``$DITTO_EMBEDDING_CACHE_DIR`` or the user cache's
   ``ditto/embeddings``, which ``bench/embeddings_scifact.py`` fills too).
2. **Tuning on train only.** Each branch's ranked pool (up to 200, with scores) is
   computed once per ``qrels/train.tsv`` query, with each branch's ``score_ids`` of
   the other branch's pool (what a ``complete`` hybrid asks for); every grid point
   fuses those pools with the very functions the provider uses (``rrf_fuse``,
   ``convex_fuse``, completed pools as ``HybridSearchProvider`` completes them) and
   the best mean nDCG@10 on train is kept, for RRF and for the convex combination.
3. **Test once.** The 300 ``qrels/test.tsv`` queries then run through
   ``create_text_vector_hybrid`` (so ``create_hybrid_search_provider``) with the
   chosen settings, beside BM25, dense, and plain RRF (k=60, pool 100, equal
   weights). The script fails when the train grid's convex choice is not
   ``TEXT_VECTOR_TUNING``, the default users get.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from embeddings_scifact import Split, add_cache_option, add_model_option, corpus_provider, load_split, mean_ndcg
from retrieval_beir import DEFAULT_DATA

from ditto.retrieval import InMemoryVectorIndex, RetrievalSearchInput
from ditto.retrieval.evaluation import ndcg_at_k as ndcg_at_10
from ditto.retrieval.providers.hybrid import (
    TEXT_VECTOR_TUNING,
    HybridTuning,
    convex_fuse,
    create_text_vector_hybrid,
    rrf_fuse,
)
from ditto.retrieval.providers.local_embedding import LocalEmbeddingProvider
from ditto.retrieval.providers.text import create_text_search_provider
from ditto.retrieval.providers.vector import VectorRecord, create_vector_search_provider

MAX_POOL = 200
POOLS = (10, 20, 30, 50, 100, 200)
RRF_KS = (1, 5, 10, 20, 40, 60, 100)
DENSE_WEIGHTS = (0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0)  # the BM25 branch keeps weight 1
CONVEX_ALPHAS = tuple(round(0.05 * i, 2) for i in range(1, 20))  # weight of dense; BM25 gets 1 - alpha
NORMALIZATIONS = ("minmax", "zscore")
COMPLETE = (False, True)  # convex only: each branch also scores the other branch's pool
COORDINATE = (False, True)  # convex only: the BM25 branch with the coordination factor

Pool = list[tuple[str, float]]  # (doc id, branch score), best first


@dataclass(frozen=True)
class QueryPools:
    """One query's pools, best first, and each branch's score of every document of either pool."""

    dense: Pool
    text: dict[bool, Pool]  # by coordination
    dense_scores: dict[str, float]
    text_scores: dict[bool, dict[str, float]]


@dataclass(frozen=True)
class Setting:
    fusion: str
    pool: int
    dense_weight: float
    text_weight: float
    rrf_k: int | None
    normalization: str = "minmax"
    complete: bool = False
    coordinate: bool = False

    def describe(self) -> str:
        extra = (f", rrf_k={self.rrf_k}" if self.fusion == "rrf"
                 else f", {self.normalization}{', complete' if self.complete else ''}"
                      f"{', BM25 coordination' if self.coordinate else ''}")
        return (f"{self.fusion}: pool {self.pool}, weights dense {self.dense_weight:g} / BM25 "
                f"{self.text_weight:g}{extra}")

    def tuning(self) -> HybridTuning:
        return HybridTuning(fusion=self.fusion, vector_weight=self.dense_weight,  # type: ignore[arg-type]
                            text_weight=self.text_weight, candidate_limit=self.pool, rrf_k=self.rrf_k,
                            normalization=self.normalization, complete=self.complete,  # type: ignore[arg-type]
                            coordinate=self.coordinate)


class Branches:
    """The two search providers over the same corpus, and their pools per query."""

    def __init__(self, split: Split, embedder: LocalEmbeddingProvider) -> None:
        self.embedder = embedder
        documents = [{"id": i, "content": t} for i, t in zip(split.doc_ids, split.texts, strict=True)]
        self.text = create_text_search_provider(documents, {"k1": 1.2, "b": 0.75})
        vectors = asyncio.run(embedder.embed_array(split.texts))
        self.index = InMemoryVectorIndex(metric="cosine", dimensions=embedder.dimensions)
        self.index.add([VectorRecord(i, v) for i, v in zip(split.doc_ids, vectors, strict=True)])
        self.vector = create_vector_search_provider(self.index, embedding=embedder)
        self.texts = {False: self.text, True: self.text.coordinated()}

    def pools(self, queries: Sequence[str]) -> list[QueryPools]:
        """Each branch's pool of ``MAX_POOL`` and (``score_ids``, what a complete hybrid asks) its scores of
        the other branch's pool."""
        async def run() -> list[QueryPools]:
            out = []
            for query in queries:
                request = search_input(query, MAX_POOL)
                text_request = request.model_copy(update={"strategy": "bm25"})
                d = await self.vector.search(request)
                dense = [(c.id or "", c.score or 0.0) for c in d.candidates]
                text: dict[bool, Pool] = {}
                for flag, provider in self.texts.items():
                    t = await provider.search(text_request)
                    text[flag] = [(c.id or "", c.score or 0.0) for c in t.candidates]
                dense_scores = dict(dense)
                text_scores = {flag: dict(pool) for flag, pool in text.items()}
                branches: list[tuple[Pool, Any, RetrievalSearchInput, dict[str, float]]] = [
                    *((pool, self.vector, request, dense_scores) for pool in text.values()),
                    *((dense, self.texts[flag], text_request, text_scores[flag]) for flag in text)]
                for other, provider, branch_request, scores in branches:
                    ids = [i for i, _ in other]
                    missing = [i for i in ids if i not in scores]
                    for i, score in zip(missing, await provider.score_ids(branch_request, missing), strict=True):
                        if score is not None:
                            scores[i] = score
                out.append(QueryPools(dense, text, dense_scores, text_scores))
            return out

        return asyncio.run(run())


def search_input(query: str, limit: int) -> RetrievalSearchInput:
    return RetrievalSearchInput.model_validate({"query": {"content": query}, "target": {"name": "scifact"},
                                                "limit": limit})


def fuse(setting: Setting, pools: QueryPools) -> list[str]:
    """Fuse one query's pools as the hybrid provider does with ``setting`` (the same pure functions)."""
    dense, text = pools.dense[:setting.pool], pools.text[setting.coordinate][:setting.pool]
    rankings = [dense, text]
    if setting.complete:  # what HybridSearchProvider._complete adds: the other pool's documents, own scores
        union = dict.fromkeys(i for ranking in rankings for i, _ in ranking)
        rankings = [ranking + [(i, scores[i]) for i in union if i not in dict(ranking) and i in scores]
                    for ranking, scores in ((dense, pools.dense_scores),
                                            (text, pools.text_scores[setting.coordinate]))]
    weights = [setting.dense_weight, setting.text_weight]
    if setting.fusion == "rrf":
        fused = rrf_fuse(rankings, key=lambda hit: hit[0], weights=weights, rrf_k=setting.rrf_k or 60)
    else:
        fused = convex_fuse(rankings, key=lambda hit: hit[0], score=lambda hit: hit[1], weights=weights,
                            normalization=setting.normalization)  # type: ignore[arg-type]
    return [hit[0] for hit, _ in fused[:10]]


def grid_search(split: Split, pools: list[QueryPools]) -> dict[str, list[tuple[float, Setting]]]:
    grids = {
        "rrf": [Setting("rrf", pool, w, 1.0, k) for pool, k, w in itertools.product(POOLS, RRF_KS, DENSE_WEIGHTS)],
        "convex": [Setting("convex", pool, a, round(1 - a, 2), None, normalization, complete, coordinate)
                   for coordinate, complete, normalization, pool, a in itertools.product(
                       COORDINATE, COMPLETE, NORMALIZATIONS, POOLS, CONVEX_ALPHAS)],
    }
    results: dict[str, list[tuple[float, Setting]]] = {}
    for fusion, settings in grids.items():
        scored = []
        for setting in settings:
            ndcg = statistics.fmean(ndcg_at_10(fuse(setting, p), split.qrels[q])
                                    for p, q in zip(pools, split.query_ids, strict=True))
            scored.append((ndcg, setting))
        scored.sort(key=lambda item: -item[0])
        results[fusion] = scored
    return results


def test_rankings(branches: Branches, split: Split, setting: Setting | None, strategy: str) -> list[list[str]]:
    """Rank the test queries through one provider: a branch alone, or the hybrid provider with ``setting``."""
    provider: Any
    if setting is None:
        provider = branches.vector if strategy == "vector" else branches.text
    else:
        provider = create_text_vector_hybrid(branches.text, branches.vector, tuning=setting.tuning())

    async def run() -> list[list[str]]:
        out = []
        for query in split.queries:
            request = search_input(query, 10)
            if setting is None and strategy == "bm25":
                request = request.model_copy(update={"strategy": "bm25"})
            result = await provider.search(request)
            out.append([c.id for c in result.candidates])
        return out

    return asyncio.run(run())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--top", type=int, default=5, help="best train settings printed per fusion")
    add_model_option(parser)
    add_cache_option(parser)
    args = parser.parse_args(argv)
    train, test = load_split(args.data, "train"), load_split(args.data, "test")
    embedder = corpus_provider(args.cache_dir, model=args.model)
    branches = Branches(test, embedder)
    print(f"SciFact: {len(test.doc_ids)} documents; {len(train.queries)} train and {len(test.queries)} test queries",
          file=sys.stderr)
    grid = grid_search(train, branches.pools(train.queries))
    print("### Train grid (qrels/train.tsv)\n")
    print(f"RRF: pools {POOLS} × rrf_k {RRF_KS} × dense weight {DENSE_WEIGHTS} (BM25 weight 1); "
          f"convex: {NORMALIZATIONS} × pools {POOLS} × dense weight α {CONVEX_ALPHAS[0]}…{CONVEX_ALPHAS[-1]} "
          "(BM25 1 − α)\n")
    print("| fusion | setting | train nDCG@10 |")
    print("| --- | --- | ---: |")
    for scored in grid.values():
        for ndcg, setting in scored[:args.top]:
            print(f"| {setting.fusion} | {setting.describe()} | {ndcg:.4f} |")
    plain = Setting("rrf", 100, 1.0, 1.0, 60)
    plain_convex = next(setting for _, setting in grid["convex"] if not setting.complete and not setting.coordinate)
    rows: list[tuple[str, Setting | None, str]] = [
        ("BM25 (text provider)", None, "bm25"), (f"dense ({embedder.model_id}, exact cosine)", None, "vector"),
        ("hybrid, plain RRF (k=60, pool 100, equal weights)", plain, ""),
        (f"hybrid, tuned RRF ({grid['rrf'][0][1].describe()})", grid["rrf"][0][1], ""),
        (f"hybrid, convex, pools as returned ({plain_convex.describe()})", plain_convex, ""),
        (f"hybrid, tuned convex ({grid['convex'][0][1].describe()})", grid["convex"][0][1], ""),
    ]
    print("\n### Test (qrels/test.tsv, through the providers)\n")
    print("| system | test nDCG@10 |")
    print("| --- | ---: |")
    for name, setting, strategy in rows:
        ndcg = mean_ndcg(test, test_rankings(branches, test, setting, strategy))
        print(f"| {name} | {ndcg:.4f} |")
    embedder.close()
    chosen = grid["convex"][0][1].tuning()
    if args.model is None and chosen != TEXT_VECTOR_TUNING:  # the default is tuned for the default model
        print(f"\nTEXT_VECTOR_TUNING is {TEXT_VECTOR_TUNING}; this run's train grid chose {chosen}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
