"""``ContextError``: the one exception type the CONTEXT worker raises on purpose (CX-8)."""

from __future__ import annotations

from typing import Final

from ...errors import DittoError

__all__ = ["CONTEXT_ERROR_CODES", "ContextError"]

#: Every code a ContextError can carry; the set is closed and documented in docs/context.md.
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
    """A CONTEXT failure with a stable ``code`` (one of :data:`CONTEXT_ERROR_CODES`).

    Applications branch on ``code``; ``message`` is written by this package and
    never contains a backend's own text (Redis hosts, resolver exceptions).
    """
