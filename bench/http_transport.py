"""HTTP transport throughput, latency, client CPU and failover on loopback against `ditto serve` processes.

Run: .venv/bin/python bench/http_transport.py [--seconds 6] [--clients 8] [--failover-seconds 10]

All in one run, against the same server process (uvicorn + httptools/uvloop, a no-op node):
  * the project's client (`runtime.invoke` → HttpTransport → aiohttp), 1 process × 8 asyncio tasks,
  * raw aiohttp posting the identical request bytes (the goal is ≥ 0.9× of it),
  * raw httpx posting the identical request (what HttpTransport used before issue 19),
  * wrk with bench/wrk_invoke.lua (an external C load generator; needs Debian's `wrk`),
  * HttpTransport with 100 and with 2,000 calls in flight: client CPU per call must not grow with concurrency,
  * failover: two `ditto serve` replicas, one SIGKILLed at t=2 s; every call id is recorded by the server
    that ran it, so lost re-routable calls (TRANSPORT_UNAVAILABLE) and duplicates are counted, not guessed.
Goals (issue 19): ≥ 2,000 calls/s, ≥ 0.9× raw aiohttp, p99 ≤ 20 ms; 0 lost re-routable calls, 0 duplicates,
throughput back within one cool-down (5 s).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
import httpx
from rich.console import Console
from rich.table import Table

from ditto import TransportError, create_ditto, create_http_transport
from ditto.runtime import Runtime
from ditto.transport import HttpTransport
from ditto.transport.wire import wire_bytes

ROOT = Path(__file__).resolve().parents[1]
ROUNDS = 3
REQUEST = {"query": "agent memory", "limit": 5}
Row = tuple[float, float, float, int, float]  # calls/s, p50 ms, p99 ms, calls, client CPU µs per call


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(token: str, worker: str = "bench._workers:make", env: dict[str, str] | None = None,
                 extra: Sequence[str] = ()) -> tuple[str, subprocess.Popen[bytes]]:
    port = free_port()
    process_env = {**os.environ, "DITTO_TRANSPORT_HTTP_WORKER_TOKEN": token, **(env or {})}
    process = subprocess.Popen([sys.executable, "-m", "ditto", "serve", "--worker", worker, "--port", str(port),
                                *extra],
                               cwd=ROOT, env=process_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            if httpx.get(f"{url}/healthz").status_code == 200:
                return url, process
        except httpx.HTTPError:
            time.sleep(0.05)
    process.kill()
    raise SystemExit("server did not start")


@dataclass
class Sample:
    """What one load generator did over one or more slices of the run."""

    latencies: list[float] = field(default_factory=list)
    elapsed: float = 0.0
    cpu: float = 0.0

    def add(self, other: Sample) -> Sample:
        self.latencies += other.latencies
        self.elapsed += other.elapsed
        self.cpu += other.cpu
        return self

    def row(self) -> Row:
        latencies = sorted(self.latencies)
        p50 = latencies[len(latencies) // 2] * 1000
        p99 = latencies[int(len(latencies) * 0.99) - 1] * 1000
        return len(latencies) / self.elapsed, p50, p99, len(latencies), self.cpu / len(latencies) * 1e6


async def drive(call: Callable[[], Awaitable[None]], clients: int, seconds: float) -> Sample:
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds

    async def client() -> None:
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            await call()
            latencies.append(time.perf_counter() - started)

    began, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(client() for _ in range(clients)))
    return Sample(latencies, time.perf_counter() - began, time.process_time() - cpu)


async def connected(transport: HttpTransport) -> Runtime:
    runtime = create_ditto(transports=[transport])
    for worker in await transport.workers():
        runtime.register_remote(address=worker["address"], transport_id=transport.id,
                                capabilities=worker["capabilities"])
    return runtime


async def ditto_transport(url: str, token: str, clients: int, seconds: float) -> Sample:
    async with create_http_transport(id="bench", url=url, token=token) as transport:
        runtime = await connected(transport)

        async def call() -> None:
            result = await runtime.invoke("BENCH.NOOP", REQUEST)
            assert result.status == "success"

        await drive(call, clients, 0.3)  # warm-up (new connections)
        return await drive(call, clients, seconds)


def _identical_body(url: str, token: str) -> bytes:
    """The bytes HttpTransport sends for one call (same codec, same fields, the replica's address)."""
    workers = httpx.get(f"{url}/v1/workers", headers={"authorization": f"Bearer {token}"}).json()["workers"]
    return wire_bytes({"node": "BENCH.NOOP", "input": REQUEST, "address": workers[0]["address"],
                       "executionId": os.urandom(16).hex()})


async def raw_aiohttp(url: str, token: str, clients: int, seconds: float) -> Sample:
    headers = {"authorization": f"Bearer {token}", "content-type": "application/json"}
    body, target = _identical_body(url, token), f"{url}/v1/invoke"
    async with aiohttp.ClientSession(headers=headers) as session:
        async def call() -> None:
            async with session.post(target, data=body) as response:
                await response.read()
                assert response.status == 200

        await drive(call, clients, 0.3)
        return await drive(call, clients, seconds)


async def raw_httpx(url: str, token: str, clients: int, seconds: float) -> Sample:
    headers = {"authorization": f"Bearer {token}", "content-type": "application/json"}
    body = _identical_body(url, token)
    async with httpx.AsyncClient(base_url=url, headers=headers) as client:
        async def call() -> None:
            response = await client.post("/v1/invoke", content=body)
            assert response.status_code == 200

        await drive(call, clients, 0.3)
        return await drive(call, clients, seconds)


def _ms(text: str) -> float:
    value, unit = re.fullmatch(r"([\d.]+)(us|ms|s)", text).groups()  # type: ignore[union-attr]
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def wrk(url: str, token: str, clients: int, seconds: float) -> Row | None:
    if shutil.which("wrk") is None:
        return None
    env = {**os.environ, "DITTO_TRANSPORT_HTTP_WORKER_TOKEN": token}
    out = subprocess.run(["wrk", "-t2", f"-c{clients}", f"-d{int(seconds)}s", "--latency", "-s",
                          str(ROOT / "bench" / "wrk_invoke.lua"), f"{url}/v1/invoke"],
                         env=env, capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    # The distribution's lines only ("  50%  1.2ms"): a column of the thread stats may end in "50%" too.
    p50 = _ms(re.search(r"^\s+50%\s+(\S+)", out, re.MULTILINE).group(1))  # type: ignore[union-attr]
    p99 = _ms(re.search(r"^\s+99%\s+(\S+)", out, re.MULTILINE).group(1))  # type: ignore[union-attr]
    total = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    if "Non-2xx" in out:
        raise SystemExit(f"wrk saw errors:\n{out}")
    return rps, p50, p99, total, float("nan")


async def failover(token: str, clients: int, seconds: float, kill_at: float) -> dict[str, object]:
    """Two recording replicas, one SIGKILLed at ``kill_at``; counts from the servers' own records."""
    with tempfile.TemporaryDirectory() as directory:
        logs = [Path(directory) / f"{name}.log" for name in ("a", "b")]
        servers = [start_server(token, "bench._workers:make_recording", {"DITTO_BENCH_CALL_LOG": str(log)})
                   for log in logs]
        transports = [create_http_transport(id=f"replica-{index}", url=url, token=token)
                      for index, (url, _) in enumerate(servers)]
        runtime = create_ditto(transports=transports)
        try:
            for transport in transports:
                for worker in await transport.workers():
                    runtime.register_remote(address=worker["address"], transport_id=transport.id,
                                            capabilities=worker["capabilities"])
            outcomes: dict[str, str] = {}
            finished: list[float] = []
            loop = asyncio.get_running_loop()
            began = loop.time()

            async def client() -> None:
                while loop.time() - began < seconds:
                    call_id = uuid.uuid4().hex
                    try:
                        result = await runtime.invoke("BENCH.RECORD", {"id": call_id})
                        outcomes[call_id] = result.status
                    except TransportError as error:
                        outcomes[call_id] = error.code
                    finished.append(loop.time() - began)

            async def killer() -> None:
                await asyncio.sleep(kill_at)
                os.kill(servers[0][1].pid, signal.SIGKILL)

            await asyncio.gather(killer(), *(client() for _ in range(clients)))
        finally:
            for transport in transports:
                await transport.aclose()
            for _, process in servers:
                if process.poll() is None:
                    process.terminate()
                process.wait()
        ran = [log.read_text().split() if log.exists() else [] for log in logs]
    executions = Counter(ran[0] + ran[1])
    codes = Counter(outcomes.values())
    before = sum(1 for moment in finished if moment < kill_at) / kill_at
    per_second = [sum(1 for moment in finished if second <= moment < second + 1) for second in range(int(seconds))]
    cooldown = [count for second, count in enumerate(per_second) if kill_at <= second < kill_at + 5]
    failed_ids = {call_id for call_id, code in outcomes.items() if code == "TRANSPORT_FAILED"}
    return {
        "calls": len(outcomes), "succeeded": codes["success"],
        "lost re-routable (TRANSPORT_UNAVAILABLE)": codes["TRANSPORT_UNAVAILABLE"],
        "in flight on the killed replica (TRANSPORT_FAILED)": codes["TRANSPORT_FAILED"],
        "other failures": len(outcomes) - codes["success"] - codes["TRANSPORT_UNAVAILABLE"]
        - codes["TRANSPORT_FAILED"],
        "duplicates (ran twice)": sum(1 for count in executions.values() if count > 1),
        "TRANSPORT_FAILED calls re-sent to the survivor": len(failed_ids & set(ran[1])),
        "calls/s before the kill": round(before),
        "calls/s during the cool-down after the kill (5 s)": round(sum(cooldown) / len(cooldown)),
        "lowest 1 s after the kill, vs before": f"{min(per_second[int(kill_at):]) / before:.2f}×",
        "calls per second, t=0 s … end": " ".join(map(str, per_second)),
    }


async def main(seconds: float, clients: int, failover_seconds: float) -> None:
    token = secrets.token_urlsafe(24)
    url, server = start_server(token)
    try:
        # The Python clients take turns in short slices, so a change in the machine's load during the run
        # hits them alike (this box is shared); each row adds up its slices.
        generators = {"ditto": ditto_transport, "aiohttp": raw_aiohttp, "httpx": raw_httpx}
        samples = {name: Sample() for name in [*generators, "ditto-100", "ditto-2000"]}
        for _ in range(ROUNDS):
            for name, generator in generators.items():
                samples[name].add(await generator(url, token, clients, seconds / ROUNDS))
            samples["ditto-100"].add(await ditto_transport(url, token, 100, seconds / ROUNDS))
            samples["ditto-2000"].add(await ditto_transport(url, token, 2000, seconds / ROUNDS))
        rows: list[tuple[str, Row | None]] = [
            (f"ditto HttpTransport (aiohttp), 1 process × {clients} tasks", samples["ditto"].row()),
            (f"raw aiohttp.ClientSession, identical POST, 1 process × {clients}", samples["aiohttp"].row()),
            (f"raw httpx.AsyncClient, identical POST, 1 process × {clients}", samples["httpx"].row()),
            (f"wrk + Lua (external, 2 threads, {clients} connections)", wrk(url, token, clients, seconds)),
            ("ditto HttpTransport, 100 calls in flight", samples["ditto-100"].row()),
            ("ditto HttpTransport, 2,000 calls in flight", samples["ditto-2000"].row()),
        ]
    finally:
        server.terminate()
        server.wait()
    reference = rows[1][1]
    assert reference is not None
    table = Table(title=f"HTTP transport, {seconds:.0f} s per row in {ROUNDS} alternating slices, one uvicorn "
                        "process, same run")
    for column in ("load generator", "calls/s", "p50 ms", "p99 ms", "calls", "client CPU µs/call",
                   "vs raw aiohttp"):
        table.add_column(column, justify="left" if column == "load generator" else "right")
    for label, row in rows:
        if row is None:
            table.add_row(label, "wrk not installed", "", "", "", "", "")
            continue
        rps, p50, p99, total, cpu = row
        table.add_row(label, f"{rps:,.0f}", f"{p50:.2f}", f"{p99:.2f}", f"{total:,}",
                      "" if cpu != cpu else f"{cpu:,.0f}", f"{rps / reference[0]:.2f}×")
    console = Console(width=160)
    console.print(table)
    kill_at = min(2.0, failover_seconds / 5)  # t=2 s of the default 10 s run
    outcome = await failover(token, clients, failover_seconds, kill_at)
    summary = Table(title=f"failover: 2 replicas, {clients} tasks, replica A SIGKILLed at t={kill_at:.0f} s "
                          f"of {failover_seconds:.0f} s (cool-down 5 s)")
    summary.add_column("measure")
    summary.add_column("value", justify="right")
    for measure, value in outcome.items():
        summary.add_row(measure, f"{value:,}" if isinstance(value, int) else str(value))
    console.print(summary)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=6)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--failover-seconds", type=float, default=10)
    options = parser.parse_args()
    asyncio.run(main(options.seconds, options.clients, options.failover_seconds))
