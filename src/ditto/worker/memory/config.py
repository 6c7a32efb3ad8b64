"""MEMORY's options: what ``create_memory`` and ``create_memory_worker`` are built from.

The factories take the seed's resources object ``{store, search?}`` (a dict or
:class:`MemoryResources`) or the same as keywords; :func:`memory_options` reads
either into one :class:`MemoryOptions`. The YAML section ``workers.memory``
(``config.memory.path``) names the default store's file; the application opens
it (``create_sqlite_memory_store(config.memory.path)``), the loader never does.
Mistakes raise :class:`~ditto.worker.memory.types.MemoryArgumentError`, an
``InvalidArgumentError`` with code ``MEMORY_INVALID_INPUT``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import SkipValidation

from ...contracts import DittoModel
from ...runtime.worker import valid_concurrency
from .types import MemoryArgumentError, MemorySearchProvider, MemoryStore

__all__ = ["MemoryOptions", "MemoryResources", "check_concurrency", "memory_options"]

_STORE_METHODS = ("write", "get", "delete", "search")


class MemoryResources(DittoModel):
    """What ``create_memory`` / ``create_memory_worker`` are built from (checked by :func:`memory_options`)."""

    store: SkipValidation[MemoryStore]
    search: SkipValidation[MemorySearchProvider] | None = None


@dataclass(frozen=True, slots=True)
class MemoryOptions:
    """The resources, checked: a store with write/get/delete/search, an optional search provider."""

    store: MemoryStore
    search: MemorySearchProvider | None = None


def memory_options(resources: MemoryResources | Mapping[str, Any] | None, *, store: MemoryStore | None = None,
                   search: MemorySearchProvider | None = None) -> MemoryOptions:
    """Read ``resources`` (object form) or the ``store``/``search`` keywords, not both."""
    if resources is not None:
        if store is not None or search is not None:
            raise MemoryArgumentError("pass either resources or store/search, not both")
        if isinstance(resources, MemoryResources):
            store, search = resources.store, resources.search
        elif isinstance(resources, Mapping):
            if set(resources) - {"store", "search"}:
                raise MemoryArgumentError("memory resources take only store and search")
            store, search = resources.get("store"), resources.get("search")
        else:
            store, search = getattr(resources, "store", None), getattr(resources, "search", None)
    if store is None or any(not callable(getattr(store, name, None)) for name in _STORE_METHODS):
        raise MemoryArgumentError("memory resources need a store with write, get, delete and search methods")
    if search is not None and not callable(getattr(search, "search", None)):
        raise MemoryArgumentError("an injected memory search provider needs a search method")
    return MemoryOptions(store, search)


def check_concurrency(concurrency: int | None) -> int | None:
    """A worker's per-replica limit: ``None`` (unlimited) or a positive integer."""
    if not valid_concurrency(concurrency):
        raise MemoryArgumentError("concurrency must be a positive integer or None")
    return concurrency
