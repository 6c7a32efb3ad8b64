"""Replica health (issue 19): a replica whose connection fails is skipped for a cool-down and re-probed; a call
that never reached it goes to the next replica; one that may have reached it is never re-sent. Real uvicorn
servers and `ditto serve` processes on 127.0.0.1; the servers' own records prove what ran where."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import uuid
from pathlib import Path
from typing import Any

import pytest

from ditto import (
    RegistrationError,
    RoutingError,
    RuntimeConfig,
    TransportError,
    WorkerDefinition,
    create_ditto,
    create_http_transport,
    create_worker_http_app,
)
from ditto.runtime import Runtime

from ..support.ditto_serve import ditto_serve
from ..support.net import free_port
from ..support.uvicorn_thread import serve_port

TOKEN = "failover-token-0123456789"


def _server(name: str, served: list[str], **more: Any) -> Runtime:
    """A runtime whose TEST.WHO answers ``name`` and records each call it ran in ``served`` (``more``:
    further TEST.* handlers by node name)."""

    async def who(input: Any) -> str:
        served.append(input)
        return name

    return create_ditto(workers=[WorkerDefinition("TEST", {"TEST.WHO": who, **more})])


def _address(server: Runtime) -> str:
    return server.workers()[0].address


def _caller(replicas: dict[int, str], cooldown_ms: int = 5000) -> Runtime:
    """A caller with one transport per port, each registered as the replica at that port's address."""
    transports = [create_http_transport(id=f"t{port}", url=f"http://127.0.0.1:{port}", token=TOKEN)
                  for port in replicas]
    caller = create_ditto(RuntimeConfig.model_validate({"transport": {"replicaCooldownMs": cooldown_ms}}),
                          transports=transports)
    for port, address in replicas.items():
        caller.register_remote(address=address, transport_id=f"t{port}", capabilities=["TEST.WHO"])
    return caller


async def _close(caller: Runtime) -> None:
    await caller.close()
    for transport in caller._transports.values():
        await transport.aclose()


async def test_a_refused_call_goes_to_the_next_replica_and_the_dead_one_cools_down(
        caplog: pytest.LogCaptureFixture) -> None:
    """Issue 19: with one of two replicas refusing connections every call succeeds on the other (the refused
    one is re-routed, not lost); the dead replica is tried once and then skipped for its cool-down; once a
    server listens there again, the jittered /healthz re-probe puts it back in the rotation."""
    served_a: list[str] = []
    served_b: list[str] = []
    dead_port = free_port()
    server_a, server_b = _server("a", served_a), _server("b", served_b)
    async with serve_port(create_worker_http_app(server_b, token=TOKEN)) as port_b:
        caller = _caller({dead_port: _address(server_a), port_b: _address(server_b)}, cooldown_ms=300)
        with caplog.at_level(logging.WARNING, logger="ditto.runtime"):
            answers = [(await caller.invoke("TEST.WHO", f"call-{index}")).output for index in range(12)]
        assert answers == ["b"] * 12 and served_b == [f"call-{index}" for index in range(12)]
        skipped = [record for record in caplog.records if "is skipped for 0.3 s" in record.getMessage()]
        assert len(skipped) == 1 and _address(server_a) in skipped[0].getMessage()

        async with serve_port(create_worker_http_app(server_a, token=TOKEN), port=dead_port):
            await asyncio.sleep(0.5)  # > the longest jittered cool-down (0.36 s) plus the probe
            back = {(await caller.invoke("TEST.WHO", f"later-{index}")).output for index in range(6)}
            assert back == {"a", "b"} and len(served_a) == 3
            await _close(caller)


async def test_a_replica_that_refuses_with_503_is_skipped_and_its_calls_never_run_there() -> None:
    """Issue 19: a replica whose runtime is closed answers 503 (the call did not run); the caller sends
    those calls to the other replica, so all succeed and the closed one ran none of them."""
    served_a: list[str] = []
    served_b: list[str] = []
    server_a, server_b = _server("a", served_a), _server("b", served_b)
    async with serve_port(create_worker_http_app(server_a, token=TOKEN)) as port_a, \
            serve_port(create_worker_http_app(server_b, token=TOKEN)) as port_b:
        await server_a.close()
        caller = _caller({port_a: _address(server_a), port_b: _address(server_b)})
        answers = [(await caller.invoke("TEST.WHO", f"call-{index}")).output for index in range(10)]
        assert answers == ["b"] * 10 and served_a == [] and len(served_b) == 10
        await _close(caller)


