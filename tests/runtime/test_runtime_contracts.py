"""Runtime contracts the mutation report found unchecked (RT-2, RT-3, RT-5, RT-7): closed-runtime refusals,
registration refusals with their codes and messages, routing tiers of remote replicas, execution ids, the
signal a delegating handler passes on, and the loop budget's edges."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ditto import (
    GraphError,
    RegistrationError,
    RoutingError,
    WorkerDefinition,
    create_ditto,
    create_http_transport,
)
from ditto.runtime import ExecutionContext, LoopContext, graph
from ditto.signal import AbortController, CancelSignal

from .workers import make


def _nowhere(id: str = "t", host: str = "127.0.0.1") -> Any:
    """A real HTTP transport that is never called (registration does not contact it)."""
    return create_http_transport(id=id, url=f"http://{host}:9", token="x")


async def test_closed_runtime_refuses_everything_with_runtime_closed() -> None:
    """RT-2: after close() registration raises RegistrationError and calls, graphs and loops raise RoutingError,
    all with RUNTIME_CLOSED and the same message."""
    runtime = create_ditto(workers=make(), transports=[_nowhere()])
    await runtime.close()
    assert runtime.closed
    registrations: list[Any] = [
        lambda: runtime.register(make()[0]),
        lambda: runtime.register_remote(address="a", transport_id="t", capabilities=["TEST.ECHO"]),
    ]
    for attempt in registrations:
        with pytest.raises(RegistrationError) as refused:
            attempt()
        assert (refused.value.code, refused.value.message) == ("RUNTIME_CLOSED", "the runtime is closed")

    async def body(loop: LoopContext, _input: Any) -> None:
        raise AssertionError("a closed runtime must not start a loop body")

    calls: list[Any] = [runtime.invoke("TEST.ECHO", 1), runtime.invoke_local("TEST.ECHO", 1),
                        runtime.run(graph("g").node("a", "TEST.ECHO"), 1), runtime.loop(body, None)]
    for call in calls:
        with pytest.raises(RoutingError) as refused_call:
            await call
        assert (refused_call.value.code, refused_call.value.message) == ("RUNTIME_CLOSED", "the runtime is closed")


def test_transport_and_remote_registration_refusals() -> None:
    """RT-5: a non-transport, a duplicate transport id, an unknown transport, an empty address and bad
    capabilities are refused with their own code and a message naming the problem."""
    runtime = create_ditto(transports=[_nowhere()])
    cases: list[tuple[Any, str, str]] = [
        (lambda: runtime.add_transport(object()), "INVALID_TRANSPORT",
         "transport does not implement the Transport protocol"),
        (lambda: runtime.add_transport(_nowhere()), "DUPLICATE_TRANSPORT", "transport 't' is already installed"),
        (lambda: runtime.register_remote(address="a", transport_id="u", capabilities=["X.Y"]), "UNKNOWN_TRANSPORT",
         "no transport 'u' is installed"),
        (lambda: runtime.register_remote(address="", transport_id="t", capabilities=["X.Y"]), "INVALID_WORKER",
         "remote address must be a non-empty string"),
        (lambda: runtime.register_remote(address=5, transport_id="t", capabilities=["X.Y"]), "INVALID_WORKER",
         "remote address must be a non-empty string"),
    ]
    for caps in ([], ["X.Y", ""], ["X.Y", 5], [""]):
        cases.append((lambda caps=caps: runtime.register_remote(address="a", transport_id="t", capabilities=caps),
                      "INVALID_WORKER", "remote capabilities must be non-empty node names"))
    for attempt, code, message in cases:
        with pytest.raises(RegistrationError) as refused:
            attempt()
        assert (refused.value.code, refused.value.message) == (code, message)
    assert runtime.workers() == []


def test_remote_replicas_report_type_tier_and_transport() -> None:
    """RT-5: a remote replica's type defaults to its first capability's prefix; its tier follows the
    transport's host unless same_host says otherwise."""
    runtime = create_ditto(transports=[_nowhere("near"), _nowhere("far", "far.example.invalid")])
    near = runtime.register_remote(address="n", transport_id="near", capabilities=["SEARCH.QUERY", "X.Y"])
    far = runtime.register_remote(address="f", transport_id="far", capabilities=["SEARCH.QUERY"])
    forced = runtime.register_remote(address="g", transport_id="near", capabilities=["X.Y"], same_host=False,
                                     worker_type="CUSTOM")
    assert (near.type, near.location, near.transport_id, near.capabilities) == (
        "SEARCH", "same-host", "near", ("SEARCH.QUERY", "X.Y"))
    assert (far.type, far.location, far.transport_id, far.concurrency) == ("SEARCH", "remote", "far", None)
    assert (forced.type, forced.location) == ("CUSTOM", "remote")
    assert [info.address for info in runtime.workers()] == ["n", "f", "g"]


