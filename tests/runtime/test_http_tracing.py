"""OpenTelemetry spans for calls served over HTTP (issue 19, observability), with the real SDK."""

from __future__ import annotations

import asyncio
import json
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from ditto import InvalidArgumentError, WorkerDefinition, create_ditto, create_worker_http_app
from ditto.transport import _tracing

from ..support.ditto_serve import ditto_serve
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


async def test_ditto_serve_with_a_global_sdk_continues_the_callers_trace(tmp_path: Path) -> None:
    """Issue 19: in a `ditto serve` process whose global provider is an SDK (set up by the worker module, as
    `opentelemetry-instrument` would), a call carrying ``traceparent`` is a ``ditto.invoke`` span of that
    trace, child of the caller's span, across the process boundary."""
    spans = tmp_path / "spans.jsonl"
    trace_id, parent_id = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
    with ditto_serve(["tests.runtime.service_workers:traced"], TOKEN, env={"DITTO_TEST_SPANS": str(spans)}) \
            as (url, _process):
        async with httpx.AsyncClient(base_url=url) as client:
            answer = await client.post("/v1/invoke", json={"node": "OPS.HOLD", "input": {"ms": 0, "n": 3}},
                                       headers={"authorization": f"Bearer {TOKEN}",
                                                "traceparent": f"00-{trace_id}-{parent_id}-01"})
            assert answer.json()["output"] == {"n": 3}
    (span,) = [json.loads(line) for line in spans.read_text().splitlines()]
    assert (span["name"], span["trace"], span["parent"]) == ("ditto.invoke", trace_id, parent_id)
    assert span["attributes"] == {"ditto.node": "OPS.HOLD", "ditto.status": "success"}


async def test_the_client_carries_the_callers_trace_to_the_server() -> None:
    """Issue 19 (tracing, client side): a call made through ``HttpTransport`` inside a caller's span sends W3C
    trace context, so the server's ``ditto.invoke`` span joins the caller's trace; a call outside any span
    sends none and starts a trace of its own."""
    from ditto.transport import create_http_transport

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test-client")
    server = create_ditto(workers=make())
    app = create_worker_http_app(server, token=TOKEN, tracer_provider=provider)
    async with serve_app(app) as url, create_http_transport(id="traced", url=url, token=TOKEN) as transport:
        address = next(w["address"] for w in await transport.workers() if "TEST.ECHO" in w["capabilities"])
        with tracer.start_as_current_span("caller") as caller:
            inside = await transport.invoke(address, "TEST.ECHO", 1, execution_id="x-1", timeout=10)
        outside = await transport.invoke(address, "TEST.ECHO", 2, execution_id="x-2", timeout=10)
    assert inside.output == 1 and outside.output == 2
    traced, untraced = [s for s in exporter.get_finished_spans() if s.name == "ditto.invoke"]
    assert traced.context.trace_id == caller.get_span_context().trace_id
    assert traced.parent is not None and traced.parent.span_id == caller.get_span_context().span_id
    assert untraced.parent is None and untraced.context.trace_id != caller.get_span_context().trace_id