async def test_with_every_replica_down_the_call_fails_unavailable_and_a_lone_replica_is_still_tried() -> None:
    """Issue 19: when every replica refuses, the call raises TRANSPORT_UNAVAILABLE after trying each once;
    replicas that are cooling down are still tried when nothing else is left, so a recovered lone replica
    serves the very next call without waiting for its probe."""
    port_a, port_b = free_port(), free_port()
    served: list[str] = []
    server_b = _server("b", served)
    caller = _caller({port_a: "TEST@nowhere#1", port_b: _address(server_b)})
    for _ in range(3):
        with pytest.raises(TransportError) as refused:
            await caller.invoke("TEST.WHO", "x")
        assert refused.value.code == "TRANSPORT_UNAVAILABLE"
    async with serve_port(create_worker_http_app(server_b, token=TOKEN), port=port_b):
        assert (await caller.invoke("TEST.WHO", "y")).output == "b" and served == ["y"]
        await _close(caller)


async def test_unregister_remote() -> None:
    """Issue 19: `unregister_remote` (symmetric with `register_remote`) stops routing to that replica; an
    unknown one is RegistrationError(UNKNOWN_WORKER); removing the last replica of a node makes it
    UNKNOWN_NODE, and a call already under way on it still completes."""
    served_a: list[str] = []
    served_b: list[str] = []
    gate = asyncio.Event()

    async def held(input: Any) -> str:
        await gate.wait()
        return "held"

    server_a, server_b = _server("a", served_a, **{"TEST.HELD": held}), _server("b", served_b)
    address_a, address_b = _address(server_a), _address(server_b)
    async with serve_port(create_worker_http_app(server_a, token=TOKEN)) as port_a, \
            serve_port(create_worker_http_app(server_b, token=TOKEN)) as port_b:
        caller = _caller({port_a: address_a, port_b: address_b})
        caller.register_remote(address=address_a, transport_id=f"t{port_a}", capabilities=["TEST.HELD"])
        assert {(await caller.invoke("TEST.WHO", str(index))).output for index in range(4)} == {"a", "b"}
        info = caller.unregister_remote(address=address_b, transport_id=f"t{port_b}")
        assert (info.address, info.transport_id, info.capabilities) == (address_b, f"t{port_b}", ("TEST.WHO",))
        assert {(await caller.invoke("TEST.WHO", str(index))).output for index in range(4)} == {"a"}
        with pytest.raises(RegistrationError) as unknown:
            caller.unregister_remote(address=address_b, transport_id=f"t{port_b}")
        assert unknown.value.code == "UNKNOWN_WORKER"
        underway = asyncio.create_task(caller.invoke("TEST.HELD", None))
        await asyncio.sleep(0.1)
        caller.unregister_remote(address=address_a, transport_id=f"t{port_a}")  # the TEST.HELD one
        with pytest.raises(RoutingError) as gone:
            await caller.invoke("TEST.HELD", None)
        assert gone.value.code == "UNKNOWN_NODE"
        gate.set()
        assert (await underway).output == "held"
        assert (await caller.invoke("TEST.WHO", "still")).output == "a"  # the first TEST@port_a registration
        assert [worker.address for worker in caller.workers()] == [address_a]
        await _close(caller)


