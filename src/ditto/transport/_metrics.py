"""Prometheus metrics of one worker HTTP app (``GET /metrics``).

Each app has its own registry, so two apps in one process (tests, or two services behind one server)
never share counters. Labels are bounded: ``node`` is only ever a node the runtime served (an unknown
node's name is the caller's text and is counted under its refusal code instead), ``code`` is one of the
documented codes.

A call updates plain Python numbers, and the Prometheus families are built only when ``/metrics`` is
scraped (:class:`_Collector`). ``prometheus_client``'s own instruments take a lock per update and walk
the bucket list in Python: the five updates of one call cost 2–3 µs, several percent of a no-op call
served at 10,000 calls/s, to guard against threads the app does not have (every update, and the scrape,
runs on the app's event loop). The in-flight gauge is read from the service's own count at scrape time
instead of being kept twice.
"""

from __future__ import annotations

import time
from bisect import bisect_left
from collections.abc import Callable, Hashable, Iterator
from typing import TypeVar, cast

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client import metrics as _prometheus_metrics
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.samples import Sample
from prometheus_client.utils import floatToGoString

__all__ = ["CONTENT_TYPE", "ServiceMetrics"]

CONTENT_TYPE = CONTENT_TYPE_LATEST
#: Latency buckets in seconds: sub-millisecond no-op nodes up to minute-long INFER calls.
_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
#: The buckets' ``le`` labels, written as prometheus_client writes them (its helper is untyped).
_BUCKET_NAMES = (*map(cast(Callable[[float], str], floatToGoString), _BUCKETS), "+Inf")
_K = TypeVar("_K", bound=Hashable)


class _Count:
    """One counter child: its value and when it was created (Prometheus's ``_created`` sample)."""

    __slots__ = ("created", "value")

    def __init__(self) -> None:
        self.value = 0
        self.created = time.time()


class _Histogram:
    """One histogram child: per-bucket (not yet cumulative) counts, the last one ``+Inf``, and the sum."""

    __slots__ = ("counts", "created", "total")

    def __init__(self) -> None:
        self.counts = [0] * (len(_BUCKETS) + 1)
        self.total = 0.0
        self.created = time.time()


class _Served:
    """What one (node, status) updates per call: its counter and its node's histogram, found in one lookup."""

    __slots__ = ("calls", "seconds")

    def __init__(self, calls: _Count, seconds: _Histogram) -> None:
        self.calls = calls
        self.seconds = seconds


class ServiceMetrics:
    """Counters, the in-flight gauge and per-node latency histograms for one app.

    ``inflight`` answers the number of calls accepted and not yet answered (the service keeps it).
    """

    def __init__(self, inflight: Callable[[], int]) -> None:
        self._inflight = inflight
        self._calls: dict[tuple[str, str], _Count] = {}
        self._seconds: dict[str, _Histogram] = {}
        self._served: dict[tuple[str, str], _Served] = {}
        self._errors: dict[str, _Count] = {}
        self._refused: dict[str, _Count] = {}
        self.registry = CollectorRegistry(auto_describe=True)
        self.registry.register(_Collector(self))

    def served(self, node: str, status: str, code: str | None, seconds: float) -> None:
        """A call the runtime answered with a NodeResult (``node`` is one it serves)."""
        served = self._served.get((node, status))
        if served is None:
            served = self._add_served(node, status)
        served.calls.value += 1
        histogram = served.seconds
        histogram.counts[bisect_left(_BUCKETS, seconds)] += 1  # the first bound >= seconds: Prometheus's "le"
        histogram.total += seconds
        if code is not None:
            _count(self._errors, code).value += 1

    def refused(self, code: str) -> None:
        """A request answered with a refusal (4xx/5xx) before or instead of running a node."""
        _count(self._refused, code).value += 1

    def render(self) -> bytes:
        return generate_latest(self.registry)

    def _add_served(self, node: str, status: str) -> _Served:
        histogram = self._seconds.get(node)
        if histogram is None:
            histogram = self._seconds[node] = _Histogram()
        served = self._served[node, status] = _Served(_count(self._calls, (node, status)), histogram)
        return served

    def _families(self) -> Iterator[Metric]:
        # Snapshots of the dicts (one C call each): a scrape from another thread never sees one change size.
        created = _prometheus_metrics._use_created  # what prometheus_client's own instruments would do
        calls = CounterMetricFamily("ditto_http_calls", "Node calls served, by node and NodeResult status",
                                    labels=["node", "status"])
        for (node, status), count in tuple(self._calls.items()):
            calls.add_metric([node, status], count.value, count.created if created else None)
        yield calls
        for name, doc, counts in (
                ("ditto_http_errors", "Node calls answered with an error, by error code", self._errors),
                ("ditto_http_refused", "Requests refused before a node ran, by code (UNAUTHORIZED, "
                                       "INVALID_JSON, SERVICE_DRAINING, ...)", self._refused)):
            family = CounterMetricFamily(name, doc, labels=["code"])
            for code, count in tuple(counts.items()):
                family.add_metric([code], count.value, count.created if created else None)
            yield family
        seconds = HistogramMetricFamily("ditto_http_call_seconds", "Time from request to answer of a served call",
                                        labels=["node"])
        for node, histogram in tuple(self._seconds.items()):
            cumulative, running = [], 0
            for bucket, in_bucket in zip(_BUCKET_NAMES, tuple(histogram.counts), strict=True):
                running += in_bucket
                cumulative.append((bucket, float(running)))
            seconds.add_metric([node], cumulative, histogram.total)
            if created:
                seconds.samples.append(Sample("ditto_http_call_seconds_created", {"node": node}, histogram.created))
        yield seconds
        yield GaugeMetricFamily("ditto_http_inflight_calls", "Calls accepted and not yet answered",
                                value=self._inflight())


def _count(counts: dict[_K, _Count], key: _K) -> _Count:
    count = counts.get(key)
    if count is None:
        count = counts[key] = _Count()
    return count


class _Collector:
    """The registry's view of a :class:`ServiceMetrics`: its families, built at scrape time."""

    def __init__(self, metrics: ServiceMetrics) -> None:
        self._metrics = metrics

    def collect(self) -> Iterator[Metric]:
        return self._metrics._families()
