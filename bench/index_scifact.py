"""The persistent index on BEIR SciFact: indexing, BM25 and dense queries, research tasks over an index.

Usage::

    PYTHONPATH=src python bench/index_scifact.py [--data ../shared/datasets/scifact] [--embed] [--tasks 6]

Rows, each against its peer in the same run (one process, single-threaded searches):

1. **Indexing** — ``update_index`` of the BEIR folder (what ``ditto index DIR`` does: read, hash and store
   every record in SQLite, BM25 arrays saved) against bm25s tokenising and indexing the same texts directly.
2. **BM25 queries** — the 300 test queries through the index provider (``provider.search``, limit 10,
   candidates built from the engine's copy of the passages) against tantivy with the same stop words and
   stemmer (built once), timed in turns over ``5 × --repeats`` rounds, best of each; nDCG@10.
3. **Dense** (``--dense``; with ``--embed`` the local embedding model, otherwise random unit vectors of
   the same dimension, which time the vector table but say nothing of quality) — sqlite-vec's exact scan
   (``search_vectors``) against a numpy brute force over the same vectors, the query vectors computed once
   beforehand; nDCG@10 of both, and (``--embed``) of the provider's ``vector`` and ``hybrid`` strategies.
4. **Research** — the 5,183 abstracts as one text file each; ``document-search`` tasks (built-in model) over
   ``--documents`` (the folder cache) and over a prepared ``--index``: CPU seconds (process time, all
   threads) of the first task and the mean of the later ones.
5. **Claims** (``--claims N``) — N claims as research tasks over a prepared index: the share whose brief cites
   a relevant abstract, whose snapshots hold one, whose answer opens with one, and CPU per task (process
   time, all threads, the mean after the first; run with ``DITTO_EMBEDDING_CACHE_DIR=$(mktemp -d)`` for a
   cold embedding cache, as a new question over new passages has).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _scifact import iter_corpus
from retrieval_beir import DEFAULT_DATA, interleaved_best, load_dataset, mean_ndcg, tantivy_runner


def _indexing(data_root: Path, base: Path, repeats: int) -> dict[str, float]:
    import bm25s
    import Stemmer

    from ditto.retrieval.index import update_index_sync

    data = load_dataset(data_root)
    stemmer = Stemmer.Stemmer("english")
    ours, peer = [], []
    for attempt in range(repeats):
        started = time.perf_counter()
        tokens = bm25s.tokenize(data.texts, stopwords="en", stemmer=stemmer, show_progress=False)
        bm25s.BM25(method="lucene", k1=1.2, b=0.75).index(tokens, show_progress=False)
        peer.append(time.perf_counter() - started)
        started = time.perf_counter()
        update_index_sync(base / f"bm25-{attempt}", [data_root])
        ours.append(time.perf_counter() - started)
    return {"ours": min(ours), "bm25s": min(peer)}


def _bm25_queries(index_dir: Path, data: Any, rounds: int) -> dict[str, float]:
    """Our index provider and tantivy on the 300 test queries, timed in turns (tantivy, ours, tantivy, ...)
    over ``rounds`` rounds, best of each: a burst of load from other processes hits both."""
    from ditto.retrieval import RetrievalSearchInput
    from ditto.retrieval.index import create_index_search_provider, open_index

    tantivy, _ = tantivy_runner(data)
    with open_index(index_dir) as index:
        provider = create_index_search_provider(index)
        inputs = [RetrievalSearchInput.model_validate({"query": {"content": q}, "target": {"name": "scifact"},
                                                       "strategy": "bm25", "limit": 10}) for q in data.queries]

        async def rank() -> list[list[str]]:
            rankings = []
            for request in inputs:
                output = await provider.search(request)
                rankings.append([c.id for c in output.candidates])
            return rankings

        loop = asyncio.new_event_loop()
        try:
            [(peer, peer_s), (ours, ours_s)] = interleaved_best(rounds, [tantivy, lambda: loop.run_until_complete(
                rank())])
        finally:
            loop.close()
    count = len(inputs)
    return {"ndcg": mean_ndcg(data, ours, data.query_ids), "qps": count / ours_s,
            "tantivy_ndcg": mean_ndcg(data, peer, data.query_ids), "tantivy_qps": count / peer_s}


class _RandomEmbedder:
    """Unit vectors drawn from a seed per text (384 dimensions, MiniLM's): for timing the vector table only."""

    model_id = "random-384"
    dimensions = 384

    async def embed(self, contents: list[Any], context: Any = None) -> list[list[float]]:
        import hashlib

        import numpy as np

        out = []
        for content in contents:
            seed = int.from_bytes(hashlib.sha256(str(content).encode()).digest()[:8], "little")
            vector = np.random.default_rng(seed).standard_normal(self.dimensions)
            out.append((vector / np.linalg.norm(vector)).tolist())
        return out


async def _dense(data_root: Path, base: Path, data: Any, real: bool) -> dict[str, Any]:
    import numpy as np

    from ditto.retrieval.index import create_index_search_provider, open_index, update_index
    from ditto.retrieval.index.embedding import local_embedding

    embedding: Any = local_embedding() if real else _RandomEmbedder()
    started = time.perf_counter()
    await update_index(base / "dense", [data_root], embedding=embedding)
    build_s = time.perf_counter() - started
    queries = np.asarray(await embedding.embed(list(data.queries)), dtype=np.float32)
    with open_index(base / "dense") as index:
        rows = index._connection.execute("SELECT p.id, v.embedding FROM vectors v JOIN passages p "
                                         "ON p.rowid = v.rowid").fetchall()
        ids = [row[0] for row in rows]
        matrix = np.vstack([np.frombuffer(row[1], dtype=np.float32) for row in rows])
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)

        def search_vectors() -> list[list[str]]:
            return [[i for i, _ in index.search_vectors(q.tolist(), limit=10)] for q in queries]

        def sqlite_vec() -> list[list[str]]:
            return [[i for i, _ in index.scan_vectors(q.tolist(), limit=10)] for q in queries]

        def numpy_brute() -> list[list[str]]:
            out = []
            for q in queries:
                scores = matrix @ (q / np.linalg.norm(q))
                top = np.argpartition(-scores, 10)[:10]
                out.append([ids[i] for i in top[np.argsort(-scores[top])]])
            return out

        timings: dict[str, float] = {"index": float("inf"), "sqlite-vec": float("inf"), "numpy": float("inf")}
        rankings: dict[str, list[list[str]]] = {}
        for _ in range(3):
            for name, function in (("index", search_vectors), ("sqlite-vec", sqlite_vec), ("numpy", numpy_brute)):
                started = time.perf_counter()
                rankings[name] = function()
                timings[name] = min(timings[name], time.perf_counter() - started)
        provider = create_index_search_provider(index, embedding=embedding)
        strategies: dict[str, Any] = {"vector": None, "hybrid": None}
        for strategy in ("vector", "hybrid") if real else ():
            ranked = []
            for text in data.queries:
                output = await provider.search({"query": {"content": text}, "target": {"name": "s"}, "limit": 10,
                                                "strategy": strategy})
                ranked.append([c.id for c in output.candidates])
            strategies[strategy] = mean_ndcg(data, ranked, data.query_ids)
    count = len(data.queries)
    return {"model": getattr(embedding, "model_id", "?"), "build_s": build_s,
            "sqlite_vec_qps": count / timings["sqlite-vec"], "numpy_qps": count / timings["numpy"],
            "index_qps": count / timings["index"], "index_ndcg": mean_ndcg(data, rankings["index"], data.query_ids),
            "sqlite_vec_ndcg": mean_ndcg(data, rankings["sqlite-vec"], data.query_ids),
            "numpy_ndcg": mean_ndcg(data, rankings["numpy"], data.query_ids), **strategies}


