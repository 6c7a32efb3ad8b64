"""The per-call CPU cost of metrics and tracing in the worker HTTP app, measured in-process (issue 19).

Run: PYTHONPATH=src .venv/bin/python bench/tracing_cost.py [--calls 2000] [--batches 15] [--variants a,b,...]
     [--profile VARIANT]

`bench/http_hostile.py --scenarios tracing` measures the same variants end to end under wrk, where the
load generator shares the cores and single rounds vary by up to 2×. Here the Starlette app is driven
directly over ASGI (no socket, no HTTP parser) with one BENCH.NOOP call at a time, so what is left is the
app's own work per call, and a difference of a few µs is visible on a loaded box. Each variant runs in
a process of its own (an SDK, once installed as the global provider, stays), the variants take turns
`--rounds` times, and the table shows per variant the best and the median batch mean, in µs per call.
``--profile VARIANT`` prints a cProfile of that variant instead (sorted by own time).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "bench-token-0123456789abcdef"
BODY = b'{"node":"BENCH.NOOP","input":{"query":"agent memory","limit":5}}'
UNSAMPLED = b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"
SAMPLED = b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

#: name: (worker factory in bench/_service_workers.py, app options, traceparent sent with every call)
VARIANTS: dict[str, tuple[str, dict[str, Any], bytes | None]] = {
    "off": ("make", {"metrics": False, "tracing": False}, None),
    "metrics": ("make", {"tracing": False}, None),
    "hooks-no-sdk": ("make", {}, None),
    "sdk-tracing-off": ("traced", {"tracing": False}, None),
    "sdk-ratio-0.01": ("traced", {"trace_sample_ratio": 0.01}, None),
    "sdk-ratio-0": ("traced", {"trace_sample_ratio": 0.0}, None),
    "sdk-unsampled-parent": ("traced", {}, UNSAMPLED),
    "sdk-own-1pct": ("traced_sampled", {}, None),
    "sdk-every-span": ("traced", {}, None),
    "sdk-sampled-parent": ("traced", {}, SAMPLED),
}


def _app(variant: str) -> Any:
    import _service_workers as workers

    from ditto import create_ditto, create_worker_http_app

    factory, options, _ = VARIANTS[variant]
    runtime = create_ditto(workers=getattr(workers, factory)())
    return create_worker_http_app(runtime, token=TOKEN, **options)


def _scope(traceparent: bytes | None) -> dict[str, Any]:
    from _asgi import invoke_scope

    return invoke_scope(TOKEN, len(BODY), [(b"traceparent", traceparent)] if traceparent is not None else [])


async def _batches(variant: str, calls: int, batches: int, app: Any = None) -> list[float]:
    """Mean µs per call of each batch of ``calls`` sequential calls (after a warm-up batch)."""
    app = app or _app(variant)
    from _asgi import Exchange

    scope = _scope(VARIANTS[variant][2])
    exchange = Exchange(BODY)

    async def one_batch() -> float:
        started = time.perf_counter_ns()
        for _ in range(calls):
            await app(dict(scope), exchange.receive, exchange.send)
        return (time.perf_counter_ns() - started) / calls / 1000

    await one_batch()
    means = [await one_batch() for _ in range(batches)]
    if set(exchange.statuses) != {200}:
        raise SystemExit(f"{variant}: the app answered {sorted(set(exchange.statuses))}")
    return means


def _child(variant: str, calls: int, batches: int) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    from ditto.transport._serve import loop_factory

    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        print(json.dumps(runner.run(_batches(variant, calls, batches))))


def _profile(variant: str, calls: int) -> None:
    import cProfile
    import pstats

    sys.path.insert(0, str(ROOT / "bench"))
    profiler = cProfile.Profile()

    async def run() -> None:
        app = _app(variant)
        await _batches(variant, 200, 1, app)
        profiler.enable()
        await _batches(variant, calls, 1, app)
        profiler.disable()

    asyncio.run(run())
    pstats.Stats(profiler).sort_stats("tottime").print_stats(int(os.environ.get("BENCH_PROFILE_ROWS", "30")))


def main(variants: list[str], calls: int, batches: int, rounds: int) -> None:
    results: dict[str, list[float]] = {name: [] for name in variants}
    for round_ in range(rounds):
        for name in variants[round_ % len(variants):] + variants[:round_ % len(variants)]:
            done = subprocess.run([sys.executable, __file__, "--child", name, "--calls", str(calls),
                                   "--batches", str(batches)], capture_output=True, text=True, check=True)
            results[name] += json.loads(done.stdout.strip().splitlines()[-1])
    base = min(results["off"]) if "off" in results else None
    print("| variant | best µs/call | median µs/call | best − off |")
    print("| --- | ---: | ---: | ---: |")
    for name, means in results.items():
        extra = f"{min(means) - base:+.1f}" if base is not None else ""
        print(f"| {name} | {min(means):.1f} | {statistics.median(means):.1f} | {extra} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--batches", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--profile", choices=list(VARIANTS))
    parser.add_argument("--child", choices=list(VARIANTS), help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        _child(options.child, options.calls, options.batches)
    elif options.profile:
        _profile(options.profile, options.calls)
    else:
        chosen = [name.strip() for name in options.variants.split(",") if name.strip()]
        if set(chosen) - set(VARIANTS):
            parser.error(f"--variants takes {', '.join(VARIANTS)}")
        main(chosen, options.calls, options.batches, options.rounds)
