"""INTERACTION's error codes as docs/interaction.md documents them (INT-1, INT-2, INT-5, INT-6), and the
4 MiB cap on a tool's answer.

Issue 15, "Tests that catch the bug" (INTERACTION): the planted bugs changed a refusal's code (a tool
answer over the cap reported as TOOL_FAILED, or let through), measured the cap in characters instead of
UTF-8 bytes, or turned a request problem into a failed tool. Every test drives the real worker in a runtime,
so what is checked is what an application sees: the node's status, the ``ToolResult``'s status and code, and
the observation OBSERVE makes of it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
import sys
from pathlib import Path
from typing import Any

from ditto import create_ditto
from ditto.signal import AbortController
from ditto.worker.interaction import (
    McpStdioServer,
    ToolError,
    WebOptions,
    create_interaction_worker,
)
from ditto.worker.interaction.sdk import MAX_TOOL_CONTENT_BYTES
from ditto.worker.interaction.types import INTERACTION_ERROR_CODES
from tests.support.doc_blocks import DOCS

from .conftest import Site

MCP_SERVER = Path(__file__).with_name("mcp_server.py")


def documented_codes() -> list[str]:
    """The codes of the "Errors" table of docs/interaction.md, in the page's order."""
    text = (DOCS / "interaction.md").read_text(encoding="utf-8")
    section = text.split("\n## Errors\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `(INTERACTION_[A-Z_]+)` \|", section, flags=re.MULTILINE)


def test_the_documented_codes_are_exactly_the_codes() -> None:
    """INT-6 (issue 15): the page's error table lists every code once, and no code the worker lacks."""
    codes = documented_codes()
    assert len(codes) == len(set(codes)) and set(codes) == INTERACTION_ERROR_CODES