def _traced_app(exporter: InMemorySpanExporter, **options: Any) -> Any:
    """An app over TEST.ECHO and TRACE.SEEN (answers the trace context its handler runs in), recording every
    span its provider is offered: ALWAYS_ON ignores the parent's decision, so a span the app opened for an
    unsampled caller would show up here."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace.sampling import ALWAYS_ON

    async def seen(_input: Any) -> Any:
        context = trace.get_current_span().get_span_context()
        return {"valid": context.is_valid, "trace": format(context.trace_id, "032x"),
                "sampled": context.trace_flags.sampled, "outgoing": _tracing.outgoing_headers()}

    provider = TracerProvider(sampler=ALWAYS_ON)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    server = create_ditto(workers=[*make(), WorkerDefinition("TRACE", {"TRACE.SEEN": seen})])
    return create_worker_http_app(server, token=TOKEN, tracer_provider=provider, **options)


async def test_an_unsampled_caller_gets_no_span_but_its_context_is_carried_on() -> None:
    """Issue 19 (tracing cost): a caller's ``traceparent`` with the sampled flag 0 opens no SDK span (not even
    under a sampler that would record it), yet the handler runs in the caller's trace context, so the calls it
    makes carry the same trace, still unsampled. A sampled ``traceparent`` still gets its child span."""
    exporter = InMemorySpanExporter()
    trace_id, parent_id = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
    auth = {"authorization": f"Bearer {TOKEN}"}
    async with serve_app(_traced_app(exporter)) as url, httpx.AsyncClient(base_url=url, headers=auth) as client:
        unsampled = await client.post("/v1/invoke", json={"node": "TRACE.SEEN", "input": None},
                                      headers={"traceparent": f"00-{trace_id}-{parent_id}-00"})
        assert [s for s in exporter.get_finished_spans() if s.name == "ditto.invoke"] == []
        sampled = await client.post("/v1/invoke", json={"node": "TRACE.SEEN", "input": None},
                                    headers={"traceparent": f"00-{trace_id}-{parent_id}-01"})
    inside = unsampled.json()["output"]
    assert inside["valid"] and inside["trace"] == trace_id and inside["sampled"] is False
    assert inside["outgoing"]["traceparent"] == f"00-{trace_id}-{parent_id}-00"
    (span,) = [s for s in exporter.get_finished_spans() if s.name == "ditto.invoke"]
    assert format(span.context.trace_id, "032x") == trace_id and span.parent is not None
    assert format(span.parent.span_id, "016x") == parent_id
    child = sampled.json()["output"]
    assert child["sampled"] is True and child["outgoing"]["traceparent"].split("-")[2] == format(
        span.context.span_id, "016x")


async def test_calls_without_trace_context_start_a_trace_at_the_sample_ratio() -> None:
    """Issue 19 (tracing cost): ``trace_sample_ratio`` decides, before the SDK is asked, whether a call without
    trace context starts a trace: 0 → none of 40 calls, 0.5 → about half of 400 (binomial, far from the
    tails), and a caller's sampled ``traceparent`` is honoured whatever the ratio."""
    auth = {"authorization": f"Bearer {TOKEN}"}
    for ratio, calls, low, high in ((0.0, 40, 0, 0), (0.5, 400, 140, 260), (1.0, 40, 40, 40)):
        exporter = InMemorySpanExporter()
        app = _traced_app(exporter, trace_sample_ratio=ratio)
        async with serve_app(app) as url, httpx.AsyncClient(base_url=url, headers=auth) as client:
            for n in range(calls):
                answer = await client.post("/v1/invoke", json={"node": "TEST.ECHO", "input": n})
                assert answer.json()["output"] == n
            roots = [s for s in exporter.get_finished_spans() if s.name == "ditto.invoke"]
            assert low <= len(roots) <= high, (ratio, len(roots))
            assert all(s.parent is None for s in roots)
            await client.post("/v1/invoke", json={"node": "TEST.ECHO", "input": 0}, headers={
                "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"})
        kept = [s for s in exporter.get_finished_spans() if s.name == "ditto.invoke"]
        assert len(kept) == len(roots) + 1 and kept[-1].parent is not None


@pytest.mark.parametrize("ratio", [-0.1, 1.5, float("nan"), float("inf"), True, "0.5", None])
def test_trace_sample_ratio_outside_0_to_1_is_refused(ratio: Any) -> None:
    """Issue 19 (input bounds): a sample ratio that is not a number from 0 to 1 is INVALID_ARGUMENT at
    construction, never a silent 'trace nothing' or 'trace everything'."""
    with pytest.raises(InvalidArgumentError):
        create_worker_http_app(create_ditto(workers=make()), token=TOKEN, trace_sample_ratio=ratio)


@given(st.text(max_size=80) | st.from_regex(r"\A[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-zA-Z]{2}\Z"))
def test_sampled_flag_reads_any_header_without_raising(header: str) -> None:
    """Issue 19 (hostile input): any ``traceparent`` text gives True, False or None (malformed), never an
    exception; for well-formed headers the answer is the low bit of the flags."""
    flag = _tracing._sampled_flag(header)
    parts = header.split("-")
    if flag is not None:
        assert int(parts[3], 16) & 1 == int(flag)


@given(trace_id=st.integers(0, 2**128 - 1), span_id=st.integers(0, 2**64 - 1), flags=st.integers(0, 255),
       upper=st.booleans(), state=st.sampled_from([None, "vendor=abc"]))
def test_the_callers_context_is_what_the_propagator_extracts(trace_id: int, span_id: int, flags: int, upper: bool,
                                                             state: str | None) -> None:
    """Issue 19 (tracing cost): the context built directly from a canonical ``traceparent`` is the one
    ``propagate.extract`` gives (ids, flags, remote, validity), and anything else (upper-case hex, all-zero ids,
    a ``tracestate``) goes through the propagator."""
    from opentelemetry import trace

    header = f"00-{trace_id:032x}-{span_id:016x}-{flags:02x}"
    headers = {"traceparent": header.upper() if upper else header}
    if state is not None:
        headers["tracestate"] = state
    ours = trace.get_current_span(_tracing._caller_context(headers)).get_span_context()
    theirs = trace.get_current_span(_tracing.extract(headers)).get_span_context()
    assert (ours.trace_id, ours.span_id, ours.trace_flags, ours.is_remote, ours.is_valid, ours.trace_state) == \
        (theirs.trace_id, theirs.span_id, theirs.trace_flags, theirs.is_remote, theirs.is_valid, theirs.trace_state)


