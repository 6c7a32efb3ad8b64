"""MCP tool calls over stdio: INTERACTION.ACT.MCP (per call and keep_alive) against the bare mcp SDK client.

Run: PYTHONPATH=src .venv/bin/python bench/mcp_calls.py [--calls 200]

The server is tests/interaction/mcp_server.py (the SDK's ``MCPServer``), tool ``add``.
``mcp SDK session`` is one ``mcp.Client`` kept open, calls awaited one after another
(the peer); ``ACT.MCP keep_alive`` the same calls through a runtime and the worker
(validation, ToolResult, NodeResult); ``ACT.MCP per call`` starts the server for
every call (the default), measured on fewer calls.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from rich.console import Console
from rich.table import Table

from ditto import create_ditto
from ditto.worker.interaction import McpStdioServer, create_interaction_worker

SERVER = Path(__file__).resolve().parents[1] / "tests" / "interaction" / "mcp_server.py"


async def timed(calls: int, call: Any) -> list[float]:
    out = []
    for index in range(calls):
        started = time.perf_counter()
        await call(index)
        out.append(time.perf_counter() - started)
    return out


async def run(calls: int, cold_calls: int) -> None:
    results: dict[str, list[float]] = {}
    async with Client(StdioServerParameters(command=sys.executable, args=[str(SERVER)]), cache=None) as client:
        await client.call_tool("add", {"a": 0, "b": 0})

        async def sdk(index: int) -> None:
            result = await client.call_tool("add", {"a": index, "b": 1})
            assert result.structured_content == {"result": index + 1}

        results["mcp SDK session"] = await timed(calls, sdk)

    for label, keep_alive, count in (("ACT.MCP keep_alive", True, calls), ("ACT.MCP per call", False, cold_calls)):
        worker = create_interaction_worker(mcp_servers={"bench": McpStdioServer(
            command=sys.executable, args=(str(SERVER),), keep_alive=keep_alive)})
        runtime = create_ditto(workers=[worker])
        await runtime.invoke("INTERACTION.ACT.MCP", {"server": "bench", "call": {"id": "w", "name": "add",
                                                                                "arguments": {"a": 0, "b": 0}}})

        async def act(index: int, runtime: Any = runtime) -> None:
            result = await runtime.invoke("INTERACTION.ACT.MCP", {"server": "bench", "call": {
                "id": f"c{index}", "name": "add", "arguments": {"a": index, "b": 1}}})
            assert result.unwrap().content == {"result": index + 1}

        results[label] = await timed(count, act)
        await runtime.close()
        await worker.aclose()

    peer = statistics.median(results["mcp SDK session"])
    table = Table(title="MCP add over stdio, sequential calls, medians")
    for column in ("path", "calls", "median ms", "p90 ms", "/ SDK session"):
        table.add_column(column, justify="left" if column == "path" else "right")
    for label, values in results.items():
        ordered = sorted(values)
        median = statistics.median(values)
        table.add_row(label, str(len(values)), f"{median * 1000:.2f}",
                      f"{ordered[int(len(ordered) * 0.9) - 1] * 1000:.2f}", f"{median / peer:.2f}×")
    Console(width=120).print(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--cold-calls", type=int, default=10)
    args = parser.parse_args()
    asyncio.run(run(args.calls, args.cold_calls))


if __name__ == "__main__":
    main()
