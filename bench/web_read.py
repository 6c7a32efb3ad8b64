"""Web read of a 1 MiB local HTTPS page: our tool against trafilatura called directly on the same bytes.

Run: .venv/bin/python bench/web_read.py [--runs 7] [--size-mib 1]
     .venv/bin/python bench/web_read.py --sqlite-docs [--crash-rounds 5]   (the real SQLite documentation)

A uvicorn HTTPS server on 127.0.0.1 (certificate from a trustme CA the client
trusts) serves one generated article page (paragraphs, navigation, sidebars,
footer) of the requested size. Three timings, interleaved run by run, medians:

* ``trafilatura direct``: ``trafilatura.extract(raw, **EXTRACT_OPTIONS)`` on the calling thread;
* ``tool extraction``: what WEB.READ does after the body arrived (the same extraction in
  the extraction child process, through ``asyncio.to_thread``, then the line split);
* ``tool read``: the whole ``WebClient.read`` (TLS GET, 4 MiB cap while streaming,
  SHA-256, extraction, lines, the frozen WebPage).

Goal (issue 11): tool / direct ≤ 1.2×.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import trafilatura
import trustme
from rich.console import Console
from rich.table import Table

from ditto.worker.interaction import WebClient, WebOptions
from ditto.worker.interaction.config import DEFAULT_EXTRACT_MEMORY_BYTES
from ditto.worker.interaction.extract import EXTRACT_OPTIONS, text_lines
from ditto.worker.interaction.extractor import shared_extractor

SQLITE_DOCS = Path("/usr/share/doc/sqlite3")

WORDS = [
    "backup", "retention", "policy", "database", "record", "customer", "region", "restore", "schedule",
    "storage", "archive", "snapshot", "replica", "index", "query", "engine", "log", "write", "ahead",
    "durability", "atomic", "commit", "page", "cache", "latency", "throughput", "failover", "cluster",
    "shard", "tenant", "audit", "compliance", "encryption", "key", "rotation",
]


SERVER_CODE = """
import sys, uvicorn
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route
body = open(sys.argv[1], "rb").read()
app = Starlette(routes=[Route("/page", lambda request: Response(body, media_type="text/html"))])
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning", ssl_certfile=sys.argv[3],
            ssl_keyfile=sys.argv[3])
