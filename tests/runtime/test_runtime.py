"""Runtime behaviour: registration, NodeResult, concurrency, routing, cancellation, close."""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ditto import (
    AbortController,
    CancelSignal,
    DittoError,
    NodeDescriptor,
    RegistrationError,
    RoutingError,
    WorkerDefinition,
    create_ditto,
    current_execution,
)
from ditto.runtime import ExecutionContext, NodeResult

from .workers import echo, make


async def test_create_invoke_close() -> None:
    """RT-1: create_ditto registers workers; invoke returns a NodeResult; workers() lists replicas."""
    runtime = create_ditto(workers=make())
    result = await runtime.invoke("TEST.ECHO", {"a": 1})
    assert isinstance(result, NodeResult)
    assert result.status == "success" and result.output == {"a": 1} and result.error is None
    assert result.node == "TEST.ECHO" and len(result.execution_id) == 32
    (info,) = runtime.workers()
    assert info.type == "TEST" and "TEST.SLEEP" in info.capabilities and info.location == "local"
    await runtime.close()
    with pytest.raises(RoutingError) as closed:
        await runtime.invoke("TEST.ECHO", 1)
    assert closed.value.code == "RUNTIME_CLOSED"


async def test_execution_ids_unique() -> None:
    """RT-2: every call gets its own execution id."""
    runtime = create_ditto(workers=make())
    ids = {(await runtime.invoke("TEST.ECHO", i)).execution_id for i in range(50)}
    assert len(ids) == 50


async def test_handler_failure_is_a_result_with_hidden_message(caplog: pytest.LogCaptureFixture) -> None:
    """RT-2: invoke never raises for a worker's failure; the handler's text is not forwarded to the caller,
    and is logged once, with its traceback, for the application's developer."""
    runtime = create_ditto(workers=make())
    with caplog.at_level(logging.ERROR, logger="ditto.runtime"):
        result = await runtime.invoke("TEST.FAIL", {})
    records = [record for record in caplog.records if record.name == "ditto.runtime"]
    assert len(records) == 1 and records[0].exc_info is not None and "TEST.FAIL" in records[0].getMessage()
    assert result.status == "error" and result.output is None
    assert result.error is not None and result.error.code == "HANDLER_ERROR"
    assert "hunter2" not in result.error.message and "10.0.0.7" not in result.error.message
    # ... and the runtime keeps serving.
    assert (await runtime.invoke("TEST.ECHO", 3)).output == 3


async def test_ditto_error_code_passes_through() -> None:
    """RT-2: a DittoError raised by a handler keeps its code and public message."""
    async def refuse(_input: Any) -> Any:
        raise DittoError("CUSTOM_CODE", "a public reason")

    runtime = create_ditto(workers=[WorkerDefinition("X", {"X.REFUSE": refuse})])
    result = await runtime.invoke("X.REFUSE", None)
    assert (result.status, result.error and result.error.code, result.error and result.error.message) == (
        "error", "CUSTOM_CODE", "a public reason")
    with pytest.raises(DittoError) as raised:
        result.unwrap()
    assert raised.value.code == "CUSTOM_CODE"


async def test_unknown_node_raises() -> None:
    """RT-2: routing failures raise (UNKNOWN_NODE) rather than returning a result."""
    runtime = create_ditto(workers=make())
    with pytest.raises(RoutingError) as raised:
        await runtime.invoke("NOPE.NODE", {})
    assert raised.value.code == "UNKNOWN_NODE"
    with pytest.raises(RoutingError) as not_a_name:
        await runtime.invoke(123, {})  # type: ignore[arg-type]
    assert not_a_name.value.code == "UNKNOWN_NODE"


@pytest.mark.parametrize("concurrency", [0, -1, 1.5, True, "2"])
def test_invalid_concurrency_rejected(concurrency: Any) -> None:
    """RT-3: concurrency must be a positive integer or None."""
    with pytest.raises(RegistrationError) as raised:
        WorkerDefinition("X", {"X.A": echo}, concurrency=concurrency)
    assert raised.value.code == "INVALID_WORKER"


