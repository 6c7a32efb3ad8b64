"""The HTTP transport (RT-6) against real uvicorn servers on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest

from ditto import (
    RegistrationError,
    RoutingError,
    TransportError,
    WorkerDefinition,
    create_ditto,
    create_http_transport,
    create_worker_http_app,
)
from ditto.runtime import ExecutionContext, Runtime
from ditto.signal import AbortController

from ..support.ditto_serve import ditto_serve
from ..support.uvicorn_thread import serve_app
from .workers import echo, make

TOKEN = "test-token-0123456789"


@asynccontextmanager
async def serve_and_call(server: Runtime) -> AsyncIterator[Runtime]:
    """Serve ``server`` over real HTTP; yield a caller runtime with its (single) worker registered remotely."""
    async with serve_app(create_worker_http_app(server, token=TOKEN)) as url, \
            create_http_transport(id="svc", url=url, token=TOKEN) as transport:
        caller = create_ditto(transports=[transport])
        (worker,) = await transport.workers()
        caller.register_remote(address=worker["address"], transport_id="svc", capabilities=worker["capabilities"])
        yield caller



async def test_remote_call_matches_local() -> None:
    """RT-6: a call through the HTTP transport returns the same NodeResult as the same call made locally."""
    server = create_ditto(workers=make())
    async with serve_app(create_worker_http_app(server, token=TOKEN)) as url:
        transport = create_http_transport(id="svc", url=url, token=TOKEN)
        caller = create_ditto(transports=[transport])
        (worker,) = await transport.workers()
        info = caller.register_remote(address=worker["address"], transport_id="svc",
                                      capabilities=worker["capabilities"])
        assert info.location == "same-host" and info.transport_id == "svc"
        payload = {"nested": {"list": [1, 2.5, "x"]}, "ünï": True}
        for node, input in (("TEST.ECHO", payload), ("TEST.FAIL", {})):
            remote = await caller.invoke(node, input)
            local = await server.invoke(node, input)
            assert remote.node == local.node == node
            assert (remote.status, remote.output) == (local.status, local.output)
            assert (remote.error and (remote.error.code, remote.error.message)) == \
                (local.error and (local.error.code, local.error.message))
        result = await caller.invoke("TEST.ECHO", payload)
        assert result.status == "success" and result.output == payload
        failed = await caller.invoke("TEST.FAIL", {})
        assert failed.status == "error" and failed.error is not None and failed.error.code == "HANDLER_ERROR"
        assert "hunter2" not in failed.error.message
        await transport.aclose()
    await server.close()


async def test_token_required_and_nothing_runs_without_it() -> None:
    """RT-6: a missing or wrong bearer token gives 401 and the handler never runs."""
    calls: list[Any] = []

    async def record(input: Any) -> Any:
        calls.append(input)
        return input

    server = create_ditto(workers=[WorkerDefinition("R", {"R.REC": record})])
    async with serve_app(create_worker_http_app(server, token=TOKEN)) as url:
        async with httpx.AsyncClient(base_url=url) as client:
            body = {"node": "R.REC", "input": 1}
            assert (await client.post("/v1/invoke", json=body)).status_code == 401
            wrong = await client.post("/v1/invoke", json=body, headers={"authorization": "Bearer nope"})
            assert wrong.status_code == 401 and wrong.json()["error"]["code"] == "UNAUTHORIZED"
            assert (await client.get("/v1/workers")).status_code == 401
            assert (await client.get("/healthz")).status_code == 200
        assert calls == []
        transport = create_http_transport(id="bad", url=url, token="wrong-token")
        caller = create_ditto(transports=[transport])
        caller.register_remote(address="x", transport_id="bad", capabilities=["R.REC"])
        with pytest.raises(TransportError) as refused:
            await caller.invoke("R.REC", 1)
        assert refused.value.code == "TRANSPORT_UNAUTHORIZED" and calls == []
        await transport.aclose()


async def test_bad_requests_get_documented_statuses() -> None:
    """RT-6: body over the cap → 413, malformed JSON → 400, bad shape → 400, unknown node → 404."""
    server = create_ditto(workers=make())
    async with serve_app(create_worker_http_app(server, token=TOKEN, max_body_bytes=1024)) as url:
        headers = {"authorization": f"Bearer {TOKEN}", "content-type": "application/json"}
        async with httpx.AsyncClient(base_url=url, headers=headers) as client:
            big = await client.post("/v1/invoke", content=json.dumps({"node": "TEST.ECHO", "input": "x" * 5000}))
            assert big.status_code == 413 and big.json()["error"]["code"] == "PAYLOAD_TOO_LARGE"

            async def chunks() -> Any:  # no Content-Length: the cap is enforced while streaming
                for _ in range(10):
                    yield b"x" * 200

            streamed = await client.post("/v1/invoke", content=chunks())
            assert streamed.status_code == 413 and streamed.json()["error"]["code"] == "PAYLOAD_TOO_LARGE"
            malformed = await client.post("/v1/invoke", content=b"{not json")
            assert malformed.status_code == 400 and malformed.json()["error"]["code"] == "INVALID_JSON"
            for body in ([], {"input": 1}, {"node": 5, "input": 1}, {"node": "TEST.ECHO"},
                         {"node": "TEST.ECHO", "input": 1, "timeoutMs": -5}):
                shaped = await client.post("/v1/invoke", json=body)
                assert shaped.status_code == 400 and shaped.json()["error"]["code"] == "INVALID_REQUEST"
            unknown = await client.post("/v1/invoke", json={"node": "NOPE.X", "input": 1})
            assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "UNKNOWN_NODE"
            ok = await client.post("/v1/invoke", json={"node": "TEST.ECHO", "input": 7})
            assert ok.status_code == 200 and ok.json()["output"] == 7 and ok.json()["status"] == "success"


def _body_of(size: int) -> bytes:
    """A valid TEST.ECHO request of exactly ``size`` bytes (the input string pads it)."""
    empty = json.dumps({"node": "TEST.ECHO", "input": ""}).encode()
    body = json.dumps({"node": "TEST.ECHO", "input": "x" * (size - len(empty))}).encode()
    assert len(body) == size
    return body


@pytest.mark.parametrize("streamed", [False, True], ids=["content-length", "chunked"])
async def test_body_cap_is_exact(streamed: bool) -> None:
    """RT-6: a body of exactly the cap is served; one byte more is 413, with a declared Content-Length and
    when streamed without one."""
    limit = 1000
    server = create_ditto(workers=make())
    async with serve_app(create_worker_http_app(server, token=TOKEN, max_body_bytes=limit)) as url:
        headers = {"authorization": f"Bearer {TOKEN}", "content-type": "application/json"}
        async with httpx.AsyncClient(base_url=url, headers=headers) as client:

            async def post(body: bytes) -> httpx.Response:
                if not streamed:
                    return await client.post("/v1/invoke", content=body)

                async def pieces() -> AsyncIterator[bytes]:  # no Content-Length: chunked transfer
                    for start in range(0, len(body), 97):
                        yield body[start:start + 97]

                return await client.post("/v1/invoke", content=pieces())

            exact = await post(_body_of(limit))
            assert exact.status_code == 200, exact.text
            assert exact.json()["status"] == "success" and len(exact.json()["output"]) > 900
            over = await post(_body_of(limit + 1))
            assert over.status_code == 413 and over.json()["error"]["code"] == "PAYLOAD_TOO_LARGE"
            assert over.json()["error"]["message"] == f"request body exceeds {limit} bytes"


async def test_declared_length_over_cap_is_refused_before_the_body_arrives() -> None:
    """RT-6: a Content-Length of cap + 1 is answered 413 from the headers alone (the body is never awaited),
    while a declared cap is awaited and served."""
    limit = 1000
    server = create_ditto(workers=make())
    async with serve_app(create_worker_http_app(server, token=TOKEN, max_body_bytes=limit)) as url:
        host, port = url.removeprefix("http://").split(":")

        async def head_only(length: int) -> bytes:
            reader, writer = await asyncio.open_connection(host, int(port))
            writer.write(f"POST /v1/invoke HTTP/1.1\r\nhost: {host}\r\nauthorization: Bearer {TOKEN}\r\n"
                         f"content-type: application/json\r\ncontent-length: {length}\r\n\r\n".encode())
            await writer.drain()
            try:
                return await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 1)
            except TimeoutError:
                return b"(no answer while the body is outstanding)"
            finally:
                writer.close()

        assert (await head_only(limit + 1)).startswith(b"HTTP/1.1 413")
        assert await head_only(limit) == b"(no answer while the body is outstanding)"


async def test_non_serialisable_output_is_an_error_result() -> None:
    """RT-6: a handler output that JSON cannot carry becomes OUTPUT_NOT_SERIALIZABLE; the server keeps serving."""
    server = create_ditto(workers=make())
    async with serve_and_call(server) as caller:
        bad = await caller.invoke("TEST.BAD_OUTPUT", None)
        assert bad.status == "error" and bad.error is not None and bad.error.code == "OUTPUT_NOT_SERIALIZABLE"
        assert (await caller.invoke("TEST.ECHO", 1)).output == 1
        with pytest.raises(TransportError) as unsendable:
            await caller.invoke("TEST.ECHO", {"x": object()})
        assert unsendable.value.code == "TRANSPORT_INVALID_INPUT"


async def test_client_signal_stops_waiting_for_a_remote_call() -> None:
    """RT-6: the caller's signal fired while a remote call runs returns cancelled/CANCELLED at once, without
    waiting for the server's answer (the server still finishes its call)."""
    started, release, finished = asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def held(_input: Any) -> str:
        started.set()
        await release.wait()
        finished.set()
        return "late"

    server = create_ditto(workers=[WorkerDefinition("S", {"S.HELD": held})])
    async with serve_and_call(server) as caller:
        controller = AbortController()
        call = asyncio.create_task(caller.invoke("S.HELD", None, signal=controller.signal))
        await asyncio.wait_for(started.wait(), 5)
        controller.abort()
        try:
            result = await asyncio.wait_for(call, 2)  # the handler is still held: only the signal can end it
        finally:
            release.set()
        assert result.status == "cancelled" and result.error is not None and result.error.code == "CANCELLED"
        assert not finished.is_set()
        await asyncio.wait_for(finished.wait(), 5)  # the server finished the call it had started
        again = await caller.invoke("S.HELD", None)  # and serves the next one
        assert again.status == "success" and again.output == "late"