async def test_sigkill_of_a_replica_under_load_loses_no_reroutable_call_and_runs_none_twice(tmp_path: Path) -> None:
    """Issue 19: two `ditto serve` replicas under 16 concurrent callers, one SIGKILLed mid-load. Each server
    appends every call id it runs to its own file before working on it. Then: no call fails
    TRANSPORT_UNAVAILABLE (each one that never reached the dead replica was re-routed); the only failures are
    TRANSPORT_FAILED calls that were in flight on the killed replica, never re-sent (not in the survivor's
    file); no id was run twice; every success ran on exactly one server; the survivor keeps serving."""
    logs = {name: tmp_path / f"{name}.log" for name in ("a", "b")}
    spec = "tests.runtime.workers:make_recording"
    with ditto_serve([spec], TOKEN, env={"DITTO_TEST_CALL_LOG": str(logs["a"])}) as (url_a, proc_a), \
            ditto_serve([spec], TOKEN, env={"DITTO_TEST_CALL_LOG": str(logs["b"])}) as (url_b, _proc_b):
        transports = [create_http_transport(id="a", url=url_a, token=TOKEN),
                      create_http_transport(id="b", url=url_b, token=TOKEN)]
        caller = create_ditto(transports=transports)
        for transport in transports:
            (worker,) = await transport.workers()
            caller.register_remote(address=worker["address"], transport_id=transport.id,
                                   capabilities=worker["capabilities"])
        outcomes: dict[str, str] = {}
        loop = asyncio.get_running_loop()
        stop_at = loop.time() + 3.0
        killed = asyncio.Event()

        async def client() -> None:
            while loop.time() < stop_at:
                call_id = uuid.uuid4().hex
                try:
                    result = await caller.invoke("REC.CALL", {"id": call_id, "ms": 10})
                    outcomes[call_id] = "success" if result.status == "success" else str(result.error)
                except TransportError as error:
                    outcomes[call_id] = error.code
                    assert killed.is_set(), error

        async def killer() -> None:
            await asyncio.sleep(1.0)
            killed.set()
            os.kill(proc_a.pid, signal.SIGKILL)

        await asyncio.gather(killer(), *(client() for _ in range(16)))
        for transport in transports:
            await transport.aclose()
    ran = {name: path.read_text().split() for name, path in logs.items()}
    everywhere = ran["a"] + ran["b"]
    assert len(everywhere) == len(set(everywhere)), "a call ran twice"
    assert set(everywhere) <= set(outcomes)
    failures = {call_id: code for call_id, code in outcomes.items() if code != "success"}
    assert set(failures.values()) <= {"TRANSPORT_FAILED"}, failures
    assert len(failures) <= 16  # at most one in flight per caller when the replica died
    assert not set(failures) & set(ran["b"]), "a call that may have run was sent again"
    successes = [call_id for call_id, code in outcomes.items() if code == "success"]
    assert all((call_id in ran["a"]) != (call_id in ran["b"]) for call_id in successes)
    assert len(ran["a"]) > 50 and len(ran["b"]) > 100  # both served before the kill, the survivor after it


async def test_dns_and_tls_handshake_failures_are_rerouted(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Issue 19: a replica whose host name does not resolve and one whose TLS certificate is not trusted
    (a trustme CA the caller was not given) never receive the call: every call succeeds on the healthy
    replica, and each failing one is tried once, then cooled down."""
    from ..support.loopback_tls import make_test_ca

    ca = make_test_ca(tmp_path)
    served: list[str] = []
    healthy = _server("ok", served)
    untrusted = _server("tls", [])
    async with serve_port(create_worker_http_app(healthy, token=TOKEN)) as port, \
            serve_port(create_worker_http_app(untrusted, token=TOKEN), ssl_certfile=str(ca.server_pem),
                       ssl_keyfile=str(ca.server_pem)) as tls_port:
        transports = [create_http_transport(id="dns", url="http://ditto-replica.invalid:8080", token=TOKEN),
                      create_http_transport(id="tls", url=f"https://127.0.0.1:{tls_port}", token=TOKEN),
                      create_http_transport(id="ok", url=f"http://127.0.0.1:{port}", token=TOKEN)]
        caller = create_ditto(transports=transports)
        for transport, address in zip(transports, ["TEST@dns#1", _address(untrusted), _address(healthy)],
                                      strict=True):
            caller.register_remote(address=address, transport_id=transport.id, capabilities=["TEST.WHO"],
                                   same_host=True)
        with caplog.at_level(logging.WARNING, logger="ditto.runtime"):
            answers = [(await caller.invoke("TEST.WHO", str(index))).output for index in range(9)]
        assert answers == ["ok"] * 9 and len(served) == 9
        skipped = sorted(record.getMessage().split(" (transport ")[1].split(")")[0] for record in caplog.records
                         if "is skipped for" in record.getMessage())
        assert skipped == ["dns", "tls"]
        await _close(caller)