async def test_results_carry_the_execution_id_and_fixed_messages() -> None:
    """RT-2/RT-3: invoke_local keeps the caller's execution id on success, worker errors and rejections;
    a handler crash is HANDLER_ERROR "the TEST worker failed"; an unknown address is UNKNOWN_NODE."""
    gate, started = asyncio.Event(), asyncio.Event()

    async def hold(_input: Any) -> str:
        started.set()
        await gate.wait()
        return "held"

    runtime = create_ditto(workers=[*make(), WorkerDefinition("H", {"H.HOLD": hold}, concurrency=1)])
    ok = await runtime.invoke_local("TEST.ECHO", 1, execution_id="exec-1")
    assert (ok.execution_id, ok.status, ok.output) == ("exec-1", "success", 1)
    failed = await runtime.invoke_local("TEST.FAIL", None, execution_id="exec-2")
    assert (failed.execution_id, failed.status) == ("exec-2", "error")
    assert failed.error is not None and (failed.error.code, failed.error.message) == (
        "HANDLER_ERROR", "the TEST worker failed")
    cancelled = AbortController()
    cancelled.abort()
    stopped = await runtime.invoke_local("TEST.ECHO", 1, execution_id="exec-3", signal=cancelled.signal)
    assert (stopped.execution_id, stopped.status) == ("exec-3", "cancelled")
    held = asyncio.create_task(runtime.invoke("H.HOLD", None))
    await asyncio.wait_for(started.wait(), 5)  # the held call has its replica's one slot
    for rejected in (await runtime.invoke("H.HOLD", None),
                     await runtime.invoke_local("H.HOLD", None, execution_id="exec-4")):
        assert rejected.status == "rejected" and rejected.error is not None
        assert (rejected.error.code, rejected.error.message) == (
            "WORKER_BUSY", "every replica of H.HOLD is at its concurrency limit")
    gate.set()
    assert (await held).output == "held"
    with pytest.raises(RoutingError) as elsewhere:
        await runtime.invoke_local("TEST.ECHO", 1, address="TEST@nowhere#9")
    assert (elsewhere.value.code, elsewhere.value.message) == (
        "UNKNOWN_NODE", "this runtime serves no node 'TEST.ECHO' at that address")
    with pytest.raises(RoutingError) as bad_timeout:
        await runtime.invoke("TEST.ECHO", 1, timeout=0)
    assert (bad_timeout.value.code, bad_timeout.value.message) == (
        "INVALID_INPUT", "timeout must be a positive number of seconds")


async def test_delegating_handler_passes_its_input_and_signal() -> None:
    """RT-2: ``ctx.runtime.invoke`` inside a handler sends the given input and, unless told otherwise, the
    parent's signal (with or without one on the parent call)."""
    seen: list[tuple[Any, CancelSignal | None]] = []

    async def child(input: Any, ctx: ExecutionContext) -> Any:
        seen.append((input, ctx.signal))
        return input

    async def parent(input: Any, ctx: ExecutionContext) -> Any:
        result = await ctx.runtime.invoke("C.CHILD", {"from": input})
        return result.output

    runtime = create_ditto(workers=[WorkerDefinition("C", {"C.CHILD": child, "C.PARENT": parent})])
    controller = AbortController()
    assert (await runtime.invoke("C.PARENT", 1, signal=controller.signal)).output == {"from": 1}
    assert (await runtime.invoke("C.PARENT", 2)).output == {"from": 2}
    assert seen == [({"from": 1}, controller.signal), ({"from": 2}, None)]


