"""Runtime helpers that drive the CONTEXT nodes (RT-8, seed "Graph 与其他 Worker").

They go through ``runtime.invoke`` like any graph would, so they work with a
local or a remote CONTEXT worker, check every NodeResult, and raise
``ContextError`` with the node's own error code when a step fails.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from ...contracts import Context, ContextSelection, Reference
from ...errors import DittoError
from ...runtime import NodeResult, RuntimeClient
from ...signal import CancelledBySignal, CancelSignal
from .items import trusted_context
from .types import CONTEXT_ERROR_CODES, ContextError, ContextFlowResult

__all__ = ["run_rag_flow", "run_skill_flow"]


def _output(result: NodeResult[Any], node: str) -> Any:
    """The node's output, or the error its NodeResult stands for (docs/design/errors.md, CONTEXT).

    A CONTEXT code is a ``ContextError``; a cancelled or timed-out step is
    ``CancelledBySignal`` (status ``cancelled`` / ``timeout``, as a cancelled SDK
    call); the runtime's own codes (``WORKER_BUSY``, ``HANDLER_ERROR``, transport
    codes) are a plain ``DittoError`` carrying that code.
    """
    if result.status == "success":
        return result.output
    error = result.error
    code = error.code if error is not None else result.status.upper()
    message = error.message if error is not None else f"{node} ended with status {result.status}"
    if code in CONTEXT_ERROR_CODES:
        raise ContextError(code, message)
    if result.status in ("cancelled", "timeout"):
        raise CancelledBySignal("TIMEOUT" if result.status == "timeout" else "CANCELLED", message)
    raise DittoError(code, message)


def _as_context(value: Any, node: str) -> Context:
    if isinstance(value, Context):
        return value
    try:
        return trusted_context(value)  # e.g. a JSON answer from a remote worker
    except ContextError:
        raise ContextError("INVALID_PROVIDER_OUTPUT", f"{node} did not return a Context") from None


async def run_rag_flow(runtime: RuntimeClient, *, context: Context | Mapping[str, Any], query: Any = None,
                       corpus: Reference | Mapping[str, Any] | None = None, limit: int | None = None,
                       max_tokens: int | None = None, options: Mapping[str, Any] | None = None,
                       order: Literal["ranking", "context"] | None = None,
                       signal: CancelSignal | None = None) -> ContextFlowResult[ContextSelection]:
    """CONTEXT.SELECT with ``strategy {kind: rag, corpus?, options?}`` for purpose ``infer``.

    Returns ``{output: ContextSelection, context}`` where ``context`` is the
    working context it was given (SELECT never changes it). ``order="context"``
    returns the chosen items in working-set order (see CONTEXT.SELECT)::

        flow = await run_rag_flow(runtime, context=working, query="API", limit=8, max_tokens=3000)
        evidence = flow.output.context.items
    """
    strategy: dict[str, Any] = {"kind": "rag"}
    if corpus is not None:
        strategy["corpus"] = corpus
    if options is not None:
        strategy["options"] = options
    request: dict[str, Any] = {"context": context, "purpose": "infer", "strategy": strategy}
    if query is not None:
        request["query"] = query
    if limit is not None:
        request["limit"] = limit
    if max_tokens is not None:
        request["maxTokens"] = max_tokens
    if order is not None:
        request["order"] = order
    selection = _output(await runtime.invoke("CONTEXT.SELECT", request, signal=signal), "CONTEXT.SELECT")
    if not isinstance(selection, ContextSelection):
        try:
            selection = ContextSelection.model_validate(selection)
        except ValueError:
            raise ContextError("INVALID_PROVIDER_OUTPUT", "CONTEXT.SELECT did not return a selection") from None
    working = context if isinstance(context, Context) else _as_context(context, "context")
    return ContextFlowResult(selection, working)


async def run_skill_flow(runtime: RuntimeClient, *, sources: Sequence[Any],
                         context: Context | Mapping[str, Any] | None = None,
                         signal: CancelSignal | None = None) -> ContextFlowResult[Context]:
    """CONTEXT.LOAD already-resolved Skill sources; with ``context``, CONTEXT.UPDATE it with them.

    ``output`` is the Context LOAD produced (the skill items); ``context`` is the
    working context to continue with: the updated one, or the loaded one when
    no context was given. Reading Skill files and checking permissions is the
    application's job.
    """
    loaded = _as_context(_output(await runtime.invoke("CONTEXT.LOAD", {"sources": sources}, signal=signal),
                                 "CONTEXT.LOAD"), "CONTEXT.LOAD")
    if context is None:
        return ContextFlowResult(loaded, loaded)
    updated = _output(await runtime.invoke("CONTEXT.UPDATE", {"context": context, "add": loaded.items},
                                           signal=signal), "CONTEXT.UPDATE")
    return ContextFlowResult(loaded, _as_context(updated, "CONTEXT.UPDATE"))
