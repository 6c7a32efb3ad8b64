"""The server half of the HTTP transport (RT-6): an ASGI app over a runtime.

Endpoints (JSON, camelCase):

* ``POST /v1/invoke`` ``{node, input, address?, executionId?, timeoutMs?}`` →
  a NodeResult. Only this runtime's *local* replicas serve it.
* ``GET /v1/workers`` → ``{"workers": [{address, type, capabilities, concurrency}]}``.
* ``GET /healthz`` → ``{"status": "ok"}`` while the process lives (no token; reveals nothing).
* ``GET /readyz`` → ``{"status": "ready"}``, or 503 ``{"status": "draining"}`` once a drain began, or
  503 ``{"status": "closed"}`` once the runtime began closing (no token): what a load balancer polls to
  stop sending calls.
* ``GET /metrics`` → Prometheus text (the metrics token if one is set, else the worker token).

Every other path needs exactly one ``Authorization: Bearer <token>`` header, compared in constant
time. Status codes: 401 ``UNAUTHORIZED`` (missing, wrong or repeated token; nothing runs), 413
``PAYLOAD_TOO_LARGE``, 408 ``REQUEST_TIMEOUT`` (the body did not arrive within ``body_timeout``),
400 ``INVALID_JSON`` (not standard JSON: also NaN/Infinity literals, invalid UTF-8, nesting that
exhausts the parser) or ``INVALID_REQUEST`` (the request's shape, ``timeoutMs`` outside
(0, 86,400,000]), 404 ``UNKNOWN_NODE``, 503 ``SERVICE_DRAINING`` (draining: the call did not run, send
it elsewhere) or ``RUNTIME_CLOSED``, 500 ``INTERNAL_ERROR`` (a bug in the server; the traceback is
logged, once per cause and minute). 408, 500 and 503 carry ``Connection: close``. A worker's own
failure is a 200 NodeResult.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import math
import time
from typing import Any

from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route

from .._log_limit import LogLimiter
from ..errors import OUTPUT_NOT_SERIALIZABLE, InvalidArgumentError, RoutingError
from ..runtime import NodeError, NodeResult, Runtime
from . import _tracing
from ._metrics import CONTENT_TYPE, ServiceMetrics
from .wire import NotJson, NotSerializable, dumps, dumps_wire, loads, wire_bytes

__all__ = ["DEFAULT_BODY_TIMEOUT", "DEFAULT_MAX_BODY_BYTES", "MAX_TIMEOUT_MS", "WorkerService",
           "create_worker_http_app"]

DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024
#: Seconds a request body may take to arrive in full (a client trickling it holds a connection).
DEFAULT_BODY_TIMEOUT = 30.0
#: The longest server deadline a call may ask for (24 hours, in milliseconds).
MAX_TIMEOUT_MS = 86_400_000
#: Bodies larger than this are parsed, and their answers serialised, in a thread: a megabyte of JSON
#: read on the event loop would stall every other connection, ``/healthz`` included.
OFF_LOOP_BYTES = 64 * 1024
#: Longest error message sent back: messages may quote the caller's text (a node name, a field path).
MAX_ERROR_MESSAGE = 1024
#: Longest node name written to the access log (it is the caller's text).
_MAX_LOGGED_NODE = 200

_log = logging.getLogger("ditto.transport.http")
_access = logging.getLogger("ditto.access")
_CLOSE = {"connection": "close"}


class WorkerService:
    """The serving state of one app: the calls in flight and the drain switch.

    ``app.state.service`` is this object. :meth:`start_draining` makes ``/readyz`` answer 503 and every
    new call ``SERVICE_DRAINING``; :meth:`drained` waits until the calls already accepted have answered.
    """

    def __init__(self) -> None:
        self.draining = False
        #: Calls accepted and not yet answered (also the metrics' in-flight gauge, read when scraped).
        self.inflight = 0
        self._idle = asyncio.Event()
        self._idle.set()

    def start_draining(self) -> None:
        self.draining = True

    async def drained(self, timeout: float | None = None) -> bool:
        """Whether every accepted call answered within ``timeout`` seconds (``None``: wait for them all)."""
        if self.inflight == 0:  # asyncio.wait_for(..., 0) times out even on a set event
            return True
        try:
            await asyncio.wait_for(self._idle.wait(), timeout)
        except TimeoutError:
            return False
        return True

    def _enter(self) -> None:
        self.inflight += 1
        self._idle.clear()

    def _leave(self) -> None:
        self.inflight -= 1
        if self.inflight == 0:
            self._idle.set()


def _json(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(dumps(body), status_code=status, media_type="application/json", headers=headers)


def _problem(status: int, code: str, message: str) -> Response:
    if len(message) > MAX_ERROR_MESSAGE:
        message = message[:MAX_ERROR_MESSAGE] + "…"
    return _json({"error": {"code": code, "message": message}}, status, _CLOSE if status in (408, 500, 503) else None)


class _BodyTooLarge(Exception):
    pass


async def _read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _BodyTooLarge
    chunks = bytearray()
    async for chunk in request.stream():
        chunks.extend(chunk)
        if len(chunks) > limit:
            raise _BodyTooLarge
    return bytes(chunks)


def _timeout_ms_problem(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        return "'timeoutMs' must be a positive number"
    if value > MAX_TIMEOUT_MS or (isinstance(value, float) and not math.isfinite(value)):
        return f"'timeoutMs' must be at most {MAX_TIMEOUT_MS} (24 hours)"
    return None


def create_worker_http_app(runtime: Runtime, *, token: str, max_body_bytes: int | None = None,
                           body_timeout: float = DEFAULT_BODY_TIMEOUT, metrics: bool = True,
                           metrics_token: str | None = None, tracing: bool = True,
                           tracer_provider: Any = None, trace_sample_ratio: float = 1.0) -> Starlette:
    """Serve ``runtime``'s local workers over HTTP, guarded by a bearer ``token``::

        runtime = create_ditto(workers=[create_context_worker()])
        app = create_worker_http_app(runtime, token=os.environ["TOKEN"])
        uvicorn.run(app, host="0.0.0.0", port=8080)

    ``metrics=False`` removes ``/metrics`` (and its bookkeeping); ``metrics_token`` guards it with a
    token of its own. ``tracing`` opens an OpenTelemetry span per call when ``opentelemetry-api`` is
    installed (``tracer_provider``: the SDK provider to use instead of the global one). A call that
    arrives without trace context starts a trace with probability ``trace_sample_ratio``, decided before
    the SDK is asked (its ``start_span`` costs tens of µs even for a span it then drops); a caller's
    ``traceparent`` decides for its calls: unsampled, and no span is opened.
    """
    if not isinstance(token, str) or not token:
        raise InvalidArgumentError("create_worker_http_app needs a non-empty token")
    if metrics_token is not None and (not isinstance(metrics_token, str) or not metrics_token):
        raise InvalidArgumentError("create_worker_http_app needs a non-empty metrics_token when one is given")
    if isinstance(body_timeout, bool) or not isinstance(body_timeout, (int, float)) or not 0 < body_timeout < 1e6:
        raise InvalidArgumentError("body_timeout must be a positive number of seconds")
    if isinstance(trace_sample_ratio, bool) or not isinstance(trace_sample_ratio, (int, float)) \
            or not 0.0 <= trace_sample_ratio <= 1.0:
        raise InvalidArgumentError("trace_sample_ratio must be a number from 0 to 1")
    ratio = float(trace_sample_ratio)
    limit = max_body_bytes or runtime.config.transport.http.max_body_bytes or DEFAULT_MAX_BODY_BYTES
    expected = f"Bearer {token}".encode()
    expected_metrics = f"Bearer {metrics_token}".encode() if metrics_token else expected
    service = WorkerService()
    counters = ServiceMetrics(lambda: service.inflight) if metrics else None
    failures = LogLimiter()
    tracer = _tracing.server_tracer(tracer_provider) if tracing else None
    explicit = tracer_provider is not None
    logged = _access.isEnabledFor  # read per call: the level may be changed at run time

    def authorised(request: Request, wanted: bytes = expected) -> bool:
        supplied = request.headers.getlist("authorization")
        if len(supplied) != 1:  # two headers: which one a proxy checked is anyone's guess
            return False
        return hmac.compare_digest(supplied[0].encode("latin-1", "replace"), wanted)

    def refuse(status: int, code: str, message: str, node: Any, started: float) -> Response:
        if counters is not None:
            counters.refused(code)
        if logged(logging.INFO):
            _log_access(node, status, "refused", code, started)
        return _problem(status, code, message)

    async def invoke(request: Request) -> Response:
        started = time.perf_counter()
        if not authorised(request):
            return refuse(401, "UNAUTHORIZED", "missing or invalid bearer token", None, started)
        if service.draining:
            return refuse(503, "SERVICE_DRAINING", "this replica is shutting down; send the call elsewhere",
                          None, started)
        service._enter()
        try:
            return await serve(request, started)
        except ClientDisconnect:
            return Response(status_code=400)  # nobody is left to read it
        except Exception as error:
            failures.exception(_log, "invoke", error, "serving a call failed")
            return refuse(500, "INTERNAL_ERROR", "the server failed to answer this call", None, started)
        finally:
            service._leave()

    async def serve(request: Request, started: float) -> Response:
        try:
            async with asyncio.timeout(body_timeout):
                raw = await _read_body(request, limit)
        except _BodyTooLarge:
            return refuse(413, "PAYLOAD_TOO_LARGE", f"request body exceeds {limit} bytes", None, started)
        except TimeoutError:
            return refuse(408, "REQUEST_TIMEOUT", f"the request body did not arrive within {body_timeout} s",
                          None, started)
        large = len(raw) > OFF_LOOP_BYTES
        try:
            body = await asyncio.to_thread(loads, raw) if large else loads(raw)
        except NotJson:
            return refuse(400, "INVALID_JSON", "request body is not valid JSON", None, started)
        if not isinstance(body, dict) or not isinstance(body.get("node"), str) or "input" not in body:
            return refuse(400, "INVALID_REQUEST", "expected an object with 'node' and 'input'", None, started)
        node: str = body["node"]
        address, execution_id, timeout_ms = body.get("address"), body.get("executionId"), body.get("timeoutMs")
        if address is not None and not isinstance(address, str):
            return refuse(400, "INVALID_REQUEST", "'address' must be a string", node, started)
        if execution_id is not None and not isinstance(execution_id, str):
            return refuse(400, "INVALID_REQUEST", "'executionId' must be a string", node, started)
        problem = _timeout_ms_problem(timeout_ms)
        if problem is not None:
            return refuse(400, "INVALID_REQUEST", problem, node, started)
        with _tracing.server_span(tracer, node, request.scope["headers"], explicit=explicit,
                                 ratio=ratio) as span:
            try:
                result = await runtime.invoke_local(
                    node, body["input"], address=address, execution_id=execution_id,
                    timeout=None if timeout_ms is None else timeout_ms / 1000)
            except RoutingError as error:
                status = 503 if error.code == "RUNTIME_CLOSED" else 404
                _tracing.set_span_result(span, "refused", error.code)
                return refuse(status, error.code, error.message, node, started)
            answer, outcome, code = await asyncio.to_thread(_result_to_wire, result) if large \
                else _result_to_wire(result)
            _tracing.set_span_result(span, outcome, code)
        if counters is not None:
            counters.served(node, outcome, code, time.perf_counter() - started)
        if logged(logging.INFO):
            _log_access(node, 200, outcome, code, started)
        return Response(answer, media_type="application/json")

    async def workers(request: Request) -> Response:
        if not authorised(request):
            return refuse(401, "UNAUTHORIZED", "missing or invalid bearer token", None, time.perf_counter())
        local = [info.to_wire() for info in runtime.workers() if info.location == "local"]
        return _json({"workers": local})

    async def health(_request: Request) -> Response:
        return _json({"status": "ok"})

    async def ready(_request: Request) -> Response:
        # Both are read per request: a runtime closed by its owner refuses every call (RUNTIME_CLOSED)
        # from the first moment of close(), drain or no drain, so it must not look ready for a moment longer.
        if service.draining:
            return _json({"status": "draining"}, 503)
        if runtime.closed:
            return _json({"status": "closed"}, 503)
        return _json({"status": "ready"})

    async def scrape(request: Request) -> Response:
        if not authorised(request, expected_metrics):
            return _problem(401, "UNAUTHORIZED", "missing or invalid bearer token")
        assert counters is not None
        return Response(counters.render(), media_type=CONTENT_TYPE)

    routes = [
        Route("/v1/invoke", invoke, methods=["POST"]),
        Route("/v1/workers", workers, methods=["GET"]),
        Route("/healthz", health, methods=["GET"]),
        Route("/readyz", ready, methods=["GET"]),
    ]
    if counters is not None:
        routes.append(Route("/metrics", scrape, methods=["GET"]))
    app = Starlette(routes=routes)
    app.state.service = service
    return app


def _log_access(node: Any, http: int, status: str, code: str | None, started: float) -> None:
    entry: dict[str, Any] = {"event": "call", "node": node[:_MAX_LOGGED_NODE] if isinstance(node, str) else None,
                             "http": http, "status": status, "ms": round((time.perf_counter() - started) * 1000, 3)}
    if code is not None:
        entry["code"] = code
    _access.info(entry)


def _result_to_wire(result: NodeResult[Any]) -> tuple[bytes, str, str | None]:
    """The result's JSON bytes (encoding proves it is sendable), its status and its error code.

    A success is the envelope's bytes with the output's spliced in: the output is checked and written in
    one pass (:func:`wire_bytes`), never turned into wire objects first and then walked again to write.
    """
    if result.error is not None and len(result.error.message) > MAX_ERROR_MESSAGE:
        result = NodeResult(result.execution_id, result.node, result.status, error=NodeError(
            result.error.code, result.error.message[:MAX_ERROR_MESSAGE] + "…"))
    if result.status == "success":
        try:
            head = dumps_wire({"executionId": result.execution_id, "node": result.node, "status": "success"})
            return head[:-1] + b',"output":' + wire_bytes(result.output) + b"}", "success", None
        except (NotSerializable, ValueError, TypeError, RecursionError):
            result = NodeResult(result.execution_id, result.node, "error", error=NodeError(
                OUTPUT_NOT_SERIALIZABLE, f"the output of {result.node} cannot be sent as JSON"))
    wire = result.to_wire()
    return dumps(wire), wire["status"], wire["error"]["code"] if "error" in wire else None