"""


@contextmanager
def serve_https(body: bytes, pem: Path, scratch: Path) -> Iterator[int]:
    """uvicorn in its own process (so serving does not share our event loop), HTTPS with the trustme cert."""
    page = scratch / "page.html"
    page.write_bytes(body)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    process = subprocess.Popen([sys.executable, "-c", SERVER_CODE, str(page), str(port), str(pem)])
    try:
        deadline = time.monotonic() + 30
        while True:  # wait for the listening socket; startup is not measured
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the page server did not start") from None
                time.sleep(0.05)
        yield port
    finally:
        process.terminate()
        process.wait(10)


def make_page(size: int, seed: int = 7) -> bytes:
    """A plausible article page of about ``size`` bytes: boilerplate around many paragraphs."""
    rng = random.Random(seed)
    head = ("<!DOCTYPE html><html><head><meta charset='utf-8'><title>Storage handbook</title>"
            "<script>var tracking = 1;</script><style>body{font-family:serif}</style></head><body>"
            "<header><nav>" + " | ".join(f"<a href='/s{i}'>Section {i}</a>" for i in range(30)) + "</nav></header>"
            "<div class='layout'><aside class='sidebar'><ul>"
            + "".join(f"<li><a href='/t{i}'>Topic {i}</a></li>" for i in range(60)) + "</ul></aside><main><article>"
            "<h1>Storage handbook</h1>")
    tail = "</article></main></div><footer>Copyright Example Corp. All rights reserved.</footer></body></html>"
    parts = [head]
    used = len(head) + len(tail)
    section = 0
    while used < size:
        if rng.random() < 0.08:
            section += 1
            chunk = f"<h2>Part {section}</h2>"
        else:
            sentence_count = rng.randint(3, 7)
            sentences = []
            for _ in range(sentence_count):
                words = [rng.choice(WORDS) for _ in range(rng.randint(8, 20))]
                sentences.append(" ".join(words).capitalize() + ".")
            chunk = "<p>" + " ".join(sentences) + "</p>"
        parts.append(chunk)
        used += len(chunk)
    parts.append(tail)
    return "".join(parts).encode()


async def run(runs: int, size_mib: float) -> None:
    body = make_page(int(size_mib * 1024 * 1024))
    with tempfile.TemporaryDirectory() as scratch:
        ca = trustme.CA()
        pem = Path(scratch) / "server.pem"
        ca.issue_cert("127.0.0.1").private_key_and_cert_chain_pem.write_to_path(str(pem))
        context = ssl.create_default_context()
        ca.configure_trust(context)
        with serve_https(body, pem, Path(scratch)) as port:
            origin = f"https://127.0.0.1:{port}"
            client = WebClient(WebOptions(allowed_origins=[origin], ssl_context=context))
            url = f"{origin}/page"
            page = await client.read({"url": url})  # warm-up: connection, trafilatura's caches
            assert page.raw == body
            direct_text = trafilatura.extract(body, **EXTRACT_OPTIONS)
            assert direct_text == page.text, "the tool must extract exactly what trafilatura does"
            timings: dict[str, list[float]] = {"trafilatura direct": [], "tool extraction": [], "tool read": [],
                                               "transfer only (no extraction)": []}
            for _ in range(runs):
                started = time.perf_counter()
                trafilatura.extract(body, **EXTRACT_OPTIONS)
                timings["trafilatura direct"].append(time.perf_counter() - started)

                started = time.perf_counter()
                text_lines(await asyncio.to_thread(shared_extractor(DEFAULT_EXTRACT_MEMORY_BYTES).extract, body,
                                                   timeout_s=20, max_text_chars=10**7))
                timings["tool extraction"].append(time.perf_counter() - started)

                started = time.perf_counter()
                await client.read({"url": url})
                timings["tool read"].append(time.perf_counter() - started)

                started = time.perf_counter()
                await client._fetch(client.check_url(url))
                timings["transfer only (no extraction)"].append(time.perf_counter() - started)
            await client.aclose()

    direct = statistics.median(timings["trafilatura direct"])
    table = Table(title=f"web read of a {len(body) / 1048576:.2f} MiB HTTPS page "
                        f"({len(page.lines)} text lines), {runs} runs, medians")
    fastest = min(timings["trafilatura direct"])
    for column in ("path", "median ms", "min ms", "max ms", "median / direct", "min / direct"):
        table.add_column(column, justify="right" if column != "path" else "left")
    for label, values in timings.items():
        median = statistics.median(values)
        table.add_row(label, f"{median * 1000:.1f}", f"{min(values) * 1000:.1f}", f"{max(values) * 1000:.1f}",
                      f"{median / direct:.3f}×", f"{min(values) / fastest:.3f}×")
    Console(width=120).print(table)


#: One extraction pass over the pages in a fresh process: "direct" (one after another on the main thread) or
#: "threads" (the old reader: two at a time through asyncio.to_thread, sharing trafilatura's parser).
PASS_CODE = """
import asyncio, json, resource, sys, time
import trafilatura
from ditto.worker.interaction.extract import EXTRACT_OPTIONS
mode, paths = sys.argv[1], sys.argv[2:]
pages = [open(path, "rb").read() for path in paths]
times = []
def one(raw):
    started = time.perf_counter()
    trafilatura.extract(raw, **EXTRACT_OPTIONS)
    return time.perf_counter() - started
async def threads():
    for index in range(0, len(pages), 2):
        times.extend(await asyncio.gather(*(asyncio.to_thread(one, raw) for raw in pages[index:index + 2])))
started = time.perf_counter()
if mode == "direct":
    times = [one(raw) for raw in pages]
else:
    asyncio.run(threads())
