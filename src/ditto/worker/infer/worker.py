"""``create_infer_worker`` (INF-2): the single leaf node ``INFER.SAMPLE``.

The handler is :meth:`InferClient.sample` with the runtime's signal, so a
call's timeout or cancellation reaches the provider's HTTP request. The input
is :class:`~ditto.worker.infer.types.SampleInput` in its camelCase wire form
(``{model: {provider, model, options}, messages, responseFormat, maxTokens,
temperature}``); the output an :class:`~ditto.worker.infer.types.InferResult`.

Counters (INF-6): the worker counts calls and tokens per ``provider/model`` in
an :class:`InferCounters`, readable as ``worker.counters`` (one tally for every
replica of the definition); pass your own ``counters=`` to share a tally, or
build the worker from a client with ``client=``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import InvalidArgumentError
from ...runtime import ExecutionContext, NodeDescriptor, WorkerDefinition
from ...runtime.worker import valid_concurrency
from .sdk import InferClient, create_infer_client
from .types import InferError, InferProvider, InferResult
from .usage import InferCounters

__all__ = ["INFER_SAMPLE", "INFER_WORKER_TYPE", "InferWorkerDefinition", "create_infer_worker", "infer_sample_node"]

INFER_WORKER_TYPE = "INFER"
INFER_SAMPLE = "INFER.SAMPLE"

#: Identity of the sampling node (``.type == "INFER.SAMPLE"``).
infer_sample_node: NodeDescriptor[Any, InferResult] = NodeDescriptor(INFER_SAMPLE, InferResult)


class InferWorkerDefinition(WorkerDefinition):
    """The INFER worker's definition; it also exposes the client it serves with and that client's
    per-model counters (INF-6), so ``create_infer_worker()`` alone is enough to read them."""

    client: InferClient
    owns_client: bool

    @property
    def counters(self) -> InferCounters:
        """Calls, failures and tokens per ``provider/model`` of every call this worker served."""
        return self.client.counters

    async def aclose(self) -> None:
        """Close what the worker's own client built (the ``openai`` provider read from the environment),
        after ``runtime.close()``. A client the application passed in stays the application's to close."""
        if self.owns_client:
            await self.client.aclose()


def create_infer_worker(providers: Mapping[str, InferProvider] | None = None, concurrency: int | None = None, *,
                        counters: InferCounters | None = None, client: InferClient | None = None
                        ) -> InferWorkerDefinition:
    """A worker definition serving ``INFER.SAMPLE``.

    Example::

        worker = create_infer_worker()
        runtime = create_ditto(workers=[worker])
        result = await runtime.invoke("INFER.SAMPLE", {"messages": [{"role": "user", "content": "hi"}]})
        worker.counters.to_json_dict()  # {"builtin:extractive/extractive": {"calls": 1, ...}}
    """
    if not valid_concurrency(concurrency):
        raise InvalidArgumentError("concurrency must be a positive integer or None")
    if client is not None:
        if providers is not None or counters is not None:
            raise InvalidArgumentError("pass either client or providers/counters, not both")
        if not isinstance(client, InferClient):
            raise InvalidArgumentError("client must be an InferClient")
        infer = client
    else:
        infer = create_infer_client(providers, counters=counters)

    async def sample(input: Any, context: ExecutionContext) -> InferResult:
        return await infer.sample(input, signal=context.signal)

    # signal_error: a call cancelled through the runtime reports INFER_CANCELLED / INFER_TIMEOUT (INF-5).
    definition = InferWorkerDefinition(INFER_WORKER_TYPE, {infer_sample_node.type: sample}, concurrency=concurrency,
                                       signal_error=InferError)
    object.__setattr__(definition, "client", infer)
    object.__setattr__(definition, "owns_client", client is None)
    return definition
