"""Where a RETRIEVAL.SEARCH call's time goes, piece by piece, in-process (issue 19, SciFact BM25 row).

Run: PYTHONPATH=src .venv/bin/python bench/search_cost.py [--batches 9] [--queries 200] [--profile]

`bench/http_hostile.py --scenarios search` compares RETRIEVAL.SEARCH with BENCH.NOOP over HTTP, where the
load generator shares the two cores and reads the 16 kB answers too. Here each piece of the server's
work is timed on its own over the same SciFact test queries (the worker `bench/_service_workers.py`
serves): the Starlette app driven over ASGI (no socket), the runtime's local invoke, the search core,
input validation, the provider, the BM25 index (query analysis, scoring, top-k), output validation and
writing the answer. Each row is the mean per query of one batch over all queries; the table shows the
best and the median batch, which other load on the box moves much less than calls/s. The peer is
bm25s's own ``get_scores`` and ``retrieve`` over an index bm25s builds from the very term ids ours
holds, given the query's term ids (its tokenisation left out, ours counted in "index.search").
``--profile`` prints a cProfile of the app serving the queries instead.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "bench-token-0123456789abcdef"
NOOP = b'{"node":"BENCH.NOOP","input":{"query":"agent memory","limit":5}}'
Row = tuple[float, float]  # best, median µs per query


def _time(call: Callable[[int], Any], queries: int, batches: int) -> Row:
    means = []
    for _ in range(batches + 1):  # the first batch warms up and is dropped
        started = time.perf_counter_ns()
        for q in range(queries):
            call(q)
        means.append((time.perf_counter_ns() - started) / queries / 1000)
    return min(means[1:]), statistics.median(means[1:])


def _time_async(call: Callable[[int], Awaitable[Any]], queries: int, batches: int) -> Row:
    async def run() -> Row:
        means = []
        for _ in range(batches + 1):
            started = time.perf_counter_ns()
            for q in range(queries):
                await call(q)
            means.append((time.perf_counter_ns() - started) / queries / 1000)
        return min(means[1:]), statistics.median(means[1:])

    return asyncio.run(run())


def _asgi(app: Any) -> Callable[[bytes], Awaitable[None]]:
    """One POST /v1/invoke through the app, its status checked."""
    from _asgi import invoker

    return invoker(app, TOKEN)


def _peer(index: Any, term_ids: list[list[int]]) -> Any:
    """bm25s's own index (Lucene, same k1 and b) over the term ids our index stores, document for document."""
    import bm25s
    from bm25s.tokenization import Tokenized

    snapshot = index._current()  # the bench reads the index's internals: the same documents, the same ids
    vocabulary = {str(term_id): term_id for term_id in range(snapshot.n_terms)}
    model = bm25s.BM25(k1=index.k1, b=index.b, method="lucene")
    model.index(Tokenized(ids=[index._tokens[d.id] for d in snapshot.documents], vocab=vocabulary),
                create_empty_token=False, show_progress=False)
    return model


def main(batches: int, queries_wanted: int, profile: bool) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    import _service_workers as workers  # type: ignore[import-not-found]
    from http_hostile import _scifact_bodies  # type: ignore[import-not-found]

    from ditto import create_ditto, create_worker_http_app
    from ditto.retrieval import create_retrieval_worker
    from ditto.retrieval.config import coerce_defaults
    from ditto.retrieval.sdk import _prefill, execute_search, provider_context
    from ditto.retrieval.validation import parse_search_input, validate_search_output
    from ditto.transport.http_app import _result_to_wire

    bodies = [body.encode() for body in _scifact_bodies(queries_wanted)]
    inputs = [json.loads(body)["input"] for body in bodies]
    texts = [item["query"]["content"] for item in inputs]
    provider, registry = workers.scifact_registry()
    runtime = create_ditto(workers=[create_retrieval_worker(providers=registry, concurrency=1024), *workers.make()])
    app = _asgi(create_worker_http_app(runtime, token=TOKEN))
    if profile:
        import cProfile
        import pstats

        profiler = cProfile.Profile()

        async def serve_all() -> None:
            for body in bodies * 3:
                await app(body)

        profiler.enable()
        asyncio.run(serve_all())
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(30)
        return
    index = provider.index
    snapshot = index._current()
    context = provider_context(coerce_defaults(None))
    requests = [parse_search_input(_prefill(item, registry, context.defaults)) for item in inputs]
    outputs = [asyncio.run(provider.search(request, context)) for request in requests]
    results = [asyncio.run(runtime.invoke_local("RETRIEVAL.SEARCH", item)) for item in inputs]
    term_ids = [index._query_term_ids(index.analyzer.analyze(text), snapshot.n_terms, "any") for text in texts]
    peer = _peer(index, term_ids)
    n = len(inputs)
    rows: dict[str, Row] = {
        "app (ASGI), BENCH.NOOP": _time_async(lambda q: app(NOOP), n, batches),
        "app (ASGI), RETRIEVAL.SEARCH": _time_async(lambda q: app(bodies[q]), n, batches),
        "runtime.invoke_local, BENCH.NOOP": _time_async(
            lambda q: runtime.invoke_local("BENCH.NOOP", {"query": "agent memory", "limit": 5}), n, batches),
        "runtime.invoke_local, RETRIEVAL.SEARCH": _time_async(
            lambda q: runtime.invoke_local("RETRIEVAL.SEARCH", inputs[q]), n, batches),
        "execute_search (validation, provider, output check)": _time_async(
            lambda q: execute_search(registry, inputs[q], context), n, batches),
        "  input validation (prefill + parse_search_input)": _time(
            lambda q: parse_search_input(_prefill(inputs[q], registry, context.defaults)), n, batches),
        "  provider.search (index.search + candidates)": _time_async(
            lambda q: provider.search(requests[q], context), n, batches),
        "    index.search (analysis + BM25 + top-k)": _time(lambda q: index.search(texts[q], limit=10), n, batches),
        "      query analysis": _time(lambda q: index.analyzer.analyze(texts[q]), n, batches),
        "      analysis + BM25 scores (every document)": _time(
            lambda q: index._scores(snapshot, texts[q], "any", ()), n, batches),
        "  validate_search_output": _time(
            lambda q: validate_search_output(outputs[q], requests[q], limit=10, strategy="bm25"), n, batches),
        "answer bytes (_result_to_wire: envelope + wire_bytes)": _time(
            lambda q: _result_to_wire(results[q]), n, batches),
        "peer: bm25s get_scores (term ids given)": _time(lambda q: peer.get_scores(term_ids[q]), n, batches),
        "peer: bm25s retrieve k=10 (term ids given)": _time(
            lambda q: peer.retrieve([term_ids[q]], k=10, show_progress=False, n_threads=0), n, batches),
    }
    print(f"{n} SciFact test queries, {batches} batches; load average {os.getloadavg()[0]:.2f} at the end")
    print("| piece, per call | best µs | median µs |")
    print("| --- | ---: | ---: |")
    for name, (fastest, middle) in rows.items():
        print(f"| {name} | {fastest:.1f} | {middle:.1f} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batches", type=int, default=9)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--profile", action="store_true")
    options = parser.parse_args()
    main(options.batches, options.queries, options.profile)
