"""``runtime.loop``: one budget of graph node executions shared by every stage (RT-7).

A task controller calls ``runtime.loop`` exactly once; inside, its stages run
graphs, sub-plans, retries and resumes through the :class:`LoopContext`. Each
node execution (and each direct ``loop.invoke``) takes one unit of the shared
budget, 1024 by default, so a mis-steered agent cannot spin forever.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import GraphError
from ..signal import CancelSignal
from .graph import Graph, GraphNode, GraphResult
from .result import NodeResult

if TYPE_CHECKING:
    from .runtime import Runtime

__all__ = ["DEFAULT_LOOP_BUDGET", "LoopContext"]

T = TypeVar("T")
DEFAULT_LOOP_BUDGET = 1024


class LoopContext:
    """Handed to the loop body; every graph run through it shares one budget."""

    def __init__(self, runtime: Runtime, max_executions: int, signal: CancelSignal | None) -> None:
        self._runtime = runtime
        self.max_executions = max_executions
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
        return await self._runtime._run_graph(plan, input, self.signal, self._charge)

    async def invoke(self, node: str, input: Any, *, timeout: float | None = None) -> NodeResult[Any]:
        """A single node execution outside a graph; also charged to the budget."""
        self._charge()
        return await self._runtime.invoke(node, input, signal=self.signal, timeout=timeout)


async def run_loop(runtime: Runtime, body: Callable[[LoopContext, Any], Awaitable[T]], input: Any,
                   max_executions: int, signal: CancelSignal | None) -> T:
    if isinstance(max_executions, bool) or not isinstance(max_executions, int) or max_executions < 1:
        raise GraphError("INVALID_GRAPH", "max_executions must be a positive integer")
    return await body(LoopContext(runtime, max_executions, signal), input)
