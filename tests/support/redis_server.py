"""Real ``redis-server`` processes for tests: one standalone server or a 3-master cluster.

Each server listens on a free 127.0.0.1 port with its files in a temp dir and
no persistence, and is killed (and its dir removed) on exit.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from .net import free_port

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
REDIS_CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"


@dataclass
class RedisServer:
    """A running server; ``stop()`` kills it early (e.g. to test an outage)."""

    port: int
    directory: Path
    process: subprocess.Popen[bytes]
    extra: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def cli(self, *args: str) -> str:
        done = subprocess.run([REDIS_CLI, "-h", "127.0.0.1", "-p", str(self.port), *args],
                              capture_output=True, text=True, timeout=30, check=True)
        return done.stdout.strip()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _cluster_port() -> int:
    """A free port whose cluster bus port (port + 10000) is free and valid as well."""
    while True:
        port = free_port()
        if port + 10000 <= 65535 and _bindable(port + 10000):
            return port


def _start(directory: Path, extra: list[str], pick_port: Callable[[], int] = free_port) -> RedisServer:
    """Start a server; another process may grab the free port first, so a few attempts are made."""
    for attempt in range(3):
        try:
            return _start_once(directory, extra, pick_port())
        except RuntimeError:
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def _start_once(directory: Path, extra: list[str], port: int) -> RedisServer:
    args = [REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(directory),
            "--save", "", "--appendonly", "no", "--protected-mode", "no", *extra]
    with open(directory / "redis.log", "ab") as log:
        process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
    server = RedisServer(port, directory, process, extra)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if process.poll() is not None:
            output = (directory / "redis.log").read_text(errors="replace")[-2000:]
            raise RuntimeError(f"redis-server exited with {process.returncode}: {output}")
        try:
            if server.cli("PING") == "PONG":
                return server
        except subprocess.CalledProcessError:
            pass
        time.sleep(0.05)
    server.stop()
    raise TimeoutError("redis-server did not answer PING")


@contextmanager
def redis_server() -> Iterator[RedisServer]:
    """A standalone server for the duration of the ``with`` block."""
    directory = Path(tempfile.mkdtemp(prefix="ditto-redis-"))
    server = _start(directory, [])
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)


@contextmanager
def redis_cluster(masters: int = 3) -> Iterator[list[RedisServer]]:
    """``masters`` cluster-enabled servers joined with ``redis-cli --cluster create``."""
    root = Path(tempfile.mkdtemp(prefix="ditto-redis-cluster-"))
    servers: list[RedisServer] = []
    try:
        for index in range(masters):
            directory = root / str(index)
            directory.mkdir()
            servers.append(_start(directory, ["--cluster-enabled", "yes", "--cluster-config-file",
                                              str(directory / "nodes.conf"), "--cluster-node-timeout", "5000"],
                                  _cluster_port))
        nodes = [f"127.0.0.1:{server.port}" for server in servers]
        subprocess.run([REDIS_CLI, "--cluster", "create", *nodes, "--cluster-replicas", "0", "--cluster-yes"],
                       capture_output=True, text=True, timeout=60, check=True)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if all("cluster_state:ok" in server.cli("CLUSTER", "INFO") for server in servers):
                break
            time.sleep(0.1)
        else:
            raise TimeoutError("the Redis cluster did not reach cluster_state:ok")
        yield servers
    finally:
        for server in servers:
            server.stop()
        shutil.rmtree(root, ignore_errors=True)
