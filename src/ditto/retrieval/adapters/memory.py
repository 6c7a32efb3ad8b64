"""MEMORY ⇄ RETRIEVAL adapters (RET-7, seed 000 "MEMORY 可选转接").

* :class:`RemoteRetrievalSearchProvider` — a ``MemorySearchProvider`` that
  calls ``RETRIEVAL.SEARCH`` through a runtime (local or HTTP-remote). Without
  ``runtime`` it inherits the runtime of the worker execution it runs in (and
  so that call's signal); an explicit runtime always wins.
* :func:`create_retrieval_memory_search_provider` — the same mapping, but
  calling a ``RetrievalSearchProvider`` in process.
* :func:`create_memory_retrieval_provider` — the other direction: a MEMORY
  store/search provider exposed as a ``RetrievalSearchProvider``.
* :func:`map_memory_candidates` — the default output mapping, for candidates
  whose ``content`` is a complete ``MemoryItem``.

Mapping: ``MemorySearchInput.query`` → ``query.content``; ``strategy``,
``filter``, ``limit`` and ``options`` pass unchanged; the target is fixed by
the application. Any failure reaches MEMORY callers as ``MEMORY_BACKEND_ERROR``
(``MEMORY_CANCELLED`` when the search was cancelled) without the remote text,
and the mapper is not called. Only ``ditto.worker.memory.types`` is imported.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from ...errors import DittoError
from ...runtime import RuntimeClient, current_execution
from ...signal import CancelSignal
from ...worker.memory.types import (
    DittoMemoryError,
    MemoryCallOptions,
    MemoryItem,
    MemorySearchHit,
    MemorySearchInput,
    MemorySearchProvider,
    MemoryStore,
)
from .._results import trusted_candidate, trusted_output, trusted_source
from ..errors import BACKEND_ERROR, INVALID_INPUT, RetrievalArgumentError, RetrievalError
from ..sdk import RETRIEVAL_SEARCH
from ..types import (
    RetrievalDefaults,
    RetrievalExecutionContext,
    RetrievalSearchInput,
    RetrievalSearchOutput,
    RetrievalSearchProvider,
    RetrievalTarget,
)
from ..validation import coerce_input, parse_search_input, parse_search_output

__all__ = [
    "MapOutput",
    "MemoryRetrievalProvider",
    "RemoteRetrievalSearchProvider",
    "RetrievalMemorySearchProvider",
    "create_memory_retrieval_provider",
    "create_retrieval_memory_search_provider",
    "map_memory_candidates",
]

#: ``map_output(output)`` → hits; may be sync or async and sees all candidates at once.
MapOutput = Callable[[RetrievalSearchOutput], "Sequence[MemorySearchHit | Mapping[str, Any]] | Awaitable[Any]"]

_BACKEND = "MEMORY_BACKEND_ERROR"

_log = logging.getLogger(__name__)


def _memory_failure(reason: str, *args: object, error: BaseException | None = None) -> DittoMemoryError:
    """MEMORY_BACKEND_ERROR with a fixed message; what it hides is logged here, once (with the traceback
    when there is an exception)."""
    _log.warning("memory search through RETRIEVAL failed: " + reason, *args, exc_info=error)
    return DittoMemoryError(_BACKEND, "The memory search backend failed")


def _cancelled() -> DittoMemoryError:
    return DittoMemoryError.from_signal("CANCELLED", "The memory search was cancelled")


def map_memory_candidates(output: RetrievalSearchOutput) -> list[MemorySearchHit]:
    """Default mapping: each ``candidate.content`` must be a full ``MemoryItem``
    (``{id, key?, content, metadata?}``); ``score`` is kept and the candidate's
    ``source`` goes to ``hit.metadata["source"]`` next to the candidate metadata."""
    hits = []
    for candidate in output.candidates:
        try:
            memory = MemoryItem.model_validate(candidate.content)
        except Exception:
            raise DittoMemoryError(_BACKEND, "a retrieval candidate is not a complete memory item") from None
        metadata: dict[str, Any] | None = dict(candidate.metadata) if candidate.metadata is not None else None
        if candidate.source is not None:
            metadata = {**(metadata or {}), "source": candidate.source.model_dump(exclude_none=True)}
        hits.append(MemorySearchHit(memory=memory, score=candidate.score, metadata=metadata))
    return hits


def _memory_to_retrieval_input(input: MemorySearchInput | Mapping[str, Any], target: RetrievalTarget
                               ) -> RetrievalSearchInput:
    try:
        memory_input = input if isinstance(input, MemorySearchInput) else MemorySearchInput.model_validate(input)
    except Exception:
        raise DittoMemoryError("MEMORY_INVALID_INPUT", "the memory search input is invalid") from None
    fields: dict[str, Any] = {"query": {"content": memory_input.query}, "target": target}
    for name in ("strategy", "filter", "limit", "options"):
        value = getattr(memory_input, name)
        if value is not None:
            fields[name] = value
    try:
        return parse_search_input(fields)
    except RetrievalError:
        raise DittoMemoryError("MEMORY_INVALID_INPUT", "the memory search input is invalid") from None


async def _apply_mapper(map_output: MapOutput | None, output: RetrievalSearchOutput) -> list[MemorySearchHit]:
    try:
        if map_output is None:
            return map_memory_candidates(output)
        mapped = map_output(output)
        if inspect.isawaitable(mapped):
            mapped = await mapped
        return [hit if isinstance(hit, MemorySearchHit) else MemorySearchHit.model_validate(hit) for hit in mapped]
    except DittoMemoryError:
        raise
    except Exception as error:
        raise _memory_failure("the output mapper failed", error=error) from None


def _check_target(target: RetrievalTarget | Mapping[str, Any]) -> RetrievalTarget:
    try:
        return target if isinstance(target, RetrievalTarget) else RetrievalTarget.model_validate(target)
    except Exception:
        raise RetrievalArgumentError(INVALID_INPUT, "the adapter target is invalid") from None


class RemoteRetrievalSearchProvider:
    """A ``MemorySearchProvider`` delegating to ``RETRIEVAL.SEARCH`` through a runtime.

    Without ``runtime``: the runtime of the worker execution running ``search``
    (``current_execution()``), else the one the object was created in; with
    neither, searching fails with ``MEMORY_BACKEND_ERROR``. The *current*
    execution comes first because an execution's runtime carries that call's
    signal: an adapter kept from an earlier (possibly cancelled) call must not
    pass the old signal on. Do not point it at a RETRIEVAL provider that itself
    calls back into this MEMORY.SEARCH.
    """

    def __init__(self, *, target: RetrievalTarget | Mapping[str, Any], runtime: RuntimeClient | None = None,
                 map_output: MapOutput | None = None) -> None:
        self.target = _check_target(target)
        self._runtime = runtime
        execution = current_execution() if runtime is None else None
        self._created_in = execution.runtime if execution is not None else None
        self._map_output = map_output

    async def search(self, input: MemorySearchInput | Mapping[str, Any],
                     options: MemoryCallOptions | None = None) -> list[MemorySearchHit]:
        request = _memory_to_retrieval_input(input, self.target)
        runtime = self._runtime
        if runtime is None:
            execution = current_execution()
            runtime = execution.runtime if execution is not None else self._created_in
        if runtime is None:
            raise _memory_failure("no runtime: pass runtime= or search inside a worker call")
        signal: CancelSignal | None = options.signal if options is not None else None
        try:
            result = await runtime.invoke(RETRIEVAL_SEARCH, request, signal=signal)
        except DittoError as error:  # routing / transport failures
            raise _memory_failure("RETRIEVAL.SEARCH could not be called", error=error) from None
        if result.status == "cancelled":
            raise _cancelled()
        if result.status != "success":
            code = result.error.code if result.error is not None else result.status
            raise _memory_failure("RETRIEVAL.SEARCH answered %s (%s)", result.status, code)
        try:
            output = parse_search_output(result.output)
        except RetrievalError as error:
            raise _memory_failure("RETRIEVAL.SEARCH answered a malformed output", error=error) from None
        return await _apply_mapper(self._map_output, output)

    def __repr__(self) -> str:
        return f"<RemoteRetrievalSearchProvider target={self.target.name!r}>"


class RetrievalMemorySearchProvider:
    """A ``MemorySearchProvider`` over an in-process ``RetrievalSearchProvider``."""

    def __init__(self, provider: RetrievalSearchProvider, target: RetrievalTarget,
                 map_output: MapOutput | None) -> None:
        self.provider = provider
        self.target = target
        self._map_output = map_output

    async def search(self, input: MemorySearchInput | Mapping[str, Any],
                     options: MemoryCallOptions | None = None) -> list[MemorySearchHit]:
        request = _memory_to_retrieval_input(input, self.target)
        signal = options.signal if options is not None else None
        if signal is not None and signal.aborted:
            raise _cancelled()
        context = RetrievalExecutionContext.model_construct(signal=signal, defaults=RetrievalDefaults())
        try:
            output = parse_search_output(await self.provider.search(request, context))
        except DittoError as error:  # RetrievalError included
            if error.status == "cancelled":
                raise _cancelled() from None
            raise _memory_failure("the retrieval provider answered %s", error.code) from None
        except Exception as error:
            raise _memory_failure("the retrieval provider failed", error=error) from None
        if request.limit is not None and len(output.candidates) > request.limit:
            raise _memory_failure("the retrieval provider returned more candidates than the limit")
        return await _apply_mapper(self._map_output, output)

    def __repr__(self) -> str:
        return f"<RetrievalMemorySearchProvider target={self.target.name!r}>"


def create_retrieval_memory_search_provider(provider: RetrievalSearchProvider, *,
                                            target: RetrievalTarget | Mapping[str, Any],
                                            map_output: MapOutput | None = None) -> RetrievalMemorySearchProvider:
    """Use a RETRIEVAL provider as MEMORY's search (same algorithm, no extra hop)."""
    if not callable(getattr(provider, "search", None)):
        raise RetrievalArgumentError(INVALID_INPUT, "the retrieval provider needs a search method")
    return RetrievalMemorySearchProvider(provider, _check_target(target), map_output)


