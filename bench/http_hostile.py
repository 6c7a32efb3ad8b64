"""A `ditto serve` replica under load, with and without hostile traffic, metrics and tracing, and serving
RETRIEVAL.SEARCH over SciFact: every comparison in one run, as ratios.

Run: .venv/bin/python bench/http_hostile.py [--seconds 10] [--rounds 2] [--scenarios hostile,tracing,search]
(needs Debian's `wrk`)

Rows (issue 19):
  * clean vs hostile: wrk (2 threads, 8 connections) posting BENCH.NOOP, alone and with ~20 hostile
    requests/s mixed in from another process (JSON nested 600 levels, a 400-digit timeoutMs, a NaN
    literal, a node that raises, two Authorization headers, a 400-digit number as input, clients
    hanging up mid-body, bodies and headers trickled past the 2 s timeouts). Goals: ≥ 0.9× the clean
    throughput, p99 ≤ 1.2× clean, ≤ 2 kB of server log per hostile request.
  * metrics + tracing on vs `--no-metrics --no-tracing`: with the OpenTelemetry API only (no SDK), with an
    SDK keeping 1 trace in 100 by its own sampler, with 1 in 100 sampled by `--trace-sample-ratio 0.01`
    before the SDK is asked, with callers sending an unsampled `traceparent`, and with an SDK recording
    every span (batched, to an exporter that drops them). Goal ≥ 0.9×. Also the server's CPU time per call
    (all its threads, from /proc), which the other load on a shared box moves much less than calls/s.
  * RETRIEVAL.SEARCH (BM25 over SciFact's 5,183 abstracts, the test queries in turn) vs BENCH.NOOP on
    the same replica, driven by one aiohttp process with 8 calls in flight (answers not parsed) and by
    the project's client (`runtime.invoke` → HttpTransport, answers parsed), in turn, then by wrk once
    each. Goal ≥ 0.8×. Also the server's CPU time per call, as for the tracing rows (`bench/search_cost.py`
    splits it into its pieces in-process).
Scenarios alternate `--rounds` times (ABBA, or each first in turn); the table shows every round and the
ratios of the medians.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import re
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
NOOP_BODY = '{"node":"BENCH.NOOP","input":{"query":"agent memory","limit":5}}'
Result = tuple[float, float, float]  # calls/s, p50 ms, p99 ms


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """One `ditto serve` process; its standard error goes to a file so its log can be measured."""

    def __init__(self, factory: str, token: str, *extra: str) -> None:
        import httpx

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = Path(tempfile.mkstemp(prefix="ditto-serve-", suffix=".log")[1])
        env = {**os.environ, "DITTO_TRANSPORT_HTTP_WORKER_TOKEN": token}
        with self.log.open("wb") as err:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "ditto", "serve", "--worker", f"bench._service_workers:{factory}",
                 "--port", str(self.port), "--header-timeout", "2", "--body-timeout", "2", *extra],
                cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=err)
        for _ in range(1200):
            try:
                if httpx.get(f"{self.url}/healthz").status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.05)
        self.process.kill()
        raise SystemExit(f"ditto serve did not start: {self.log.read_text()[-2000:]}")

    def log_bytes(self) -> int:
        return self.log.stat().st_size

    def cpu_ns(self) -> int:
        """CPU time the server process has used so far, all its threads (Linux's schedstat, in ns): per call,
        a measure of the server's own cost that other load on the box changes much less than calls/s."""
        tasks = Path(f"/proc/{self.process.pid}/task")
        return sum(int((task / "schedstat").read_text().split()[0]) for task in tasks.iterdir())

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)
        self.log.unlink()


def _ms(text: str) -> float:
    match = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text)
    if match is None:
        raise SystemExit(f"wrk printed a latency this script cannot read: {text!r}")
    number, unit = match.groups()
    return float(number) * {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0}[unit]


