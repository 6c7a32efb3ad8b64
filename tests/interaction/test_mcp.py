"""MCP tools over stdio and streamable HTTP with the official SDK on both sides (INT-2, INT-3, INT-6)."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from ditto import create_ditto
from ditto.errors import InvalidArgumentError
from ditto.signal import AbortController
from ditto.worker.interaction import (
    InteractionError,
    McpHttpServer,
    McpStdioServer,
    create_interaction,
    create_interaction_worker,
)
from tests.support.net import free_port

SERVER = Path(__file__).with_name("mcp_server.py")


def stdio(**env: str) -> McpStdioServer:
    return McpStdioServer(command=sys.executable, args=(str(SERVER),), env=env or None, timeout_s=30)


def call(name: str, arguments: dict[str, object] | None = None, server: str = "local") -> dict[str, object]:
    return {"server": server, "call": {"id": "m1", "name": name, "arguments": arguments or {}}}


class Notifications:
    """A loopback listener the test server's tools connect to when they start: an event, not a sleep."""

    def __init__(self) -> None:
        self.pids: asyncio.Queue[int] = asyncio.Queue()
        self.port = 0
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> Notifications:
        async def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            data = await reader.read(32)
            writer.close()
            await self.pids.put(int(data))

        self._server = await asyncio.start_server(accepted, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *_: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()


@pytest.fixture
async def notifications() -> AsyncIterator[Notifications]:
    async with Notifications() as listener:
        yield listener


def process_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


async def test_stdio_call_list_and_observe() -> None:
    """INT-2/INT-3: ACT.MCP over stdio, list_tools exposed, OBSERVE of the result; structured content kept."""
    worker = create_interaction_worker(mcp_servers={"local": stdio()})
    runtime = create_ditto(workers=[worker])
    try:
        listed = (await runtime.invoke("INTERACTION.LIST_TOOLS", {"server": "local"})).unwrap()
        names = {spec.name: spec for spec in listed}
        assert {"add", "echo", "fail", "refuse", "crash", "slow"} <= set(names)
        assert names["add"].input_schema["properties"]["a"]["type"] == "integer"
        assert names["add"].description == "Add two integers." and names["add"].source == "mcp:local"

        result = (await runtime.invoke("INTERACTION.ACT.MCP", call("add", {"a": 2, "b": 40}))).unwrap()
        assert result.status == "success" and result.content == {"result": 42}
        assert result.source == "mcp:local/add" and result.call_id == "m1"
        observed = (await runtime.invoke("INTERACTION.OBSERVE", {"result": result})).unwrap()
        assert observed.message.content == '{"result":42}' and observed.source == "mcp:local/add"
    finally:
        await runtime.close()
        await worker.aclose()


async def test_list_tools_takes_the_server_name_directly() -> None:
    """INT-2: the SDK's list_tools takes the server as {"server"}, as a plain name or as server=; the worker's
    own tools without one; both at once is INTERACTION_INVALID_INPUT."""
    interaction = create_interaction(mcp_servers={"local": stdio()})
    try:
        for listed in (await interaction.list_tools("local"), await interaction.list_tools(server="local")):
            assert "add" in {spec.name for spec in listed}
        assert await interaction.list_tools() == ()
        with pytest.raises(InteractionError) as both:
            await interaction.list_tools({"server": "local"}, server="local")
        assert both.value.code == "INTERACTION_INVALID_INPUT"
    finally:
        await interaction.aclose()


async def test_stdio_tool_errors_hide_internal_text_and_pass_model_text() -> None:
    """INT-2/INT-6: an MCP tool's isError answer is status "error"; the server hides internals, ToolError shows."""
    interaction = create_interaction(mcp_servers={"local": {"command": sys.executable, "args": [str(SERVER)]}})
    hidden = await interaction.act_mcp(call("fail", {"path": "p"}))
    assert hidden.status == "error" and hidden.error is not None
    assert hidden.error.code == "INTERACTION_TOOL_FAILED" and "/srv/secret" not in str(hidden.content)
    shown = await interaction.act_mcp(call("refuse", {"path": "notes.txt"}))
    assert shown.status == "error" and "notes.txt is not shared with you" in str(shown.content)
    invalid = await interaction.act_mcp(call("add", {"a": "x", "b": 1}))
    assert invalid.status == "error"
    unknown = await interaction.act_mcp(call("nope"))
    assert unknown.status == "error"


async def test_stdio_server_crashing_mid_call(notifications: Notifications) -> None:
    """INT-2/INT-6: a server that dies during the call gives a clear code, bounded time; the next call works."""
    interaction = create_interaction(mcp_servers={"local": stdio(MCP_NOTIFY_PORT=str(notifications.port))})
    started = time.monotonic()
    result = await interaction.act_mcp(call("crash"))
    assert result.status == "error" and result.error is not None
    assert result.error.code == "INTERACTION_TOOL_FAILED"
    assert result.content == "The MCP server failed during the call"
    assert time.monotonic() - started < 20
    pid = notifications.pids.get_nowait()
    assert process_gone(pid)
    assert (await interaction.act_mcp(call("echo", {"text": "still here"}))).content == {"result": "still here"}


async def test_signal_during_mcp_call_stops_the_server(notifications: Notifications) -> None:
    """INT-2/INT-6: a signal fired mid-call → INTERACTION_CANCELLED and the stdio server process is stopped."""
    worker = create_interaction_worker(mcp_servers={"local": stdio(MCP_NOTIFY_PORT=str(notifications.port))})
    runtime = create_ditto(workers=[worker])
    try:
        controller = AbortController()
        pending = asyncio.create_task(runtime.invoke("INTERACTION.ACT.MCP", call("slow"), signal=controller.signal))
        pid = await asyncio.wait_for(notifications.pids.get(), 30)
        controller.abort()
        result = await asyncio.wait_for(pending, 20)
        assert result.status == "cancelled"
        assert process_gone(pid)
        direct = AbortController()
        pending = asyncio.create_task(worker.interaction.act_mcp(call("slow"), signal=direct.signal))
        pid = await asyncio.wait_for(notifications.pids.get(), 30)
        direct.abort()
        with pytest.raises(InteractionError) as caught:
            await asyncio.wait_for(pending, 20)
        assert caught.value.code == "INTERACTION_CANCELLED"
        assert process_gone(pid)
        timed = await runtime.invoke("INTERACTION.ACT.MCP", call("slow"), timeout=1.0)
        assert timed.status == "timeout"
    finally:
        await runtime.close()


async def test_mcp_timeout_option_bounds_a_call(notifications: Notifications) -> None:
    """INT-2/INT-6: the server's timeout_s bounds the call → INTERACTION_TIMEOUT."""
    server = McpStdioServer(command=sys.executable, args=(str(SERVER),), timeout_s=3,
                            env={"MCP_NOTIFY_PORT": str(notifications.port)})
    interaction = create_interaction(mcp_servers={"local": server})
    with pytest.raises(InteractionError) as caught:
        await interaction.act_mcp(call("slow"))
    assert caught.value.code == "INTERACTION_TIMEOUT"


async def test_unknown_server_bad_input_and_broken_command() -> None:
    """INT-2/INT-6: unknown server → UNKNOWN_TOOL, malformed input → INVALID_INPUT, unstartable → TOOL_FAILED."""
    interaction = create_interaction(mcp_servers={
        "local": stdio(), "broken": McpStdioServer(command="/nonexistent/mcp-server")})
    with pytest.raises(InteractionError) as caught:
        await interaction.act_mcp(call("add", server="elsewhere"))
    assert caught.value.code == "INTERACTION_UNKNOWN_TOOL"
    with pytest.raises(InteractionError) as caught:
        await interaction.list_tools({"server": "elsewhere"})
    assert caught.value.code == "INTERACTION_UNKNOWN_TOOL"
    for bad in [{"server": "local"}, {"call": {"id": "a", "name": "b"}}, {"server": "", "call": {"id": "a",
                                                                                                  "name": "b"}}]:
        with pytest.raises(InteractionError) as caught:
            await interaction.act_mcp(bad)
        assert caught.value.code == "INTERACTION_INVALID_INPUT"
    broken = await interaction.act_mcp(call("add", server="broken"))
    assert broken.status == "error" and broken.error is not None and broken.error.code == "INTERACTION_TOOL_FAILED"
    with pytest.raises(InteractionError) as caught:
        await interaction.list_tools({"server": "broken"})
    assert caught.value.code == "INTERACTION_TOOL_FAILED"
    for config in [{"command": ""}, {"url": "ftp://x"}, {"command": "x", "bogus": 1}, 5, {"command": "x", "args": "y"}]:
        with pytest.raises(InvalidArgumentError):
            create_interaction(mcp_servers={"x": config})


@contextmanager
def start_http_server(*extra: str) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    port = free_port()
    process = subprocess.Popen([sys.executable, str(SERVER), extra[0] if extra else "http", str(port), *extra[1:]],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while True:  # wait for the listening socket (startup is outside the behaviour under test)
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the MCP HTTP server did not start") from None
            time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}/mcp", process
    finally:
        process.kill()
        process.wait(10)


@pytest.fixture
def http_server() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    with start_http_server() as started:
        yield started


async def test_streamable_http_with_headers() -> None:
    """INT-2: configured headers (a bearer token) reach the MCP server; without them the server refuses."""
    with start_http_server("http-auth", "s3cret") as (url, _process):
        interaction = create_interaction(mcp_servers={
            "authed": {"url": url, "headers": {"Authorization": "Bearer s3cret"}, "timeout_s": 20},
            "anonymous": McpHttpServer(url=url, timeout_s=20)})
        assert "s3cret" not in repr(interaction._mcp["authed"])
        result = await interaction.act_mcp(call("add", {"a": 5, "b": 6}, server="authed"))
        assert result.status == "success" and result.content == {"result": 11}
        assert "add" in {spec.name for spec in await interaction.list_tools({"server": "authed"})}
        refused = await interaction.act_mcp(call("add", {"a": 5, "b": 6}, server="anonymous"))
        assert refused.status == "error" and refused.error is not None
        assert refused.error.code == "INTERACTION_TOOL_FAILED"
    with pytest.raises(InvalidArgumentError):
        McpHttpServer(url=url, headers={"X": "a\r\nInjected: 1"})


async def test_streamable_http_call_list_and_server_death(http_server: tuple[str, subprocess.Popen[bytes]]) -> None:
    """INT-2/INT-6: ACT.MCP and list_tools over streamable HTTP; a server killed mid-call → TOOL_FAILED."""
    url, process = http_server
    interaction = create_interaction(mcp_servers={"remote": McpHttpServer(url=url, timeout_s=20)})
    listed = await interaction.list_tools({"server": "remote"})
    assert "add" in {spec.name for spec in listed}
    result = await interaction.act_mcp(call("add", {"a": 1, "b": 2}, server="remote"))
    assert result.status == "success" and result.content == {"result": 3}
    model_text = await interaction.act_mcp(call("refuse", {"path": "x"}, server="remote"))
    assert model_text.status == "error" and "x is not shared with you" in str(model_text.content)

    crashed = await interaction.act_mcp(call("crash", server="remote"))
    assert crashed.status == "error" and crashed.error is not None
    assert crashed.error.code == "INTERACTION_TOOL_FAILED"
    process.wait(10)
    gone = await interaction.act_mcp(call("add", {"a": 1, "b": 2}, server="remote"))
    assert gone.status == "error" and gone.error is not None and gone.error.code == "INTERACTION_TOOL_FAILED"


async def test_keep_alive_session_is_shared_restarted_after_crash_and_closed(notifications: Notifications) -> None:
    """INT-2/INT-6: keep_alive=True reuses one server process; a crash restarts it; aclose stops it."""
    server = McpStdioServer(command=sys.executable, args=(str(SERVER),), timeout_s=30, keep_alive=True,
                            env={"MCP_NOTIFY_PORT": str(notifications.port)})
    interaction = create_interaction(mcp_servers={"local": server})
    first = (await interaction.act_mcp(call("pid"))).content
    results = await asyncio.gather(*[interaction.act_mcp(call("add", {"a": n, "b": 1})) for n in range(5)])
    assert [result.content for result in results] == [{"result": n + 1} for n in range(5)]
    assert (await interaction.act_mcp(call("pid"))).content == first
    assert "add" in {spec.name for spec in await interaction.list_tools({"server": "local"})}

    controller = AbortController()
    pending = asyncio.create_task(interaction.act_mcp(call("slow"), signal=controller.signal))
    await asyncio.wait_for(notifications.pids.get(), 30)
    controller.abort()
    with pytest.raises(InteractionError) as caught:
        await pending
    assert caught.value.code == "INTERACTION_CANCELLED"
    assert (await interaction.act_mcp(call("pid"))).content == first  # the session survived the cancellation

    crashed = await interaction.act_mcp(call("crash"))
    assert crashed.status == "error" and crashed.error is not None
    assert crashed.error.code == "INTERACTION_TOOL_FAILED"
    await notifications.pids.get()
    second = (await interaction.act_mcp(call("pid"))).content
    assert second != first and process_gone(first["result"])
    await interaction.aclose()
    assert process_gone(second["result"])
    with pytest.raises(InvalidArgumentError):
        McpStdioServer(command="x", keep_alive="yes")  # type: ignore[arg-type]
