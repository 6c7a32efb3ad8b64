"""Graph plans (RT-7): named nodes with dependencies, run as soon as their deps are done.

A plan is an immutable value built with :func:`graph`::

    plan = (graph("memory-context")
            .node("search", "MEMORY.SEARCH", [], lambda q, deps: {"query": q, "limit": 5})
            .node("context", "CONTEXT.UPDATE", ["search"], to_update))
    result = await runtime.run(plan, "language preference")

``input_fn(input, deps)`` receives the graph input and the upstream
``NodeResult`` objects by id, whatever their status, so the application decides
how to treat an upstream failure (the seed raises on non-success). An
``input_fn`` that returns :data:`SKIP` says its node has nothing to do (say, no
search hit to read): the node is not executed, not charged to a loop's budget,
and appears in ``GraphResult.skipped`` instead of ``results``; a node depending
on it runs and finds it missing from ``deps``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

from ..errors import GraphError
from .result import NodeError, NodeResult

__all__ = ["INPUT_FN_FAILED", "SKIP", "Graph", "GraphNode", "GraphResult", "graph"]

InputFn = Callable[[Any, Mapping[str, NodeResult[Any]]], Any]

#: NodeResult error code when a node's ``input_fn`` raised.
INPUT_FN_FAILED = "GRAPH_INPUT_FAILED"


class _Skip:
    """The type of :data:`SKIP`."""

    _instance: _Skip | None = None

    def __new__(cls) -> _Skip:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "SKIP"


#: Returned by an ``input_fn``: the node has nothing to do and is not executed (nor charged).
SKIP: Final = _Skip()


@dataclass(frozen=True, slots=True)
class GraphNode:
    id: str
    node_type: str
    deps: tuple[str, ...]
    input_fn: InputFn | None


@dataclass(frozen=True, slots=True)
class Graph:
    """An immutable plan; ``.node(...)`` returns a new plan with one more node."""

    name: str
    nodes: tuple[GraphNode, ...] = ()

    def node(self, id: str, node_type: str, deps: Iterable[str] = (), input_fn: InputFn | None = None) -> Graph:
        if not isinstance(id, str) or not id:
            raise GraphError("INVALID_GRAPH", "graph node ids must be non-empty strings")
        if not isinstance(node_type, str) or not node_type:
            raise GraphError("INVALID_GRAPH", f"graph node {id!r} needs a node type")
        if any(existing.id == id for existing in self.nodes):
            raise GraphError("GRAPH_DUPLICATE_NODE", f"graph node {id!r} is defined twice")
        if input_fn is not None and not callable(input_fn):
            raise GraphError("INVALID_GRAPH", f"input_fn of graph node {id!r} is not callable")
        return Graph(self.name, (*self.nodes, GraphNode(id, node_type, tuple(deps), input_fn)))

    def validate(self) -> None:
        """Raise GraphError for unknown dependencies or cycles."""
        ids = {node.id for node in self.nodes}
        for node in self.nodes:
            for dep in node.deps:
                if dep not in ids:
                    raise GraphError("GRAPH_UNKNOWN_DEPENDENCY",
                                     f"graph node {node.id!r} depends on unknown node {dep!r}")
        # Kahn's algorithm: anything left over sits on a cycle.
        indegree = {node.id: len(set(node.deps)) for node in self.nodes}
        dependants: dict[str, list[str]] = {node.id: [] for node in self.nodes}
        for node in self.nodes:
            for dep in set(node.deps):
                dependants[dep].append(node.id)
        ready = [node_id for node_id, count in indegree.items() if count == 0]
        seen = 0
        while ready:
            current = ready.pop()
            seen += 1
            for child in dependants[current]:
                indegree[child] -= 1
                if indegree[child] == 0:
                    ready.append(child)
        if seen != len(self.nodes):
            stuck = sorted(node_id for node_id, count in indegree.items() if count > 0)
            raise GraphError("GRAPH_CYCLE", f"graph {self.name!r} has a cycle through {', '.join(stuck)}")


def graph(name: str) -> Graph:
    """Start an empty plan called ``name``; add nodes with ``.node(id, node_type, deps, input_fn)``.

    ``input_fn(input, deps)`` builds a node's input from the run's input and the
    upstream NodeResults (by id); nodes whose dependencies are done run concurrently.

    Example::

        plan = (graph("memory-context")
                .node("search", "MEMORY.SEARCH", [], lambda query, _deps: {"query": query, "limit": 5})
                .node("context", "CONTEXT.UPDATE", ["search"], lambda _query, deps: {
                    "context": {"items": []},
                    "ingress": [{"id": f"memory:{hit.memory.id}", "sourceNode": "MEMORY.SEARCH",
                                 "content": hit.memory.content} for hit in deps["search"].unwrap()]}))
        result = await runtime.run(plan, "language preference")
    """
    if not isinstance(name, str) or not name:
        raise GraphError("INVALID_GRAPH", "graph name must be a non-empty string")
    return Graph(name)


@dataclass(frozen=True, slots=True)
class GraphResult:
    """Every executed node's NodeResult by id; ``status`` is ``success`` only if all succeeded.

    ``skipped`` names the nodes whose ``input_fn`` returned :data:`SKIP`.
    """

    name: str
    results: Mapping[str, NodeResult[Any]]
    skipped: frozenset[str] = frozenset()

    @property
    def status(self) -> str:
        return "success" if all(r.status == "success" for r in self.results.values()) else "error"

    def __getitem__(self, node_id: str) -> NodeResult[Any]:
        return self.results[node_id]

    def output(self, node_id: str) -> Any:
        """The output of ``node_id``; raises DittoError when that node did not succeed."""
        return self.results[node_id].unwrap()


Invoke = Callable[[str, Any], Awaitable[NodeResult[Any]]]


async def execute_graph(plan: Graph, input: Any, invoke: Invoke, new_execution_id: Callable[[], str],
                        before_node: Callable[[GraphNode], None] | None = None) -> GraphResult:
    """Run ``plan``: each node starts once all its deps finished; independent nodes run concurrently.

    ``before_node`` is called right before a node is executed (the loop uses it
    to charge its budget; a node whose ``input_fn`` returned :data:`SKIP` is not
    executed and not charged); if it raises, the run stops and the error propagates.
    """
    plan.validate()
    results: dict[str, NodeResult[Any]] = {}
    skipped: set[str] = set()
    waiting = {node.id: node for node in plan.nodes}
    running: dict[asyncio.Task[NodeResult[Any] | None], str] = {}

    async def run_one(node: GraphNode) -> NodeResult[Any] | None:
        deps = MappingProxyType({dep: results[dep] for dep in node.deps if dep in results})
        try:
            node_input = node.input_fn(input, deps) if node.input_fn is not None else input
            if asyncio.iscoroutine(node_input):
                node_input = await node_input
        except Exception as exc:  # the application's own mapping code failed
            if before_node is not None:
                before_node(node)
            return NodeResult(new_execution_id(), node.node_type, "error",
                              error=NodeError(INPUT_FN_FAILED, f"input_fn of {node.id!r} failed: {exc}"))
        if node_input is SKIP:
            return None
        if before_node is not None:
            before_node(node)
        return await invoke(node.node_type, node_input)

    def finished(dep: str) -> bool:
        return dep in results or dep in skipped

    try:
        while waiting or running:
            ready = [node for node in waiting.values() if all(finished(dep) for dep in node.deps)]
            for node in ready:
                del waiting[node.id]
                running[asyncio.ensure_future(run_one(node))] = node.id
            if not running:  # pragma: no cover - validate() rules this out
                raise GraphError("GRAPH_CYCLE", f"graph {plan.name!r} cannot make progress")
            done, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                node_id = running.pop(task)
                outcome = task.result()
                if outcome is None:
                    skipped.add(node_id)
                else:
                    results[node_id] = outcome
    finally:
        for task in running:
            task.cancel()
        if running:
            await asyncio.gather(*running, return_exceptions=True)
    ordered = {node.id: results[node.id] for node in plan.nodes if node.id in results}
    return GraphResult(plan.name, MappingProxyType(ordered), frozenset(skipped))
