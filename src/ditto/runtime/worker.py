"""Worker definitions (RT-3) and the context a handler runs in."""

from __future__ import annotations

import builtins
import inspect
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeGuard, TypeVar

from ..errors import DittoError, RegistrationError
from ..signal import CancelSignal

if TYPE_CHECKING:
    from ..config import RuntimeConfig
    from .result import NodeResult

__all__ = [
    "MAX_TIMEOUT_S",
    "ExecutionContext",
    "NodeHandler",
    "RuntimeClient",
    "WorkerDefinition",
    "WorkerInfo",
    "current_execution",
    "valid_concurrency",
    "valid_timeout",
]

In = TypeVar("In", contravariant=True)
Out = TypeVar("Out", covariant=True)


class RuntimeClient(Protocol):
    """The part of a runtime that workers and adapters may call."""

    async def invoke(self, node: str, input: Any, *, signal: CancelSignal | None = None,
                     timeout: float | None = None) -> NodeResult[Any]: ...



def valid_concurrency(value: object) -> TypeGuard[int | None]:
    """Whether ``value`` is a per-replica limit: ``None`` (unlimited) or a positive ``int`` (a bool is not).

    The one rule :class:`WorkerDefinition` and every ``create_*_worker`` apply, so a
    factory can refuse a bad limit with its own error before building anything.
    """
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 1)


#: The longest per-call ``timeout=`` (30 days): longer is a mistake, and every event loop can schedule it.
MAX_TIMEOUT_S = 30 * 86_400


def valid_timeout(value: object) -> TypeGuard[float | None]:
    """Whether ``value`` is a per-call deadline: ``None`` or a finite number of seconds in (0, 30 days].

    NaN would mean "no deadline" to asyncio and an error to uvloop, and ``10**400``
    overflows a float, so both are refused here, once, for local and remote calls.
    """
    if value is None:
        return True
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return 0 < value <= MAX_TIMEOUT_S  # false for NaN; compares a huge int without converting it


@dataclass(frozen=True, slots=True)
class ExecutionContext:
    """What a handler knows about the call it is serving.

    ``runtime`` is bound to this execution: calls made through it inherit
    ``signal`` unless the handler passes its own, so cancelling a parent call
    reaches the workers it delegated to. ``config`` is the serving runtime's
    configuration: the "Runtime YAML" layer of a worker's default precedence
    (e.g. RETRIEVAL's ``search_limit``), without the definition needing it.
    """

    execution_id: str
    node: str
    worker_type: str
    address: str
    signal: CancelSignal | None
    runtime: RuntimeClient
    config: RuntimeConfig


class NodeHandler(Protocol[In, Out]):
    def __call__(self, input: In, context: ExecutionContext, /) -> Awaitable[Out]: ...


_current: ContextVar[ExecutionContext | None] = ContextVar("ditto_current_execution", default=None)


def current_execution() -> ExecutionContext | None:
    """The execution whose handler is running in this task, if any.

    Adapters use it to inherit the runtime and signal of the worker call that
    created them (seed 000: ``RemoteRetrievalSearchProvider`` without ``runtime``).
    """
    return _current.get()


def _normalise_handler(node: str, handler: Callable[..., Any]) -> NodeHandler[Any, Any]:
    """Accept ``handler(input)`` as well as ``handler(input, context)``."""
    if not callable(handler):
        raise RegistrationError("INVALID_WORKER", f"handler for {node} is not callable")
    try:
        params = [p for p in inspect.signature(handler).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
    except (TypeError, ValueError):  # builtins without signatures: assume (input, context)
        return handler
    takes_context = len(params) >= 2 or any(p.kind is p.VAR_POSITIONAL for p in params)
    if takes_context:
        return handler
    single = handler

    async def with_context(input: Any, _context: ExecutionContext) -> Any:
        return await single(input)

    return with_context


@dataclass(frozen=True, slots=True, init=False)
class WorkerDefinition:
    """A worker type, its leaf node handlers and its per-replica concurrency.

    ``setup`` (optional) is called once per registered local replica and returns
    that replica's handlers; it is how ``services_factory`` gives each replica
    its own services while ``nodes`` alone shares one set of objects between
    every registration of the same definition.

    ``signal_error`` (optional) is the worker's error class: when the call's
    signal or ``timeout=`` fires, the runtime reports
    ``signal_error.from_signal(reason)`` (e.g. ``INFER_CANCELLED`` /
    ``INFER_TIMEOUT``) instead of its own ``CANCELLED`` / ``TIMEOUT``, so a
    worker whose spec names cancellation codes answers with them however it is
    called. The status (``cancelled`` / ``timeout``) is the same either way.

    Example::

        async def shout(input: dict[str, str], context: ExecutionContext) -> str:
            return input["text"].upper()

        definition = WorkerDefinition("APP", {"APP.SHOUT": shout}, concurrency=8)
        runtime = create_ditto(workers=[definition])
        result = await runtime.invoke("APP.SHOUT", {"text": "hi"})   # result.output == "HI"
    """

    type: str
    nodes: Mapping[str, NodeHandler[Any, Any]]
    concurrency: int | None
    setup: Callable[[], Mapping[str, NodeHandler[Any, Any]]] | None = field(default=None)
    signal_error: builtins.type[DittoError] | None = field(default=None)

    def __init__(self, type: str, nodes: Mapping[str, Callable[..., Any]], *, concurrency: int | None = None,
                 setup: Callable[[], Mapping[str, Callable[..., Any]]] | None = None,
                 signal_error: builtins.type[DittoError] | None = None) -> None:
        if not isinstance(type, str) or not type.strip():
            raise RegistrationError("INVALID_WORKER", "worker type must be a non-empty string")
        if not nodes:
            raise RegistrationError("INVALID_WORKER", f"worker {type} defines no nodes")
        if not valid_concurrency(concurrency):
            raise RegistrationError("INVALID_WORKER", "concurrency must be a positive integer or None")
        if signal_error is not None and not (inspect.isclass(signal_error) and issubclass(signal_error, DittoError)
                                             and signal_error.cancelled_code is not None):
            raise RegistrationError("INVALID_WORKER", "signal_error must be a DittoError class with a cancelled_code")
        handlers: dict[str, NodeHandler[Any, Any]] = {}
        for name, handler in nodes.items():
            if not isinstance(name, str) or not name.strip():
                raise RegistrationError("INVALID_WORKER", "node names must be non-empty strings")
            handlers[name] = _normalise_handler(name, handler)
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "nodes", handlers)
        object.__setattr__(self, "concurrency", concurrency)
        object.__setattr__(self, "setup", setup)
        object.__setattr__(self, "signal_error", signal_error)

    @property
    def capabilities(self) -> tuple[str, ...]:
        return tuple(self.nodes)

    def replica_handlers(self) -> dict[str, NodeHandler[Any, Any]]:
        """Handlers for one new replica (runs ``setup`` when given)."""
        if self.setup is None:
            return dict(self.nodes)
        made = self.setup()
        if set(made) != set(self.nodes):
            raise RegistrationError("INVALID_WORKER", f"setup of worker {self.type} returned other nodes")
        return {name: _normalise_handler(name, handler) for name, handler in made.items()}


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """A registered replica as ``runtime.workers()`` reports it."""

    address: str
    type: str
    capabilities: tuple[str, ...]
    location: str  # "local" | "same-host" | "remote"
    concurrency: int | None = None
    transport_id: str | None = None

    def to_wire(self) -> dict[str, Any]:
        return {"address": self.address, "type": self.type, "capabilities": list(self.capabilities),
                "concurrency": self.concurrency}
