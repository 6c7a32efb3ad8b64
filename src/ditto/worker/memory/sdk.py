"""The MEMORY SDK: ``create_memory(resources)`` (MEM-1, MEM-3).

The worker's four nodes call exactly these methods, so the SDK and the nodes
share one implementation: validate the request, call the store (or the
injected search provider) with the caller's signal, validate what came back,
and hand out frozen snapshots. A failure of a port is ``MEMORY_BACKEND_ERROR``
with a fixed message, unless the port raised a :class:`DittoMemoryError`
itself, whose code and message pass through unchanged.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from ...contracts import FrozenDict
from ...signal import CancelledBySignal, CancelSignal
from .config import MemoryResources, memory_options
from .types import (
    DittoMemoryError,
    MemoryCallOptions,
    MemoryDeleteInput,
    MemoryGetInput,
    MemoryItem,
    MemorySearchHit,
    MemorySearchInput,
    MemorySearchProvider,
    MemoryStore,
    MemoryWriteInput,
)
from .validation import (
    NOT_FOUND,
    backend_error,
    invalid,
    parse_delete_input,
    parse_get_input,
    parse_search_input,
    parse_write_input,
    validate_port_items,
    validate_search_hits,
)

__all__ = ["Memory", "create_memory"]

_log = logging.getLogger("ditto.memory")

T = TypeVar("T")

def _check_signal(signal: CancelSignal | None) -> None:
    if signal is not None and not isinstance(signal, CancelSignal):
        raise invalid("signal must be a CancelSignal")
    if signal is not None and signal.aborted:
        raise DittoMemoryError.from_signal(signal.reason)


async def _call_port(operation: str, call: Callable[[], Awaitable[T]]) -> T:
    """Run a store/provider call; anything but a DittoMemoryError becomes a hidden backend error."""
    try:
        return await call()
    except DittoMemoryError:
        raise
    except CancelledBySignal as error:
        raise DittoMemoryError.from_signal(error.code) from None
    except Exception:
        _log.warning("memory %s failed in its backend", operation, exc_info=True)
        raise backend_error() from None


def _selector(request: MemoryGetInput | MemoryDeleteInput) -> tuple[str, tuple[str, ...]]:
    """``("id" | "key", values)`` of a request the parser already checked (exactly one is set)."""
    return ("id", request.ids) if request.ids is not None else ("key", request.keys or ())


class Memory:
    """Long-term records: ``write``, ``get``, ``search`` and ``delete``.

    Each method takes the node's input (a dict with camelCase or snake_case
    keys, or the typed model) and an optional ``signal``; it returns frozen
    snapshots and raises :class:`DittoMemoryError`.
    """

    __slots__ = ("_search", "_store")

    def __init__(self, store: MemoryStore, search: MemorySearchProvider | None = None) -> None:
        options = memory_options(None, store=store, search=search)
        self._store, self._search = options.store, options.search

    @property
    def store(self) -> MemoryStore:
        return self._store

    @property
    def search_provider(self) -> MemorySearchProvider | None:
        """The injected MemorySearchProvider, or ``None`` when the store searches."""
        return self._search

    async def write(self, input: MemoryWriteInput | Mapping[str, Any], *,
                    signal: CancelSignal | None = None) -> tuple[MemoryItem, ...]:
        """MEMORY.WRITE ``{memories: [{id?, key?, content, metadata?}]}`` → the stored items, in order."""
        _check_signal(signal)
        # A write may carry megabytes of JSON to check: in a thread, so the event loop (and every other
        # call, a server's /healthz included) is not held for the whole of it.
        request = await asyncio.to_thread(parse_write_input, input)
        options = MemoryCallOptions(signal=signal)
        output = await _call_port("write", lambda: self._store.write(request.memories, options))
        stored = await asyncio.to_thread(validate_port_items, output)
        if len(stored) != len(request.memories) or any(
            (asked.id is not None and asked.id != got.id) or asked.key != got.key
            for asked, got in zip(request.memories, stored, strict=True)
        ):
            _log.warning("memory store answered a write with records that were not written")
            raise backend_error()
        return stored

    async def get(self, input: MemoryGetInput | Mapping[str, Any], *,
                  signal: CancelSignal | None = None) -> tuple[MemoryItem, ...]:
        """MEMORY.GET ``{ids}`` or ``{keys}`` → found records in request order (missing omitted).

        With ``strict: true`` a missing record is ``MEMORY_NOT_FOUND`` instead.
        """
        _check_signal(signal)
        request = parse_get_input(input)
        field, values = _selector(request)
        options = MemoryCallOptions(signal=signal)
        output = await _call_port("get", lambda: self._store.get(ids=request.ids, keys=request.keys, options=options))
        asked = frozenset(values)
        found: dict[str, MemoryItem] = {}
        for item in validate_port_items(output):
            selector = item.id if field == "id" else item.key
            if selector is None or selector not in asked:
                _log.warning("memory store answered a get with a record that was not asked for")
                raise backend_error()
            found[selector] = item
        if request.strict and any(value not in found for value in values):
            raise DittoMemoryError(NOT_FOUND, f"no memory exists for one of the requested {field}s")
        return tuple(found[value] for value in dict.fromkeys(values) if value in found)

    async def delete(self, input: MemoryDeleteInput | Mapping[str, Any], *,
                     signal: CancelSignal | None = None) -> FrozenDict:
        """MEMORY.DELETE ``{ids}`` or ``{keys}`` → ``{"deleted": n}`` (missing ones are not errors)."""
        _check_signal(signal)
        request = parse_delete_input(input)
        _, values = _selector(request)
        options = MemoryCallOptions(signal=signal)
        deleted = await _call_port("delete", lambda: self._store.delete(ids=request.ids, keys=request.keys,
                                                                        options=options))
        if isinstance(deleted, bool) or not isinstance(deleted, int) or not 0 <= deleted <= len(values):
            _log.warning("memory store answered a delete with an invalid count")
            raise backend_error()
        return FrozenDict({"deleted": deleted})

    async def search(self, input: MemorySearchInput | Mapping[str, Any], *,
                     signal: CancelSignal | None = None) -> tuple[MemorySearchHit, ...]:
        """MEMORY.SEARCH ``{query, limit?=10, filter?, strategy?, options?}`` → ranked hits.

        The injected search provider, when there is one, replaces the store's
        search and receives the validated input with ``limit`` filled in.
        """
        _check_signal(signal)
        request = parse_search_input(input)
        provider = self._search if self._search is not None else self._store
        options = MemoryCallOptions(signal=signal)
        output = await _call_port("search", lambda: provider.search(request, options))
        return validate_search_hits(output, request.limit or 10)


def create_memory(resources: MemoryResources | Mapping[str, Any] | None = None, *, store: MemoryStore | None = None,
                  search: MemorySearchProvider | None = None) -> Memory:
    """The MEMORY SDK over ``resources`` (``{store, search?}``) or the ``store``/``search`` keywords.

    ``search`` is a :class:`MemorySearchProvider` that replaces the store's own
    search (for example a RETRIEVAL adapter). Nothing is opened here.

    Example::

        async with create_sqlite_memory_store("memory.sqlite") as store:
            memory = create_memory(store=store)
            await memory.write({"memories": [{"key": "knowledge:acme:retention", "content": "35 days"}]})
            hits = await memory.search({"query": "retention", "filter": {"keyPrefix": "knowledge:acme:"}})
    """
    options = memory_options(resources, store=store, search=search)
    return Memory(options.store, options.search)
