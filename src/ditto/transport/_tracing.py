"""OpenTelemetry for the HTTP transport, when ``opentelemetry-api`` is installed, and nothing when it is not.

The client calls :func:`inject` on its request headers, the server :func:`extract` on the request's and
opens one SERVER span per ``invoke`` (:func:`server_span`), so a call's trace crosses the process boundary
with W3C trace context (``traceparent``/``tracestate``). Without the package every function here is a
constant-time no-op: the import is tried once, at module load, and nothing else is imported.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

__all__ = ["ENABLED", "extract", "inject", "server_span", "set_span_result"]

try:
    from opentelemetry import propagate as _propagate
    from opentelemetry import trace as _trace
except ImportError:  # pragma: no cover - exercised where the package is absent
    _propagate = None  # type: ignore[assignment]
    _trace = None  # type: ignore[assignment]

#: Whether ``opentelemetry-api`` could be imported.
ENABLED = _trace is not None
_TRACER_NAME = "ditto.transport"
#: Longest node name recorded (the request's text).
_MAX_NODE = 200


def inject(headers: MutableMapping[str, str]) -> MutableMapping[str, str]:
    """Add the current trace context to ``headers`` (no-op without OpenTelemetry); returns ``headers``."""
    if _propagate is not None:
        _propagate.inject(headers)
    return headers


def extract(headers: Mapping[str, str]) -> Any:
    """The trace context carried by ``headers`` (``None`` without OpenTelemetry)."""
    if _propagate is None:
        return None
    return _propagate.extract(headers)


def server_span(node: str, headers: Mapping[str, str], tracer_provider: Any = None) -> AbstractContextManager[Any]:
    """A SERVER span ``ditto.invoke`` (attribute ``ditto.node``), child of the caller's span when its headers
    carry one. The node is an attribute, not part of the name, so a caller cannot mint span names."""
    if _trace is None:
        return nullcontext()
    return _span(node, headers, tracer_provider)


@contextmanager
def _span(node: str, headers: Mapping[str, str], tracer_provider: Any) -> Iterator[Any]:
    assert _trace is not None and _propagate is not None
    tracer = _trace.get_tracer(_TRACER_NAME, tracer_provider=tracer_provider)
    parent = _propagate.extract(headers) if "traceparent" in headers else None
    with tracer.start_as_current_span("ditto.invoke", context=parent, kind=_trace.SpanKind.SERVER,
                                      attributes={"ditto.node": node[:_MAX_NODE]}) as span:
        yield span


def set_span_result(span: Any, status: str, code: str | None) -> None:
    """Record a call's outcome on its span; a failed call marks the span as an error."""
    if span is None or _trace is None:
        return
    span.set_attribute("ditto.status", status)
    if code is not None:
        span.set_attribute("ditto.error_code", code)
        if status != "success":
            span.set_status(_trace.Status(_trace.StatusCode.ERROR, code))