async def test_ditto_serve_trace_sample_ratio_zero_traces_only_sampled_callers(tmp_path: Path) -> None:
    """Issue 19 (tracing cost): `ditto serve --trace-sample-ratio 0` under a global SDK opens no span for calls
    without trace context, and still one, in the caller's trace, for a call whose ``traceparent`` is sampled."""
    spans = tmp_path / "spans.jsonl"
    trace_id, parent_id = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
    with ditto_serve(["tests.runtime.service_workers:traced"], TOKEN, env={"DITTO_TEST_SPANS": str(spans)},
                     args=["--trace-sample-ratio", "0"]) as (url, _process):
        async with httpx.AsyncClient(base_url=url, headers={"authorization": f"Bearer {TOKEN}"}) as client:
            for n in range(20):
                answer = await client.post("/v1/invoke", json={"node": "OPS.HOLD", "input": {"ms": 0, "n": n}})
                assert answer.json()["output"] == {"n": n}
            assert not spans.exists() or spans.read_text() == ""
            await client.post("/v1/invoke", json={"node": "OPS.HOLD", "input": {"ms": 0, "n": 99}},
                              headers={"traceparent": f"00-{trace_id}-{parent_id}-01"})
    (span,) = [json.loads(line) for line in spans.read_text().splitlines()]
    assert (span["trace"], span["parent"]) == (trace_id, parent_id)


_CLIENT_SPANS = '''
import asyncio, json
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from ditto import create_ditto, create_worker_http_app
from ditto.transport import create_http_transport
from tests.runtime.workers import make
from tests.support.uvicorn_thread import serve_app

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)

async def main():
    app = create_worker_http_app(create_ditto(workers=make()), token="t" * 24)
    async with serve_app(app) as url, create_http_transport(id="c", url=url, token="t" * 24) as transport:
        address = next(w["address"] for w in await transport.workers() if "TEST.ECHO" in w["capabilities"])
        with trace.get_tracer("app").start_as_current_span("caller"):
            await transport.invoke(address, "TEST.ECHO", 1, execution_id="x-1", timeout=10)
        await transport.invoke(address, "TEST.ECHO", 2, execution_id="x-2", timeout=10)
    print(json.dumps([{"name": s.name, "kind": s.kind.name, "id": s.context.span_id, "trace": s.context.trace_id,
                       "parent": s.parent.span_id if s.parent else None, "attributes": dict(s.attributes or {})}
                      for s in exporter.get_finished_spans()]))

asyncio.run(main())
'''