async def test_graph_run_passes_the_signal_to_its_nodes() -> None:
    """RT-7: runtime.run(plan, signal=...) runs every node under that signal: an aborted one cancels them."""
    runtime = create_ditto(workers=make())
    controller = AbortController()
    controller.abort()
    result = await runtime.run(graph("g").node("a", "TEST.ECHO").node("b", "TEST.ECHO", ["a"]), 1,
                               signal=controller.signal)
    assert result["a"].status == "cancelled" and result.status == "error"


async def test_loop_budget_edges_and_signal() -> None:
    """RT-7: max_executions must be a positive integer (1 is allowed: exactly one execution); the message names
    the budget; loop.invoke runs under the loop's signal."""
    runtime = create_ditto(workers=make())
    for bad in (0, -1, True, 1.5):
        with pytest.raises(GraphError) as refused:
            await runtime.loop(lambda loop, _input: asyncio.sleep(0), None, max_executions=bad)
        assert (refused.value.code, refused.value.message) == (
            "INVALID_GRAPH", "max_executions must be a positive integer")

    async def twice(loop: LoopContext, input: Any) -> tuple[Any, int, int]:
        first = await loop.invoke("TEST.ECHO", input)
        with pytest.raises(GraphError) as spent:
            await loop.invoke("TEST.ECHO", input)
        assert (spent.value.code, spent.value.message) == (
            "LOOP_BUDGET_EXHAUSTED", "the loop used its budget of 1 graph node executions")
        return first.output, loop.used, loop.remaining

    assert await runtime.loop(twice, "x", max_executions=1) == ("x", 1, 0)
    controller = AbortController()
    controller.abort()

    async def under_signal(loop: LoopContext, _input: Any) -> str:
        assert loop.signal is controller.signal and loop.max_executions == 1024
        return (await loop.invoke("TEST.ECHO", 1)).status

    assert await runtime.loop(under_signal, None, signal=controller.signal) == "cancelled"


async def test_addresses_ids_and_worker_info() -> None:
    """RT-3: a runtime has a 12-hex id and its host name; local replicas are addressed TYPE@id#n from 1 and
    report their concurrency; a worker type defaults to the text before the first dot of the capability."""
    import socket

    runtime = create_ditto(workers=[WorkerDefinition("W", {"W.A": lambda x: x}, concurrency=3)],
                           transports=[_nowhere()])
    assert len(runtime.id) == 12 and int(runtime.id, 16) >= 0 and runtime.host == socket.gethostname()
    second = runtime.register(WorkerDefinition("W", {"W.A": lambda x: x}))
    first = runtime.workers()[0]
    assert (first.address, first.type, first.location, first.concurrency, first.capabilities) == (
        f"W@{runtime.id}#1", "W", "local", 3, ("W.A",))
    assert second.address == f"W@{runtime.id}#2" and second.concurrency is None
    dotted = runtime.register_remote(address="d", transport_id="t", capabilities=["A.B.C"])
    assert dotted.type == "A"
    other = create_ditto(workers=make())
    assert other.id != runtime.id


async def test_execution_ids_names_and_bad_routing_arguments() -> None:
    """RT-2: results without a caller's execution id get a fresh 32-hex one and name their node; node names
    that are not strings and timeouts that are not positive numbers are refused with codes."""
    runtime = create_ditto(workers=make())
    local = await runtime.invoke_local("TEST.ECHO", 1)
    routed = await runtime.invoke("TEST.ECHO", 1)
    for result in (local, routed):
        assert len(result.execution_id) == 32 and int(result.execution_id, 16) >= 0
        assert result.node == "TEST.ECHO"
    assert local.execution_id != routed.execution_id
    for node in (["TEST.ECHO"], None, 5):
        with pytest.raises(RoutingError) as unknown:
            await runtime.invoke(node, 1)  # type: ignore[arg-type]
        assert unknown.value.code == "UNKNOWN_NODE"
    for timeout in (0, -1.0, True, "1"):
        with pytest.raises(RoutingError) as bad:
            await runtime.invoke("TEST.ECHO", 1, timeout=timeout)  # type: ignore[arg-type]
        assert bad.value.code == "INVALID_INPUT"
    slow = await runtime.invoke_local("TEST.SLEEP", {"ms": 2000}, timeout=0.01)
    assert slow.status == "timeout" and slow.error is not None and slow.error.code == "TIMEOUT"