print(json.dumps({"times": times, "total": time.perf_counter() - started,
                  "peak_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def _pass(mode: str, paths: list[str]) -> dict[str, Any] | int:
    """The pass's JSON report, or the signal number / exit status it died with."""
    import json
    import os

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    done = subprocess.run([sys.executable, "-c", PASS_CODE, mode, *paths], capture_output=True, text=True, env=env,
                          check=False)
    if done.returncode != 0:
        return done.returncode
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def _child_peak_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def _doc_pages() -> tuple[list[str], list[bytes]]:
    paths = sorted(str(path) for path in SQLITE_DOCS.glob("*.html"))
    if not paths:
        raise SystemExit(f"no SQLite documentation in {SQLITE_DOCS}: run scripts/services (sqlite3-doc)")
    return paths, [Path(path).read_bytes() for path in paths]


async def run_sqlite_docs(crash_rounds: int) -> None:
    """Every page of the real SQLite documentation.

    Time: trafilatura direct and ours (the extraction child) alternate page by page in this
    process, so load from other jobs falls on both alike. Memory and crashes: whole passes in
    fresh processes — direct, the old reader (two at a time through ``asyncio.to_thread``,
    ``crash_rounds`` times), and ours two at a time (the child's VmHWM plus this process's peak).
    """
    paths, pages = _doc_pages()
    size = sum(len(page) for page in pages)
    extractor = shared_extractor(DEFAULT_EXTRACT_MEMORY_BYTES)
    await asyncio.to_thread(extractor.extract, b"<p>warm</p>", timeout_s=20, max_text_chars=10)  # child start

    async def timed(raw: bytes) -> float:
        started = time.perf_counter()
        await asyncio.to_thread(extractor.extract, raw, timeout_s=60, max_text_chars=10**7)
        return time.perf_counter() - started

    direct_times: list[float] = []
    ours_times: list[float] = []
    for raw in pages:
        started = time.perf_counter()
        trafilatura.extract(raw, **EXTRACT_OPTIONS)
        direct_times.append(time.perf_counter() - started)
        ours_times.append(await timed(raw))
    table = Table(title=f"time: {len(paths)} real SQLite documentation pages ({size / 1048576:.1f} MiB of HTML), "
                        "alternating page by page")
    for column in ("path", "total s", "total / direct", "median ms/page", "p95 ms/page",
                   "median of per-page ratios"):
        table.add_column(column, justify="right" if column != "path" else "left")
    direct_total = sum(direct_times)
    ratios = [ours / direct for direct, ours in zip(direct_times, ours_times, strict=True)]
    for label, values, ratio in (("trafilatura direct", direct_times, "1.000×"),
                                 ("ours (extraction child, via to_thread)", ours_times,
                                  f"{statistics.median(ratios):.3f}×")):
        table.add_row(label, f"{sum(values):.2f}", f"{sum(values) / direct_total:.3f}×",
                      f"{statistics.median(values) * 1000:.1f}",
                      f"{sorted(values)[int(len(values) * 0.95)] * 1000:.1f}", ratio)
    Console(width=140).print(table)

    rows: list[tuple[str, float, float, str]] = []
    direct = _pass("direct", paths)
    if isinstance(direct, int):
        raise SystemExit(f"the direct pass died ({direct})")
    rows.append(("trafilatura direct, one at a time (fresh process)", float(direct["total"]),
                 direct["peak_kib"] / 1024, "0/1"))
    crashes, threaded = 0, []
    for _ in range(crash_rounds):
        result = _pass("threads", paths)
        if isinstance(result, int):
            crashes += 1
        else:
            threaded.append(result)
    rows.append(("before: two at a time in threads (fresh process)",
                 min((float(report["total"]) for report in threaded), default=float("nan")),
                 max((report["peak_kib"] for report in threaded), default=0) / 1024, f"{crashes}/{crash_rounds}"))
    extractor.close()
    extractor = shared_extractor(DEFAULT_EXTRACT_MEMORY_BYTES)
    started = time.perf_counter()
    for index in range(0, len(pages), 2):
        await asyncio.gather(*(timed(raw) for raw in pages[index:index + 2]))
    ours_total = time.perf_counter() - started
    pid = extractor.pid
    assert pid is not None
    rows.append(("after: ours, two at a time (the extraction child)", ours_total, _child_peak_kib(pid) / 1024, "0/1"))
    extractor.close()
    table = Table(title="whole passes: memory and crashes")
    for column in ("path", "total s", "peak RSS MiB", "crashed runs"):
        table.add_column(column, justify="right" if column != "path" else "left")
    for label, total, peak, crashed in rows:
        table.add_row(label, f"{total:.2f}", f"{peak:.0f}", crashed)
    Console(width=140).print(table)
    print("peak RSS: the pass's own process; for ours the extraction child's VmHWM (the reading process never loads "
          "trafilatura; here it also ran the direct timings, so its own peak says nothing)")


def main(argv: Any = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--size-mib", type=float, default=1.0)
    parser.add_argument("--sqlite-docs", action="store_true", help="extract every page of the SQLite docs")
    parser.add_argument("--crash-rounds", type=int, default=5, help="threaded passes, to count crashes")
    args = parser.parse_args(argv)
    if args.sqlite_docs:
        asyncio.run(run_sqlite_docs(args.crash_rounds))
    else:
        asyncio.run(run(args.runs, args.size_mib))


if __name__ == "__main__":
    main()
