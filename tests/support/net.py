"""Small networking helpers for tests that start real servers on loopback."""

from __future__ import annotations

import socket
import ssl
import time

import httpx


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_http_ok(url: str, timeout: float = 20.0, *, verify: ssl.SSLContext | bool = True) -> None:
    """Poll ``url`` until it answers 200, or fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=1.0, verify=verify).status_code == 200:
                return
        except httpx.HTTPError as exc:
            last = exc
        time.sleep(0.05)
    raise TimeoutError(f"{url} did not come up: {last}")
