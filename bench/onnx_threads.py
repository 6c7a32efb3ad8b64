"""CPU and wall time of one research task's reading batch (24 short sentences) on ONNX Runtime's one and two
intra-op threads: whether small batches should run on a one-thread session.

Usage::

    PYTHONPATH=src python bench/onnx_threads.py [--rounds 10] [--batches 20]

Both providers load the same graph (no vector cache); the rounds alternate, and each row is the median over
rounds of the mean per batch.
"""

from __future__ import annotations

import argparse
import statistics
import time

from ditto.retrieval import create_local_embedding_provider


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--batches", type=int, default=20)
    args = parser.parse_args()
    sentences = [f"Sentence {number} on the effect of vitamin D on bone density in older adults."
                 for number in range(24)]
    providers = {threads: create_local_embedding_provider(backend="onnx", threads=threads) for threads in (2, 1)}
    for provider in providers.values():
        provider.encode(sentences)
    measured: dict[int, list[tuple[float, float]]] = {threads: [] for threads in providers}
    for _ in range(args.rounds):
        for threads, provider in providers.items():
            cpu, wall = time.process_time(), time.perf_counter()
            for _ in range(args.batches):
                provider.encode(sentences)
            measured[threads].append(((time.process_time() - cpu) / args.batches * 1000,
                                      (time.perf_counter() - wall) / args.batches * 1000))
    print("| intra-op threads | CPU ms per batch | wall ms per batch |\n| --- | ---: | ---: |")
    for threads, rows in measured.items():
        print(f"| {threads} | {statistics.median(row[0] for row in rows):.1f} | "
              f"{statistics.median(row[1] for row in rows):.1f} |")


if __name__ == "__main__":
    main()
