"""Node descriptors (RT-4): a node's identity and typing, separate from any worker."""

from __future__ import annotations

import builtins
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from pydantic import TypeAdapter, ValidationError

from .result import NodeResult
from .worker import WorkerDefinition

if TYPE_CHECKING:
    from ..errors import DittoError

__all__ = ["NodeDescriptor", "node_descriptor"]

In = TypeVar("In")
Out = TypeVar("Out")


@dataclass(frozen=True)  # no slots: typing sets __orig_class__ on NodeDescriptor[In, Out](...)
class NodeDescriptor(Generic[In, Out]):
    """``descriptor.type`` is the dotted node name; ``define`` binds a handler to it.

    The handler may take ``(input)`` or ``(input, context)``.

    ``define`` only builds a :class:`WorkerDefinition`; nothing is registered
    until the application passes it to ``create_ditto`` or ``runtime.register``.

    ``output_type`` (optional) is the node's output type at run time, so
    :meth:`output_of` can hand callers a typed value: a local replica already
    returns that type, while a remote replica (JSON over HTTP) or a scripted test
    worker returns plain JSON, which is validated into it. Example::

        result = await runtime.invoke(memory_get_node.type, {"keys": ["a"]})
        items = memory_get_node.output_of(result)      # tuple[MemoryItem, ...], whoever answered
    """

    type: str
    output_type: Any = field(default=None, compare=False, repr=False)

    @cached_property
    def _adapter(self) -> TypeAdapter[Any] | None:
        return None if self.output_type is None else TypeAdapter(self.output_type)

    def output_of(self, result: NodeResult[Any]) -> Out:
        """The typed output of a successful ``result`` of this node.

        Raises the result's error (``DittoError`` with its code) when the call did
        not succeed, and ``INVALID_NODE_OUTPUT`` when the output does not have
        the node's shape.
        """
        from ..errors import DittoError

        value = result.unwrap()
        adapter = self._adapter
        if adapter is None:
            return cast(Out, value)
        try:
            return cast(Out, adapter.validate_python(value))
        except ValidationError:
            pass
        try:  # a JSON object holding typed values (a plain mapping around models)
            return cast(Out, adapter.validate_python(_plain(value)))
        except ValidationError:
            raise DittoError("INVALID_NODE_OUTPUT", f"{self.type} answered with an output of the wrong shape"
                             ) from None

    def define(self, worker_type: str, handler: Callable[..., Awaitable[Any]], *,
               concurrency: int | None = None, signal_error: builtins.type[DittoError] | None = None
               ) -> WorkerDefinition:
        return WorkerDefinition(worker_type, {self.type: handler}, concurrency=concurrency,
                                signal_error=signal_error)


def _plain(value: Any) -> Any:
    """Typed outputs as their camelCase JSON, so one validation path serves local and remote answers."""
    from ..contracts.json import plain_json

    return plain_json(value)


def node_descriptor(node_type: str, output_type: Any = None) -> NodeDescriptor[Any, Any]:
    """Create a descriptor for a custom node name such as ``"APP.SUMMARISE"`` (optionally typed)."""
    return NodeDescriptor(node_type, output_type)
