"""Web read of a 1 MiB local HTTPS page: our tool against trafilatura called directly on the same bytes.

Run: .venv/bin/python bench/web_read.py [--runs 7] [--size-mib 1]

A uvicorn HTTPS server on 127.0.0.1 (certificate from a trustme CA the client
trusts) serves one generated article page (paragraphs, navigation, sidebars,
footer) of the requested size. Three timings, interleaved run by run, medians:

* ``trafilatura direct``: ``trafilatura.extract(raw, **EXTRACT_OPTIONS)`` on the calling thread;
* ``tool extraction``: what WEB.READ does after the body arrived (``asyncio.to_thread``
  of the same extraction, line split);
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
from ditto.worker.interaction.extract import EXTRACT_OPTIONS, extract_main_text, text_lines

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
                text_lines(await asyncio.to_thread(extract_main_text, body))
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


def main(argv: Any = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--size-mib", type=float, default=1.0)
    args = parser.parse_args(argv)
    asyncio.run(run(args.runs, args.size_mib))


if __name__ == "__main__":
    main()