async def _research(data_root: Path, base: Path, tasks: int) -> dict[str, Any]:
    import os

    from ditto.retrieval.index import update_index
    from ditto.workflows.research import run_research

    folder = base / "abstracts"
    folder.mkdir()
    claims = []
    for document in iter_corpus(data_root):
        (folder / f"{document['_id']}.txt").write_text(f"{document['title']}\n\n{document['text']}\n",
                                                       encoding="utf-8")
    with (data_root / "queries.jsonl").open(encoding="utf-8") as handle:
        claims = [json.loads(line)["text"] for line in handle][:tasks]
    os.environ["DITTO_INDEX_CACHE_DIR"] = str(base / "cache")
    os.environ["DITTO_RESEARCH_EMBED"] = "0"  # BM25: the row the issue measured (5.7 s per task)
    results: dict[str, Any] = {}
    await update_index(base / "prepared", [folder])
    for label, fields in (("--documents (folder cache)", {"documents": [str(folder)]}),
                          ("--index (prepared)", {"index": str(base / "prepared")})):
        seconds = []
        for number, claim in enumerate(claims):
            started = time.process_time()
            _, result = await run_research("document-search", {"question": claim, "tenant": f"t{number}",
                                                               **fields}, base_dir=base / "tasks", env={})
            seconds.append(time.process_time() - started)
            assert result.status in ("completed", "no-evidence"), (result.status, result.error)
        results[label] = {"first": seconds[0], "later": statistics.fmean(seconds[1:]) if len(seconds) > 1 else None}
    return results