def wrk(url: str, token: str, seconds: float, bodies: Sequence[str], traceparent: str | None = None) -> Result:
    """wrk with 2 threads and 8 connections posting ``bodies`` in turn (with ``traceparent`` on every call)."""
    script = Path(tempfile.mkstemp(suffix=".lua")[1])
    quoted = ",".join("[==[" + body + "]==]" for body in bodies)
    trace = f', ["traceparent"] = "{traceparent}"' if traceparent else ""
    script.write_text(f"""
local bodies = {{{quoted}}}
local i = 0
local headers = {{["Content-Type"] = "application/json", ["Authorization"] = "Bearer {token}"{trace}}}
request = function()
  i = i % #bodies + 1
  return wrk.format("POST", "/v1/invoke", headers, bodies[i])
end
""")
    try:
        done = subprocess.run(["wrk", "-t2", "-c8", f"-d{int(seconds)}s", "--latency", "-s", str(script), url],
                              capture_output=True, text=True, check=True)
    finally:
        script.unlink()
    out = done.stdout
    if "Non-2xx" in out:
        raise SystemExit(f"wrk saw failed calls:\n{out}")
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    p50 = _ms(re.search(r"^\s+50%\s+(\S+)", out, re.MULTILINE).group(1))  # type: ignore[union-attr]
    p99 = _ms(re.search(r"^\s+99%\s+(\S+)", out, re.MULTILINE).group(1))  # type: ignore[union-attr]
    return rate, p50, p99


async def aiohttp_load(url: str, token: str, seconds: float, bodies: Sequence[bytes], inflight: int = 8) -> Result:
    """One process, ``inflight`` calls at a time on pooled keep-alive connections, each answer checked."""
    import aiohttp

    turn = itertools.cycle(bodies)
    headers = {"authorization": f"Bearer {token}", "content-type": "application/json"}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=inflight)) as session:
        async def call() -> None:
            async with session.post(f"{url}/v1/invoke", data=next(turn), headers=headers) as response:
                answer = await response.read()
            if response.status != 200 or b'"status":"success"' not in answer:
                raise SystemExit(f"a call failed: {response.status} {answer[:200]!r}")

        return await _timed_calls(call, seconds, inflight)


async def _timed_calls(call: Callable[[], Awaitable[None]], seconds: float, inflight: int) -> Result:
    """``inflight`` loops calling ``call`` for ``seconds`` (the transport bench's driver): calls/s, p50, p99 ms."""
    from http_transport import drive

    rate, p50, p99, _calls, _cpu = (await drive(call, inflight, seconds)).row()
    return rate, p50, p99


async def transport_load(url: str, token: str, seconds: float, calls: tuple[str, Sequence[Any]],
                         inflight: int = 8) -> Result:
    """The project's client (``runtime.invoke`` → HttpTransport), ``inflight`` calls at a time, each answer checked."""
    from ditto import create_ditto, create_http_transport

    node, inputs = calls
    turn = itertools.cycle(inputs)
    async with create_http_transport(id="bench", url=url, token=token) as transport:
        runtime = create_ditto(transports=[transport])
        for worker in await transport.workers():
            runtime.register_remote(address=worker["address"], transport_id="bench",
                                    capabilities=worker["capabilities"])

        async def call() -> None:
            result = await runtime.invoke(node, next(turn))
            if result.status != "success":
                raise SystemExit(f"a call failed: {result.error}")

        return await _timed_calls(call, seconds, inflight)


# -- hostile traffic (run in its own process: `http_hostile.py --hostile URL SECONDS RATE`) --------------

def _request(token: str, body: bytes, *, extra: str = "") -> bytes:
    return (f"POST /v1/invoke HTTP/1.1\r\nhost: bench\r\nauthorization: Bearer {token}\r\n{extra}"
            f"content-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n").encode() + body


async def _exchange(port: int, data: bytes, *, trickle: bytes = b"", hang_up: bool = False) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(data)
        await writer.drain()
        if hang_up:
            return
        for byte in trickle:  # one byte every 0.3 s until the server gives up on us
            if reader.at_eof():
                break
            writer.write(bytes([byte]))
            await writer.drain()
            try:
                if await asyncio.wait_for(reader.read(65536), 0.3) == b"":
                    break
            except TimeoutError:
                continue
        await asyncio.wait_for(reader.read(65536), 5)
    except (ConnectionError, TimeoutError):
        pass
    finally:
        writer.close()