def test_invalid_definitions_rejected() -> None:
    """RT-3: a worker needs a type, nodes and callable handlers; register() takes definitions only."""
    attempts: list[Any] = [
        lambda: WorkerDefinition("", {"X.A": echo}),
        lambda: WorkerDefinition("X", {}),
        lambda: WorkerDefinition("X", {"X.A": 42}),
        lambda: create_ditto().register("not a definition"),
    ]
    for attempt in attempts:
        with pytest.raises(RegistrationError) as raised:
            attempt()
        assert raised.value.code == "INVALID_WORKER"


async def test_full_replica_rejects_at_once() -> None:
    """RT-3: when every local replica is at its concurrency limit the call is rejected, not queued."""
    gate = asyncio.Event()
    started = asyncio.Event()

    async def hold(_input: Any) -> str:
        started.set()
        await gate.wait()
        return "done"

    runtime = create_ditto(workers=[WorkerDefinition("H", {"H.HOLD": hold}, concurrency=1)])
    first = asyncio.create_task(runtime.invoke("H.HOLD", None))
    await started.wait()
    rejected = await asyncio.wait_for(runtime.invoke("H.HOLD", None), timeout=1)
    assert rejected.status == "rejected" and rejected.error is not None and rejected.error.code == "WORKER_BUSY"
    gate.set()
    assert (await first).output == "done"
    # The slot is free again once the handler finished.
    assert (await runtime.invoke("H.HOLD", None)).status == "success"


async def test_second_replica_takes_overflow_and_round_robin() -> None:
    """RT-3/RT-5: registering a definition twice adds a replica sharing its objects; calls alternate."""
    shared: list[str] = []

    async def record(_input: Any, ctx: ExecutionContext) -> str:
        shared.append(ctx.address)
        return ctx.address

    definition = WorkerDefinition("R", {"R.WHO": record}, concurrency=1)
    runtime = create_ditto(workers=[definition, definition])
    addresses = [(await runtime.invoke("R.WHO", None)).output for _ in range(6)]
    assert len(set(addresses)) == 2
    assert addresses[0::2] == [addresses[0]] * 3 and addresses[1::2] == [addresses[1]] * 3
    assert len(shared) == 6  # one list, shared by both replicas

    gate = asyncio.Event()

    async def hold(_input: Any, ctx: ExecutionContext) -> str:
        await gate.wait()
        return ctx.address

    holding = WorkerDefinition("Q", {"Q.HOLD": hold}, concurrency=1)
    runtime2 = create_ditto(workers=[holding, holding])
    calls = [asyncio.create_task(runtime2.invoke("Q.HOLD", None)) for _ in range(2)]
    await asyncio.sleep(0.01)
    third = await runtime2.invoke("Q.HOLD", None)
    assert third.status == "rejected"
    gate.set()
    done = [await call for call in calls]
    assert {r.status for r in done} == {"success"} and len({r.output for r in done}) == 2


async def test_setup_runs_once_per_replica() -> None:
    """RT-5: a definition's setup creates per-replica objects (services_factory)."""
    made: list[int] = []

    def setup() -> dict[str, Any]:
        made.append(len(made))
        mine = len(made)

        async def which(_input: Any) -> int:
            return mine

        return {"S.WHICH": which}

    definition = WorkerDefinition("S", {"S.WHICH": echo}, setup=setup)
    runtime = create_ditto(workers=[definition, definition])
    outputs = {(await runtime.invoke("S.WHICH", None)).output for _ in range(4)}
    assert made == [0, 1] and outputs == {1, 2}


def test_node_descriptor_define_registers_nothing() -> None:
    """RT-4: descriptors carry .type; .define fixes identity without registering."""
    descriptor = NodeDescriptor[Any, Any]("CONTEXT.LOAD")
    assert descriptor.type == "CONTEXT.LOAD"
    definition = descriptor.define("CONTEXT", echo)
    assert definition.type == "CONTEXT" and definition.capabilities == ("CONTEXT.LOAD",)
    runtime = create_ditto()
    assert runtime.workers() == []
    runtime.register(definition)
    assert [w.type for w in runtime.workers()] == ["CONTEXT"]


