"""MEMORY data types and ports (MEM-1, MEM-3).

These are the contracts other packages rely on: the RETRIEVAL memory adapters
(``ditto.retrieval.adapters.memory``) and the research workflow import only
this module, never the SQLite implementation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, Protocol, runtime_checkable

from pydantic import Field, field_validator

from ...contracts import DittoModel
from ...contracts.json import plain_json
from ...errors import DittoError, InvalidArgumentError
from ...signal import CancelSignal

__all__ = [
    "DittoMemoryError",
    "MemoryArgumentError",
    "MemoryCallOptions",
    "MemoryDeleteInput",
    "MemoryGetInput",
    "MemoryItem",
    "MemorySearchHit",
    "MemorySearchInput",
    "MemorySearchProvider",
    "MemoryStore",
    "MemoryWriteInput",
    "MemoryWriteItem",
]


INVALID_INPUT: Final = "MEMORY_INVALID_INPUT"
NOT_FOUND: Final = "MEMORY_NOT_FOUND"
BACKEND_ERROR: Final = "MEMORY_BACKEND_ERROR"
CANCELLED: Final = "MEMORY_CANCELLED"
TIMEOUT: Final = "MEMORY_TIMEOUT"


class DittoMemoryError(DittoError):
    """MEMORY's failures. Codes: ``MEMORY_INVALID_INPUT``, ``MEMORY_NOT_FOUND`` (a strict GET),
    ``MEMORY_BACKEND_ERROR`` (backend text hidden), ``MEMORY_CANCELLED`` (status cancelled) and
    ``MEMORY_TIMEOUT`` (status timeout); a fired signal is ``DittoMemoryError.from_signal(reason)``."""

    codes = frozenset({INVALID_INPUT, NOT_FOUND, BACKEND_ERROR, CANCELLED, TIMEOUT})
    cancelled_code = CANCELLED
    timeout_code = TIMEOUT


class MemoryArgumentError(DittoMemoryError, InvalidArgumentError):
    """``create_memory`` / ``create_memory_worker`` built wrongly: an
    :class:`~ditto.errors.InvalidArgumentError` (so a ``ValueError``) that keeps the
    ``MEMORY_INVALID_INPUT`` code these factories always raised."""

    def __init__(self, message: str, code: str = INVALID_INPUT) -> None:
        DittoError.__init__(self, code, message)


class MemoryItem(DittoModel):
    """One long-term record. ``key`` is an optional exact key such as ``knowledge:acme:retention``."""

    id: str = Field(min_length=1)
    key: str | None = Field(default=None, min_length=1)
    content: Any
    metadata: dict[str, Any] | None = None

    _json_fields = field_validator("content", "metadata", mode="before")(plain_json)


class MemoryWriteItem(DittoModel):
    """What a caller writes; ``id`` is generated when omitted, an existing id is replaced."""

    id: str | None = Field(default=None, min_length=1)
    key: str | None = Field(default=None, min_length=1)
    content: Any
    metadata: dict[str, Any] | None = None

    _json_fields = field_validator("content", "metadata", mode="before")(plain_json)


class MemoryWriteInput(DittoModel):
    memories: tuple[MemoryWriteItem, ...]


class MemoryGetInput(DittoModel):
    """Exactly one of ``ids`` / ``keys`` (exact matches).

    Missing records are omitted from the answer; ``strict=True`` turns a
    missing one into ``MEMORY_NOT_FOUND`` instead.
    """

    ids: tuple[str, ...] | None = None
    keys: tuple[str, ...] | None = None
    strict: bool = Field(default=False, strict=True)


class MemoryDeleteInput(DittoModel):
    ids: tuple[str, ...] | None = None
    keys: tuple[str, ...] | None = None


class MemorySearchInput(DittoModel):
    """``query`` is any value (text for the built-in FTS5 search).

    ``filter`` supports ``{"key": "exact"}``, ``{"key": {"in": [...]}}`` and
    ``{"keyPrefix": "knowledge:acme:"}``; ``strategy``/``options`` pass through
    to an injected search provider unchanged.
    """

    query: Any
    #: strict: ``True``, ``5.0`` and ``"5"`` are not limits (pydantic's lax mode would take them).
    limit: int | None = Field(default=None, ge=1, le=10_000, strict=True)
    filter: dict[str, Any] | None = None
    strategy: str | None = Field(default=None, min_length=1)
    options: dict[str, Any] | None = None


class MemorySearchHit(DittoModel):
    memory: MemoryItem
    score: float | None = None
    metadata: dict[str, Any] | None = None

    _json_fields = field_validator("metadata", mode="before")(plain_json)


class MemoryCallOptions(DittoModel):
    signal: CancelSignal | None = None


@runtime_checkable
class MemorySearchProvider(Protocol):
    """Replaces the store's own search when injected (seed: MemorySearchProvider)."""

    async def search(self, input: MemorySearchInput, options: MemoryCallOptions | None = None
                     ) -> Sequence[MemorySearchHit | Mapping[str, Any]]: ...


@runtime_checkable
class MemoryStore(Protocol):
    async def write(self, items: Sequence[MemoryWriteItem], options: MemoryCallOptions | None = None
                    ) -> Sequence[MemoryItem]: ...

    async def get(self, *, ids: Sequence[str] | None = None, keys: Sequence[str] | None = None,
                  options: MemoryCallOptions | None = None) -> Sequence[MemoryItem]: ...

    async def delete(self, *, ids: Sequence[str] | None = None, keys: Sequence[str] | None = None,
                     options: MemoryCallOptions | None = None) -> int: ...

    async def search(self, input: MemorySearchInput, options: MemoryCallOptions | None = None
                     ) -> Sequence[MemorySearchHit]: ...
