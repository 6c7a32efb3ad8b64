"""Node descriptors (RT-4): a node's identity and typing, separate from any worker."""

from __future__ import annotations

import builtins
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

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
    """

    type: str

    def define(self, worker_type: str, handler: Callable[..., Awaitable[Any]], *,
               concurrency: int | None = None, signal_error: builtins.type[DittoError] | None = None
               ) -> WorkerDefinition:
        return WorkerDefinition(worker_type, {self.type: handler}, concurrency=concurrency,
                                signal_error=signal_error)


def node_descriptor(node_type: str) -> NodeDescriptor[Any, Any]:
    """Create a descriptor for a custom node name such as ``"APP.SUMMARISE"``."""
    return NodeDescriptor(node_type)