async def test_delegated_timeout_applies_to_the_child_call() -> None:
    """RT-2: ``ctx.runtime.invoke(node, input, timeout=...)`` applies the timeout to the delegated call."""

    async def parent(_input: Any, ctx: ExecutionContext) -> Any:
        child = await ctx.runtime.invoke("TEST.SLEEP", {"ms": 2000}, timeout=0.01)
        return child.status

    runtime = create_ditto(workers=[*make(), WorkerDefinition("P", {"P.PARENT": parent})])
    assert (await runtime.invoke("P.PARENT", None)).output == "timeout"


async def test_round_robin_is_per_node_and_skips_busy_replicas_forwards() -> None:
    """RT-3/RT-5: each node has its own round-robin cursor over the replicas offering it, and a full replica
    is skipped in favour of the next one in order."""
    gates: dict[str, asyncio.Event] = {}
    started = asyncio.Event()

    async def where(input: Any, ctx: ExecutionContext) -> str:
        if input == "hold":
            gates[ctx.address] = asyncio.Event()
            started.set()
            await gates[ctx.address].wait()
        return ctx.address

    definition = WorkerDefinition("R", {"R.A": where, "R.B": where}, concurrency=1)
    runtime = create_ditto(workers=[definition, definition, definition])
    r0, r1, r2 = (info.address for info in runtime.workers())
    answers = [(await runtime.invoke(node, "go")).output for node in ("R.A", "R.B", "R.A", "R.B")]
    assert answers == [r0, r0, r1, r1]  # R.B's cursor does not move with R.A's
    held = asyncio.create_task(runtime.invoke("R.A", "hold"))  # R.A's cursor: r2, held there
    await asyncio.wait_for(started.wait(), 5)
    assert (await runtime.invoke("R.A", "go")).output == r0
    assert (await runtime.invoke("R.A", "go")).output == r1
    assert (await runtime.invoke("R.A", "go")).output == r0  # r2 is full: the next one after it, r0
    gates[r2].set()
    assert (await held).output == r2


async def test_handler_context_and_error_results_name_the_call() -> None:
    """RT-2: the handler's ExecutionContext carries the call's execution id, node, worker type and replica
    address; a worker error's result names the node and the execution id."""
    from ditto.worker.context import ContextError

    async def describe(_input: Any, ctx: ExecutionContext) -> list[Any]:
        return [ctx.execution_id, ctx.node, ctx.worker_type, ctx.address]

    async def refuse(_input: Any) -> None:
        raise ContextError("INVALID_INPUT", "no")

    runtime = create_ditto(workers=[WorkerDefinition("D", {"D.DESCRIBE": describe, "D.REFUSE": refuse})])
    (info,) = runtime.workers()
    result = await runtime.invoke_local("D.DESCRIBE", None, execution_id="e-1")
    assert result.output == ["e-1", "D.DESCRIBE", "D", info.address]
    refused = await runtime.invoke_local("D.REFUSE", None, execution_id="e-2")
    assert (refused.execution_id, refused.node, refused.status) == ("e-2", "D.REFUSE", "error")
    with pytest.raises(RoutingError) as unknown:
        await runtime.run(graph("g").node("first", "D.DESCRIBE").node("x", "NOPE.NODE"), None)
    assert (unknown.value.code, unknown.value.message) == (
        "UNKNOWN_NODE", "graph node 'x' uses unknown node 'NOPE.NODE'")