def test_a_call_inside_a_recording_span_is_a_client_span_parent_of_the_server_span() -> None:
    """Issue 19 (tracing, client and server spans): with a global SDK, a call made inside a recording span
    opens a CLIENT ``ditto.invoke`` span, child of the caller's, and the server's SERVER span is its child; a
    call outside any span opens no client span (the server starts its own trace)."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", _CLIENT_SPANS], cwd=root, capture_output=True, text=True,
                          timeout=120, env={"PYTHONPATH": f"{root / 'src'}:{root}", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-2000:]
    spans = json.loads(done.stdout.strip().splitlines()[-1])
    caller = next(s for s in spans if s["name"] == "caller")
    client = [s for s in spans if s["kind"] == "CLIENT"]
    servers = [s for s in spans if s["kind"] == "SERVER"]
    assert len(client) == 1 and len(servers) == 2
    assert client[0]["parent"] == caller["id"] and client[0]["trace"] == caller["trace"]
    assert client[0]["attributes"] == {"ditto.node": "TEST.ECHO", "ditto.status": "success"}
    inside = next(s for s in servers if s["trace"] == caller["trace"])
    outside = next(s for s in servers if s["trace"] != caller["trace"])
    assert inside["parent"] == client[0]["id"] and outside["parent"] is None


@pytest.mark.parametrize("raised", [None, ValueError("bad input"), asyncio.CancelledError()])
def test_a_server_span_ends_like_start_as_current_span(raised: BaseException | None) -> None:
    """Issue 19 (tracing cost): the SERVER span, now started with ``start_span`` and made current by our own
    context manager, is current inside the block, restores the caller's context after it, and ends as the SDK's
    ``start_as_current_span`` would: an ``Exception`` leaving the block is recorded (event and ERROR status)
    and raised on, a ``BaseException`` such as cancellation only ends the span."""
    from opentelemetry import context, trace

    def run(block: Any) -> Any:
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        before = context.get_current()
        with pytest.raises(type(raised)) if raised is not None else nullcontext(), block(provider) as span:
            assert trace.get_current_span() is span and span.is_recording()
            if raised is not None:
                raise raised
        assert context.get_current() is before
        (finished,) = exporter.get_finished_spans()
        return (finished.name, finished.kind, finished.status.status_code, finished.status.description,
                [(e.name, {k: v for k, v in (e.attributes or {}).items() if k != "exception.stacktrace"})
                 for e in finished.events], finished.end_time is not None)

    ours = run(lambda provider: _tracing.server_span(_tracing.server_tracer(provider), "TEST.ECHO", [],
                                                     explicit=True))
    theirs = run(lambda provider: provider.get_tracer("t").start_as_current_span(
        "ditto.invoke", kind=SpanKind.SERVER, attributes={"ditto.node": "TEST.ECHO"}))
    assert ours == theirs


def test_an_unsampled_callers_context_holds_only_its_span() -> None:
    """Issue 19 (tracing cost): the context made current for an unsampled caller is what the propagator would
    extract from its headers: the caller's span and nothing of the context that happened to be current."""
    from opentelemetry import baggage, context, trace

    headers = {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"}
    token = context.attach(baggage.set_baggage("leftover", "x"))
    try:
        ours, theirs = _tracing._caller_context(headers), _tracing.extract(headers)
    finally:
        context.detach(token)
    assert dict(ours).keys() == dict(theirs).keys() and baggage.get_all(ours) == baggage.get_all(theirs) == {}
    assert trace.get_current_span(ours).get_span_context() == trace.get_current_span(theirs).get_span_context()


_HEADER_VALUES = (st.from_regex(r"\A00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]\Z")
                  | st.just("00-" + "0" * 32 + "-" + "1" * 16 + "-01")
                  | st.from_regex(r"\A[0-9A-F]{2}-[0-9a-fA-F]{32}-[0-9a-f]{16}-[0-9a-f]{2}\Z")
                  | st.text(max_size=60) | st.just("vendor=abc,other=1") | st.just("k=v"))


@given(headers=st.lists(st.tuples(st.sampled_from(["traceparent", "tracestate", "baggage", "host", "x-other"]),
                                  _HEADER_VALUES), max_size=6))
def test_the_trace_headers_read_once_give_what_the_propagator_gives(headers: list[tuple[str, str]]) -> None:
    """Issue 19 (tracing cost, hostile input): reading the trace headers in one pass over the raw ASGI headers
    (repeated, malformed, upper-case or all-zero values included) gives the caller's context the propagator
    extracts from Starlette's headers (ids, flags, remote, trace state, baggage), and never raises."""
    from opentelemetry import baggage, trace
    from starlette.datastructures import Headers

    raw = [(name.encode(), value.encode("latin-1", "replace")) for name, value in headers]
    carrier = _tracing._carrier(raw)
    traceparent = carrier.get("traceparent")
    sampled, ours = (None, None) if traceparent is None else _tracing._read_caller(traceparent, carrier)
    if sampled is None:
        return  # no usable trace context: the call starts a trace of its own
    theirs = _tracing.extract(Headers(raw=raw))
    mine, expected = trace.get_current_span(ours).get_span_context(), trace.get_current_span(theirs).get_span_context()
    assert (mine.trace_id, mine.span_id, mine.trace_flags, mine.is_remote, mine.is_valid, mine.trace_state) == \
        (expected.trace_id, expected.span_id, expected.trace_flags, expected.is_remote, expected.is_valid,
         expected.trace_state)
    assert baggage.get_all(ours) == baggage.get_all(theirs)
    if mine.is_valid:
        assert sampled is mine.trace_flags.sampled


def test_headers_of_a_propagator_set_by_the_application_reach_it() -> None:
    """Issue 19 (tracing cost): the one-pass read keeps the headers of whatever propagator the application made
    global (here one reading ``x-request-trace``), not only W3C's."""
    from opentelemetry import propagate
    from opentelemetry.propagators.composite import CompositePropagator
    from opentelemetry.propagators.textmap import TextMapPropagator

    seen: list[Any] = []

    class Custom(TextMapPropagator):
        def extract(self, carrier: Any, context: Any = None, getter: Any = None) -> Any:
            seen.append(getter.get(carrier, "X-Request-Trace"))
            return context

        def inject(self, carrier: Any, context: Any = None, setter: Any = None) -> None:
            return None

        @property
        def fields(self) -> set[str]:
            return {"X-Request-Trace"}

    before = propagate.get_global_textmap()
    propagate.set_global_textmap(CompositePropagator([before, Custom()]))
    try:
        raw = [(b"traceparent", b"00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01"),
               (b"x-request-trace", b"r-1"), (b"x-other", b"no")]
        carrier = _tracing._carrier(raw)
        assert carrier == {"traceparent": raw[0][1].decode(), "x-request-trace": "r-1"}
        _tracing._read_caller(carrier["traceparent"], carrier)  # upper-case hex: not canonical, the propagator reads it
        assert seen == [["r-1"]]
    finally:
        propagate.set_global_textmap(before)