def text_of(size: int, char: str = "x") -> str:
    """A string whose JSON form (two quotes around it) is exactly ``size`` UTF-8 bytes."""
    width = len(char.encode("utf-8"))
    assert (size - 2) % width == 0
    return char * ((size - 2) // width)


async def test_a_tool_answer_over_the_cap_is_refused_with_its_code() -> None:
    """INT-6 (issue 15, tool answer cap): an answer of exactly MAX_TOOL_CONTENT_BYTES JSON bytes is returned;
    one byte more, or a string of fewer characters than the cap whose UTF-8 form passes it, gives a
    successful node whose ToolResult is status "error" with INTERACTION_RESPONSE_TOO_LARGE and its documented
    message; OBSERVE reports the same code."""
    sizes = {"at_cap": text_of(MAX_TOOL_CONTENT_BYTES), "over_cap": text_of(MAX_TOOL_CONTENT_BYTES + 1),
             "wide": text_of(MAX_TOOL_CONTENT_BYTES + 2, "é")}
    assert len(sizes["wide"]) < MAX_TOOL_CONTENT_BYTES

    def answer(which: str) -> str:
        """Answer a string of a chosen size."""
        return sizes[which]

    worker = create_interaction_worker(tools=[answer])
    runtime = create_ditto(workers=[worker])
    try:
        fits = await runtime.invoke("INTERACTION.ACT.TOOL", {"call": {"id": "c0", "name": "answer",
                                                                      "arguments": {"which": "at_cap"}}})
        assert fits.status == "success" and fits.output.status == "success"
        assert fits.output.content == sizes["at_cap"]
        for which in ("over_cap", "wide"):
            refused = await runtime.invoke("INTERACTION.ACT.TOOL", {"call": {"id": "c1", "name": "answer",
                                                                             "arguments": {"which": which}}})
            assert refused.status == "success", which
            result = refused.output
            assert result.status == "error" and result.error is not None, which
            assert result.error.code == "INTERACTION_RESPONSE_TOO_LARGE"
            assert result.error.message == f"The tool's answer is larger than {MAX_TOOL_CONTENT_BYTES} bytes"
            assert result.content == result.error.message and result.source == "tool:answer"
            observed = await runtime.invoke("INTERACTION.OBSERVE", {"result": result})
            assert observed.output.status == "error"
            assert observed.output.error.code == "INTERACTION_RESPONSE_TOO_LARGE"
    finally:
        await runtime.close()
        await worker.aclose()


async def test_an_mcp_answer_over_the_cap_is_refused_with_its_code() -> None:
    """INT-2, INT-6 (issue 15): the same cap holds for an MCP tool's answer (here the test server's echo)."""
    worker = create_interaction_worker(mcp_servers={"local": McpStdioServer(
        command=sys.executable, args=(str(MCP_SERVER),), timeout_s=60)})
    runtime = create_ditto(workers=[worker])
    try:
        done = await runtime.invoke("INTERACTION.ACT.MCP", {"server": "local", "call": {
            "id": "m1", "name": "echo", "arguments": {"text": "y" * MAX_TOOL_CONTENT_BYTES}}})
    finally:
        await runtime.close()
        await worker.aclose()
    assert done.status == "success" and done.output.status == "error"
    assert done.output.error.code == "INTERACTION_RESPONSE_TOO_LARGE" and done.output.source == "mcp:local/echo"


async def test_every_documented_code_reaches_the_application_as_documented(site: Site,
                                                                           web_options: WebOptions) -> None:
    """INT-6 (issue 15, codes as documented): each code of the page's table, produced through the worker in a
    runtime: request problems fail the node with the code; a tool that ran and failed is a successful node
    whose ToolResult has the code; a page the reader refuses fails WEB.READ with the code; a fired signal and
    timeout= give status cancelled / timeout with INTERACTION_CANCELLED / INTERACTION_TIMEOUT."""
    started = asyncio.Event()

    def lookup(term: str) -> str:
        """Find a glossary entry."""
        raise ToolError(f"no entry for {term}")

    async def wait() -> str:
        """Wait until cancelled."""
        started.set()
        await asyncio.Event().wait()
        return "never"

    short = dataclasses.replace(web_options, timeout_s=0.5)
    worker = create_interaction_worker(tools=[lookup, wait], web=short)
    runtime = create_ditto(workers=[worker])
    seen: dict[str, str] = {}

    def tool_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"call": {"id": "c1", "name": name, "arguments": arguments}}

    async def node_error(node: str, input: Any, status: str = "error", **options: Any) -> None:
        result = await runtime.invoke(node, input, **options)
        assert result.status == status and result.error is not None, (node, input, result)
        seen[result.error.code] = status

    try:
        await node_error("INTERACTION.ACT.TOOL", tool_call("lookup", {"term": 5}))
        await node_error("INTERACTION.ACT.TOOL", tool_call("nowhere", {}))
        ran = await runtime.invoke("INTERACTION.ACT.TOOL", tool_call("lookup", {"term": "wal"}))
        assert ran.status == "success" and ran.output.status == "error"
        assert (ran.output.error.code, ran.output.content) == ("INTERACTION_TOOL_FAILED", "no entry for wal")
        seen["INTERACTION_TOOL_FAILED"] = "tool result"
        await node_error("INTERACTION.WEB.READ", {"url": site.url("/page").replace("https://", "http://")})
        await node_error("INTERACTION.WEB.READ", {"url": site.url("/redirect-same")})
        await node_error("INTERACTION.WEB.READ", {"url": site.url("/json")})
        big = await runtime.invoke("INTERACTION.WEB.READ", {"url": site.url("/big")})
        assert big.status == "error" and big.error is not None and big.error.code == "INTERACTION_RESPONSE_TOO_LARGE"
        missing = await runtime.invoke("INTERACTION.WEB.READ", {"url": site.url("/missing")})
        assert missing.status == "error" and missing.error.code == "INTERACTION_TOOL_FAILED"
        await node_error("INTERACTION.ACT.TOOL", tool_call("wait", {}), status="timeout", timeout=0.3)
        controller = AbortController()
        started.clear()
        call = asyncio.create_task(runtime.invoke("INTERACTION.ACT.TOOL", tool_call("wait", {}),
                                                  signal=controller.signal))
        await started.wait()
        controller.abort()
        cancelled = await call
        assert cancelled.status == "cancelled" and cancelled.error.code == "INTERACTION_CANCELLED"
        seen["INTERACTION_CANCELLED"] = "cancelled"
        trickle = await runtime.invoke("INTERACTION.WEB.READ", {"url": site.url("/trickle")})
        assert trickle.error is not None and trickle.error.code == "INTERACTION_TIMEOUT"
        assert trickle.status == "timeout"
    finally:
        await runtime.close()
        await worker.aclose()
    assert seen == {"INTERACTION_INVALID_INPUT": "error", "INTERACTION_UNKNOWN_TOOL": "error",
                    "INTERACTION_TOOL_FAILED": "tool result", "INTERACTION_ORIGIN_NOT_ALLOWED": "error",
                    "INTERACTION_REDIRECT_REFUSED": "error", "INTERACTION_UNSUPPORTED_CONTENT": "error",
                    "INTERACTION_TIMEOUT": "timeout", "INTERACTION_CANCELLED": "cancelled"}
    assert {*seen, "INTERACTION_RESPONSE_TOO_LARGE"} == set(documented_codes())
