"""``create_retrieval`` (RET-2): the direct SDK, and the search core the worker reuses.

``execute_search`` is the one implementation: validate input (RET-1) → pick
the limit → resolve the provider (RET-3) → call it with the signal and merged
defaults → validate the output (RET-4). It raises ``RetrievalError`` only.
``Retrieval.search`` wraps it into a ``NodeResult`` and never raises for a
provider's failure; the worker handler lets the runtime do the wrapping.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from typing import Any

from ..runtime import NodeError, NodeResult
from ..signal import CancelSignal
from .config import DefaultsLayer, coerce_defaults, merge_defaults, resolve_limit, retrieval_options
from .errors import (
    INVALID_BACKEND_OUTPUT,
    INVALID_INPUT,
    PROVIDER_UNAVAILABLE,
    STRATEGY_UNSUPPORTED,
    RetrievalError,
    as_retrieval_error,
    await_with_signal,
    check_signal,
)
from .registry import RESERVED_STRATEGY, RetrievalTargetRegistry, StrategyBoundProvider
from .types import (
    RetrievalDefaults,
    RetrievalExecutionContext,
    RetrievalProviderRegistry,
    RetrievalSearchInput,
    RetrievalSearchOutput,
)
from .validation import parse_search_input, validate_search_output

__all__ = ["RETRIEVAL_SEARCH", "Retrieval", "create_retrieval", "execute_search", "provider_context"]

RETRIEVAL_SEARCH = "RETRIEVAL.SEARCH"

_SDK_OPTIONS = frozenset({"providers", "defaults", "concurrency"})


def provider_context(defaults: RetrievalDefaults, signal: CancelSignal | None = None) -> RetrievalExecutionContext:
    """The context a provider receives. Contexts are frozen, so callers keep the signal-less one."""
    return RetrievalExecutionContext.model_construct(signal=signal, defaults=defaults)


def _prefill(raw: dict[str, Any], registry: Any, defaults: RetrievalDefaults) -> dict[str, Any]:
    """Put the final limit and the registry's default strategy into a dict input *before* it is
    validated, so the provider's input is built once instead of validated and then copied.
    Anything unusual is left to the validator, which reports it."""
    extra: dict[str, Any] = {}
    if raw.get("limit") is None:
        extra["limit"] = resolve_limit(None, defaults)
    if raw.get("strategy") is None and isinstance(registry, RetrievalTargetRegistry):
        target = raw.get("target")
        name = target.get("name") if type(target) is dict else None
        default = registry.default_strategy(name) if type(name) is str else None
        if default is not None:
            extra["strategy"] = default
    return {**raw, **extra} if extra else raw


def _plain_query(text: str, registry: Any) -> dict[str, Any]:
    """A plain-string query becomes ``{"query": {"content": text}, "target": {"name": <the one target>}}``.

    Only a :class:`RetrievalTargetRegistry` with exactly one target makes the target unambiguous;
    anything else is refused with the shape to send instead.
    """
    name = registry.only_target() if isinstance(registry, RetrievalTargetRegistry) else None
    if name is None:
        raise RetrievalError(INVALID_INPUT, "a plain-string query needs a registry with exactly one target; "
                                            "send {'query': {'content': ...}, 'target': {'name': ...}}")
    return {"query": {"content": text}, "target": {"name": name}}


async def execute_search(registry: RetrievalProviderRegistry, raw_input: Any,
                         context: RetrievalExecutionContext) -> RetrievalSearchOutput:
    """Run one RETRIEVAL.SEARCH; raises :class:`RetrievalError` for every failure.

    ``context`` (signal + merged defaults) is handed to the provider as is. ``raw_input`` may be a
    plain string when the registry has a single target (:func:`_plain_query`).
    """
    defaults, signal = context.defaults, context.signal
    if isinstance(raw_input, str):
        raw_input = _plain_query(raw_input, registry)
    if type(raw_input) is dict:
        raw_input = _prefill(raw_input, registry, defaults)
    request = parse_search_input(raw_input)
    limit = resolve_limit(request.limit, defaults)
    check_signal(signal)
    if request.strategy == RESERVED_STRATEGY:  # refused for custom registries too
        raise RetrievalError(STRATEGY_UNSUPPORTED, "rag is not a retrieval strategy")
    resolve = getattr(registry, "resolve", None)
    if not callable(resolve):
        raise RetrievalError(PROVIDER_UNAVAILABLE, "the retrieval registry has no resolve method")
    try:
        provider = resolve(request.target, request.strategy)
    except Exception as error:  # a custom registry may raise anything
        raise as_retrieval_error(error) from None
    search = getattr(provider, "search", None)
    if not callable(search):
        raise RetrievalError(PROVIDER_UNAVAILABLE, "the retrieval provider has no search method")
    if isinstance(provider, StrategyBoundProvider):
        # Unwrap the registry binding: one copy sets both the limit and the chosen strategy, and
        # validate_search_output fills the strategy into the output, as the binding would.
        strategy: str | None = provider.strategy
        search = provider.provider.search
    else:
        strategy = request.strategy
    if request.limit != limit or request.strategy != strategy:
        call_input = request.model_copy(update={"limit": limit, "strategy": strategy})
    else:
        call_input = request
    try:
        raw_output = await search(call_input, context)
    except asyncio.CancelledError:
        raise
    except Exception as error:
        raise as_retrieval_error(error) from None
    try:
        return validate_search_output(raw_output, request, limit=limit, strategy=strategy)
    except RetrievalError:
        raise
    except Exception:  # an exotic object whose iteration or attributes fail
        raise RetrievalError(INVALID_BACKEND_OUTPUT, "the provider output is malformed") from None


def _context_signal(context: RetrievalExecutionContext | Mapping[str, Any] | None) -> CancelSignal | None:
    if context is None:
        return None
    signal = context.get("signal") if isinstance(context, Mapping) else getattr(context, "signal", None)
    if signal is not None and not isinstance(signal, CancelSignal):
        raise RetrievalError(INVALID_INPUT, "context.signal must be a CancelSignal")
    return signal


class Retrieval:
    """The direct SDK returned by :func:`create_retrieval`; only ``search``.

    It validates and wraps exactly like the worker but does not limit
    concurrency (that is a worker setting).
    """

    __slots__ = ("_context", "_defaults", "_providers")

    def __init__(self, providers: RetrievalProviderRegistry, defaults: DefaultsLayer = None) -> None:
        self._providers = providers
        self._defaults = coerce_defaults(defaults)
        self._context = provider_context(self._defaults)

    @property
    def providers(self) -> RetrievalProviderRegistry:
        return self._providers

    async def search(self, input: RetrievalSearchInput | Mapping[str, Any] | str,
                     runtime_defaults: DefaultsLayer = None,
                     context: RetrievalExecutionContext | Mapping[str, Any] | None = None
                     ) -> NodeResult[RetrievalSearchOutput]:
        """Search and return a ``NodeResult`` (success/error/cancelled/timeout).

        ``input`` is the request, or just the query text when the registry has one target
        (``await retrieval.search("backup policy")``, e.g. with :meth:`RetrievalTargetRegistry.single`).

        ``runtime_defaults`` is a fallback layer *below* the factory defaults
        (e.g. ``config.retrieval``); ``context`` carries the ``signal`` only:
        its ``defaults`` are replaced by the merged factory/runtime defaults.
        """
        execution_id = os.urandom(16).hex()  # uuid4().hex's 128 random bits, without a UUID object
        try:
            signal = _context_signal(context)
            if runtime_defaults is None and signal is None:
                call_context = self._context
            else:
                defaults = self._defaults if runtime_defaults is None else \
                    merge_defaults(self._defaults, runtime_defaults)
                call_context = provider_context(defaults, signal)
            output = await await_with_signal(execute_search(self._providers, input, call_context), signal)
        except RetrievalError as error:
            return NodeResult(execution_id, RETRIEVAL_SEARCH, error.status, error=NodeError(error.code, error.message))
        return NodeResult(execution_id, RETRIEVAL_SEARCH, "success", output)

    def __repr__(self) -> str:
        return f"<Retrieval providers={self._providers!r}>"


def create_retrieval(providers: RetrievalProviderRegistry | Mapping[str, Any], *, defaults: DefaultsLayer = None,
                     concurrency: int | None = None) -> Retrieval:
    """The direct SDK (RET-2): ``search`` returns a ``NodeResult`` and never raises for a provider's failure.

    ``defaults`` may be ``config.retrieval``, a :class:`RetrievalDefaults` or a mapping of the
    same fields. The seed's options object ``{"providers": ..., "defaults": ..., "concurrency": ...}``
    works too; ``concurrency`` is accepted because that object is shared with
    :func:`create_retrieval_worker`, and ignored: the direct SDK never limits concurrency.

    Example::

        providers = RetrievalTargetRegistry({"kb": {"default_strategy": "bm25", "providers": {"bm25": provider}}})
        retrieval = create_retrieval(providers, defaults=config.retrieval)
        result = await retrieval.search({"query": {"content": "agent memory"}, "target": {"name": "kb"}})
        if result.status == "success":
            candidates = result.output.candidates
    """
    options = retrieval_options(providers, factory="create_retrieval", allowed=_SDK_OPTIONS, defaults=defaults,
                                concurrency=concurrency)
    return Retrieval(options.providers, options.defaults)