async def test_client_timeout_and_cancel_stop_waiting_only() -> None:
    """RT-6: a client timeout returns timeout/TIMEOUT at once; the server finishes its call."""
    finished = asyncio.Event()

    async def slow(_input: Any, ctx: ExecutionContext) -> str:
        await asyncio.sleep(0.3)
        finished.set()
        return "late"

    server = create_ditto(workers=[WorkerDefinition("S", {"S.SLOW": slow})])
    async with serve_and_call(server) as caller:
        timed = await caller.invoke("S.SLOW", None, timeout=0.05)
        assert timed.status == "timeout" and timed.error is not None and timed.error.code == "TIMEOUT"
        await asyncio.wait_for(finished.wait(), 2)


async def test_unreachable_replica_raises_transport_error() -> None:
    """RT-6: a replica nobody listens on raises TransportError(TRANSPORT_UNAVAILABLE)."""
    from ..support.net import free_port

    transport = create_http_transport(id="gone", url=f"http://127.0.0.1:{free_port()}", token=TOKEN)
    caller = create_ditto(transports=[transport])
    caller.register_remote(address="x", transport_id="gone", capabilities=["TEST.ECHO"])
    with pytest.raises(TransportError) as raised:
        await caller.invoke("TEST.ECHO", 1)
    assert raised.value.code == "TRANSPORT_UNAVAILABLE"
    with pytest.raises(RegistrationError) as missing:
        caller.register_remote(address="x", transport_id="missing", capabilities=["TEST.ECHO"])
    assert missing.value.code == "UNKNOWN_TRANSPORT"
    with pytest.raises(RegistrationError) as no_caps:
        caller.register_remote(address="x", transport_id="gone", capabilities=[])
    assert no_caps.value.code == "INVALID_WORKER"
    with pytest.raises(RegistrationError) as twice:
        create_ditto(transports=[transport, transport])
    assert twice.value.code == "DUPLICATE_TRANSPORT"
    await transport.aclose()


