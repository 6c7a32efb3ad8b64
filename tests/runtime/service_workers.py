"""Workers for the ``ditto serve`` operations tests (drain, metrics), loadable by ``--worker``."""

from __future__ import annotations

import asyncio
from typing import Any

from ditto.runtime import WorkerDefinition


async def hold(input: Any) -> dict[str, Any]:
    """Sleep ``input["ms"]`` milliseconds and answer the call's ``n``: a call that is in flight for a while."""
    await asyncio.sleep(float(input["ms"]) / 1000)
    return {"n": input["n"]}


async def boom(_input: Any) -> Any:
    raise RuntimeError("the node failed")


def make() -> list[WorkerDefinition]:
    return [WorkerDefinition("OPS", {"OPS.HOLD": hold, "OPS.BOOM": boom}, concurrency=512)]


def memory() -> list[WorkerDefinition]:
    """A MEMORY worker over SQLite at ``$DITTO_TEST_MEMORY_PATH``."""
    import os

    from ditto.worker.memory import create_memory_worker, create_sqlite_memory_store

    return [create_memory_worker(store=create_sqlite_memory_store(os.environ["DITTO_TEST_MEMORY_PATH"]))]


def traced() -> list[WorkerDefinition]:
    """:func:`make` in a process whose global OpenTelemetry provider writes each finished span as a JSON line
    to ``$DITTO_TEST_SPANS`` (how an operator's SDK setup, e.g. ``opentelemetry-instrument``, looks to us)."""
    import json
    import os
    from collections.abc import Sequence

    from opentelemetry import trace
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

    path = os.environ["DITTO_TEST_SPANS"]

    class _Lines(SpanExporter):
        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            with open(path, "a", encoding="utf-8") as out:
                for span in spans:
                    assert span.context is not None
                    out.write(json.dumps({
                        "name": span.name, "trace": format(span.context.trace_id, "032x"),
                        "parent": format(span.parent.span_id, "016x") if span.parent else None,
                        "attributes": dict(span.attributes or {})}) + "\n")
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(_Lines()))
    trace.set_tracer_provider(provider)
    return make()