class MemoryRetrievalProvider:
    """A ``RetrievalSearchProvider`` over a MEMORY store or search provider.

    Candidates: ``id`` = memory id, ``content`` = the full memory item as a
    JSON object (so :func:`map_memory_candidates` can rebuild it),
    ``score``/``metadata`` from the hit, ``source`` = ``{target, ref: id}``.
    """

    def __init__(self, memory: MemoryStore | MemorySearchProvider) -> None:
        self.memory = memory

    async def search(self, input: RetrievalSearchInput | Mapping[str, Any],
                     context: RetrievalExecutionContext | None = None) -> RetrievalSearchOutput:
        input = coerce_input(input)
        signal = context.signal if context is not None else None
        memory_input = MemorySearchInput.model_construct(
            query=input.query.content, limit=input.limit, filter=input.filter, strategy=input.strategy,
            options=input.options)
        try:
            hits = await self.memory.search(memory_input, MemoryCallOptions(signal=signal))
        except DittoError as error:
            if error.status in ("cancelled", "timeout"):
                raise RetrievalError.from_signal(error.status.upper()) from None
            if error.code == "MEMORY_INVALID_INPUT":
                raise RetrievalError(INVALID_INPUT, "The memory search rejected the query") from None
            raise RetrievalError(BACKEND_ERROR, "The memory search failed") from None
        candidates = []
        for raw in hits:
            try:
                hit = raw if isinstance(raw, MemorySearchHit) else MemorySearchHit.model_validate(raw)
            except Exception:
                raise RetrievalError("RETRIEVAL_INVALID_BACKEND_OUTPUT", "the memory search returned a bad hit") \
                    from None
            memory = hit.memory
            candidates.append(trusted_candidate(memory.id, memory.to_json_dict(), hit.score,
                                                trusted_source(input.target.name, memory.id), hit.metadata))
        return trusted_output(tuple(candidates), input.target, input.strategy)

    def __repr__(self) -> str:
        return f"<MemoryRetrievalProvider {self.memory!r}>"


def create_memory_retrieval_provider(memory: MemoryStore | MemorySearchProvider) -> MemoryRetrievalProvider:
    """Expose MEMORY's search (a store or an injected search provider) as a RETRIEVAL provider."""
    if not callable(getattr(memory, "search", None)):
        raise RetrievalArgumentError(INVALID_INPUT, "create_memory_retrieval_provider needs an object with search")
    return MemoryRetrievalProvider(memory)