async def test_local_first_then_remote() -> None:
    """RT-5: a local replica is preferred; when it is full the call goes to the remote tier."""
    gate = asyncio.Event()

    async def where(_input: Any) -> str:
        await gate.wait()
        return f"local-{os.getpid()}"

    server = create_ditto(workers=make())
    async with serve_app(create_worker_http_app(server, token=TOKEN)) as url:
        transport = create_http_transport(id="svc", url=url, token=TOKEN)
        caller = create_ditto(workers=[WorkerDefinition("TEST", {"TEST.ECHO": where}, concurrency=1)],
                              transports=[transport])
        caller.register_remote(address=(await transport.workers())[0]["address"], transport_id="svc",
                               capabilities=["TEST.ECHO"])
        held = asyncio.create_task(caller.invoke("TEST.ECHO", "a"))
        await asyncio.sleep(0.01)
        overflow = await caller.invoke("TEST.ECHO", "remote")
        assert overflow.output == "remote"  # served by the remote echo, not the busy local one
        gate.set()
        assert str((await held).output).startswith("local-")
        await transport.aclose()


async def test_two_replica_processes_round_robin_and_death_mid_call() -> None:
    """RT-6/RT-5: two `ditto serve` processes behind one caller alternate; a replica killed mid-call
    surfaces as TransportError(TRANSPORT_FAILED) and the surviving replica keeps serving."""
    spec = "tests.runtime.workers:make"
    with ditto_serve([spec], TOKEN) as (url_a, proc_a), ditto_serve([spec], TOKEN) as (url_b, proc_b):
        transports = [create_http_transport(id="a", url=url_a, token=TOKEN),
                      create_http_transport(id="b", url=url_b, token=TOKEN)]
        caller = create_ditto(transports=transports)
        for transport in transports:
            (worker,) = await transport.workers()
            caller.register_remote(address=worker["address"], transport_id=transport.id,
                                   capabilities=worker["capabilities"])
        pids = [(await caller.invoke("TEST.PID", None)).output["pid"] for _ in range(6)]
        assert set(pids) == {proc_a.pid, proc_b.pid}
        assert pids[0::2] == [pids[0]] * 3 and pids[1::2] == [pids[1]] * 3

        # The next call goes to the replica at pids[0]; kill that process while it is busy.
        victim = proc_a if pids[0] == proc_a.pid else proc_b
        call = asyncio.create_task(caller.invoke("TEST.SLEEP", {"ms": 3000}))
        await asyncio.sleep(0.5)
        os.kill(victim.pid, signal.SIGKILL)
        with pytest.raises(TransportError) as died:
            await asyncio.wait_for(call, 10)
        assert died.value.code == "TRANSPORT_FAILED"
        survivor = proc_b if victim is proc_a else proc_a
        # No automatic retry or failover: the dead replica's turn raises, the survivor's turn succeeds.
        outcomes: list[object] = []
        for _ in range(2):
            try:
                outcomes.append((await caller.invoke("TEST.PID", None)).output["pid"])
            except TransportError as error:
                outcomes.append(error.code)
        # (a pooled keep-alive socket to the dead process may fail after the write: TRANSPORT_FAILED)
        assert str(survivor.pid) in map(str, outcomes)
        assert {str(o) for o in outcomes} - {str(survivor.pid)} <= {"TRANSPORT_UNAVAILABLE", "TRANSPORT_FAILED"}
        assert len(outcomes) == 2
        for transport in transports:
            await transport.aclose()


