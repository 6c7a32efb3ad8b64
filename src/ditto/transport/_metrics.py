"""Prometheus metrics of one worker HTTP app (``GET /metrics``).

Each app has its own registry, so two apps in one process (tests, or two services behind one server)
never share counters. Labels are bounded: ``node`` is only ever a node the runtime served (an unknown
node's name is the caller's text and is counted under its refusal code instead), ``code`` is one of the
documented codes. Children are cached per label value: a call costs a dict lookup and three updates.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

__all__ = ["CONTENT_TYPE", "ServiceMetrics"]

CONTENT_TYPE = CONTENT_TYPE_LATEST
#: Latency buckets in seconds: sub-millisecond no-op nodes up to minute-long INFER calls.
_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


class ServiceMetrics:
    """Counters, the in-flight gauge and per-node latency histograms for one app."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self._calls = Counter("ditto_http_calls", "Node calls served, by node and NodeResult status",
                              ["node", "status"], registry=self.registry)
        self._errors = Counter("ditto_http_errors", "Node calls answered with an error, by error code",
                               ["code"], registry=self.registry)
        self._refused = Counter("ditto_http_refused", "Requests refused before a node ran, by code "
                                "(UNAUTHORIZED, INVALID_JSON, SERVICE_DRAINING, ...)", ["code"],
                                registry=self.registry)
        self._seconds = Histogram("ditto_http_call_seconds", "Time from request to answer of a served call",
                                  ["node"], buckets=_BUCKETS, registry=self.registry)
        self.inflight = Gauge("ditto_http_inflight_calls", "Calls accepted and not yet answered",
                              registry=self.registry)
        self._served: dict[tuple[str, str], tuple[Counter, Histogram]] = {}
        self._by_code: dict[str, Counter] = {}
        self._refused_by_code: dict[str, Counter] = {}

    def served(self, node: str, status: str, code: str | None, seconds: float) -> None:
        """A call the runtime answered with a NodeResult (``node`` is one it serves)."""
        key = (node, status)
        children = self._served.get(key)
        if children is None:
            children = self._served[key] = (self._calls.labels(node, status), self._seconds.labels(node))
        children[0].inc()
        children[1].observe(seconds)
        if code is not None:
            counter = self._by_code.get(code)
            if counter is None:
                counter = self._by_code[code] = self._errors.labels(code)
            counter.inc()

    def refused(self, code: str) -> None:
        """A request answered with a refusal (4xx/5xx) before or instead of running a node."""
        counter = self._refused_by_code.get(code)
        if counter is None:
            counter = self._refused_by_code[code] = self._refused.labels(code)
        counter.inc()

    def render(self) -> bytes:
        return generate_latest(self.registry)