async def test_signal_cancels_handler() -> None:
    """RT-1: an aborted signal ends the call with status cancelled (code CANCELLED)."""
    runtime = create_ditto(workers=make())
    controller = AbortController()
    call = asyncio.create_task(runtime.invoke("TEST.SLEEP", {"ms": 5000}, signal=controller.signal))
    await asyncio.sleep(0.02)
    controller.abort()
    result = await asyncio.wait_for(call, 2)
    assert result.status == "cancelled" and result.error is not None and result.error.code == "CANCELLED"


async def test_already_aborted_signal_does_not_run_handler() -> None:
    """RT-1: a signal aborted before the call means the handler never starts."""
    ran: list[int] = []

    async def mark(_input: Any) -> None:
        ran.append(1)

    runtime = create_ditto(workers=[WorkerDefinition("M", {"M.RUN": mark})])
    controller = AbortController()
    controller.abort()
    result = await runtime.invoke("M.RUN", None, signal=controller.signal)
    assert result.status == "cancelled" and ran == []


async def test_timeout_status_and_slot_release() -> None:
    """RT-1: timeout= ends the call with status timeout; the concurrency slot is released afterwards."""
    runtime = create_ditto(workers=[WorkerDefinition("T", {"T.SLEEP": make()[0].nodes["TEST.SLEEP"]},
                                                     concurrency=1)])
    result = await runtime.invoke("T.SLEEP", {"ms": 5000}, timeout=0.05)
    assert result.status == "timeout" and result.error is not None and result.error.code == "TIMEOUT"
    assert (await runtime.invoke("T.SLEEP", {"ms": 1})).status == "success"
    with pytest.raises(RoutingError):
        await runtime.invoke("T.SLEEP", {"ms": 1}, timeout=-1)


class _WorkerError(DittoError):
    codes = frozenset({"W_CANCELLED", "W_TIMEOUT"})
    cancelled_code = "W_CANCELLED"
    timeout_code = "W_TIMEOUT"


async def test_signal_error_names_the_workers_own_codes() -> None:
    """RT-2/RT-3 (INF-5, INT-6): a definition with signal_error reports its class's cancellation and
    timeout codes for a fired, an already-fired and a timeout= signal; the status stays cancelled / timeout."""
    sleep = make()[0].nodes["TEST.SLEEP"]
    runtime = create_ditto(workers=[WorkerDefinition("W", {"W.SLEEP": sleep}, signal_error=_WorkerError),
                                    NodeDescriptor("V.SLEEP").define("V", sleep, signal_error=_WorkerError)])
    fired = AbortController()
    fired.abort()
    for node in ("W.SLEEP", "V.SLEEP"):
        early = await runtime.invoke(node, {"ms": 5000}, signal=fired.signal)
        assert (early.status, early.error and early.error.code) == ("cancelled", "W_CANCELLED")
        late = await runtime.invoke(node, {"ms": 5000}, timeout=0.05)
        assert (late.status, late.error and late.error.code) == ("timeout", "W_TIMEOUT")
    controller = AbortController()
    call = asyncio.create_task(runtime.invoke("W.SLEEP", {"ms": 5000}, signal=controller.signal))
    await asyncio.sleep(0)
    controller.abort()
    result = await asyncio.wait_for(call, 2)
    assert (result.status, result.error and result.error.code) == ("cancelled", "W_CANCELLED")
    for bad in (ValueError, RoutingError, object()):
        with pytest.raises(RegistrationError):
            WorkerDefinition("W", {"W.SLEEP": sleep}, signal_error=bad)  # type: ignore[arg-type]


