"""HTTPS on 127.0.0.1 for tests: a trustme CA written to a PEM file, and two threaded servers.

:func:`serve_directory` serves a real directory (stdlib ``http.server``) over TLS;
:class:`TlsProxy` terminates TLS in front of a plain-HTTP server (PHP's built-in
server cannot speak TLS). Both run in threads so session-scoped fixtures can use
them from any event loop; clients trust them through :attr:`LoopbackCa.ca_file`.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import select
import socket
import socketserver
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import trustme

__all__ = ["LoopbackCa", "TlsProxy", "make_test_ca", "serve_directory"]


@dataclass(frozen=True)
class LoopbackCa:
    """A CA (``ca_file``: its certificate, PEM) and a server certificate for 127.0.0.1 and localhost."""

    ca: trustme.CA
    ca_file: Path
    server_pem: Path

    def server_context(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(self.server_pem))
        return context


def make_test_ca(directory: Path) -> LoopbackCa:
    ca = trustme.CA()
    ca_file = directory / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    server_pem = directory / "server.pem"
    ca.issue_cert("127.0.0.1", "localhost").private_key_and_cert_chain_pem.write_to_path(str(server_pem))
    return LoopbackCa(ca, ca_file, server_pem)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """No access log on the test output."""


class _TlsHttpServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type[http.server.BaseHTTPRequestHandler],
                 context: ssl.SSLContext) -> None:
        self._context = context
        super().__init__(address, handler)

    def get_request(self) -> tuple[socket.socket, object]:
        sock, address = super().get_request()
        return self._context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), address


@contextlib.contextmanager
def serve_directory(directory: Path, ca: LoopbackCa) -> Iterator[str]:
    """Serve ``directory`` read-only over HTTPS on 127.0.0.1; yield the origin (``https://127.0.0.1:PORT``)."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = _TlsHttpServer(("127.0.0.1", 0), handler, ca.server_context())  # type: ignore[arg-type]
    thread = threading.Thread(target=server.serve_forever, name="https-directory", daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


class TlsProxy:
    """Accept TLS on 127.0.0.1 (port chosen now, before the backend exists) and pipe bytes to a plain backend."""

    def __init__(self, ca: LoopbackCa) -> None:
        self._context = ca.server_context()
        self._backend: tuple[str, int] | None = None
        outer = self

        class Pipe(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                outer._pipe(self.request)

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

        self._server = Server(("127.0.0.1", 0), Pipe)
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(target=self._server.serve_forever, name="tls-proxy", daemon=True)

    @property
    def origin(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def start(self, backend: tuple[str, int]) -> None:
        self._backend = backend
        self._thread.start()

    def close(self) -> None:
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()

    def _pipe(self, raw: socket.socket) -> None:
        assert self._backend is not None
        try:
            client = self._context.wrap_socket(raw, server_side=True)
        except (ssl.SSLError, OSError):
            return  # a client that gave up on the handshake (e.g. it does not trust the CA)
        with client, socket.create_connection(self._backend, timeout=60) as backend:
            while True:
                readable = [client] if client.pending() else select.select([client, backend], [], [], 60)[0]
                if not readable:
                    return
                for source, target in ((client, backend), (backend, client)):
                    if source in readable:
                        try:
                            data = source.recv(65536)
                        except (ssl.SSLError, OSError):
                            return
                        if not data:
                            return
                        target.sendall(data)
