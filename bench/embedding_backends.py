"""The local embedding provider's two backends side by side: ONNX Runtime and sentence-transformers (torch).

Usage::

    python bench/embedding_backends.py [--data ../shared/datasets/scifact] [--rounds 3] [--threads 2]
                                       [--ndcg full|sample|skip]

* **Start-up**: a fresh ``python`` process imports the provider, builds it with ``backend=`` one or the
  other (the ONNX graph already exported; no vector cache) and embeds one query. CPU seconds (user +
  system, from the child's rusage, interpreter start included) and wall seconds; the backends take
  turns, ``--rounds`` each, the median kept. Each child also reports whether torch was imported.
* **Throughput**: 128 SciFact abstracts (``title + " " + text``), batch 32, no cache, the two providers
  in one process, timed in turns, best of ``--rounds``; their vectors are checked ``allclose`` (1e-4).
* **Dense nDCG@10 with the ONNX backend** on SciFact test (the published MiniLM score is 0.645):
  ``full`` encodes the 5,183 abstracts with the ONNX backend into its own cache
  (``.cache/embeddings-onnx``, git-ignored, so no vector from the torch backend can stand in), ``sample``
  only compares both backends' vectors on 512 abstracts.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from embeddings_scifact import PUBLISHED_NDCG, dense_rankings, load_split, mean_ndcg
from retrieval_beir import DEFAULT_DATA, interleaved_best

from ditto.retrieval.providers.local_embedding import create_local_embedding_provider

ROOT = Path(__file__).resolve().parents[1]
ONNX_CACHE = ROOT / ".cache" / "embeddings-onnx"

_CHILD = """
import asyncio, json, sys, time
start = time.perf_counter()
from ditto.retrieval.providers.local_embedding import create_local_embedding_provider
provider = create_local_embedding_provider(backend=sys.argv[1], threads=int(sys.argv[2]))
asyncio.run(provider.embed(["what causes the tides"]))
print(json.dumps({"backend": provider.backend, "in_process_s": time.perf_counter() - start,
                  "torch": "torch" in sys.modules}))
"""


def start_up(backend: str, threads: int) -> dict[str, Any]:
    """One fresh process: import + build + first query. CPU from the child's rusage (start included)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _CHILD, backend, str(threads)], capture_output=True, text=True,
                          check=True, env={**os.environ, "DITTO_EMBEDDING_CACHE_DIR": "off"})
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {**report, "cpu_s": cpu, "wall_s": wall, "stderr": done.stderr}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="both backends' thread count")
    parser.add_argument("--ndcg", choices=("full", "sample", "skip"), default="full")
    args = parser.parse_args(argv)
    split = load_split(args.data, "test")
    onnx = create_local_embedding_provider(backend="onnx", threads=args.threads)  # exports once if needed
    torch_provider = create_local_embedding_provider(backend="torch", threads=args.threads)

    runs: dict[str, list[dict[str, Any]]] = {"onnx": [], "torch": []}
    for _ in range(args.rounds):
        for backend in ("onnx", "torch"):
            runs[backend].append(start_up(backend, args.threads))
    print(f"threads {args.threads}; start-up median of {args.rounds}, fresh process each")
    print("| row | ONNX Runtime | sentence-transformers (torch) | ratio |")
    print("| --- | ---: | ---: | ---: |")
    for key, label in (("cpu_s", "start-up + first query, CPU s"), ("wall_s", "start-up + first query, wall s")):
        o, t = (statistics.median(run[key] for run in runs[name]) for name in ("onnx", "torch"))
        print(f"| {label} | {o:.2f} | {t:.2f} | {t / o:.1f}× less |")
    print(f"| torch imported by the child | {any(r['torch'] for r in runs['onnx'])} "
          f"| {all(r['torch'] for r in runs['torch'])} | |")
    noisy = [name for name, rs in runs.items() if any("Loading weights" in r["stderr"] for r in rs)]
    print(f"| children printing 'Loading weights' bars | {'onnx' in noisy} | {'torch' in noisy} | |")

    texts = split.texts[:128]
    (o_vectors, o_s), (t_vectors, t_s) = interleaved_best(args.rounds, [lambda: onnx.encode(texts),
                                                                        lambda: torch_provider.encode(texts)])
    difference = float(np.abs(o_vectors - t_vectors).max())
    print(f"| texts/s, 128 abstracts, batch 32 (best of {args.rounds}) | {len(texts) / o_s:.1f} "
          f"| {len(texts) / t_s:.1f} | ONNX {t_s / o_s:.2f}× torch |")
    print(f"| max abs difference of the 128 vectors | {difference:.1e} | | |")
    if difference > 1e-4:
        raise SystemExit("the backends' vectors differ")

    if args.ndcg == "sample":
        sample = split.texts[:512]
        worst = float(np.abs(onnx.encode(sample) - torch_provider.encode(sample)).max())
        print(f"| max abs difference, 512 abstracts | {worst:.1e} | | |")
    elif args.ndcg == "full":
        cached = create_local_embedding_provider(backend="onnx", threads=args.threads, cache_dir=ONNX_CACHE,
                                                 show_progress=True)
        start = time.perf_counter()
        ndcg = mean_ndcg(split, dense_rankings(cached, split))
        print(f"| dense nDCG@10, SciFact test, ONNX backend | {ndcg:.4f} | published {PUBLISHED_NDCG} | "
              f"{time.perf_counter() - start:.0f} s |")
        cached.close()
        if abs(ndcg - PUBLISHED_NDCG) > 0.01:
            return 1
    asyncio.run(onnx.aclose())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
