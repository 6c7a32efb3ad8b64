"""Graph nodes that have nothing to do (SKIP) and typed node outputs (NodeDescriptor.output_of)."""

from __future__ import annotations

from typing import Any

import pytest

from ditto.errors import DittoError
from ditto.runtime import SKIP, NodeDescriptor, NodeError, NodeResult, WorkerDefinition, create_ditto, graph
from ditto.worker.memory import MemoryItem
from ditto.worker.memory.worker import memory_get_node


def _echo_worker(calls: list[Any]) -> WorkerDefinition:
    async def echo(input: Any) -> Any:
        calls.append(input)
        return {"echo": input}

    return WorkerDefinition("ECHO", {"ECHO.RUN": echo})


async def test_a_skipped_node_is_not_executed_nor_charged() -> None:
    """RT-7: an input_fn returning SKIP: the node does not run, costs nothing in a loop, is listed in
    ``skipped``; a node depending on it still runs and finds it missing from deps."""
    calls: list[Any] = []
    runtime = create_ditto(workers=[_echo_worker(calls)])
    seen: dict[str, Any] = {}

    def last(_input: Any, deps: Any) -> Any:
        seen.update(deps)
        return "last"

    plan = (graph("skips")
            .node("a", "ECHO.RUN", (), lambda _i, _d: "a")
            .node("b", "ECHO.RUN", ("a",), lambda _i, _d: SKIP)
            .node("c", "ECHO.RUN", ("a", "b"), last))

    async def body(loop: Any, _input: Any) -> Any:
        result = await loop.run(plan, None)
        return result, loop.used

    result, used = await runtime.loop(body, None, max_executions=2)
    assert calls == ["a", "last"] and used == 2
    assert result.skipped == frozenset({"b"}) and set(result.results) == {"a", "c"}
    assert set(seen) == {"a"}
    assert result.status == "success"
    await runtime.close()


async def test_a_failing_input_fn_is_still_charged() -> None:
    """RT-7: an input_fn that raises gives GRAPH_INPUT_FAILED and is charged like an executed node."""
    runtime = create_ditto(workers=[_echo_worker([])])

    def broken(_input: Any, _deps: Any) -> Any:
        raise ValueError("boom")

    plan = graph("broken").node("x", "ECHO.RUN", (), broken)

    async def body(loop: Any, _input: Any) -> Any:
        return await loop.run(plan, None), loop.used

    result, used = await runtime.loop(body, None)
    assert result["x"].error is not None and result["x"].error.code == "GRAPH_INPUT_FAILED" and used == 1
    await runtime.close()


def test_output_of_types_plain_json_and_passes_typed_values() -> None:
    """RT-4: a descriptor with an output type turns a remote replica's JSON into that type, keeps a local
    replica's typed value, refuses a wrong shape with INVALID_NODE_OUTPUT and raises a failed call's error."""
    plain = NodeResult("e1", "MEMORY.GET", "success", output=[{"id": "m1", "key": "k", "content": {"a": 1}}])
    items = memory_get_node.output_of(plain)
    assert isinstance(items, tuple) and isinstance(items[0], MemoryItem) and items[0].key == "k"
    typed = (MemoryItem(id="m2", content="x"),)
    assert memory_get_node.output_of(NodeResult("e2", "MEMORY.GET", "success", output=typed)) == typed
    with pytest.raises(DittoError) as caught:
        memory_get_node.output_of(NodeResult("e3", "MEMORY.GET", "success", output=[{"nope": 1}]))
    assert caught.value.code == "INVALID_NODE_OUTPUT"
    failed = NodeResult("e4", "MEMORY.GET", "error", error=NodeError("MEMORY_BACKEND_ERROR", "m"))
    with pytest.raises(DittoError) as caught:
        memory_get_node.output_of(failed)
    assert caught.value.code == "MEMORY_BACKEND_ERROR"
    untyped: NodeDescriptor[Any, Any] = NodeDescriptor("APP.X")
    assert untyped.output_of(NodeResult("e5", "APP.X", "success", output={"any": 1})) == {"any": 1}
