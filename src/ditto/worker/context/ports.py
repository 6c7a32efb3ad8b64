"""The pluggable parts of CONTEXT: services, their call options, and their protocols.

Each service is an object with one method (``estimate``, ``select``,
``compress``, ``resolve``, ``get``/``compare_and_set``, ``enqueue``). A plain
callable or a ``{"estimate": fn}`` mapping is accepted too, because in Python a
function is the natural shape of a one-method service. Every port receives a
:class:`ContextCallOptions` after its own arguments when its signature can take
one, so a port written as ``lambda content: ...`` keeps working.
"""

from __future__ import annotations

import contextlib
import inspect
import weakref
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ...contracts import Context, DittoModel
from ...runtime import RuntimeClient
from ...signal import CancelSignal
from .errors import ContextError
from .validation import read_fields

if TYPE_CHECKING:
    from .scope import ContextScope
    from .select import ContextSelectRequest

__all__ = [
    "ContextCallOptions",
    "ContextCompressor",
    "ContextOperationQueue",
    "ContextSelector",
    "ContextServices",
    "ContextStateStore",
    "RagStrategy",
    "ReferenceResolver",
    "StoredContext",
    "TokenEstimator",
    "call_port",
    "resolve_services",
]


@dataclass(frozen=True, slots=True)
class ContextCallOptions:
    """What every port receives after its own arguments.

    ``signal`` is the caller's cancellation signal; ``runtime`` is set inside a
    worker call (bound to that execution) so a port can delegate to other
    workers, e.g. ``RETRIEVAL.SEARCH`` from a RAG ``retrieve`` stage.
    """

    signal: CancelSignal | None = None
    runtime: RuntimeClient | None = None

    def raise_if_aborted(self) -> None:
        if self.signal is not None:
            self.signal.raise_if_aborted()


class StoredContext(DittoModel):
    """A scope's cached working set and the version to pass to ``compare_and_set``."""

    version: str
    context: Context


@runtime_checkable
class TokenEstimator(Protocol):
    def estimate(self, content: Any, options: ContextCallOptions, /) -> int | Awaitable[int]: ...


@runtime_checkable
class ContextSelector(Protocol):
    async def select(self, input: ContextSelectRequest, options: ContextCallOptions, /) -> Any: ...


@runtime_checkable
class RagStrategy(Protocol):
    async def select(self, input: ContextSelectRequest, options: ContextCallOptions, /) -> Any: ...


@runtime_checkable
class ContextCompressor(Protocol):
    async def compress(self, input: Any, options: ContextCallOptions, /) -> Any: ...


@runtime_checkable
class ReferenceResolver(Protocol):
    async def resolve(self, reference: Any, options: ContextCallOptions, /) -> Any: ...


@runtime_checkable
class ContextStateStore(Protocol):
    """CX-10. ``expected_version=None`` only creates; a new version is never reused."""

    async def get(self, scope: ContextScope, options: ContextCallOptions | None = None, /) -> StoredContext | None:
        ...

    async def compare_and_set(self, scope: ContextScope, expected_version: str | None, next: Context,
                              options: ContextCallOptions | None = None, /) -> StoredContext: ...


@runtime_checkable
class ContextOperationQueue(Protocol):
    async def enqueue(self, scope: ContextScope, operation: Callable[[], Awaitable[Any]],
                      options: ContextCallOptions | None = None, /) -> Any: ...


@dataclass(frozen=True, slots=True)
class ContextServices:
    """Injected services; every one is optional (CX-1, CX-15)."""

    token_estimator: Any = None
    selector: Any = None
    compressor: Any = None
    rag_strategy: Any = None
    state_store: Any = None
    operation_queue: Any = None
    reference_resolver: Any = None


_SERVICE_FIELDS = tuple(field.name for field in fields(ContextServices))
_METHODS = {
    "token_estimator": ("estimate",),
    "selector": ("select",),
    "compressor": ("compress",),
    "rag_strategy": ("select",),
    "state_store": ("get", "compare_and_set"),
    "operation_queue": ("enqueue",),
    "reference_resolver": ("resolve",),
}


def resolve_services(value: Any = None) -> ContextServices:
    """Validate services given as ``ContextServices``, a dict (camelCase or snake_case) or ``None``."""
    if value is None:
        return ContextServices()
    if isinstance(value, ContextServices):
        given = {name: getattr(value, name) for name in _SERVICE_FIELDS if getattr(value, name) is not None}
    else:
        given = read_fields(value, _SERVICE_FIELDS, "services")
    for name, service in given.items():
        methods = _METHODS[name]
        if len(methods) == 1 and callable(service) and not hasattr(service, methods[0]):
            continue
        if isinstance(service, Mapping):
            if not all(callable(service.get(method)) for method in methods):
                raise ContextError("INVALID_INPUT", f"services.{name} must provide {', '.join(methods)}")
            continue
        if not all(callable(getattr(service, method, None)) for method in methods):
            raise ContextError("INVALID_INPUT", f"services.{name} must provide {', '.join(methods)}")
    return ContextServices(**given)


def port_method(service: Any, method: str) -> Callable[..., Any]:
    """The callable behind a service: a method, a mapping entry or the service itself."""
    bound = getattr(service, method, None)
    if callable(bound) and not isinstance(service, Mapping):
        return bound  # type: ignore[no-any-return]
    if isinstance(service, Mapping):
        return service[method]  # type: ignore[no-any-return]
    return service  # type: ignore[no-any-return]


_ARITY_FN: weakref.WeakKeyDictionary[Any, int | None] = weakref.WeakKeyDictionary()
_ARITY_METHOD: weakref.WeakKeyDictionary[Any, int | None] = weakref.WeakKeyDictionary()


def _max_positional(fn: Callable[..., Any]) -> int | None:
    """How many positional arguments ``fn`` takes (``None``: any number), cached per function."""
    is_method = inspect.ismethod(fn)
    table, target = (_ARITY_METHOD, fn.__func__) if is_method else (_ARITY_FN, fn)  # type: ignore[attr-defined]
    try:
        return table[target]
    except (KeyError, TypeError):
        pass
    count: int | None
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        count = None
    else:
        if any(p.kind is p.VAR_POSITIONAL for p in params):
            count = None
        else:
            count = sum(1 for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    with contextlib.suppress(TypeError):
        table[target] = count
    return count


async def call_port(fn: Callable[..., Any], args: tuple[Any, ...], options: ContextCallOptions) -> Any:
    """Call a port with ``options`` appended when it accepts it; await the result if needed."""
    limit = _max_positional(fn)
    result = fn(*args, options) if limit is None or limit > len(args) else fn(*args)
    if inspect.isawaitable(result):
        result = await result
    return result
