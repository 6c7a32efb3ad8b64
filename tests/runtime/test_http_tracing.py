"""OpenTelemetry spans for calls served over HTTP (issue 19, observability), with the real SDK."""

from __future__ import annotations

import httpx
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from ditto import create_ditto, create_worker_http_app
from ditto.transport import _tracing

from ..support.uvicorn_thread import serve_app
from .workers import make

TOKEN = "trace-token-0123456789"


async def test_each_invoke_is_a_server_span_continuing_the_callers_trace() -> None:
    """Issue 19: a call carrying W3C ``traceparent`` becomes a SERVER span ``ditto.invoke`` in the caller's trace
    (same trace id, the caller's span as parent) with the node and outcome as attributes; a failing node's span
    has status ERROR; ``inject`` writes the current span's context into headers."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test-client")
    server = create_ditto(workers=make())
    app = create_worker_http_app(server, token=TOKEN, tracer_provider=provider)
    async with serve_app(app) as url, httpx.AsyncClient(base_url=url) as client:
        with tracer.start_as_current_span("caller") as caller:
            headers = _tracing.inject({"authorization": f"Bearer {TOKEN}"})
            assert headers["traceparent"].split("-")[1] == format(caller.get_span_context().trace_id, "032x")
            ok = await client.post("/v1/invoke", json={"node": "TEST.ECHO", "input": 1}, headers=dict(headers))
            failed = await client.post("/v1/invoke", json={"node": "TEST.FAIL", "input": 1}, headers=dict(headers))
        assert ok.json()["output"] == 1 and failed.json()["status"] == "error"
        untraced = await client.post("/v1/invoke", json={"node": "TEST.ECHO", "input": 2},
                                     headers={"authorization": f"Bearer {TOKEN}"})
        assert untraced.json()["output"] == 2
    spans = [s for s in exporter.get_finished_spans() if s.name == "ditto.invoke"]
    assert len(spans) == 3
    echo, fail, root = spans
    for span in (echo, fail):
        assert span.kind is SpanKind.SERVER
        assert span.context.trace_id == caller.get_span_context().trace_id
        assert span.parent is not None and span.parent.span_id == caller.get_span_context().span_id
    assert echo.attributes == {"ditto.node": "TEST.ECHO", "ditto.status": "success"}
    assert fail.attributes is not None and fail.attributes["ditto.error_code"] == "HANDLER_ERROR"
    assert fail.status.status_code is StatusCode.ERROR
    assert root.parent is None and root.context.trace_id != caller.get_span_context().trace_id


def test_extract_reads_what_inject_wrote() -> None:
    """Issue 19: ``extract`` turns injected headers back into a context holding the same span."""
    from opentelemetry import trace

    provider = TracerProvider()
    with provider.get_tracer("t").start_as_current_span("s") as span:
        headers = _tracing.inject({})
    carried = trace.get_current_span(_tracing.extract(headers)).get_span_context()
    assert carried.trace_id == span.get_span_context().trace_id and carried.span_id == span.get_span_context().span_id
