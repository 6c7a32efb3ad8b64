"""The built-in model's excerpt choice on SciFact train claims, side by side with BM25's top-1.

Usage::

    python bench/infer_extractive.py [--data ../shared/datasets/scifact] [--split train] [--weights 0:0,1:0]

For every claim of ``qrels/train.tsv``, bm25s (Lucene BM25, k1=1.2, b=0.75, English
stop words + Snowball stemmer, the same settings as RETRIEVAL's engine) retrieves the
top-10 documents (``title + " " + text``). The built-in model then gets those ten
passages as a ``choose_excerpts`` task through the real client path
(``client.reasoning.sample`` with the task's messages and JSON schema). Reported:

* **BM25 top-1** — share of claims whose first retrieved document is relevant (not choosing);
* **first excerpt** — share of claims whose first chosen excerpt comes from a relevant document;
* **any excerpt** — share where at least one chosen excerpt does;
* **none chosen** — share of claims answered with ``[]``.

Both columns see the same ten passages, so the comparison is about choosing, not
retrieving. ``--weights`` sweeps ``passageWeight:rankWeight`` pairs (model options) used to
tune :data:`~ditto.worker.infer.extractive.PASSAGE_WEIGHT` and
:data:`~ditto.worker.infer.extractive.RANK_WEIGHT` — on train only. The default row is the
built-in model as shipped.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from _scifact import iter_corpus, read_qrels, read_queries

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "scifact"


@dataclass(frozen=True)
class Claims:
    doc_ids: list[str]
    texts: list[str]
    claims: list[str]
    relevant: list[set[str]]


def load_claims(root: Path, split: str = "train") -> Claims:
    doc_ids: list[str] = []
    texts: list[str] = []
    for doc in iter_corpus(root):
        doc_ids.append(doc["_id"])
        texts.append(f"{doc['title']} {doc['text']}")
    qrels = read_qrels(root, split)
    queries = read_queries(root)
    ids = [query_id for query_id in qrels if query_id in queries]
    return Claims(doc_ids, texts, [queries[q] for q in ids], [qrels[q] for q in ids])


def top10(data: Claims) -> list[list[int]]:
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    model = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
    model.index(bm25s.tokenize(data.texts, stopwords="en", stemmer=stemmer, show_progress=False),
                show_progress=False)
    docs, _ = model.retrieve(bm25s.tokenize(data.claims, stopwords="en", stemmer=stemmer, show_progress=False),
                             k=10, show_progress=False, n_threads=0)
    rows: list[list[int]] = docs.tolist()
    return rows


async def choose(data: Claims, ranked: list[list[int]], weights: tuple[float, float] | None
                 ) -> tuple[list[list[str]], float]:
    from ditto.worker.infer import (
        ExcerptPassage,
        ExcerptTask,
        ModelConfig,
        create_infer_client,
        response_format,
        task_messages,
    )

    client = create_infer_client()
    model = ModelConfig(options={} if weights is None else {"passageWeight": weights[0], "rankWeight": weights[1]})
    chosen: list[list[str]] = []
    started = time.perf_counter()
    for claim, row in zip(data.claims, ranked, strict=True):
        task = ExcerptTask(question=claim, passages=tuple(
            ExcerptPassage(source_id=data.doc_ids[i], text=data.texts[i]) for i in row))
        result = await client.reasoning.sample(model=model, messages=task_messages(task),
                                               response_format=response_format(task))
        chosen.append([excerpt["sourceId"] for excerpt in result.parsed["excerpts"]])
    return chosen, time.perf_counter() - started


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--split", choices=("train", "test"), default="train",
                        help="claims to run (tune on train; test is a held-out check only)")
    parser.add_argument("--weights", default="", help="comma-separated passageWeight:rankWeight pairs to sweep")
    args = parser.parse_args(argv)
    data = load_claims(args.data, args.split)
    ranked = top10(data)
    count = len(data.claims)
    print(f"SciFact {args.split}: {count} claims, top-10 BM25 passages each", file=sys.stderr)
    bm25_top1 = sum(data.doc_ids[row[0]] in relevant for row, relevant in zip(ranked, data.relevant, strict=True))
    in_top10 = sum(any(data.doc_ids[i] in relevant for i in row) for row, relevant in
                   zip(ranked, data.relevant, strict=True))
    print(f"relevant document among the 10 passages: {in_top10 / count:.3f}")
    print("| chooser | first relevant | any relevant | none chosen | × BM25 top-1 | ms/claim |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    print(f"| BM25 top-1 (no choice) | {bm25_top1 / count:.3f} | — | — | 1.00 | — |")
    pairs: list[tuple[float, float] | None] = [None]
    for pair in args.weights.split(","):
        if pair.strip():
            passage, rank = pair.split(":")
            pairs.append((float(passage), float(rank)))
    for weights in pairs:
        chosen, elapsed = asyncio.run(choose(data, ranked, weights))
        first = sum(bool(ids) and ids[0] in relevant for ids, relevant in zip(chosen, data.relevant, strict=True))
        anyone = sum(any(i in relevant for i in ids) for ids, relevant in zip(chosen, data.relevant, strict=True))
        none = sum(not ids for ids in chosen)
        label = "builtin:extractive" + (" (as shipped)" if weights is None else
                                        f" (passageWeight={weights[0]:g}, rankWeight={weights[1]:g})")
        print(f"| {label} | {first / count:.3f} | {anyone / count:.3f} | {none / count:.3f} "
              f"| {first / max(bm25_top1, 1):.2f} | {elapsed / count * 1000:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
