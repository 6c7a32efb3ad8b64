"""The client half of the HTTP transport (RT-6), built on httpx.

One transport per service URL; a runtime may register several replica
addresses behind it. The transport owns its ``httpx.AsyncClient`` and closes
it in :meth:`HttpTransport.aclose` (the runtime never closes transports it was
given). A client-side timeout or cancellation stops *waiting*; the server may
still finish the call.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any
from urllib.parse import urlsplit

import httpx

from ..errors import TIMEOUT, InvalidArgumentError, RoutingError, TransportError
from ..runtime import NodeError, NodeResult
from ..signal import CancelledBySignal, CancelSignal, await_with_signal
from .wire import NotSerializable, dumps, to_wire_value

__all__ = ["HttpTransport", "create_http_transport"]


def _is_same_host(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host in {"localhost", socket.gethostname()}:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class HttpTransport:
    """Sends node calls to a ``create_worker_http_app`` server."""

    def __init__(self, *, id: str, url: str, token: str, connect_timeout: float = 5.0,
                 client: httpx.AsyncClient | None = None) -> None:
        if not id or not url or not token:
            raise InvalidArgumentError("create_http_transport needs id, url and token")
        self.id = id
        self.url = url.rstrip("/")
        self._same_host = _is_same_host(self.url)
        self._owns_client = client is None
        self._client = client or httpx.AsyncClient(
            base_url=self.url,
            timeout=httpx.Timeout(None, connect=connect_timeout),
            limits=httpx.Limits(max_connections=256, max_keepalive_connections=64),
        )
        self._headers = {"authorization": f"Bearer {token}", "content-type": "application/json"}

    @property
    def same_host(self) -> bool:
        return self._same_host

    async def invoke(self, address: str, node: str, input: Any, *, execution_id: str,
                     timeout: float | None = None, signal: CancelSignal | None = None) -> NodeResult[Any]:
        try:
            payload: dict[str, Any] = {"node": node, "input": to_wire_value(input), "address": address,
                                       "executionId": execution_id}
        except NotSerializable as exc:
            raise TransportError("TRANSPORT_INVALID_INPUT", f"input of {node} cannot be sent as JSON: {exc}") \
                from None
        # The timeout is not sent: a client timeout stops waiting only (seed 000), the
        # server finishes the call. Callers that want a server deadline send timeoutMs.
        per_call = httpx.Timeout(timeout, connect=timeout) if timeout else httpx.USE_CLIENT_DEFAULT
        request = self._client.post("/v1/invoke", content=dumps(payload), headers=self._headers, timeout=per_call)
        try:
            response = await await_with_signal(request, signal)
        except CancelledBySignal as stop:
            return NodeResult(execution_id, node, stop.status, error=NodeError(stop.code, stop.message))
        except httpx.TimeoutException as exc:
            if timeout is not None and not isinstance(exc, httpx.ConnectTimeout):
                return NodeResult(execution_id, node, "timeout",
                                  error=NodeError(TIMEOUT, f"no answer from {self.id} within {timeout} s"))
            raise TransportError("TRANSPORT_UNAVAILABLE", f"transport {self.id} could not connect") from None
        except httpx.ConnectError:
            raise TransportError("TRANSPORT_UNAVAILABLE", f"transport {self.id} could not connect") from None
        except httpx.TransportError:
            raise TransportError("TRANSPORT_FAILED", f"transport {self.id} lost the connection mid-call") from None
        return self._read(response, node)

    def _read(self, response: httpx.Response, node: str) -> NodeResult[Any]:
        try:
            body = response.json()
        except ValueError:
            body = None
        error = body.get("error") if isinstance(body, dict) else None
        code = error.get("code") if isinstance(error, dict) else None
        if response.status_code == 401:
            raise TransportError("TRANSPORT_UNAUTHORIZED", f"transport {self.id} was refused: bad token")
        if response.status_code == 404 and code == "UNKNOWN_NODE":
            raise RoutingError("UNKNOWN_NODE", f"the replica behind {self.id} does not serve {node}")
        if response.status_code == 413:
            raise TransportError("TRANSPORT_PAYLOAD_TOO_LARGE", f"the request to {self.id} is too large")
        if response.status_code == 503:
            raise TransportError("TRANSPORT_UNAVAILABLE", f"the runtime behind {self.id} is closed")
        if response.status_code != 200:
            raise TransportError("TRANSPORT_PROTOCOL_ERROR",
                                 f"{self.id} answered HTTP {response.status_code} ({code or 'no code'})")
        try:
            return NodeResult.from_wire(body)
        except ValueError:
            raise TransportError("TRANSPORT_PROTOCOL_ERROR", f"{self.id} answered something else") from None

    async def workers(self) -> list[dict[str, Any]]:
        """The replicas the server offers (for ``register_remote``)."""
        try:
            response = await self._client.get("/v1/workers", headers=self._headers)
        except httpx.HTTPError:
            raise TransportError("TRANSPORT_UNAVAILABLE", f"transport {self.id} could not connect") from None
        if response.status_code == 401:
            raise TransportError("TRANSPORT_UNAUTHORIZED", f"transport {self.id} was refused: bad token")
        body = response.json()
        workers = body.get("workers") if isinstance(body, dict) else None
        if not isinstance(workers, list):
            raise TransportError("TRANSPORT_PROTOCOL_ERROR", f"{self.id} answered something else")
        return workers

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()

    async def __aenter__(self) -> HttpTransport:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()


def create_http_transport(*, id: str, url: str, token: str, connect_timeout: float = 5.0) -> HttpTransport:
    """The client side of the HTTP transport; install it with ``create_ditto(transports=[...])``::

        transport = create_http_transport(id="ctx", url="http://10.0.0.5:8080", token=os.environ["TOKEN"])
        runtime = create_ditto(transports=[transport])
        runtime.register_remote(address="CONTEXT@10.0.0.5#1", transport_id="ctx", capabilities=["CONTEXT.SELECT"])
    """
    return HttpTransport(id=id, url=url, token=token, connect_timeout=connect_timeout)
