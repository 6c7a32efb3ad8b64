"""The worker app's Prometheus metrics, kept as plain numbers and built at scrape time (issue 19, metrics cost).

The oracle is ``prometheus_client``'s own instruments, which the app used before: for any sequence of calls
the scraped samples must be the same, bucket boundaries included.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client import metrics as prometheus_metrics
from prometheus_client.parser import text_string_to_metric_families

from ditto.transport._metrics import _BUCKETS, ServiceMetrics


class _Reference:
    """The same metrics with prometheus_client's instruments, updated per call."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.calls = Counter("ditto_http_calls", "Node calls served, by node and NodeResult status",
                             ["node", "status"], registry=self.registry)
        self.errors = Counter("ditto_http_errors", "Node calls answered with an error, by error code", ["code"],
                              registry=self.registry)
        self.refused = Counter("ditto_http_refused", "Requests refused before a node ran, by code (UNAUTHORIZED, "
                               "INVALID_JSON, SERVICE_DRAINING, ...)", ["code"], registry=self.registry)
        self.seconds = Histogram("ditto_http_call_seconds", "Time from request to answer of a served call",
                                 ["node"], buckets=_BUCKETS, registry=self.registry)
        self.inflight = Gauge("ditto_http_inflight_calls", "Calls accepted and not yet answered",
                              registry=self.registry)

    def apply(self, op: tuple[Any, ...]) -> None:
        if op[0] == "served":
            _, node, status, code, seconds = op
            self.calls.labels(node, status).inc()
            self.seconds.labels(node).observe(seconds)
            if code is not None:
                self.errors.labels(code).inc()
        else:
            self.refused.labels(op[1]).inc()


def _samples(text: bytes) -> list[tuple[str, tuple[tuple[str, str], ...], float | None]]:
    """Every sample of a scrape, in order; ``_created`` values (clock readings) as ``None``."""
    return [(s.name, tuple(sorted(s.labels.items())), None if s.name.endswith("_created") else s.value)
            for family in text_string_to_metric_families(text.decode()) for s in family.samples]


_NODES = st.sampled_from(["A.ECHO", "B.SEARCH", "C.é"])
_SERVED = st.tuples(st.just("served"), _NODES, st.sampled_from(["success", "error", "timeout"]),
                    st.sampled_from([None, "HANDLER_ERROR", "TIMEOUT"]),
                    st.sampled_from(_BUCKETS) | st.floats(0, 120, allow_nan=False) | st.just(0.0))
_REFUSED = st.tuples(st.just("refused"), st.sampled_from(["UNAUTHORIZED", "INVALID_JSON", "UNKNOWN_NODE"]))


@given(ops=st.lists(_SERVED | _REFUSED, max_size=40), inflight=st.integers(0, 1000), created=st.booleans())
def test_scrape_matches_prometheus_client_instruments(ops: list[tuple[Any, ...]], inflight: int,
                                                      created: bool) -> None:
    """Issue 19 (metrics cost): counters, errors, refusals, histogram buckets (a value on a bound counts in
    that bucket), sums, counts, ``_created`` series (or none when prometheus_client's are disabled) and the
    in-flight gauge scrape exactly as prometheus_client's own instruments would."""
    if not created:
        prometheus_metrics.disable_created_metrics()
    try:
        reference, ours = _Reference(), ServiceMetrics(lambda: inflight)
        for op in ops:
            reference.apply(op)
            if op[0] == "served":
                ours.served(*op[1:])
            else:
                ours.refused(op[1])
        reference.inflight.set(inflight)
        assert _samples(ours.render()) == _samples(generate_latest(reference.registry))
    finally:
        prometheus_metrics.enable_created_metrics()


def test_the_inflight_gauge_is_read_when_scraped() -> None:
    """Issue 19 (metrics cost): the gauge is the service's own count at the moment of the scrape, not a copy."""
    count = [3]
    metrics = ServiceMetrics(lambda: count[0])
    assert ("ditto_http_inflight_calls", (), 3.0) in _samples(metrics.render())
    count[0] = 0
    assert ("ditto_http_inflight_calls", (), 0.0) in _samples(metrics.render())
