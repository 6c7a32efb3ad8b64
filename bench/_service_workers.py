"""Workers for `bench/http_hostile.py` (`ditto serve --worker bench._service_workers:<factory>`)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ditto import WorkerDefinition

SCIFACT = Path(os.environ.get("BENCH_SCIFACT", Path(__file__).resolve().parents[2] / "shared" / "datasets"
                              / "scifact"))


async def noop(input: Any) -> Any:
    return input


async def fail(input: Any) -> Any:
    raise RuntimeError(f"the node failed on {str(input)[:40]}")


def make() -> list[WorkerDefinition]:
    """BENCH.NOOP (echo) and BENCH.FAIL (raises: a traceback for the log limiter)."""
    return [WorkerDefinition("BENCH", {"BENCH.NOOP": noop, "BENCH.FAIL": fail}, concurrency=1024)]


def _install_sdk(sampler: Any = None) -> None:
    from opentelemetry import trace
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

    class _Drop(SpanExporter):
        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    provider = TracerProvider(sampler=sampler) if sampler is not None else TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(_Drop()))
    trace.set_tracer_provider(provider)


def traced() -> list[WorkerDefinition]:
    """:func:`make` with an OpenTelemetry SDK recording every span, batched and handed to an exporter that
    drops them (the cost of recording and exporting, without a collector to talk to)."""
    _install_sdk()
    return make()


def traced_sampled() -> list[WorkerDefinition]:
    """:func:`traced` keeping 1 trace in 100 (parent-based: a caller's sampled trace is always kept)."""
    from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased

    _install_sdk(ParentBased(TraceIdRatioBased(0.01)))
    return make()


def scifact_registry() -> tuple[Any, Any]:
    """The BM25 text provider over SciFact's 5,183 abstracts (matrix built) and the one-target registry serving it."""
    import json

    from ditto.retrieval import RetrievalTargetRegistry
    from ditto.retrieval.providers.text import create_text_search_provider

    with (SCIFACT / "corpus.jsonl").open(encoding="utf-8") as handle:
        documents = [{"id": doc["_id"], "content": f"{doc['title']} {doc['text']}"} for doc in map(json.loads, handle)]
    provider = create_text_search_provider(documents, {"k1": 1.2, "b": 0.75})
    provider.index.refresh()
    return provider, RetrievalTargetRegistry({"scifact": {"default_strategy": "bm25", "providers": {"bm25": provider}}})


def scifact() -> list[WorkerDefinition]:
    """A RETRIEVAL worker over SciFact's 5,183 abstracts with the BM25 text provider."""
    from ditto.retrieval import create_retrieval_worker

    _, registry = scifact_registry()
    return [create_retrieval_worker(providers=registry, concurrency=1024), *make()]
