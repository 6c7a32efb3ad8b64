"""Client cost per call in CPU instructions (valgrind's callgrind): HttpTransport vs raw aiohttp, same process.

Run: .venv/bin/python bench/http_client_instructions.py [--calls 240]   (needs Debian's `valgrind`)

Wall-clock CPU time per call swings by ±30 % on a shared machine (other processes evict caches and steal
cores), far more than the few percent the client adds to aiohttp. Instructions executed do not depend on
the load, so this is the steady measure of the issue-19 row "≥ 0.9× raw aiohttp doing the identical POST".

One `ditto serve` (a no-op node, not under valgrind) and one client process under callgrind: after a
warm-up it runs raw aiohttp (the identical POST bytes), then `runtime.invoke` → HttpTransport, then both
again, `--calls` calls each with 8 in flight; `os.getppid()` between the phases makes callgrind dump its
counters (`--dump-before=getppid`), so each phase's user-space instructions are read separately.
Kernel time (the socket system calls, alike for both) is not counted: the ratio here is the upper bound
of the ratio in CPU time.
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
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


async def _client(url: str, token: str, calls: int) -> None:
    import aiohttp

    sys.path.insert(0, str(ROOT))
    from bench.http_transport import REQUEST, _identical_body, connected
    from ditto import create_http_transport

    async with create_http_transport(id="bench", url=url, token=token) as transport:
        runtime = await connected(transport)
        headers = {"authorization": f"Bearer {token}", "content-type": "application/json"}
        body, target = _identical_body(url, token), f"{url}/v1/invoke"
        async with aiohttp.ClientSession(headers=headers) as session:
            async def ditto() -> None:
                result = await runtime.invoke("BENCH.NOOP", REQUEST)
                assert result.status == "success"

            async def raw() -> None:
                async with session.post(target, data=body) as response:
                    await response.read()
                    assert response.status == 200

            async def phase(call: object, count: int) -> None:
                async def one_task() -> None:
                    for _ in range(count // 8):
                        await call()  # type: ignore[operator]

                await asyncio.gather(*(one_task() for _ in range(8)))

            await phase(raw, 80)
            await phase(ditto, 80)
            os.getppid()  # callgrind dumps here: set-up and warm-up end
            for call in (raw, ditto, raw, ditto):
                await phase(call, calls)
                os.getppid()


def main(calls: int) -> None:
    if shutil.which("valgrind") is None:
        raise SystemExit("needs valgrind (apt-get install valgrind)")
    sys.path.insert(0, str(ROOT))
    from bench.http_transport import start_server

    token = secrets.token_urlsafe(24)
    # A long keep-alive: under valgrind the client is ~50× slower, and raw aiohttp (which, unlike
    # HttpTransport, does not check a pooled connection before reuse) would write into one the server closed.
    url, server = start_server(token, extra=["--keep-alive", "300"])
    try:
        with tempfile.TemporaryDirectory() as directory:
            out = Path(directory) / "callgrind.out"
            subprocess.run(["valgrind", "--tool=callgrind", "--dump-before=getppid", f"--callgrind-out-file={out}",
                            sys.executable, __file__, "--client", url, token, str(calls)],
                           cwd=ROOT, check=True, stderr=subprocess.DEVNULL)
            parts = sorted(Path(directory).glob("callgrind.out.*"), key=lambda p: int(p.suffix[1:]))
            totals = [int(re.search(r"^summary: (\d+)", p.read_text(), re.MULTILINE).group(1))  # type: ignore[union-attr]
                      for p in parts]
    finally:
        server.terminate()
        server.wait()
    if len(totals) != 5:
        raise SystemExit(f"expected 5 callgrind parts, got {len(totals)}")
    raw = [totals[1] / calls, totals[3] / calls]
    ditto = [totals[2] / calls, totals[4] / calls]
    print("| client | instructions per call (two phases) | vs raw aiohttp |")
    print("| --- | ---: | ---: |")
    print(f"| raw aiohttp, identical POST | {raw[0]:,.0f} / {raw[1]:,.0f} | 1.00× |")
    print(f"| runtime.invoke → HttpTransport | {ditto[0]:,.0f} / {ditto[1]:,.0f} | {sum(ditto) / sum(raw):.3f}× |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=240, help="calls per phase (a multiple of 8)")
    parser.add_argument("--client", nargs=3, metavar=("URL", "TOKEN", "CALLS"), help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.client:
        url_, token_, calls_ = options.client
        asyncio.run(_client(url_, token_, int(calls_)))
    else:
        main(options.calls)
