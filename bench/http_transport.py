"""HTTP transport throughput and latency on loopback against one `ditto serve` process.

Run: .venv/bin/python bench/http_transport.py [--seconds 10] [--clients 8]

Four load generators hit the same server in the same run:
  * the project's client transport (`runtime.invoke` → HttpTransport → uvicorn), as 8 asyncio
    tasks in one process and as 8 client processes with one call in flight each,
  * raw httpx posting the identical request (the floor for a Python client),
  * wrk with bench/wrk_invoke.lua (an external C load generator; needs Debian's `wrk`).
Goal (issue 2): ≥ 2,000 calls/s with p99 ≤ 20 ms for 8 concurrent clients.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import secrets
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table

from ditto import create_ditto, create_http_transport

ROOT = Path(__file__).resolve().parents[1]
REQUEST = {"query": "agent memory", "limit": 5}


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(token: str) -> tuple[str, subprocess.Popen[bytes]]:
    port = free_port()
    env = {**os.environ, "DITTO_TRANSPORT_HTTP_WORKER_TOKEN": token}
    process = subprocess.Popen([sys.executable, "-m", "ditto", "serve", "--worker", "bench._workers:make",
                                "--port", str(port)], cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(400):
        try:
            if httpx.get(f"{url}/healthz").status_code == 200:
                return url, process
        except httpx.HTTPError:
            time.sleep(0.05)
    process.kill()
    raise SystemExit("server did not start")


async def drive(call: Any, clients: int, seconds: float) -> tuple[float, float, float, int]:
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds

    async def client() -> None:
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            await call()
            latencies.append(time.perf_counter() - started)

    began = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    elapsed = time.perf_counter() - began
    latencies.sort()
    p50 = latencies[len(latencies) // 2] * 1000
    p99 = latencies[int(len(latencies) * 0.99) - 1] * 1000
    return len(latencies) / elapsed, p50, p99, len(latencies)


async def ditto_transport(url: str, token: str, clients: int, seconds: float) -> tuple[float, float, float, int]:
    transport = create_http_transport(id="bench", url=url, token=token)
    runtime = create_ditto(transports=[transport])
    (worker,) = await transport.workers()
    runtime.register_remote(address=worker["address"], transport_id="bench", capabilities=worker["capabilities"])

    async def call() -> None:
        result = await runtime.invoke("BENCH.NOOP", REQUEST)
        assert result.status == "success"

    await drive(call, clients, 1.0)  # warm-up
    try:
        return await drive(call, clients, seconds)
    finally:
        await transport.aclose()


async def raw_httpx(url: str, token: str, clients: int, seconds: float) -> tuple[float, float, float, int]:
    headers = {"authorization": f"Bearer {token}"}
    body = {"node": "BENCH.NOOP", "input": REQUEST}
    async with httpx.AsyncClient(base_url=url, headers=headers) as client:
        async def call() -> None:
            response = await client.post("/v1/invoke", json=body)
            assert response.status_code == 200

        await drive(call, clients, 1.0)
        return await drive(call, clients, seconds)


def _transport_process(args: tuple[str, str, float]) -> list[float]:
    """One OS process running one client through the project's transport; returns its latencies."""
    url, token, seconds = args

    async def run() -> list[float]:
        transport = create_http_transport(id="bench", url=url, token=token)
        runtime = create_ditto(transports=[transport])
        (worker,) = await transport.workers()
        runtime.register_remote(address=worker["address"], transport_id="bench",
                                capabilities=worker["capabilities"])
        latencies: list[float] = []
        warm_until = time.perf_counter() + 1.0
        while time.perf_counter() < warm_until:
            await runtime.invoke("BENCH.NOOP", REQUEST)
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            result = await runtime.invoke("BENCH.NOOP", REQUEST)
            assert result.status == "success"
            latencies.append(time.perf_counter() - started)
        await transport.aclose()
        return latencies

    return asyncio.run(run())


def ditto_transport_processes(url: str, token: str, clients: int, seconds: float) -> tuple[float, float, float, int]:
    """`clients` client processes, one call in flight each (8 real concurrent clients)."""
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(clients) as pool:
        per_process = pool.map(_transport_process, [(url, token, seconds)] * clients)
    latencies = sorted(value for chunk in per_process for value in chunk)
    p50 = latencies[len(latencies) // 2] * 1000
    p99 = latencies[int(len(latencies) * 0.99) - 1] * 1000
    return len(latencies) / seconds, p50, p99, len(latencies)


def _ms(text: str) -> float:
    value, unit = re.fullmatch(r"([\d.]+)(us|ms|s)", text).groups()  # type: ignore[union-attr]
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def wrk(url: str, token: str, clients: int, seconds: float) -> tuple[float, float, float, int] | None:
    if shutil.which("wrk") is None:
        return None
    env = {**os.environ, "DITTO_TRANSPORT_HTTP_WORKER_TOKEN": token}
    out = subprocess.run(["wrk", "-t2", f"-c{clients}", f"-d{int(seconds)}s", "--latency", "-s",
                          str(ROOT / "bench" / "wrk_invoke.lua"), f"{url}/v1/invoke"],
                         env=env, capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    p50 = _ms(re.search(r"50%\s+(\S+)", out).group(1))  # type: ignore[union-attr]
    p99 = _ms(re.search(r"99%\s+(\S+)", out).group(1))  # type: ignore[union-attr]
    total = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    if "Non-2xx" in out:
        raise SystemExit(f"wrk saw errors:\n{out}")
    return rps, p50, p99, total


async def main(seconds: float, clients: int) -> None:
    token = secrets.token_urlsafe(24)
    url, server = start_server(token)
    try:
        rows: list[tuple[str, tuple[float, float, float, int] | None]] = [
            ("ditto HttpTransport, 1 process × 8 tasks", await ditto_transport(url, token, clients, seconds)),
            (f"ditto HttpTransport, {clients} processes × 1",
             ditto_transport_processes(url, token, clients, seconds)),
            ("raw httpx.AsyncClient", await raw_httpx(url, token, clients, seconds)),
            ("wrk + Lua (external)", wrk(url, token, clients, seconds)),
        ]
    finally:
        server.terminate()
        server.wait()
    reference = rows[2][1]
    table = Table(title=f"HTTP transport, {clients} concurrent clients, {seconds:.0f} s, one uvicorn process")
    for column in ("load generator", "calls/s", "p50 ms", "p99 ms", "calls", "calls/s vs raw httpx"):
        table.add_column(column, justify="left" if column == "load generator" else "right")
    for label, row in rows:
        if row is None:
            table.add_row(label, "wrk not installed", "", "", "", "")
            continue
        rps, p50, p99, total = row
        ratio = f"{rps / reference[0]:.2f}×" if reference else ""
        table.add_row(label, f"{rps:,.0f}", f"{p50:.2f}", f"{p99:.2f}", f"{total:,}", ratio)
    Console(width=140).print(table)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--clients", type=int, default=8)
    options = parser.parse_args()
    asyncio.run(main(options.seconds, options.clients))