async def test_concurrency_accounting_and_close_wait_for_every_call() -> None:
    """RT-3: two calls in flight fill a replica of concurrency 2 (a third is rejected, a fourth fits once one
    ended); close() returns only after every accepted call has finished."""
    gates = [asyncio.Event() for _ in range(3)]
    started = [asyncio.Event() for _ in range(3)]

    async def hold(index: int) -> int:
        started[index].set()
        await gates[index].wait()
        return index

    runtime = create_ditto(workers=[WorkerDefinition("H", {"H.HOLD": hold}, concurrency=2)])
    first = asyncio.create_task(runtime.invoke("H.HOLD", 0))
    second = asyncio.create_task(runtime.invoke("H.HOLD", 1))
    await asyncio.wait_for(asyncio.gather(started[0].wait(), started[1].wait()), 5)
    assert (await asyncio.wait_for(runtime.invoke("H.HOLD", 2), 5)).status == "rejected"
    gates[0].set()
    assert (await first).output == 0
    third = asyncio.create_task(runtime.invoke("H.HOLD", 2))
    await asyncio.wait_for(started[2].wait(), 5)
    assert (await asyncio.wait_for(runtime.invoke("H.HOLD", 0), 5)).status == "rejected"  # 1 and 2 hold both
    closing = asyncio.create_task(runtime.close())
    gates[1].set()
    assert (await second).output == 1
    await asyncio.sleep(0)
    assert not closing.done()  # the third call is still running
    gates[2].set()
    assert (await third).output == 2
    await asyncio.wait_for(closing, 5)


async def test_loop_run_and_invoke_pass_input_signal_and_timeout() -> None:
    """RT-7: loop.run hands the plan its input under the loop's signal; loop.invoke honours its timeout."""
    runtime = create_ditto(workers=make())
    stage = graph("stage").node("a", "TEST.ECHO")

    async def body(loop: LoopContext, input: Any) -> tuple[Any, str]:
        echoed = (await loop.run(stage, input)).output("a")
        slow = await loop.invoke("TEST.SLEEP", {"ms": 2000}, timeout=0.01)
        return echoed, slow.status

    assert await runtime.loop(body, {"x": 1}) == ({"x": 1}, "timeout")
    controller = AbortController()
    controller.abort()

    async def cancelled(loop: LoopContext, input: Any) -> str:
        return (await loop.run(stage, input))["a"].status

    assert await runtime.loop(cancelled, 1, signal=controller.signal) == "cancelled"


async def test_a_handler_returning_a_node_result_is_that_answer_with_this_calls_identity() -> None:
    """RT-2: a handler that returns a NodeResult answers with its status, output and error under this call's
    execution id and node."""
    from ditto.runtime import NodeError, NodeResult

    async def wrapped_ok(_input: Any) -> NodeResult[Any]:
        return NodeResult("inner-id", "OTHER.NODE", "success", {"v": 1})

    async def wrapped_error(_input: Any) -> NodeResult[Any]:
        return NodeResult("inner-id", "OTHER.NODE", "error", error=NodeError("SOME_CODE", "inner message"))

    runtime = create_ditto(workers=[WorkerDefinition("W", {"W.OK": wrapped_ok, "W.ERR": wrapped_error})])
    ok = await runtime.invoke_local("W.OK", None, execution_id="outer")
    assert (ok.execution_id, ok.node, ok.status, ok.output, ok.error) == ("outer", "W.OK", "success", {"v": 1}, None)
    failed = await runtime.invoke_local("W.ERR", None, execution_id="outer-2")
    assert (failed.execution_id, failed.node, failed.status, failed.output) == ("outer-2", "W.ERR", "error", None)
    assert failed.error is not None and (failed.error.code, failed.error.message) == ("SOME_CODE", "inner message")


async def test_rejections_name_the_call_and_local_round_robin_is_per_node() -> None:
    """RT-3: a rejection carries a fresh execution id and the node; invoke_local keeps one cursor per node."""
    gate, started = asyncio.Event(), asyncio.Event()

    async def where(input: Any, ctx: ExecutionContext) -> str:
        if input == "hold":
            started.set()
            await gate.wait()
        return ctx.address

    definition = WorkerDefinition("L", {"L.A": where, "L.B": where}, concurrency=1)
    runtime = create_ditto(workers=[definition, definition])
    r0, r1 = (info.address for info in runtime.workers())
    answers = [(await runtime.invoke_local(node, "go")).output for node in ("L.A", "L.B", "L.A", "L.B")]
    assert answers == [r0, r0, r1, r1]
    single = create_ditto(workers=[definition])
    held = asyncio.create_task(single.invoke("L.A", "hold"))
    await asyncio.wait_for(started.wait(), 5)
    rejected = await single.invoke("L.A", "go")
    assert rejected.status == "rejected" and rejected.node == "L.A" and len(rejected.execution_id) == 32
    gate.set()
    await held
