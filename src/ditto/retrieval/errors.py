"""RETRIEVAL error codes (seed 000, RET-5).

Providers raise ``RetrievalError(code, safe_message)``; the message is public
and must not contain credentials or private connection details. Any other
exception a provider raises becomes ``RETRIEVAL_BACKEND_ERROR`` with a fixed
message, so backend text never leaks.
"""

from __future__ import annotations

from typing import Final

from ..errors import DittoError

__all__ = [
    "RETRIEVAL_ERROR_CODES",
    "RetrievalError",
]

INVALID_INPUT: Final = "RETRIEVAL_INVALID_INPUT"
TARGET_NOT_FOUND: Final = "RETRIEVAL_TARGET_NOT_FOUND"
STRATEGY_UNSUPPORTED: Final = "RETRIEVAL_STRATEGY_UNSUPPORTED"
PROVIDER_UNAVAILABLE: Final = "RETRIEVAL_PROVIDER_UNAVAILABLE"
INVALID_BACKEND_OUTPUT: Final = "RETRIEVAL_INVALID_BACKEND_OUTPUT"
BACKEND_ERROR: Final = "RETRIEVAL_BACKEND_ERROR"
INVALID_EMBEDDING: Final = "RETRIEVAL_INVALID_EMBEDDING"
CANCELLED: Final = "RETRIEVAL_CANCELLED"
TIMEOUT: Final = "RETRIEVAL_TIMEOUT"
PERMISSION_DENIED: Final = "RETRIEVAL_PERMISSION_DENIED"

RETRIEVAL_ERROR_CODES: Final = frozenset({
    INVALID_INPUT, TARGET_NOT_FOUND, STRATEGY_UNSUPPORTED, PROVIDER_UNAVAILABLE, INVALID_BACKEND_OUTPUT,
    BACKEND_ERROR, INVALID_EMBEDDING, CANCELLED, TIMEOUT, PERMISSION_DENIED,
})


class RetrievalError(DittoError):
    """A RETRIEVAL failure with one of :data:`RETRIEVAL_ERROR_CODES`."""

    status_by_code = {CANCELLED: "cancelled", TIMEOUT: "timeout"}

    def __init__(self, code: str, message: str | None = None) -> None:
        if code not in RETRIEVAL_ERROR_CODES:
            raise ValueError(f"unknown retrieval error code {code!r}")
        super().__init__(code, message)