def _hostile_kinds(port: int, token: str) -> list[Any]:
    deep = b'{"node":"BENCH.NOOP","input":' + b"[" * 600 + b"]" * 600 + b"}"
    return [
        lambda: _exchange(port, _request(token, deep)),
        lambda: _exchange(port, _request(token, b'{"node":"BENCH.NOOP","input":1,"timeoutMs":1' + b"0" * 400
                                         + b"}")),
        lambda: _exchange(port, _request(token, b'{"node":"BENCH.NOOP","input":NaN}')),
        lambda: _exchange(port, _request(token, b'{"node":"BENCH.FAIL","input":{"secret":"hunter2"}}')),
        lambda: _exchange(port, _request(token, b'{"node":"BENCH.NOOP","input":1}',
                                         extra=f"authorization: Bearer {token}\r\n")),
        lambda: _exchange(port, _request(token, b'{"node":"BENCH.NOOP","input":1' + b"0" * 400 + b"}")),
        lambda: _exchange(port, _request(token, b'{"node":"BENCH.NOOP","input":"' + b"x" * 60_000 + b'"}')[:30_000],
                          hang_up=True),
        lambda: _exchange(port, _request(token, b'{"node":"BENCH.NOOP","input":"' + b"x" * 100 + b'"}')[:-60],
                          trickle=b"x" * 40),
        lambda: _exchange(port, b"POST /v1/invoke HTTP/1.1\r\nhost: bench\r\n", trickle=b"x-pad: " + b"y" * 40),
    ]


async def hostile(url: str, seconds: float, rate: float) -> int:
    token = os.environ["DITTO_TRANSPORT_HTTP_WORKER_TOKEN"]
    kinds = itertools.cycle(_hostile_kinds(int(url.rsplit(":", 1)[1]), token))
    tasks: list[asyncio.Task[None]] = []
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        tasks.append(asyncio.create_task(next(kinds)()))
        await asyncio.sleep(1 / rate)
    await asyncio.gather(*tasks)
    return len(tasks)


# -- the run ---------------------------------------------------------------------------------------------

