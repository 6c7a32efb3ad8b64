"""Cache scopes (CX-9): which key a scoped request reads and writes."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ...contracts import DittoModel
from .errors import ContextError
from .items import construct
from .validation import read_fields, valid_text

__all__ = ["ContextScope", "context_scope_key", "parse_scope", "scope_tuple"]

_FIELDS = ("session_id", "turn_id", "invocation_id")


class ContextScope(DittoModel):
    """``session_id`` / ``turn_id`` / ``invocation_id``; at least one non-empty.

    The three together select one cache entry; there is no fallback from a turn
    to its session. A scope is a cache address, not a credential: the
    application checks that the caller owns it.
    """

    session_id: str | None = None
    turn_id: str | None = None
    invocation_id: str | None = None


def parse_scope(value: Any, code: str = "INVALID_INPUT") -> ContextScope:
    """Validate a scope; empty strings count as absent, and one field must remain."""
    if isinstance(value, ContextScope) and (value.session_id or value.turn_id or value.invocation_id) and all(
            part is None or (isinstance(part, str) and part and valid_text(part)) for part in scope_tuple(value)):
        return value  # already in normal form
    fields = read_fields(value, _FIELDS, "scope", code)
    clean: dict[str, str] = {}
    for name, got in fields.items():
        if not isinstance(got, str) or not valid_text(got):
            raise ContextError(code, f"scope.{name} must be a string")
        if got:
            clean[name] = got
    if not clean:
        raise ContextError(code, "scope needs a non-empty sessionId, turnId or invocationId")
    return construct(ContextScope, {"session_id": clean.get("session_id"), "turn_id": clean.get("turn_id"),
                                    "invocation_id": clean.get("invocation_id")})


def scope_tuple(scope: ContextScope) -> tuple[str | None, str | None, str | None]:
    return (scope.session_id, scope.turn_id, scope.invocation_id)


def context_scope_key(scope: Any, key_prefix: str = "ditto:context:") -> str:
    """``key_prefix`` + SHA-256 (hex) of the JSON array ``[sessionId, turnId, invocationId]``.

    Missing fields are ``null`` in the array, so ``{sessionId: "a"}`` and
    ``{turnId: "a"}`` never share a key.
    """
    parsed = parse_scope(scope)
    raw = json.dumps(list(scope_tuple(parsed)), ensure_ascii=False, separators=(",", ":"))
    return key_prefix + hashlib.sha256(raw.encode("utf-8")).hexdigest()