async def test_remote_replica_rejects_when_full() -> None:
    """RT-3/RT-6: the receiving runtime enforces its replica's concurrency and answers rejected."""
    gate = asyncio.Event()

    async def hold(_input: Any) -> str:
        await gate.wait()
        return "ok"

    server = create_ditto(workers=[WorkerDefinition("H", {"H.HOLD": hold}, concurrency=1)])
    async with serve_and_call(server) as caller:
        first = asyncio.create_task(caller.invoke("H.HOLD", None))
        await asyncio.sleep(0.05)
        second = await caller.invoke("H.HOLD", None)
        assert second.status == "rejected" and second.error is not None and second.error.code == "WORKER_BUSY"
        gate.set()
        assert (await first).output == "ok"


async def test_closed_server_runtime_answers_503() -> None:
    """RT-6: after runtime.close() the app refuses new calls (TransportError TRANSPORT_UNAVAILABLE)."""
    server = create_ditto(workers=make())
    async with serve_and_call(server) as caller:
        await server.close()
        with pytest.raises(TransportError) as closed:
            await caller.invoke("TEST.ECHO", 1)
        assert closed.value.code == "TRANSPORT_UNAVAILABLE"


async def test_wrong_address_is_unknown_node() -> None:
    """RT-6: a call for an address the server does not host is refused (404 → RoutingError)."""
    server = create_ditto(workers=make())
    async with serve_app(create_worker_http_app(server, token=TOKEN)) as url:
        transport = create_http_transport(id="svc", url=url, token=TOKEN)
        caller = create_ditto(transports=[transport])
        caller.register_remote(address="TEST@elsewhere#1", transport_id="svc", capabilities=["TEST.ECHO"])
        with pytest.raises(RoutingError) as unknown:
            await caller.invoke("TEST.ECHO", 1)
        assert unknown.value.code == "UNKNOWN_NODE"
        await transport.aclose()


