"""``runtime.loop``: one budget of graph node executions shared by every stage (RT-7).

A task controller calls ``runtime.loop`` exactly once; inside, its stages run
graphs, sub-plans, retries and resumes through the :class:`LoopContext`. Each
node execution (and each direct ``loop.invoke``) takes one unit of the shared
budget, 1024 by default, so a mis-steered agent cannot spin forever.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ..errors import GraphError
from ..signal import CancelSignal
from .graph import Graph, GraphNode, GraphResult
from .result import NodeResult

__all__ = ["DEFAULT_LOOP_BUDGET", "GraphRunner", "LoopContext", "check_budget"]

DEFAULT_LOOP_BUDGET = 1024


class GraphRunner(Protocol):
    """What a loop needs from a runtime: run a plan with a per-node charge, and invoke one node."""

    async def run_graph(self, plan: Graph, input: Any, signal: CancelSignal | None,
                        charge: Callable[[GraphNode], None] | None) -> GraphResult: ...

    async def invoke(self, node: str, input: Any, *, signal: CancelSignal | None = None,
                     timeout: float | None = None) -> NodeResult[Any]: ...


def check_budget(max_executions: object) -> int:
    """``max_executions`` as a positive integer, or ``GraphError(INVALID_GRAPH)``."""
    if isinstance(max_executions, bool) or not isinstance(max_executions, int) or max_executions < 1:
        raise GraphError("INVALID_GRAPH", "max_executions must be a positive integer")
    return max_executions


class LoopContext:
    """Handed to the loop body; every graph run through it shares one budget.

    Example::

        async def body(loop: LoopContext, question: str) -> str:
            first = await loop.run(queries_plan, question)        # charged per node
            again = await loop.invoke("INFER.SAMPLE", {...})       # charged once
            return ...

        answer = await runtime.loop(body, "How long are backups kept?")
    """

    def __init__(self, runner: GraphRunner, max_executions: int, signal: CancelSignal | None) -> None:
        self._runner = runner
        self.max_executions = check_budget(max_executions)
        self.used = 0
        self.signal = signal

    @property
    def remaining(self) -> int:
        return self.max_executions - self.used

    def _charge(self, _node: GraphNode | None = None) -> None:
        if self.used >= self.max_executions:
            raise GraphError("LOOP_BUDGET_EXHAUSTED",
                             f"the loop used its budget of {self.max_executions} graph node executions")
        self.used += 1

    async def run(self, plan: Graph, input: Any) -> GraphResult:
        """Run a stage graph, charging one unit per node execution."""
        return await self._runner.run_graph(plan, input, self.signal, self._charge)

    async def invoke(self, node: str, input: Any, *, timeout: float | None = None) -> NodeResult[Any]:
        """A single node execution outside a graph; also charged to the budget."""
        self._charge()
        return await self._runner.invoke(node, input, signal=self.signal, timeout=timeout)