def _scifact_bodies(limit: int = 200) -> list[str]:
    from _service_workers import SCIFACT  # type: ignore[import-not-found]

    queries = [json.loads(line) for line in (SCIFACT / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    with (SCIFACT / "qrels" / "test.tsv").open(encoding="utf-8") as handle:
        test_ids = {line.split("\t")[0] for line in list(handle)[1:]}
    chosen = [q["text"] for q in queries if q["_id"] in test_ids][:limit]
    return [json.dumps({"node": "RETRIEVAL.SEARCH", "input": {"query": {"content": text},
                                                               "target": {"name": "scifact"}, "limit": 10}})
            for text in chosen]


def _row(name: str, results: list[Result], extra: str = "") -> str:
    rates = " / ".join(f"{r[0]:,.0f}" for r in results)
    return (f"| {name} | {rates} | {statistics.median(r[0] for r in results):,.0f} | "
            f"{statistics.median(r[1] for r in results):.2f} | {statistics.median(r[2] for r in results):.2f} |"
            f"{extra}")


#: A caller's trace context whose sampled flag is 0 (the caller decided not to record this trace).
UNSAMPLED = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"
SCENARIOS = ("hostile", "tracing", "search")


def main(seconds: float, rounds: int, scenarios: Sequence[str] = SCENARIOS) -> None:
    if shutil.which("wrk") is None:
        raise SystemExit("needs wrk (apt-get install wrk)")
    token = secrets.token_hex(16)
    os.environ["DITTO_TRANSPORT_HTTP_WORKER_TOKEN"] = token
    lines = ["| scenario | calls/s per round | calls/s (median) | p50 ms | p99 ms | |",
             "| --- | ---: | ---: | ---: | ---: | --- |"]
    if "hostile" in scenarios:
        lines += _hostile_rows(token, seconds, rounds)
    if "tracing" in scenarios:
        lines += _tracing_rows(token, seconds, rounds)
    if "search" in scenarios:
        lines += _search_rows(token, seconds, rounds)
    print("\n".join(lines))


def _hostile_rows(token: str, seconds: float, rounds: int) -> list[str]:
    lines: list[str] = []
    server = Server("make", token)
    clean: list[Result] = []
    mixed: list[Result] = []
    log_per_hostile: list[float] = []
    try:
        for round_ in range(rounds):
            for hostile_now in (False, True) if round_ % 2 == 0 else (True, False):  # ABBA: drift cancels
                if not hostile_now:
                    clean.append(wrk(server.url, token, seconds, [NOOP_BODY]))
                    continue
                before = server.log_bytes()
                # The sender sends for a little longer than wrk runs, and wrk starts only once the sender's
                # interpreter is up: its start-up (imports, on the same two cores) is not hostile traffic.
                sender = subprocess.Popen([sys.executable, __file__, "--hostile", server.url, str(seconds + 1), "20"],
                                          cwd=ROOT, stdout=subprocess.PIPE, text=True)
                assert sender.stdout is not None
                if sender.stdout.readline().strip() != "ready":
                    raise SystemExit("the hostile sender did not start")
                mixed.append(wrk(server.url, token, seconds, [NOOP_BODY]))
                sent = int(sender.communicate(timeout=60)[0].strip())
                time.sleep(0.5)
                log_per_hostile.append((server.log_bytes() - before) / sent)
    finally:
        server.stop()
    clean_rate, clean_p99 = statistics.median(r[0] for r in clean), statistics.median(r[2] for r in clean)
    mixed_rate, mixed_p99 = statistics.median(r[0] for r in mixed), statistics.median(r[2] for r in mixed)
    lines.append(_row("wrk, BENCH.NOOP, clean", clean, " |"))
    lines.append(_row("wrk, BENCH.NOOP, + 20 hostile requests/s", mixed,
                      f" {mixed_rate / clean_rate:.2f}× calls/s, {mixed_p99 / clean_p99:.2f}× p99, "
                      f"{max(log_per_hostile):,.0f} log bytes per hostile request |"))

    return lines


def _tracing_rows(token: str, seconds: float, rounds: int) -> list[str]:
    lines: list[str] = []
    # name: (server, traceparent every call carries)
    variants = {"metrics + tracing hooks, no SDK installed": (Server("make", token), None),
                "metrics + tracing, SDK keeping 1 % of traces (its own sampler)": (Server("traced_sampled", token),
                                                                                    None),
                "metrics + tracing, SDK, `--trace-sample-ratio 0.01`": (
                    Server("traced", token, "--trace-sample-ratio", "0.01"), None),
                "metrics + tracing, SDK, callers send an unsampled `traceparent`": (Server("traced", token),
                                                                                   UNSAMPLED),
                "metrics + tracing, SDK recording every span": (Server("traced", token), None),
                "--no-metrics --no-tracing": (Server("make", token, "--no-metrics", "--no-tracing"), None)}
    runs: dict[str, list[Result]] = {name: [] for name in variants}
    cpu: dict[str, list[float]] = {name: [] for name in variants}  # server CPU µs per call, per round
    try:
        names = list(variants)
        for round_ in range(rounds):
            for name in names[round_ % len(names):] + names[:round_ % len(names)]:  # each goes first in turn
                server, traceparent = variants[name]
                before = server.cpu_ns()
                runs[name].append(wrk(server.url, token, seconds, [NOOP_BODY], traceparent))
                cpu[name].append((server.cpu_ns() - before) / 1000 / (runs[name][-1][0] * seconds))
    finally:
        for variant, _ in variants.values():
            variant.stop()
    off_rate = statistics.median(r[0] for r in runs["--no-metrics --no-tracing"])
    off_cpu = statistics.median(cpu["--no-metrics --no-tracing"])
    for name, results in runs.items():
        ratio = statistics.median(r[0] for r in results) / off_rate
        per_call = statistics.median(cpu[name])
        lines.append(_row(f"wrk, {name}", results, f" {ratio:.2f}× calls/s; server CPU {per_call:.1f} µs/call "
                                                   f"({off_cpu / per_call:.2f}×) |"))
    return lines


def _search_rows(token: str, seconds: float, rounds: int) -> list[str]:
    lines: list[str] = []
    searches = _scifact_bodies()
    inputs = [json.loads(body)["input"] for body in searches]
    service = Server("scifact", token)
    runs: dict[tuple[str, bool], list[Result]] = {(client, searching): [] for client in ("aiohttp", "ditto", "wrk")
                                                  for searching in (False, True)}
    cpu: dict[tuple[str, bool], list[float]] = {key: [] for key in runs}  # server CPU µs per call, per round
    client_cpu: dict[tuple[str, bool], list[float]] = {key: [] for key in runs}  # the load generator's, likewise

    def measured(key: tuple[str, bool], load: Callable[..., Any], *args: Any) -> None:
        before, mine, children = service.cpu_ns(), time.process_time(), _children_cpu()
        result = load(*args)
        runs[key].append(asyncio.run(result) if asyncio.iscoroutine(result) else result)
        calls = runs[key][-1][0] * seconds
        cpu[key].append((service.cpu_ns() - before) / 1000 / calls)
        # wrk is a child process (its CPU counts once it has exited); the Python loads run in this one
        spent = _children_cpu() - children if key[0] == "wrk" else time.process_time() - mine
        client_cpu[key].append(spent * 1e6 / calls)

    try:
        for round_ in range(rounds):
            for searching in (False, True) if round_ % 2 == 0 else (True, False):
                bodies = [b.encode() for b in searches] if searching else [NOOP_BODY.encode()]
                calls = ("RETRIEVAL.SEARCH", inputs) if searching else ("BENCH.NOOP", [json.loads(NOOP_BODY)["input"]])
                measured(("aiohttp", searching), aiohttp_load, service.url, token, seconds, bodies)
                measured(("ditto", searching), transport_load, service.url, token, seconds, calls)
        for searching in (False, True):
            measured(("wrk", searching), wrk, service.url, token, seconds, searches if searching else [NOOP_BODY])
    finally:
        service.stop()
    for client, label in (("aiohttp", "aiohttp 1 × 8 (answers not parsed)"),
                          ("ditto", "HttpTransport 1 × 8 (answers parsed into NodeResults)"), ("wrk", "wrk")):
        noop, search = runs[client, False], runs[client, True]
        ratio = statistics.median(r[0] for r in search) / statistics.median(r[0] for r in noop)
        noop_cpu, search_cpu = statistics.median(cpu[client, False]), statistics.median(cpu[client, True])
        noop_own, search_own = statistics.median(client_cpu[client, False]), statistics.median(client_cpu[client, True])
        # Server and client share this box's cores: however the work were spread, the searches could not
        # go faster than all the cores divided by the CPU one search costs on both ends together.
        ceiling = (os.cpu_count() or 1) * 1e6 / (search_cpu + search_own) / statistics.median(r[0] for r in noop)
        lines.append(_row(f"{label}, BENCH.NOOP (SciFact replica)", noop,
                          f" server CPU {noop_cpu:.1f} µs/call, client {noop_own:.1f} |"))
        lines.append(_row(f"{label}, RETRIEVAL.SEARCH BM25 SciFact", search,
                          f" {ratio:.2f}×; server CPU {search_cpu:.1f} µs/call ({noop_cpu / search_cpu:.2f}×), "
                          f"client {search_own:.1f}; CPU-bound ceiling {ceiling:.2f}× |"))
    return lines


def _children_cpu() -> float:
    """CPU seconds (user + system) of this process's children that have exited."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--scenarios", default=",".join(SCENARIOS),
                        help=f"comma-separated, any of {', '.join(SCENARIOS)} (default: all)")
    parser.add_argument("--hostile", nargs=3, metavar=("URL", "SECONDS", "RATE"), help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.hostile:
        url, secs, per_second = options.hostile
        print("ready", flush=True)
        print(asyncio.run(hostile(url, float(secs), float(per_second))))
    else:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        chosen = [name.strip() for name in options.scenarios.split(",") if name.strip()]
        if not chosen or set(chosen) - set(SCENARIOS):
            parser.error(f"--scenarios takes {', '.join(SCENARIOS)}")
        main(options.seconds, options.rounds, chosen)
