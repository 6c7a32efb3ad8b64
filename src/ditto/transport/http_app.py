"""The server half of the HTTP transport (RT-6): an ASGI app over a runtime.

Endpoints (JSON, camelCase):

* ``POST /v1/invoke`` ``{node, input, address?, executionId?, timeoutMs?}`` →
  a NodeResult. Only this runtime's *local* replicas serve it.
* ``GET /v1/workers`` → ``{"workers": [{address, type, capabilities, concurrency}]}``.
* ``GET /healthz`` → ``{"status": "ok"}`` (no token; reveals nothing).

Every other path needs ``Authorization: Bearer <token>``, compared in
constant time. Status codes: 401 missing/wrong token (nothing runs), 413 body
over the cap, 400 malformed JSON or request shape, 404 unknown node or
address, 503 runtime closed. A worker's own failure is a 200 NodeResult.
"""

from __future__ import annotations

import hmac
import json
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..errors import OUTPUT_NOT_SERIALIZABLE, InvalidArgumentError, RoutingError
from ..runtime import NodeError, NodeResult, Runtime
from .wire import NotSerializable, dumps, to_wire_value

__all__ = ["DEFAULT_MAX_BODY_BYTES", "create_worker_http_app"]

DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024


def _json(body: Any, status: int = 200) -> Response:
    return Response(dumps(body), status_code=status, media_type="application/json")


def _problem(status: int, code: str, message: str) -> Response:
    return _json({"error": {"code": code, "message": message}}, status)


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


def create_worker_http_app(runtime: Runtime, *, token: str, max_body_bytes: int | None = None) -> Starlette:
    """Serve ``runtime``'s local workers over HTTP, guarded by a bearer ``token``::

        runtime = create_ditto(workers=[create_context_worker()])
        app = create_worker_http_app(runtime, token=os.environ["TOKEN"])
        uvicorn.run(app, host="0.0.0.0", port=8080)
    """
    if not isinstance(token, str) or not token:
        raise InvalidArgumentError("create_worker_http_app needs a non-empty token")
    limit = max_body_bytes or runtime.config.transport.http.max_body_bytes or DEFAULT_MAX_BODY_BYTES
    expected = f"Bearer {token}".encode()

    def authorised(request: Request) -> bool:
        supplied = request.headers.get("authorization", "").encode("latin-1", "replace")
        return hmac.compare_digest(supplied, expected)

    async def invoke(request: Request) -> Response:
        if not authorised(request):
            return _problem(401, "UNAUTHORIZED", "missing or invalid bearer token")
        try:
            raw = await _read_body(request, limit)
        except _BodyTooLarge:
            return _problem(413, "PAYLOAD_TOO_LARGE", f"request body exceeds {limit} bytes")
        try:
            body = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            return _problem(400, "INVALID_JSON", "request body is not valid JSON")
        if not isinstance(body, dict) or not isinstance(body.get("node"), str) or "input" not in body:
            return _problem(400, "INVALID_REQUEST", "expected an object with 'node' and 'input'")
        address, execution_id, timeout_ms = body.get("address"), body.get("executionId"), body.get("timeoutMs")
        if address is not None and not isinstance(address, str):
            return _problem(400, "INVALID_REQUEST", "'address' must be a string")
        if execution_id is not None and not isinstance(execution_id, str):
            return _problem(400, "INVALID_REQUEST", "'executionId' must be a string")
        if timeout_ms is not None and (isinstance(timeout_ms, bool) or not isinstance(timeout_ms, (int, float))
                                       or timeout_ms <= 0):
            return _problem(400, "INVALID_REQUEST", "'timeoutMs' must be a positive number")
        try:
            result = await runtime.invoke_local(
                body["node"], body["input"], address=address, execution_id=execution_id,
                timeout=None if timeout_ms is None else timeout_ms / 1000)
        except RoutingError as error:
            status = 503 if error.code == "RUNTIME_CLOSED" else 404
            return _problem(status, error.code, error.message)
        return _json(_result_to_wire(result))

    async def workers(request: Request) -> Response:
        if not authorised(request):
            return _problem(401, "UNAUTHORIZED", "missing or invalid bearer token")
        local = [info.to_wire() for info in runtime.workers() if info.location == "local"]
        return _json({"workers": local})

    async def health(_request: Request) -> Response:
        return _json({"status": "ok"})

    return Starlette(routes=[
        Route("/v1/invoke", invoke, methods=["POST"]),
        Route("/v1/workers", workers, methods=["GET"]),
        Route("/healthz", health, methods=["GET"]),
    ])


def _result_to_wire(result: NodeResult[Any]) -> dict[str, Any]:
    if result.status != "success":
        return result.to_wire()
    try:
        output = to_wire_value(result.output)
        dumps(output)
    except (NotSerializable, ValueError, TypeError):
        failed: NodeResult[Any] = NodeResult(result.execution_id, result.node, "error", error=NodeError(
            OUTPUT_NOT_SERIALIZABLE, f"the output of {result.node} cannot be sent as JSON"))
        return failed.to_wire()
    return result.to_wire(output)
