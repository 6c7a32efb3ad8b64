"""The client half of the HTTP transport (RT-6), built on aiohttp.

One transport per service URL; a runtime may register several replica
addresses behind it. The transport owns one ``aiohttp.ClientSession`` (pooled
keep-alive connections), created on the first call's event loop and closed in
:meth:`HttpTransport.aclose` (the runtime never closes transports it was given).
aiohttp, because on this project's loopback benchmark it did 3–6× the calls/s
of httpx doing the identical POST (``docs/benchmarks.md``).

What a failure means to the caller is the contract the runtime's failover
relies on: ``TRANSPORT_UNAVAILABLE`` only when the call cannot have reached a
handler (connection refused, DNS, TLS handshake, connect timeout, HTTP 503), so
the runtime may send it to another replica; ``TRANSPORT_FAILED`` when the
connection broke after the request was sent, which is never re-sent (it may
have run). A client-side timeout or cancellation stops *waiting*; the server
may still finish the call.

A pooled connection that the server has already closed is never written to:
it is checked for a pending end-of-stream before reuse (aiohttp alone only
notices once the event loop has read it), and a connection that carried a 5xx
answer is not reused at all, since a server that just failed may drop it
(see ``_CheckedHandler``).
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import os
import select
import socket
import ssl
from typing import Any, cast
from urllib.parse import urlsplit

import aiohttp
from aiohttp.client_proto import ResponseHandler
from aiohttp.http import RawResponseMessage
from aiohttp.streams import StreamReader
from yarl import URL

from ..errors import TIMEOUT, InvalidArgumentError, RoutingError, TransportError
from ..runtime import NodeError, NodeResult
from ..runtime.worker import MAX_TIMEOUT_S, valid_timeout
from ..signal import CancelledBySignal, CancelSignal, await_with_signal
from ._tracing import client_span, outgoing_headers, set_span_result
from .wire import NotSerializable, loads, wire_bytes

__all__ = ["DEFAULT_MAX_RESPONSE_BYTES", "HttpTransport", "create_http_transport"]

#: The largest answer read into memory; a bigger one is TRANSPORT_PROTOCOL_ERROR.
DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024
#: Idle pooled connections are dropped after this many seconds: under uvicorn's default keep-alive
#: (5 s), so the client is not the side that writes into a connection the server is closing.
_KEEPALIVE_S = 3.0


def _is_same_host(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host in {"localhost", socket.gethostname()}:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _CheckedHandler(ResponseHandler):
    """aiohttp's connection protocol, with two rules about reusing a pooled connection.

    An idle HTTP/1.1 connection has nothing to read; if its socket is readable the
    server has closed it (or sent garbage), even when the event loop has not yet
    processed that end-of-stream. Reusing it would fail a call that never reached
    the server, so the pool drops it and dials a fresh connection instead.

    A connection that carried a 5xx answer is closed instead of pooled: a server
    that has just failed may drop it a moment later (Starlette re-raises after its
    500, and uvicorn then closes the socket), when the next call is already on it.
    The status is seen here, as the answer is parsed, because aiohttp pools a
    connection as soon as a small body has arrived, before the caller sees it.
    """

    def feed_data(self, data: tuple[RawResponseMessage, StreamReader], size: int = 0) -> None:
        if data[0].code >= 500:
            self.force_close()
        super().feed_data(data, size)

    _poller: Any = None

    def is_connected(self) -> bool:
        if not super().is_connected() or self.transport is None or self.should_close:
            return False
        poller = self._poller
        if poller is None:  # one poll object per connection, registered once
            sock = self.transport.get_extra_info("socket")
            if sock is None:
                return True
            poller = self._poller = select.poll()
            poller.register(sock.fileno(), select.POLLIN)
        return not poller.poll(0)


def _valid_token(token: str) -> bool:
    return token.isascii() and token.isprintable()


def _ssl_context(url: str, ca_file: str | os.PathLike[str] | None,
                 ssl_context: ssl.SSLContext | None) -> ssl.SSLContext | bool:
    """The TLS settings for ``url``: the caller's context, one trusting ``ca_file``, or the system's."""
    if ca_file is None and ssl_context is None:
        return True  # aiohttp's default verifying context, built once per process
    if ca_file is not None and ssl_context is not None:
        raise InvalidArgumentError("pass ca_file or ssl_context, not both")
    if urlsplit(url).scheme != "https":
        raise InvalidArgumentError("ca_file and ssl_context need an https:// url")
    if ssl_context is not None:
        if not isinstance(ssl_context, ssl.SSLContext):
            raise InvalidArgumentError("ssl_context must be an ssl.SSLContext")
        return ssl_context
    try:
        return ssl.create_default_context(cafile=os.fspath(ca_file))  # type: ignore[arg-type]
    except (OSError, ssl.SSLError, TypeError):
        raise InvalidArgumentError("ca_file must name a readable file of PEM certificates") from None


class HttpTransport:
    """Sends node calls to a ``create_worker_http_app`` server.

    ``ca_file`` (a PEM bundle) or ``ssl_context`` sets whom an ``https://`` URL trusts;
    without them the system's certificate store is used.
    """

    def __init__(self, *, id: str, url: str, token: str, connect_timeout: float = 5.0,
                 ca_file: str | os.PathLike[str] | None = None, ssl_context: ssl.SSLContext | None = None,
                 max_connections: int = 256, max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES) -> None:
        if not id or not url or not token:
            raise InvalidArgumentError("create_http_transport needs id, url and token")
        if urlsplit(url).scheme not in {"http", "https"} or not urlsplit(url).hostname:
            raise InvalidArgumentError("url must be an http:// or https:// address with a host")
        if not _valid_token(token):
            raise InvalidArgumentError("token must be printable ASCII")
        if connect_timeout is None or not valid_timeout(connect_timeout):
            raise InvalidArgumentError(f"connect_timeout must be a number of seconds in (0, {MAX_TIMEOUT_S}]")
        for name, limit in (("max_connections", max_connections), ("max_response_bytes", max_response_bytes)):
            if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
                raise InvalidArgumentError(f"{name} must be a positive integer")
        self.id = id
        self.url = url.rstrip("/")
        self._same_host = _is_same_host(self.url)
        self._ssl = _ssl_context(self.url, ca_file, ssl_context)
        self._connect_timeout = float(connect_timeout)
        self._max_connections = max_connections
        self._max_response_bytes = max_response_bytes
        self._invoke_url = URL(f"{self.url}/v1/invoke")
        self._workers_url = URL(f"{self.url}/v1/workers")
        self._health_url = URL(f"{self.url}/healthz")
        self._headers = {"authorization": f"Bearer {token}", "content-type": "application/json"}
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def same_host(self) -> bool:
        return self._same_host

    def _client(self) -> aiohttp.ClientSession:
        """The session of the running loop, made on first use (a session belongs to one event loop)."""
        loop = asyncio.get_running_loop()
        if self._session is None or self._loop is not loop or self._session.closed:
            connector = aiohttp.TCPConnector(limit=self._max_connections, limit_per_host=0, ssl=self._ssl,
                                             keepalive_timeout=_KEEPALIVE_S)
            # The one hook aiohttp offers for how a pooled connection is judged alive.
            connector._factory = cast("functools.partial[ResponseHandler]",
                                      functools.partial(_CheckedHandler, loop=loop))
            self._session = aiohttp.ClientSession(
                connector=connector, headers=self._headers, raise_for_status=False,
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=self._connect_timeout))
            self._loop = loop
        return self._session

    async def invoke(self, address: str, node: str, input: Any, *, execution_id: str,
                     timeout: float | None = None, signal: CancelSignal | None = None) -> NodeResult[Any]:
        if not valid_timeout(timeout):
            raise TransportError("TRANSPORT_INVALID_INPUT",
                                 f"timeout must be a positive, finite number of seconds (at most {MAX_TIMEOUT_S})")
        try:
            # The timeout is not sent: a client timeout stops waiting only (seed 000), the
            # server finishes the call. Callers that want a server deadline send timeoutMs.
            body = wire_bytes({"node": node, "input": input, "address": address, "executionId": execution_id})
        except NotSerializable as exc:
            raise TransportError("TRANSPORT_INVALID_INPUT", f"input of {_shown(node)} cannot be sent as JSON: {exc}") \
                from None
        with client_span(node) as span:
            try:
                request = self._exchange(body) if timeout is None else self._exchange_within(body, timeout)
                status, raw = await (request if signal is None else await_with_signal(request, signal))
            except CancelledBySignal as stop:
                result: NodeResult[Any] = NodeResult(execution_id, node, stop.status,
                                                     error=NodeError(stop.code, stop.message))
            except TimeoutError:
                result = NodeResult(execution_id, node, "timeout",
                                    error=NodeError(TIMEOUT, f"no answer from {self.id} within {timeout} s"))
            else:
                result = self._read(status, raw, node)
            if span is not None:
                set_span_result(span, result.status, result.error.code if result.error is not None else None)
            return result

    async def _exchange_within(self, body: bytes, timeout: float) -> tuple[int, bytes]:
        """:meth:`_exchange` under the caller's deadline (``TimeoutError`` when it passes)."""
        async with asyncio.timeout(timeout):
            return await self._exchange(body)

    async def _exchange(self, body: bytes) -> tuple[int, bytes]:
        """POST one call; connection failures become TransportError."""
        try:
            async with self._client().post(self._invoke_url, data=body, headers=outgoing_headers()) as response:
                declared = response.content_length  # the common case inline: one coroutine less per call
                if declared is not None and declared <= self._max_response_bytes:
                    return response.status, await response.read()
                return response.status, await self._body(response)
        except (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError) as exc:
            raise self._unavailable(exc) from None
        except aiohttp.ClientError:
            raise TransportError("TRANSPORT_FAILED", f"transport {self.id} lost the connection mid-call") from None

    def _unavailable(self, exc: Exception) -> TransportError:
        """The error for a call that never reached the server (safe to send elsewhere)."""
        if isinstance(exc, (aiohttp.ClientConnectorCertificateError, aiohttp.ClientSSLError)):
            return TransportError("TRANSPORT_UNAVAILABLE", f"transport {self.id} could not connect: TLS handshake "
                                                           "failed (is the server's certificate trusted?)")
        return TransportError("TRANSPORT_UNAVAILABLE", f"transport {self.id} could not connect")

    async def _body(self, response: aiohttp.ClientResponse) -> bytes:
        limit = self._max_response_bytes
        declared = response.content_length
        if declared is not None and declared <= limit:
            return await response.read()
        chunks = bytearray()
        if declared is None:
            async for chunk in response.content.iter_chunked(64 * 1024):
                chunks += chunk
                if len(chunks) > limit:
                    break
            else:
                return bytes(chunks)
        response.close()
        raise TransportError("TRANSPORT_PROTOCOL_ERROR", f"{self.id} answered more than {limit} bytes")

    def _read(self, status: int, raw: bytes, node: str) -> NodeResult[Any]:
        if status == 200:  # the common case first: an answer is a NodeResult or a protocol error
            try:
                return NodeResult.from_wire(loads(raw))
            except ValueError:  # NotJson too
                raise TransportError("TRANSPORT_PROTOCOL_ERROR", f"{self.id} answered something else") from None
        try:
            body = loads(raw)
        except ValueError:
            body = None
        error = body.get("error") if isinstance(body, dict) else None
        code = error.get("code") if isinstance(error, dict) else None
        if status == 401:
            raise TransportError("TRANSPORT_UNAUTHORIZED", f"transport {self.id} was refused: bad token")
        if status == 404 and code == "UNKNOWN_NODE":
            raise RoutingError("UNKNOWN_NODE", f"the replica behind {self.id} does not serve {_shown(node)}")
        if status == 413:
            raise TransportError("TRANSPORT_PAYLOAD_TOO_LARGE", f"the request to {self.id} is too large")
        if status == 503:
            raise TransportError("TRANSPORT_UNAVAILABLE", f"the runtime behind {self.id} is closed")
        shown = code if isinstance(code, str) and len(code) <= 64 and code.isprintable() else "no code"
        raise TransportError("TRANSPORT_PROTOCOL_ERROR", f"{self.id} answered HTTP {status} ({shown})")

    async def workers(self) -> list[dict[str, Any]]:
        """The replicas the server offers (for ``register_remote``)."""
        try:
            async with asyncio.timeout(self._connect_timeout * 2):
                async with self._client().get(self._workers_url) as response:
                    status, raw = response.status, await self._body(response)
        except (aiohttp.ClientError, TimeoutError):
            raise TransportError("TRANSPORT_UNAVAILABLE", f"transport {self.id} could not connect") from None
        if status == 401:
            raise TransportError("TRANSPORT_UNAUTHORIZED", f"transport {self.id} was refused: bad token")
        try:
            body = loads(raw)
        except ValueError:
            body = None
        workers = body.get("workers") if isinstance(body, dict) else None
        if status != 200 or not isinstance(workers, list):
            raise TransportError("TRANSPORT_PROTOCOL_ERROR", f"{self.id} answered something else")
        return workers

    async def check_health(self) -> bool:
        """Whether ``GET /healthz`` answers 200 within the connect timeout (the runtime's re-probe)."""
        try:
            async with asyncio.timeout(self._connect_timeout):
                async with self._client().get(self._health_url) as response:
                    await self._body(response)
                    return response.status == 200
        except (aiohttp.ClientError, TimeoutError, TransportError):
            return False

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None and not session.closed:
            await session.close()

    async def __aenter__(self) -> HttpTransport:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()


def _shown(node: str) -> str:
    """A node name fit for a message (the caller's text: bounded, lone surrogates escaped)."""
    text = node if isinstance(node, str) else repr(node)
    text = text if len(text) <= 80 else text[:80] + "…"
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def create_http_transport(*, id: str, url: str, token: str, connect_timeout: float = 5.0,
                          ca_file: str | os.PathLike[str] | None = None, ssl_context: ssl.SSLContext | None = None,
                          max_connections: int = 256,
                          max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES) -> HttpTransport:
    """The client side of the HTTP transport; install it with ``create_ditto(transports=[...])``::

        transport = create_http_transport(id="ctx", url="https://10.0.0.5:8443", token=os.environ["TOKEN"],
                                          ca_file="/etc/ditto/ca.pem")
        runtime = create_ditto(transports=[transport])
        runtime.register_remote(address="CONTEXT@10.0.0.5#1", transport_id="ctx", capabilities=["CONTEXT.SELECT"])
    """
    return HttpTransport(id=id, url=url, token=token, connect_timeout=connect_timeout, ca_file=ca_file,
                         ssl_context=ssl_context, max_connections=max_connections,
                         max_response_bytes=max_response_bytes)