async def test_signal_from_another_thread() -> None:
    """RT-1: a signal fired from a worker thread reaches the asyncio handler."""
    runtime = create_ditto(workers=make())
    controller = AbortController()
    threading.Timer(0.05, controller.abort).start()
    result = await asyncio.wait_for(runtime.invoke("TEST.SLEEP", {"ms": 5000}, signal=controller.signal), 2)
    assert result.status == "cancelled"


async def test_task_cancellation_propagates() -> None:
    """RT-1: cancelling the caller's task cancels the handler and raises CancelledError as usual."""
    finished: list[str] = []

    async def slow(_input: Any) -> None:
        try:
            await asyncio.sleep(5)
        finally:
            finished.append("cleanup")

    runtime = create_ditto(workers=[WorkerDefinition("C", {"C.SLOW": slow})])
    call = asyncio.create_task(runtime.invoke("C.SLOW", None))
    await asyncio.sleep(0.01)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert finished == ["cleanup"]
    async with asyncio.timeout(0.05):
        result = await runtime.invoke("C.SLOW", None, timeout=0.01)
    assert result.status == "timeout"


async def test_bound_runtime_inherits_signal_and_current_execution() -> None:
    """RT-1/RT-5: ctx.runtime delegates with the parent's signal; current_execution() is set."""
    seen: list[Any] = []

    async def child(_input: Any, ctx: ExecutionContext) -> bool:
        seen.append(ctx.signal)
        return current_execution() is ctx

    async def parent(_input: Any, ctx: ExecutionContext) -> Any:
        return (await ctx.runtime.invoke("P.CHILD", None)).output

    runtime = create_ditto(workers=[WorkerDefinition("P", {"P.PARENT": parent, "P.CHILD": child})])
    signal = CancelSignal()
    result = await runtime.invoke("P.PARENT", None, signal=signal)
    assert result.output is True and seen == [signal]
    assert current_execution() is None


async def test_handler_sees_runtime_config() -> None:
    """RT-1: a handler reads the serving runtime's configuration (the YAML layer of worker defaults)."""
    from ditto import load_runtime_config

    async def limit(_input: Any, ctx: ExecutionContext) -> Any:
        return ctx.config.retrieval.search_limit

    config = load_runtime_config({"workers": {"retrieval": {"searchLimit": 7}}})
    runtime = create_ditto(config=config, workers=[WorkerDefinition("Y", {"Y.LIMIT": limit})])
    assert (await runtime.invoke("Y.LIMIT", None)).output == 7
    assert (await create_ditto(workers=[WorkerDefinition("Y", {"Y.LIMIT": limit})]).invoke(
        "Y.LIMIT", None)).output is None


async def test_close_waits_for_accepted_calls() -> None:
    """RT-1: close() stops routing new calls and waits for accepted ones; injected objects stay open."""
    class Client:
        closed = False

        async def aclose(self) -> None:
            self.closed = True

    client = Client()
    gate = asyncio.Event()

    async def use(_input: Any) -> str:
        await gate.wait()
        return "finished"

    runtime = create_ditto(workers=[WorkerDefinition("U", {"U.USE": use})])
    call = asyncio.create_task(runtime.invoke("U.USE", client))
    await asyncio.sleep(0.01)
    closing = asyncio.create_task(runtime.close())
    await asyncio.sleep(0.01)
    assert not closing.done()
    with pytest.raises(RoutingError):
        await runtime.invoke("U.USE", None)
    gate.set()
    await closing
    assert (await call).output == "finished" and client.closed is False


@given(st.lists(st.integers(min_value=1, max_value=4), min_size=1, max_size=5))
async def test_round_robin_spreads_evenly(replica_counts: list[int]) -> None:
    """RT-5: with n equal replicas, k*n calls land exactly k times on each."""
    for n in replica_counts:
        async def who(_input: Any, ctx: ExecutionContext) -> str:
            return ctx.address

        definition = WorkerDefinition("W", {"W.WHO": who})
        runtime = create_ditto(workers=[definition] * n)
        outputs = [(await runtime.invoke("W.WHO", None)).output for _ in range(3 * n)]
        assert sorted(outputs.count(a) for a in set(outputs)) == [3] * n