def _cited(brief_path: str) -> tuple[set[str], set[str]]:
    """The abstract ids a brief cites (its document evidence is ``file:///…/<id>.txt``), and those its answer's
    first sentence cites."""
    brief = json.loads(Path(brief_path).read_text(encoding="utf-8"))
    uris = {item["id"]: Path(item["uri"]).stem for item in brief["evidence"] if item["sourceType"] == "document"}
    sentences = (brief.get("answer") or {}).get("sentences") or []
    first = {uris[key] for key in sentences[0]["evidence"] if key in uris} if sentences else set()
    return set(uris.values()), first


async def _claims(data_root: Path, base: Path, claims: int, embed: bool, split: str = "test",
                  work: Path | None = None, model: str | None = None) -> dict[str, Any]:
    """``split`` claims as ``document-search`` tasks over a prepared index of the abstracts (one file each): the
    share whose brief cites an abstract ``qrels/<split>.tsv`` marks relevant, and the share for which one was
    among the files shown to the model (their snapshots: the ceiling of the excerpt choice). ``model``: the
    index's embedding model (default the library's, all-MiniLM-L6-v2).

    ``work`` keeps the abstracts folder and the index between runs (``update_index`` is incremental: a
    later run only ``stat``s the files), so tuning runs do not rebuild them."""
    import hashlib
    import os

    from ditto.retrieval.evaluation import read_beir_qrels, read_beir_queries
    from ditto.retrieval.index import update_index
    from ditto.retrieval.index.embedding import local_embedding
    from ditto.workflows.research import run_research

    home = work if work is not None else base
    folder = home / "claims-abstracts"
    folder.mkdir(parents=True, exist_ok=True)
    by_digest: dict[str, str] = {}
    for document in iter_corpus(data_root):
        raw = f"{document['title']}\n\n{document['text']}\n".encode()
        path = folder / f"{document['_id']}.txt"
        if not path.exists() or path.read_bytes() != raw:
            path.write_bytes(raw)
        by_digest[hashlib.sha256(raw).hexdigest()] = document["_id"]
    os.environ["DITTO_RESEARCH_EMBED"] = "1" if embed else "0"
    index_dir = home / ("claims-index" if not embed else "claims-index-embed" if model is None
                        else f"claims-index-{model.replace('/', '-')}")
    started = time.perf_counter()
    await update_index(index_dir, [folder], embedding=local_embedding(model) if embed else None)
    build_s = time.perf_counter() - started
    qrels = read_beir_qrels(data_root, split)
    queries = read_beir_queries(data_root)
    selected = [(query_id, queries[query_id]) for query_id in qrels if query_id in queries][:claims]
    hits = no_evidence = shown = answers = 0
    cpu: list[float] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ditto-bench-claims-") as tasks:
        for number, (query_id, text) in enumerate(selected):
            cpu_started = time.process_time()
            task, result = await run_research("document-search", {"question": text, "tenant": f"c{number}",
                                                                        "index": str(index_dir)},
                                                   base_dir=Path(tasks), env={})
            cpu.append(time.process_time() - cpu_started)
            if result.status == "no-evidence":
                no_evidence += 1
            if result.brief:
                cited, first = _cited(result.brief)
                hits += bool(cited & qrels[query_id])
                answers += bool(first & qrels[query_id])
            snapshots = Path(task.directory) / "snapshots"
            seen = {by_digest.get(entry.name) for entry in snapshots.iterdir()} if snapshots.is_dir() else set()
            shown += bool(seen & qrels[query_id])
    count = len(selected)
    return {"claims": count, "hit_rate": hits / count, "no_evidence": no_evidence / count, "shown": shown / count,
            "answer": answers / count,
            "s_per_task": (time.perf_counter() - started) / count, "build_s": build_s,
            "cpu_per_task": statistics.fmean(cpu[1:]) if len(cpu) > 1 else float("nan"),
            "mode": (f"hybrid ({model})" if model else "hybrid") if embed else "BM25", "split": split}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA if DEFAULT_DATA.exists()
                        else Path("/work/shared/datasets/scifact"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tasks", type=int, default=6)
    parser.add_argument("--embed", action="store_true", help="the local model for the dense and claims rows")
    parser.add_argument("--dense", action="store_true", help="the dense rows (random vectors without --embed: "
                                                             "timing only)")
    parser.add_argument("--skip-research", action="store_true")
    parser.add_argument("--claims", type=int, default=0, help="also N test claims as research tasks (hit rate)")
    parser.add_argument("--only-claims", action="store_true", help="run only the claims row")
    parser.add_argument("--split", choices=("test", "train"), default="test",
                        help="the qrels the claims row takes its claims from (tune on train, report test)")
    parser.add_argument("--work", type=Path, default=None,
                        help="keep the claims row's abstracts and index in this folder between runs")
    parser.add_argument("--model", default=None,
                        help="the claims row's embedding model with --embed (default all-MiniLM-L6-v2; "
                             "e.g. multilingual-e5-small)")
    args = parser.parse_args()
    data = load_dataset(args.data)
    with tempfile.TemporaryDirectory(prefix="ditto-bench-index-") as folder:
        base = Path(folder)
        if args.claims:
            row = asyncio.run(_claims(args.data, base, args.claims, args.embed, args.split, args.work, args.model))
            print(f"| research document-search, SciFact {row['split']} claims, {row['mode']} over a prepared "
                  "index | cites a relevant abstract | a relevant abstract shown | the answer opens with one | "
                  "no-evidence | s per task | CPU s per task after the first |\n"
                  "| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
            print(f"| {row['claims']} claims (index built in {row['build_s']:.0f} s) | {row['hit_rate']:.3f} | "
                  f"{row['shown']:.3f} | {row['answer']:.3f} | {row['no_evidence']:.3f} | {row['s_per_task']:.2f} | "
                  f"{row['cpu_per_task']:.3f} |")
            if args.only_claims:
                return
        indexing = _indexing(args.data, base, args.repeats)
        print("| indexing SciFact (5,183 documents), BM25 only | s | ratio |\n| --- | ---: | ---: |")
        print(f"| bm25s tokenize + index | {indexing['bm25s']:.2f} | 1.00 |")
        print(f"| ditto update_index (ditto index DIR) | {indexing['ours']:.2f} | "
              f"{indexing['ours'] / indexing['bm25s']:.2f} |")
        bm25 = _bm25_queries(base / "bm25-0", data, max(args.repeats, 1) * 5)
        print("\n| BM25, 300 test queries | nDCG@10 | q/s | ratio |\n| --- | ---: | ---: | ---: |")
        print(f"| tantivy | {bm25['tantivy_ndcg']:.4f} | {bm25['tantivy_qps']:.0f} | 1.00 |")
        print(f"| ditto index provider (bm25) | {bm25['ndcg']:.4f} | {bm25['qps']:.0f} | "
              f"{bm25['qps'] / bm25['tantivy_qps']:.2f} |")
        if args.dense:
            dense = asyncio.run(_dense(args.data, base, data, args.embed))
            print(f"\n| dense ({dense['model']}), 300 test queries | nDCG@10 | q/s | ratio |\n"
                  "| --- | ---: | ---: | ---: |")
            print(f"| numpy brute force | {dense['numpy_ndcg']:.4f} | {dense['numpy_qps']:.0f} | 1.00 |")
            print(f"| index search_vectors (matrix read from the vec0 table) | {dense['index_ndcg']:.4f} | "
                  f"{dense['index_qps']:.0f} | {dense['index_qps'] / dense['numpy_qps']:.2f} |")
            print(f"| sqlite-vec vec0 scan (scan_vectors) | {dense['sqlite_vec_ndcg']:.4f} | "
                  f"{dense['sqlite_vec_qps']:.0f} | {dense['sqlite_vec_qps'] / dense['numpy_qps']:.2f} |")
            if args.embed:
                print(f"| provider vector / hybrid (TEXT_VECTOR_TUNING) | {dense['vector']:.4f} / "
                      f"{dense['hybrid']:.4f} | | |")
            print(f"(index with vectors built in {dense['build_s']:.0f} s)")
        if not args.skip_research:
            research = asyncio.run(_research(args.data, base, args.tasks))
            print("\n| research document-search over the 5,183 abstracts | CPU s, first task | "
                  "CPU s per later task |\n| --- | ---: | ---: |")
            for label, row in research.items():
                later = f"{row['later']:.3f}" if row["later"] is not None else "-"
                print(f"| {label} | {row['first']:.2f} | {later} |")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
