"""What every stage uses: the loop, the task, the options, and one way to call nodes and report.

A :class:`StageRun` is handed to each stage; it charges every node call to
the task's loop (one budget of 1024 executions), writes each call to
``trace.jsonl``, turns a fired signal into ``RESEARCH_CANCELLED`` /
``RESEARCH_TIMEOUT``, and ends a run early with a :class:`StageOutcome`
(blocked, rejected, failed) that carries the result.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from ....errors import RoutingError
from ....runtime import Graph, GraphResult, LoopContext, NodeError, NodeResult, graph
from ....worker.infer import response_format, task_messages
from ....worker.infer.worker import infer_sample_node
from ..config import ProgressEvent, ResearchOptions
from ..errors import ResearchError
from ..taskdir import ResearchTask
from ..types import ResearchRequest, ResearchResult, ResultError, Stage

__all__ = ["ModelAnswer", "StageOutcome", "StageRun"]

logger = logging.getLogger("ditto.workflows.research")
T = TypeVar("T")


class StageOutcome(Exception):
    """Ends the run early with a result (blocked, rejected, failed); nothing further is archived."""

    def __init__(self, result: ResearchResult) -> None:
        super().__init__(result.status)
        self.result = result


class ModelAnswer:
    """A model's parsed JSON answer and the name of the model that gave it."""

    __slots__ = ("model", "parsed")

    def __init__(self, parsed: Any, model: str | None) -> None:
        self.parsed = parsed
        self.model = model


class StageRun:
    """One run of one task inside one loop: node calls, trace, progress and early endings."""

    def __init__(self, task: ResearchTask, loop: LoopContext, options: ResearchOptions) -> None:
        self.task = task
        self.loop = loop
        self.options = options
        self.stage: Stage | None = None

    @property
    def request(self) -> ResearchRequest:
        return self.task.request

    # -- node calls -----------------------------------------------------------------
    def _trace(self, stage: str, result: NodeResult[Any], step: str | None = None, plan: str | None = None) -> None:
        record: dict[str, Any] = {"stage": stage, "node": result.node, "status": result.status}
        if plan is not None:
            record["graph"] = plan
        if step is not None:
            record["step"] = step
        if result.error is not None:
            record["code"] = result.error.code
        self.task.trace(record)

    def check_signal(self) -> None:
        signal = self.loop.signal
        if signal is not None and signal.aborted:
            raise ResearchError.from_signal(signal.reason)

    async def invoke(self, stage: str, node: str, input: Any) -> NodeResult[Any]:
        """One node call outside a graph (checkpoints, the cache): charged and traced."""
        self.check_signal()
        try:
            result = await self.loop.invoke(node, input)
        except RoutingError as error:
            result = NodeResult("", node, "error", error=NodeError(error.code, error.message))
        self._trace(stage, result)
        self.check_signal()
        return result

    async def run(self, stage: str, plan: Graph, input: Any = None) -> GraphResult:
        """A stage graph: every executed node charged and traced; a routing failure fails every node."""
        self.check_signal()
        try:
            result = await self.loop.run(plan, input)
        except RoutingError as error:
            problem = NodeError(error.code, error.message)
            failed: dict[str, NodeResult[Any]] = {
                node.id: NodeResult("", node.node_type, "error", error=problem) for node in plan.nodes}
            result = GraphResult(plan.name, failed)
        for node_id, node_result in result.results.items():
            self._trace(stage, node_result, node_id, plan.name)
        self.check_signal()
        return result

    # -- the model ------------------------------------------------------------------
    def model_input(self, task: Any, retry: tuple[str, str] | None = None) -> dict[str, Any]:
        """``INFER.SAMPLE`` input for a model task; ``retry`` = (the refused answer, why) for the one retry."""
        messages = task_messages(task)
        if retry is not None:  # the task is posed again last, so a reader of the last task sees it
            answer, problem = retry
            messages = [*messages, {"role": "assistant", "content": answer},
                        {"role": "user", "content": f"That answer was refused: {problem}. Answer the same task "
                                                    "again, following every rule."}, messages[-1]]
        return {"model": self.request.model.to_json_dict(), "messages": messages,
                "responseFormat": response_format(task)}

    def answer_of(self, result: NodeResult[Any] | None) -> ModelAnswer:
        """The parsed answer of an ``INFER.SAMPLE`` result, or ``RESEARCH_MODEL_FAILED``."""
        if result is None or result.status != "success":
            error = result.error if result is not None else None
            code = error.code if error is not None else "UNKNOWN"
            cause = f": {error.message[:300]}" if error is not None and error.message else ""
            raise self.fail("failed", "RESEARCH_MODEL_FAILED", f"the model call failed{cause} ({code})")
        try:
            output = infer_sample_node.output_of(result)
        except Exception:
            logger.exception("the model's answer has the wrong shape")
            raise self.fail("failed", "RESEARCH_MODEL_FAILED", "the model's answer has the wrong shape") from None
        parsed = output.parsed
        if parsed is None:  # a model that answered text only: its content must be the JSON
            try:
                parsed = json.loads(output.message.content)
            except (TypeError, ValueError):
                parsed = None
        return ModelAnswer(_plain(parsed), output.model)

    async def ask(self, stage: str, step: str, task: Any, retry: tuple[str, str] | None = None) -> ModelAnswer:
        """One model task as its own one-node graph (``research-<step>``)."""
        infer_input = self.model_input(task, retry)
        plan = graph(f"research-{step}").node(step, infer_sample_node.type, (), lambda _input, _deps: infer_input)
        result = await self.run(stage, plan)
        return self.answer_of(result.results.get(step))

    async def checked(self, stage: str, step: str, task: Any, answer: Any, check: Callable[[Any], T],
                      describe: Callable[[str], str] = lambda message: message) -> T:
        """``check(answer)``; a refused answer is posed once more (step ``<step>-retry``) with the reason, and a
        second refusal rejects the task with the check's code and ``describe(message)``."""
        try:
            return check(answer)
        except ResearchError as first:
            problem = first.message
        retried = await self.ask(stage, f"{step}-retry", task,
                                 retry=(json.dumps(answer, ensure_ascii=False)[:20_000], problem))
        try:
            return check(retried.parsed)
        except ResearchError as error:
            raise self.fail("rejected", error.code, describe(error.message)) from None

    # -- reporting --------------------------------------------------------------------
    def progress(self, stage: str, message: str, source: str | None = None, count: int | None = None) -> None:
        if self.options.progress is not None:
            self.options.progress(ProgressEvent(stage, message, source, count))

    def result(self, status: Any, **fields: Any) -> ResearchResult:
        return ResearchResult(status=status, request_id=self.task.request_id, directory=str(self.task.directory),
                              stage=self.stage, **fields)

    def fail(self, status: Any, code: str, message: str, **fields: Any) -> StageOutcome:
        """The early ending ``status`` with ``code``/``message`` (raise it)."""
        return StageOutcome(self.result(status, error=ResultError(code=code, message=message), **fields))


def _plain(value: Any) -> Any:
    """A plain, mutable copy of a parsed answer (typed values as camelCase JSON, tuples as lists)."""
    from ....contracts import thaw_json
    from ....contracts.json import plain_json

    return thaw_json(plain_json(value))

