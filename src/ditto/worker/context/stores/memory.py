"""An in-process ContextStateStore (CX-12): TTL, LRU, capacity, injectable clock.

Useful for a single process, for tests and as a local cache. It has no
connections and no background timers: expiry is checked on access, and a write
that needs room first removes expired entries, then the least recently used.
"""

from __future__ import annotations

import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ....contracts import Context
from ..errors import ContextError
from ..items import trusted_context
from ..ports import ContextCallOptions, StoredContext
from ..scope import ContextScope, parse_scope, scope_tuple
from ..validation import MAX_SAFE_INTEGER, read_fields
from ._codec import stored

__all__ = ["DEFAULT_MAX_ENTRIES", "DEFAULT_TTL_MS", "InMemoryContextStore", "create_in_memory_context_store"]

DEFAULT_TTL_MS = 3_600_000
DEFAULT_MAX_ENTRIES = 1000
MAX_TTL_MS = 2_147_483_647

_Key = tuple[str | None, str | None, str | None]


@dataclass(slots=True)
class _Entry:
    value: StoredContext
    expires_at: float


def _wall_ms() -> float:
    return time.time() * 1000.0


class InMemoryContextStore:
    """``get`` refreshes LRU order but not the TTL; ``compare_and_set`` resets the TTL."""

    def __init__(self, ttl_ms: int = DEFAULT_TTL_MS, max_entries: int = DEFAULT_MAX_ENTRIES,
                 now: Callable[[], float] | None = None) -> None:
        if isinstance(ttl_ms, bool) or not isinstance(ttl_ms, int) or not 1 <= ttl_ms <= MAX_TTL_MS:
            raise ContextError("INVALID_INPUT", f"ttlMs must be an integer from 1 to {MAX_TTL_MS}")
        if isinstance(max_entries, bool) or not isinstance(max_entries, int) \
                or not 1 <= max_entries <= MAX_SAFE_INTEGER:
            raise ContextError("INVALID_INPUT", "maxEntries must be a positive safe integer")
        if now is not None and not callable(now):
            raise ContextError("INVALID_INPUT", "now must be a function returning milliseconds")
        self.ttl_ms = ttl_ms
        self.max_entries = max_entries
        self._now = now or _wall_ms
        self._entries: OrderedDict[_Key, _Entry] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def _live(self, key: _Key, now: float) -> _Entry | None:
        entry = self._entries.get(key)
        if entry is not None and entry.expires_at <= now:
            del self._entries[key]
            return None
        return entry

    async def get(self, scope: ContextScope | Any, options: ContextCallOptions | None = None) -> StoredContext | None:
        if options is not None:
            options.raise_if_aborted()
        key = scope_tuple(parse_scope(scope))
        entry = self._live(key, self._now())
        if entry is None:
            return None
        self._entries.move_to_end(key)
        return entry.value

    async def compare_and_set(self, scope: ContextScope | Any, expected_version: str | None, next: Context | Any,
                              options: ContextCallOptions | None = None) -> StoredContext:
        if options is not None:
            options.raise_if_aborted()
        key = scope_tuple(parse_scope(scope))
        if expected_version is not None and (not isinstance(expected_version, str) or not expected_version):
            raise ContextError("INVALID_INPUT", "expectedVersion must be a non-empty string or None")
        context = trusted_context(next)
        now = self._now()
        current = self._live(key, now)
        if expected_version is None:
            if current is not None:
                raise ContextError("STATE_CONFLICT", "the scope already has a context")
        elif current is None or current.value.version != expected_version:
            raise ContextError("STATE_CONFLICT", "the scope's version changed or expired")
        if current is None and len(self._entries) >= self.max_entries:
            self._make_room(now)
        value = stored(str(uuid.uuid4()), context)
        self._entries[key] = _Entry(value, now + self.ttl_ms)
        self._entries.move_to_end(key)
        return value

    def _make_room(self, now: float) -> None:
        for key in [key for key, entry in self._entries.items() if entry.expires_at <= now]:
            del self._entries[key]
        while len(self._entries) >= self.max_entries:
            self._entries.popitem(last=False)


def create_in_memory_context_store(options: Any = None, *, ttl_ms: int | None = None, max_entries: int | None = None,
                                   now: Callable[[], float] | None = None) -> InMemoryContextStore:
    """Create a store; ``options`` may be ``config.context.local_cache`` or a dict (camelCase ok)."""
    fields = {} if options is None else read_fields(options, ("ttl_ms", "max_entries", "now"), "options")
    return InMemoryContextStore(
        ttl_ms=ttl_ms if ttl_ms is not None else fields.get("ttl_ms", DEFAULT_TTL_MS),
        max_entries=max_entries if max_entries is not None else fields.get("max_entries", DEFAULT_MAX_ENTRIES),
        now=now if now is not None else fields.get("now"),
    )
