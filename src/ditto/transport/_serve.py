"""Running a worker app under uvicorn the way ``ditto serve`` does: uvloop, drain on SIGTERM, slow-client
timeouts, TLS and JSON logs.

* **Event loop.** uvloop when it is installed (``uvicorn[standard]`` brings it), else asyncio's.
* **Drain.** The first SIGTERM or SIGINT does not stop the server: ``/readyz`` turns 503, new calls are
  answered 503 ``SERVICE_DRAINING`` (with ``Connection: close``), and the calls already accepted run to
  their end for up to ``grace_period`` seconds. Then uvicorn shuts down (listeners closed, the rest
  cancelled) and the process exits 0. A second signal stops at once.
* **Slow clients.** uvicorn closes idle keep-alive connections (``keep_alive`` seconds) but has no
  deadline for a request's *headers*: a client trickling them holds a connection forever. The HTTP
  protocol here closes a connection whose headers are not complete ``header_timeout`` seconds after it
  opened or after its previous answer; the app itself bounds the body (``body_timeout``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import uvicorn

__all__ = ["JsonLogFormatter", "configure_logging", "loop_factory", "serve_app"]

DEFAULT_GRACE_PERIOD = 30.0
DEFAULT_HEADER_TIMEOUT = 10.0
DEFAULT_KEEP_ALIVE = 5


class JsonLogFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger and the message, or the fields of a dict message
    (the access log's), plus the traceback when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {"time": round(record.created, 3), "level": record.levelname.lower(),
                                 "logger": record.name}
        if isinstance(record.msg, dict):
            entry.update(record.msg)
        else:
            entry["message"] = record.getMessage()
        if record.exc_info:
            entry["traceback"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=True, default=str)


def configure_logging(level: str) -> None:
    """Every record of ``ditto.*`` and ``uvicorn.*`` at ``level`` and above, as JSON lines on stderr."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLogFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    numeric = logging.getLevelName(level.upper())
    for name in ("ditto", "uvicorn"):
        logging.getLogger(name).setLevel(numeric)


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop factory when uvloop is installed, else ``None`` (asyncio's default loop)."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvicorn[standard] installs it
        return None
    return uvloop.new_event_loop


def _http_protocol(header_timeout: float) -> Any:
    """uvicorn's httptools protocol with a deadline for each request's headers (``"auto"`` without httptools)."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:  # pragma: no cover - uvicorn[standard] installs httptools
        logging.getLogger("ditto.transport.http").warning("httptools is missing: no header read timeout")
        return "auto"

    class _HeaderDeadlineProtocol(HttpToolsProtocol):
        _header_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm_header_timer()

        def on_message_begin(self) -> None:
            super().on_message_begin()
            if self._header_timer is None:  # the next request on a kept-alive connection
                self._arm_header_timer()

        def on_headers_complete(self) -> None:
            self._disarm_header_timer()
            super().on_headers_complete()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm_header_timer()
            super().connection_lost(exc)

        def _arm_header_timer(self) -> None:
            self._header_timer = self.loop.call_later(header_timeout, self._headers_too_slow)

        def _disarm_header_timer(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _headers_too_slow(self) -> None:
            self._header_timer = None
            if not self.transport.is_closing():
                self.transport.close()

    return _HeaderDeadlineProtocol


class _DrainingServer(uvicorn.Server):
    """A uvicorn server whose first SIGTERM/SIGINT drains the app instead of stopping at once."""

    def __init__(self, config: uvicorn.Config, service: Any, grace_period: float) -> None:
        super().__init__(config)
        self._service = service
        self._grace_period = grace_period
        self._loop: asyncio.AbstractEventLoop | None = None
        self._drain_task: asyncio.Task[None] | None = None

    async def serve(self, sockets: Any = None) -> None:
        self._loop = asyncio.get_running_loop()
        await super().serve(sockets)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        # The signal is not recorded in _captured_signals: uvicorn would re-raise it after the
        # shutdown, and the process would die by SIGTERM instead of exiting 0 after its drain.
        if self._drain_task is not None or self._loop is None or self.should_exit:
            self.should_exit = True
            self.force_exit = True
            return
        self._loop.call_soon_threadsafe(self._begin_drain)

    def _begin_drain(self) -> None:
        if self._drain_task is None:
            self._service.start_draining()
            self._drain_task = asyncio.ensure_future(self._drain())

    async def shutdown(self, sockets: Any = None) -> None:
        # However the server came to stop (a second signal, ``should_exit`` set by code, uvicorn's own
        # limits), the replica is unready before its listeners close: a probe still in flight sees 503.
        self._service.start_draining()
        await super().shutdown(sockets)

    async def _drain(self) -> None:
        if not await self._service.drained(self._grace_period):
            logging.getLogger("ditto.transport.http").warning(
                "grace period of %s s over: %d call(s) still running are cancelled",
                self._grace_period, self._service.inflight)
        self.should_exit = True


def serve_app(app: Any, *, host: str, port: int, grace_period: float = DEFAULT_GRACE_PERIOD,
              header_timeout: float = DEFAULT_HEADER_TIMEOUT, keep_alive: int = DEFAULT_KEEP_ALIVE,
              certfile: str | None = None, keyfile: str | None = None, log_level: str = "warning",
              on_start: Callable[[str], None] | None = None, on_stop: Callable[[], Any] | None = None) -> None:
    """Serve a :func:`~ditto.transport.create_worker_http_app` app until a signal drains and stops it.

    ``on_start(loop_name)`` runs inside the event loop before the server binds; ``on_stop()`` (may be a
    coroutine function) after it stopped, e.g. to close the runtime.
    """
    config = uvicorn.Config(app, host=host, port=port, log_config=None, log_level=log_level.lower(),
                            access_log=False, lifespan="off", http=_http_protocol(header_timeout),
                            timeout_keep_alive=keep_alive, timeout_graceful_shutdown=1,
                            ssl_certfile=certfile, ssl_keyfile=keyfile)
    server = _DrainingServer(config, app.state.service, grace_period)

    async def run() -> None:
        if on_start is not None:
            on_start(type(asyncio.get_running_loop()).__module__.split(".")[0])
        try:
            await server.serve()
        finally:
            if on_stop is not None:
                stopped = on_stop()
                if asyncio.iscoroutine(stopped):
                    await stopped

    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        runner.run(run())
