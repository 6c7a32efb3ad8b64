"""CONTEXT's types: its error, request models, service protocols and what they exchange.

Every request model is a frozen :class:`~ditto.contracts.DittoModel` (camelCase
and snake_case both accepted). The same model is what a caller may pass
instead of a dict *and* what a selector, RAG strategy or compressor receives:
one schema per concept. The SDK reads models field by field exactly like a
dict, so checks and error codes are the same either way.

Nothing here does work: the algorithms are in their own modules, the options
in :mod:`.config`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Final, Generic, Literal, Protocol, TypeVar, runtime_checkable

from pydantic import Field

from ...contracts import Context, ContextItem, ContextPolicy, ContextPurpose, DittoModel, Message, Reference
from ...contracts.types import RequestLimit
from ...errors import DittoError, InvalidArgumentError
from ...signal import CancelSignal

if TYPE_CHECKING:
    from ...runtime import RuntimeClient

__all__ = [
    "CONTEXT_ERROR_CODES",
    "CONTEXT_NODES",
    "DEFAULT_STRATEGY",
    "ContextArgumentError",
    "ContextCallOptions",
    "ContextCompressRequest",
    "ContextCompressor",
    "ContextError",
    "ContextFlowResult",
    "ContextIngressItem",
    "ContextLoadRequest",
    "ContextNode",
    "ContextOperationQueue",
    "ContextPolicy",
    "ContextScope",
    "ContextSelectRequest",
    "ContextSelector",
    "ContextServices",
    "ContextStateStore",
    "ContextStrategy",
    "ContextUpdateRequest",
    "RagCandidate",
    "RagStageInput",
    "RagStrategy",
    "ReferenceResolver",
    "SelectOrder",
    "StoredContext",
    "TokenEstimator",
]

T = TypeVar("T")

# -- the error -----------------------------------------------------------------

#: Every code a ContextError can carry: the seed's closed list, documented in docs/context.md.
CONTEXT_ERROR_CODES: Final = frozenset({
    "INVALID_INPUT",
    "UNKNOWN_NODE",
    "INLINE_LIMIT_EXCEEDED",
    "ITEM_LIMIT_EXCEEDED",
    "DUPLICATE_ITEM",
    "MISSING_ITEM",
    "STRATEGY_UNAVAILABLE",
    "INVALID_PROVIDER_OUTPUT",
    "BUDGET_UNSATISFIABLE",
    "STATE_STORE_UNAVAILABLE",
    "CONTEXT_NOT_FOUND",
    "STATE_CONFLICT",
    "INVALID_STATE",
    "RESOLVER_UNAVAILABLE",
    "QUEUE_FULL",
})


class ContextError(DittoError):
    """A CONTEXT failure with a stable ``code`` (one of :data:`CONTEXT_ERROR_CODES`; another is a bug).

    Applications branch on ``code``; ``message`` is written by this package and
    never contains a backend's own text (Redis hosts, resolver exceptions).
    CONTEXT has no cancellation codes of its own: a fired signal raises the
    runtime's :class:`ditto.CancelledBySignal` (``CANCELLED`` / ``TIMEOUT``), so
    ``cancelled_code`` and ``timeout_code`` stay unset (docs/design/errors.md).
    """

    codes: ClassVar[frozenset[str]] = CONTEXT_ERROR_CODES
    cancelled_code: ClassVar[str | None] = None  # a fired signal is the runtime's CANCELLED
    timeout_code: ClassVar[str | None] = None  # … or TIMEOUT (CancelledBySignal)


class ContextArgumentError(ContextError, InvalidArgumentError):
    """A CONTEXT factory or constructor was given bad options (``create_context(policy=...)``, a store's TTL, …).

    Both a ``ContextError`` with the ``INVALID_INPUT`` code these factories always
    raised and an :class:`~ditto.errors.InvalidArgumentError` (so a ``ValueError``),
    the one type every worker raises for construction mistakes. Built like a
    ContextError: ``ContextArgumentError(code, message)``.
    """

    def __init__(self, code: str, message: str | None = None) -> None:
        DittoError.__init__(self, code, message)

    def __reduce__(self) -> tuple[type[DittoError], tuple[str, str]]:
        return (type(self), (self.code, self.message))


# -- requests ------------------------------------------------------------------

ContextNode = Literal["CONTEXT.LOAD", "CONTEXT.UPDATE", "CONTEXT.SELECT", "CONTEXT.COMPRESS"]
CONTEXT_NODES: Final[tuple[ContextNode, ...]] = ("CONTEXT.LOAD", "CONTEXT.UPDATE", "CONTEXT.SELECT",
                                                 "CONTEXT.COMPRESS")
#: ``ranking``: the strategy's order (the default); ``context``: the working set's order, for model messages.
SelectOrder = Literal["ranking", "context"]
StrategyKind = Literal["default", "provider", "rag"]


class ContextScope(DittoModel):
    """``session_id`` / ``turn_id`` / ``invocation_id``; at least one non-empty.

    The three together select one cache entry; there is no fallback from a turn
    to its session. A scope is a cache address, not a credential: the
    application checks that the caller owns it.
    """

    session_id: str | None = None
    turn_id: str | None = None
    invocation_id: str | None = None


class ContextStrategy(DittoModel):
    """``{kind: default}``, ``{kind: provider, name, options?}`` or ``{kind: rag, corpus?, options?}``."""

    kind: StrategyKind = "default"
    name: str | None = None
    options: Mapping[str, Any] | None = None
    corpus: Reference | None = None


DEFAULT_STRATEGY: Final = ContextStrategy()


class ContextIngressItem(DittoModel):
    """An item arriving from another worker; ``source_node`` is written to ``metadata.sourceNode``."""

    id: str = Field(min_length=1)
    source_node: str = Field(min_length=1)
    content: Any
    reference: Reference | None = None
    metadata: dict[str, Any] | None = None


class ContextLoadRequest(DittoModel):
    """CONTEXT.LOAD: ``sources`` (Message | Reference | ContextItem), or only ``scope`` to read the cache."""

    sources: tuple[Any, ...] | None = None
    resolve_references: bool | None = None
    scope: ContextScope | None = None
    expected_version: str | None = None


class ContextUpdateRequest(DittoModel):
    """CONTEXT.UPDATE: ``remove_ids`` → ``add`` → ``ingress`` on ``context`` (or on the cached ``scope``)."""

    context: Context | None = None
    remove_ids: tuple[str, ...] | None = None
    add: tuple[ContextItem | Message, ...] | None = None  # a message is mapped as LOAD maps it
    ingress: tuple[ContextIngressItem, ...] | None = None
    scope: ContextScope | None = None
    expected_version: str | None = None


class ContextSelectRequest(DittoModel):
    """CONTEXT.SELECT, and what ``selector.select`` / ``rag_strategy.select`` receive.

    A service gets it validated: ``context`` set (read from the cache for a
    scoped call), ``strategy`` parsed, ``limit`` / ``max_tokens`` as requested
    (SELECT tightens them by policy afterwards), ``scope`` unset.
    """

    purpose: ContextPurpose
    context: Context | None = None
    query: Any = None
    limit: RequestLimit | None = None
    max_tokens: RequestLimit | None = None
    strategy: ContextStrategy = DEFAULT_STRATEGY
    order: SelectOrder = "ranking"
    scope: ContextScope | None = None
    expected_version: str | None = None


class ContextCompressRequest(DittoModel):
    """CONTEXT.COMPRESS, and what ``compressor.compress`` receives.

    A compressor gets ``context`` set and the *effective* limits (the request
    tightened by policy), so it only has to honour what it is given.
    """

    context: Context | None = None
    max_items: RequestLimit | None = None
    max_tokens: RequestLimit | None = None
    scope: ContextScope | None = None
    expected_version: str | None = None


class StoredContext(DittoModel):
    """A scope's cached working set and the version to pass to ``compare_and_set``."""

    version: str
    context: Context


# -- what services exchange ------------------------------------------------------


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


@dataclass(frozen=True, slots=True)
class RagCandidate:
    """One retrieve/rank result; ``score`` and ``metadata`` are never copied into the item."""

    item: ContextItem
    score: float | None = None
    metadata: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class RagStageInput:
    """What each RAG stage receives: ``embedding`` is set for retrieve/rank, ``candidates`` for rank."""

    query: Any
    items: tuple[ContextItem, ...]
    corpus: Reference | None = None
    options: Mapping[str, Any] | None = None
    embedding: Any = None
    candidates: tuple[RagCandidate, ...] | None = None


@dataclass(frozen=True, slots=True)
class ContextFlowResult(Generic[T]):
    """``output`` is the last node's output; ``context`` the working context to continue with."""

    output: T
    context: Context


# -- service protocols -------------------------------------------------------------
#
# A service is an object with the method below. A plain function, or a mapping
# ``{"estimate": fn}``, is accepted too (``create_context`` adapts it), because in
# Python a function is the natural shape of a one-method service. ``options`` is
# passed only when the method's signature can take it.


@runtime_checkable
class TokenEstimator(Protocol):
    """``estimate(content)`` → a non-negative safe integer (or an awaitable of one); used only with a token budget."""

    def estimate(self, content: Any, options: ContextCallOptions, /) -> int | Awaitable[int]: ...


@runtime_checkable
class ContextSelector(Protocol):
    """Serves ``strategy {kind: provider, name}``: returns the chosen items in priority order."""

    async def select(self, input: ContextSelectRequest, options: ContextCallOptions, /) -> Any: ...


@runtime_checkable
class RagStrategy(Protocol):
    """Serves ``strategy {kind: rag}``: returns candidate items in priority order (see ``create_rag_strategy``)."""

    async def select(self, input: ContextSelectRequest, options: ContextCallOptions, /) -> Any: ...


@runtime_checkable
class ContextCompressor(Protocol):
    """Replaces the default COMPRESS: returns a Context within the limits it is given.

    It may rewrite or drop unprotected items, but must return protected items
    and callId groups unchanged and add no ids (else INVALID_PROVIDER_OUTPUT).
    """

    async def compress(self, input: ContextCompressRequest, options: ContextCallOptions, /) -> Any: ...


@runtime_checkable
class ReferenceResolver(Protocol):
    """Resolves a bare Reference to JSON content for ``LOAD {resolveReferences: true}``."""

    async def resolve(self, reference: Reference, options: ContextCallOptions, /) -> Any: ...


@runtime_checkable
class ContextStateStore(Protocol):
    """Where scoped calls keep their context: ``get`` and an atomic ``compare_and_set``.

    ``expected_version=None`` only creates a missing record; otherwise the write
    happens only if the stored version is ``expected_version`` (else
    STATE_CONFLICT). A new version is never reused.
    """

    async def get(self, scope: ContextScope, options: ContextCallOptions | None = None, /) -> StoredContext | None:
        ...

    async def compare_and_set(self, scope: ContextScope, expected_version: str | None, next: Context,
                              options: ContextCallOptions | None = None, /) -> StoredContext: ...


@runtime_checkable
class ContextOperationQueue(Protocol):
    """Runs ``await operation()`` for a scope in that scope's turn (see ``create_context_operation_queue``)."""

    async def enqueue(self, scope: ContextScope, operation: Callable[[], Awaitable[Any]],
                      options: ContextCallOptions | None = None, /) -> Any: ...


@dataclass(frozen=True, slots=True)
class ContextServices:
    """Injected services; every one is optional.

    ``create_context(services=...)`` also takes a dict (camelCase or
    snake_case keys). A one-method service may be a plain function, here or
    in the dict::

        services = ContextServices(token_estimator=lambda content: len(str(content)) // 4,
                                   selector=LatestSelector())
    """

    token_estimator: TokenEstimator | Callable[..., int | Awaitable[int]] | None = None
    selector: ContextSelector | Callable[..., Any] | None = None
    compressor: ContextCompressor | Callable[..., Any] | None = None
    rag_strategy: RagStrategy | Callable[..., Any] | None = None
    state_store: ContextStateStore | None = None
    operation_queue: ContextOperationQueue | None = None
    reference_resolver: ReferenceResolver | Callable[..., Any] | None = None
