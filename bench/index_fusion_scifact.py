"""Two embedding models at once: BM25 + all-MiniLM-L6-v2 + multilingual-e5-small fused over the research index.

Usage::

    PYTHONPATH=src python bench/index_scifact.py --only-claims --claims 3 --embed --work W
    PYTHONPATH=src python bench/index_scifact.py --only-claims --claims 3 --embed --model multilingual-e5-small --work W
    PYTHONPATH=src python bench/index_fusion_scifact.py --work W --split train \\
        --weights 0.25,0.75,0 --weights 0.35,0.325,0.325

The research task's retrieval is what caps its SciFact row: a relevant abstract must be among the at most
nine documents three queries show. This asks whether a second embedding model raises that ceiling, before
anyone changes the index format to hold two vector sets. The two prepared research indexes of the 5,183
abstracts that ``bench/index_scifact.py --work W`` leaves (the default model's in ``W/claims-index-embed``,
the second model's in ``W/claims-index-<model>``) hold the same passages under the same ids, so one
``create_hybrid_search_provider`` can fuse three branches taken from them (``IndexSearchProvider.branch``):
BM25 with the coordination factor (as research searches), each model's exact cosine, z-scored convex
fusion over pools of 200 completed with each branch's scores of the others' pools (the default hybrid's
fusion, :data:`~ditto.retrieval.providers.hybrid.TEXT_VECTOR_TUNING`, is the weights ``0.25,0.75,0``).
Each claim's raw text is one query; its passages are grouped into documents as research groups them
(:func:`~ditto.workflows.research.sources.indexed_documents.rank_documents`). Printed per weight triple:
the share of claims with a relevant abstract among the top *k* documents, and nDCG@10 over documents.
Tune on ``--split train``; the test split is for reporting a choice made on train.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from retrieval_beir import DEFAULT_DATA

DEPTHS = (1, 3, 6, 9, 20)


def _weights(text: str) -> tuple[float, float, float]:
    parts = [float(part) for part in text.split(",")]
    if len(parts) != 3 or any(not math.isfinite(part) or part < 0 for part in parts) or parts[0] + parts[1] <= 0:
        raise argparse.ArgumentTypeError("three weights >= 0: BM25, the default model, the second model")
    return parts[0], parts[1], parts[2]


def _open(directory: Path) -> object:
    from ditto.retrieval.index import create_index_search_provider, open_index
    from ditto.retrieval.index.embedding import local_embedding

    if not (directory / "manifest.json").exists():
        raise SystemExit(f"no index in {directory}: build it with bench/index_scifact.py --only-claims --embed "
                         "(--model for the second one) --work first")
    index = open_index(directory)
    if index.embedding is None:
        raise SystemExit(f"{directory} has no vectors")
    return create_index_search_provider(index, embedding=local_embedding(index.embedding.model), coordinate=True)


def _same_passages(first: object, second: object) -> None:
    """The fusion keys candidates by passage id: both indexes must hold the same passages under the same ids."""
    a, b = first.index, second.index  # type: ignore[attr-defined]
    ids = [document.id for document in a.bm25.documents()]
    if len(ids) != len(b) or any(b.bm25.get(key) is None or b.bm25.get(key).content != a.bm25.get(key).content
                                 for key in ids[:: max(1, len(ids) // 500)]):
        raise SystemExit("the two indexes do not hold the same passages (rebuild both with this source tree)")


async def measure(work: Path, data: Path, split: str, model: str, weights: Sequence[tuple[float, float, float]],
                  claims: int) -> list[dict[str, float]]:
    from ditto.retrieval import HybridBranch, create_hybrid_search_provider
    from ditto.retrieval.evaluation import read_beir_qrels, read_beir_queries
    from ditto.workflows.research.sources.indexed_documents import rank_documents

    default = _open(work / "claims-index-embed")
    second = _open(work / f"claims-index-{model.replace('/', '-')}")
    _same_passages(default, second)
    qrels = read_beir_qrels(data, split)
    queries = read_beir_queries(data)
    selected = [(query_id, queries[query_id]) for query_id in qrels if query_id in queries][:claims]
    rows = []
    for bm25, minilm, other in weights:
        branches = [HybridBranch(default.branch("bm25"), weight=bm25),  # type: ignore[attr-defined]
                    HybridBranch(default.branch("vector"), weight=minilm)]  # type: ignore[attr-defined]
        if other > 0:
            branches.append(HybridBranch(second.branch("vector"), weight=other))  # type: ignore[attr-defined]
        fused = create_hybrid_search_provider([branch for branch in branches if branch.weight > 0],
                                              candidate_limit=200, fusion="convex", normalization="zscore",
                                              complete=True)
        found = dict.fromkeys(DEPTHS, 0)
        ndcg = 0.0
        started = time.perf_counter()
        for query_id, text in selected:
            output = await fused.search({"query": {"content": text}, "target": {"name": "claims"}, "limit": 200})
            ranked = [Path(passages[0].metadata["path"]).stem for _, passages in rank_documents(output.candidates)]
            relevant = qrels[query_id]
            for depth in DEPTHS:
                found[depth] += bool(set(ranked[:depth]) & relevant)
            gain = sum(1 / math.log2(rank + 2) for rank, key in enumerate(ranked[:10]) if key in relevant)
            ndcg += gain / sum(1 / math.log2(rank + 2) for rank in range(min(len(relevant), 10)))
        count = len(selected) or 1
        rows.append({"bm25": bm25, "default": minilm, "second": other, "ndcg": ndcg / count,
                     "s_per_query": (time.perf_counter() - started) / count,
                     **{f"top{depth}": found[depth] / count for depth in DEPTHS}})
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path, required=True, help="where bench/index_scifact.py --work left its indexes")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--split", choices=("train", "test"), default="train")
    parser.add_argument("--model", default="multilingual-e5-small", help="the second index's model")
    parser.add_argument("--weights", type=_weights, action="append",
                        help="BM25,default model,second model (repeatable; default: the shipped hybrid and "
                             "0.35,0.325,0.325)")
    parser.add_argument("--claims", type=int, default=10_000)
    args = parser.parse_args(argv)
    weights = args.weights or [(0.25, 0.75, 0.0), (0.35, 0.325, 0.325)]
    rows = asyncio.run(measure(args.work, args.data, args.split, args.model, weights, args.claims))
    print(f"| {args.split}: BM25 / all-MiniLM-L6-v2 / {args.model} | "
          + " | ".join(f"top {depth}" for depth in DEPTHS) + " | nDCG@10 | s per query |")
    print("| --- |" + " ---: |" * (len(DEPTHS) + 2))
    for row in rows:
        print(f"| {row['bm25']:g} / {row['default']:g} / {row['second']:g} | "
              + " | ".join(f"{row[f'top{depth}']:.3f}" for depth in DEPTHS)
              + f" | {row['ndcg']:.4f} | {row['s_per_query']:.3f} |")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