def test_app_requires_token() -> None:
    """RT-6: the app cannot be created without a token: InvalidArgumentError, still a ValueError."""
    from ditto.errors import InvalidArgumentError

    for token in ("", None):
        with pytest.raises(ValueError, match="non-empty token") as raised:
            create_worker_http_app(create_ditto(), token=token)  # type: ignore[arg-type]
        assert isinstance(raised.value, InvalidArgumentError) and raised.value.code == "INVALID_ARGUMENT"
        assert raised.value.message == "create_worker_http_app needs a non-empty token"


def test_transport_requires_id_url_and_token() -> None:
    """RT-6: create_http_transport without an id, url or token is a construction mistake (InvalidArgumentError)."""
    from ditto.errors import InvalidArgumentError

    for missing in ("id", "url", "token"):
        options: dict[str, Any] = {"id": "svc", "url": "http://127.0.0.1:1", "token": TOKEN, missing: ""}
        with pytest.raises(InvalidArgumentError, match="needs id, url and token"):
            create_http_transport(**options)


async def test_wire_details_messages_media_type_execution_id_and_models() -> None:
    """RT-6: every answer is application/json; each refusal carries its fixed message; the request's
    executionId is the result's; a pydantic output travels as its camelCase JSON; an unsendable output's
    error names the node."""
    from ditto.contracts import ContextItem

    async def model(_input: Any) -> Any:
        return ContextItem(id="a", content={"k": (1, 2)}, metadata={"sourceNode": "X.Y"})

    async def nan(_input: Any) -> float:
        return float("nan")

    server = create_ditto(workers=[WorkerDefinition("TEST", {"TEST.ECHO": echo, "TEST.MODEL": model,
                                                             "TEST.NAN": nan})])
    async with serve_app(create_worker_http_app(server, token=TOKEN, max_body_bytes=64)) as url:
        headers = {"authorization": f"Bearer {TOKEN}"}
        async with httpx.AsyncClient(base_url=url, headers=headers) as client:
            refusals = [
                (await client.post("/v1/invoke", json={"node": "TEST.ECHO", "input": 1},
                                   headers={"authorization": "Bearer wrong"}),
                 401, "UNAUTHORIZED", "missing or invalid bearer token"),
                (await client.post("/v1/invoke", content=b"{nope"), 400, "INVALID_JSON",
                 "request body is not valid JSON"),
                (await client.post("/v1/invoke", json={"node": "TEST.ECHO"}), 400, "INVALID_REQUEST",
                 "expected an object with 'node' and 'input'"),
                (await client.post("/v1/invoke", json={"node": "TEST.ECHO", "input": 1, "address": 5}), 400,
                 "INVALID_REQUEST", "'address' must be a string"),
                (await client.post("/v1/invoke", json={"node": "TEST.ECHO", "input": 1, "executionId": 5}), 400,
                 "INVALID_REQUEST", "'executionId' must be a string"),
                (await client.post("/v1/invoke", json={"node": "TEST.ECHO", "input": 1, "timeoutMs": True}), 400,
                 "INVALID_REQUEST", "'timeoutMs' must be a positive number"),
                (await client.post("/v1/invoke", json={"node": "TEST.ECHO", "input": "x" * 64}), 413,
                 "PAYLOAD_TOO_LARGE", "request body exceeds 64 bytes"),
                (await client.post("/v1/invoke", json={"node": "NOPE.X", "input": 1}), 404, "UNKNOWN_NODE",
                 "this runtime serves no node 'NOPE.X' at that address"),
                (await client.get("/v1/workers", headers={"authorization": "nope"}), 401, "UNAUTHORIZED",
                 "missing or invalid bearer token"),
            ]
            for response, status, code, message in refusals:
                assert response.headers["content-type"] == "application/json"
                assert (response.status_code, response.json()["error"]) == (status, {"code": code,
                                                                                     "message": message})
            echoed = await client.post("/v1/invoke", json={"node": "TEST.ECHO", "input": 1, "executionId": "e-9"})
            assert echoed.headers["content-type"] == "application/json"
            assert echoed.json() == {"executionId": "e-9", "node": "TEST.ECHO", "status": "success", "output": 1}
            modelled = (await client.post("/v1/invoke", json={"node": "TEST.MODEL", "input": None})).json()
            assert modelled["output"] == {"id": "a", "content": {"k": [1, 2]}, "metadata": {"sourceNode": "X.Y"}}
            unsendable = (await client.post("/v1/invoke", json={"node": "TEST.NAN", "input": None})).json()
            assert unsendable["status"] == "error" and unsendable["error"] == {
                "code": "OUTPUT_NOT_SERIALIZABLE", "message": "the output of TEST.NAN cannot be sent as JSON"}
            health = await client.get("/healthz", headers={})
            assert health.json() == {"status": "ok"} and health.headers["content-type"] == "application/json"
    await server.close()


