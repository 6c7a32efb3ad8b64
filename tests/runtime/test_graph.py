"""Graph plans and loops (RT-7)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ditto import GraphError, RoutingError, WorkerDefinition, create_ditto, graph
from ditto.runtime import INPUT_FN_FAILED, LoopContext, NodeResult

from .workers import make


def add_worker() -> WorkerDefinition:
    async def add(input: Any) -> int:
        return int(input["a"]) + int(input["b"])

    async def slow(input: Any) -> Any:
        await asyncio.sleep(0.2)
        return input

    async def boom(_input: Any) -> Any:
        raise RuntimeError("nope")

    return WorkerDefinition("MATH", {"MATH.ADD": add, "MATH.SLOW": slow, "MATH.BOOM": boom})


async def test_graph_passes_upstream_results_by_id() -> None:
    """RT-7: input_fn(input, deps) receives upstream NodeResults keyed by node id."""
    runtime = create_ditto(workers=[add_worker()])
    plan = (graph("sum")
            .node("x", "MATH.ADD", [], lambda i, _d: {"a": i, "b": 1})
            .node("y", "MATH.ADD", [], lambda i, _d: {"a": i, "b": 2})
            .node("z", "MATH.ADD", ["x", "y"], lambda _i, d: {"a": d["x"].output, "b": d["y"].output}))
    result = await runtime.run(plan, 10)
    assert result.status == "success"
    assert [r.output for r in result.results.values()] == [11, 12, 23]
    assert result.output("z") == 23 and isinstance(result["x"], NodeResult)


async def test_independent_nodes_run_concurrently() -> None:
    """RT-7: independent nodes run at the same time (4 × 0.2 s nodes finish in well under 0.8 s)."""
    runtime = create_ditto(workers=[add_worker()])
    plan = graph("fan")
    for index in range(4):
        plan = plan.node(f"n{index}", "MATH.SLOW")
    started = time.monotonic()
    result = await runtime.run(plan, "x")
    assert result.status == "success" and time.monotonic() - started < 0.6


async def test_failure_is_visible_downstream() -> None:
    """RT-7: a failed upstream node is handed to input_fn; an input_fn exception fails only that node."""
    runtime = create_ditto(workers=[add_worker()])
    seen: dict[str, str] = {}

    def check(_input: Any, deps: Mapping[str, NodeResult[Any]]) -> Any:
        seen["status"] = deps["bad"].status
        if deps["bad"].status != "success":
            raise ValueError(deps["bad"].error.code if deps["bad"].error else "?")
        return {"a": 1, "b": 1}

    plan = graph("fail").node("bad", "MATH.BOOM").node("after", "MATH.ADD", ["bad"], check)
    result = await runtime.run(plan, None)
    assert seen == {"status": "error"} and result.status == "error"
    assert result["after"].error is not None and result["after"].error.code == INPUT_FN_FAILED
    assert "HANDLER_ERROR" in result["after"].error.message


def test_plan_validation_errors() -> None:
    """RT-7: duplicate ids, unknown dependencies and cycles are rejected with GraphError codes."""
    with pytest.raises(GraphError) as dup:
        graph("g").node("a", "MATH.ADD").node("a", "MATH.ADD")
    assert dup.value.code == "GRAPH_DUPLICATE_NODE"
    with pytest.raises(GraphError) as unknown:
        graph("g").node("a", "MATH.ADD", ["missing"]).validate()
    assert unknown.value.code == "GRAPH_UNKNOWN_DEPENDENCY"
    with pytest.raises(GraphError) as cycle:
        graph("g").node("a", "MATH.ADD", ["b"]).node("b", "MATH.ADD", ["a"]).validate()
    assert cycle.value.code == "GRAPH_CYCLE"
    with pytest.raises(GraphError) as unnamed:
        graph("")
    assert unnamed.value.code == "INVALID_GRAPH"
    with pytest.raises(GraphError) as untyped:
        graph("g").node("a", "")
    assert untyped.value.code == "INVALID_GRAPH"


async def test_run_rejects_bad_plans_before_running_anything() -> None:
    """RT-7: a cyclic plan or one naming an unknown node type runs nothing; the runtime keeps serving."""
    calls: list[Any] = []

    async def record(input: Any) -> Any:
        calls.append(input)
        return input

    runtime = create_ditto(workers=[WorkerDefinition("R", {"R.REC": record})])
    with pytest.raises(GraphError) as cyclic:
        await runtime.run(graph("c").node("a", "R.REC", ["b"]).node("b", "R.REC", ["a"]), 1)
    assert cyclic.value.code == "GRAPH_CYCLE"
    with pytest.raises(RoutingError) as unknown:
        await runtime.run(graph("u").node("a", "R.REC").node("b", "NOPE.X"), 1)
    assert unknown.value.code == "UNKNOWN_NODE" and calls == []
    assert (await runtime.invoke("R.REC", 2)).output == 2


async def test_loop_shares_one_budget() -> None:
    """RT-7: every graph run inside one loop draws from the same 1024-execution budget."""
    runtime = create_ditto(workers=make())
    stage = graph("stage").node("a", "TEST.ECHO").node("b", "TEST.ECHO", ["a"])

    async def body(loop: LoopContext, _input: Any) -> int:
        runs = 0
        while True:
            try:
                await loop.run(stage, runs)
            except GraphError as error:
                assert error.code == "LOOP_BUDGET_EXHAUSTED"
                return runs
            runs += 1

    runs = await runtime.loop(body, None)
    assert runs == 512  # 2 node executions per run, 1024 in all


async def test_loop_counts_invokes_and_custom_budget() -> None:
    """RT-7: direct loop.invoke calls and sub-plans count too; the budget is configurable."""
    runtime = create_ditto(workers=make())

    async def body(loop: LoopContext, _input: Any) -> tuple[int, int]:
        await loop.invoke("TEST.ECHO", 1)
        await loop.run(graph("s").node("a", "TEST.ECHO").node("b", "TEST.ECHO").node("c", "TEST.ECHO"), 1)
        used, remaining = loop.used, loop.remaining
        with pytest.raises(GraphError) as spent:
            await loop.run(graph("s2").node("a", "TEST.ECHO").node("b", "TEST.ECHO"), 1)
        assert spent.value.code == "LOOP_BUDGET_EXHAUSTED"
        return used, remaining

    assert await runtime.loop(body, None, max_executions=5) == (4, 1)
    with pytest.raises(GraphError) as no_budget:
        await runtime.loop(body, None, max_executions=0)
    assert no_budget.value.code == "INVALID_GRAPH"


@given(st.integers(min_value=1, max_value=12), st.randoms(use_true_random=False))
async def test_random_dags_run_every_node_after_its_deps(size: int, rng: Any) -> None:
    """RT-7: for any DAG, each node runs exactly once and only after all its dependencies."""
    order: list[str] = []

    async def note(input: Any) -> Any:
        order.append(input)
        return input

    runtime = create_ditto(workers=[WorkerDefinition("N", {"N.NOTE": note})])
    plan = graph("dag")
    deps_of: dict[str, list[str]] = {}
    for index in range(size):
        deps = [f"n{j}" for j in range(index) if rng.random() < 0.3]
        deps_of[f"n{index}"] = deps
        plan = plan.node(f"n{index}", "N.NOTE", deps, lambda _i, _d, me=f"n{index}": me)
    result = await runtime.run(plan, None)
    assert result.status == "success" and sorted(order) == sorted(deps_of)
    for node_id, deps in deps_of.items():
        assert all(order.index(dep) < order.index(node_id) for dep in deps)
