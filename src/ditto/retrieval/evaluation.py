"""Ranking quality on a BEIR dataset: reading one, and nDCG@10, Recall@100 and MRR@10 as pure functions.

A BEIR dataset is a folder with ``corpus.jsonl`` (``_id``, ``title``, ``text``),
``queries.jsonl`` (``_id``, ``text``) and ``qrels/<split>.tsv`` (``query-id``,
``corpus-id``, ``score`` after a header line). Relevance is binary (a qrels score above
0 is relevant), as SciFact's qrels are. Only the queries the split's qrels judge are
evaluated: ``ditto eval beir`` uses the ``test`` split, so nothing tuned on ``train``
leaks into the numbers reported.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["RankingScores", "iter_beir_corpus", "mrr_at_k", "ndcg_at_k", "read_beir_qrels", "read_beir_queries",
           "recall_at_k", "score_rankings"]


def iter_beir_corpus(root: Path) -> Iterator[dict[str, Any]]:
    """The corpus documents in file order (``_id``, ``title``, ``text``)."""
    with (root / "corpus.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def read_beir_qrels(root: Path, split: str) -> dict[str, set[str]]:
    """Relevant document ids per query id (positive scores only), in file order.

    A missing file is ``OSError``; a line that is not ``query-id<TAB>corpus-id<TAB>integer score`` is
    ``ValueError`` naming the file and line."""
    qrels: dict[str, set[str]] = {}
    name = f"qrels/{split}.tsv"
    with (root / "qrels" / f"{split}.tsv").open(encoding="utf-8") as handle:
        next(handle, None)
        for number, line in enumerate(handle, start=2):
            if not line.strip():
                continue
            fields = line.rstrip("\n").split("\t")
            try:
                query_id, doc_id, score = fields[:3]
                relevant = int(score) > 0
            except ValueError:
                raise ValueError(f"{name} line {number} is not query-id, corpus-id and an integer score, "
                                 "tab-separated") from None
            if relevant:
                qrels.setdefault(query_id, set()).add(doc_id)
    return qrels


def read_beir_queries(root: Path) -> dict[str, str]:
    """Query text per query id; a line that is not a JSON object with ``_id`` and ``text`` strings is
    ``ValueError`` naming its line (blank lines are skipped)."""
    queries: dict[str, str] = {}
    with (root / "queries.jsonl").open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                query = json.loads(line)
            except ValueError:
                raise ValueError(f"queries.jsonl line {number} is not JSON") from None
            if not isinstance(query, dict) or not isinstance(query.get("_id"), str) \
                    or not isinstance(query.get("text"), str):
                raise ValueError(f"queries.jsonl line {number} is not an object with _id and text strings")
            queries[query["_id"]] = query["text"]
    return queries


def ndcg_at_k(ranked: Sequence[str], relevant: set[str], k: int = 10) -> float:
    """Binary-relevance nDCG@k of one ranking."""
    dcg = sum(1.0 / math.log2(rank + 2) for rank, doc in enumerate(ranked[:k]) if doc in relevant)
    ideal = sum(1.0 / math.log2(rank + 2) for rank in range(min(len(relevant), k)))
    return dcg / ideal if ideal else 0.0


def recall_at_k(ranked: Sequence[str], relevant: set[str], k: int = 100) -> float:
    """Share of the relevant documents among the first ``k``."""
    return len(set(ranked[:k]) & relevant) / len(relevant) if relevant else 0.0


def mrr_at_k(ranked: Sequence[str], relevant: set[str], k: int = 10) -> float:
    """1 / the rank of the first relevant document within ``k`` (0 when there is none)."""
    for rank, doc in enumerate(ranked[:k], start=1):
        if doc in relevant:
            return 1.0 / rank
    return 0.0


@dataclass(frozen=True, slots=True)
class RankingScores:
    """Mean scores over the judged queries."""

    queries: int
    ndcg_at_10: float
    recall_at_100: float
    mrr_at_10: float

    def to_json_dict(self) -> dict[str, Any]:
        return {"queries": self.queries, "nDCG@10": round(self.ndcg_at_10, 4),
                "Recall@100": round(self.recall_at_100, 4), "MRR@10": round(self.mrr_at_10, 4)}


def score_rankings(rankings: Mapping[str, Sequence[str]], qrels: Mapping[str, set[str]]) -> RankingScores:
    """Mean nDCG@10, Recall@100 and MRR@10 over the queries of ``qrels`` (a missing ranking scores 0)."""
    ids = list(qrels)
    if not ids:
        return RankingScores(0, 0.0, 0.0, 0.0)
    ranked = [list(rankings.get(query_id, ())) for query_id in ids]
    return RankingScores(
        len(ids),
        statistics.fmean(ndcg_at_k(r, qrels[q]) for r, q in zip(ranked, ids, strict=True)),
        statistics.fmean(recall_at_k(r, qrels[q]) for r, q in zip(ranked, ids, strict=True)),
        statistics.fmean(mrr_at_k(r, qrels[q]) for r, q in zip(ranked, ids, strict=True)))