async def test_timeout_ms_is_a_server_deadline_in_milliseconds() -> None:
    """RT-6: an explicit timeoutMs bounds the call on the server (milliseconds): a 50 ms deadline ends a 2 s
    call with status timeout well before it would finish; any positive number is accepted, zero is not."""
    server = create_ditto(workers=make())
    async with serve_app(create_worker_http_app(server, token=TOKEN)) as url:
        headers = {"authorization": f"Bearer {TOKEN}"}
        async with httpx.AsyncClient(base_url=url, headers=headers) as client:
            loop = asyncio.get_running_loop()
            started = loop.time()
            bounded = await client.post("/v1/invoke", json={"node": "TEST.SLEEP", "input": {"ms": 2000},
                                                            "timeoutMs": 50})
            assert bounded.status_code == 200 and bounded.json()["status"] == "timeout"
            assert bounded.json()["error"]["code"] == "TIMEOUT" and loop.time() - started < 1.5
            tiny = await client.post("/v1/invoke", json={"node": "TEST.ECHO", "input": 1, "timeoutMs": 0.5})
            assert tiny.status_code == 200 and tiny.json()["status"] in {"success", "timeout"}
            roomy = await client.post("/v1/invoke", json={"node": "TEST.ECHO", "input": 1, "timeoutMs": 5000})
            assert roomy.json() == {**roomy.json(), "status": "success", "output": 1}
            for bad in (0, -1, "50", True):
                refused = await client.post("/v1/invoke", json={"node": "TEST.ECHO", "input": 1, "timeoutMs": bad})
                assert refused.status_code == 400 and refused.json()["error"]["code"] == "INVALID_REQUEST", bad
    await server.close()
