"""Context policy (CX-2): the upper limits every request is held to.

A policy is resolved once, when an SDK or worker is created; requests can only
tighten it (a request asking for more than the policy silently gets the policy's
limit, as the seed says "policy values act as upper bounds").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal

from .errors import ContextError
from .validation import MAX_REQUEST_LIMIT, read_fields

__all__ = [
    "DEFAULT_MAX_INLINE_BYTES",
    "DEFAULT_MAX_ITEMS",
    "ContextPolicy",
    "DuplicatePolicy",
    "MissingRemovalPolicy",
    "resolve_policy",
    "tighten",
]

DEFAULT_MAX_INLINE_BYTES: Final = 65_536
DEFAULT_MAX_ITEMS: Final = 256

DuplicatePolicy = Literal["replace", "keep-first", "reject"]
MissingRemovalPolicy = Literal["ignore", "reject"]

_FIELDS = ("max_inline_bytes", "max_items", "max_tokens", "duplicate", "missing_removal")


@dataclass(frozen=True, slots=True)
class ContextPolicy:
    """Resolved, immutable policy. ``max_tokens=None`` means no token budget."""

    max_inline_bytes: int = DEFAULT_MAX_INLINE_BYTES
    max_items: int = DEFAULT_MAX_ITEMS
    max_tokens: int | None = None
    duplicate: DuplicatePolicy = "replace"
    missing_removal: MissingRemovalPolicy = "ignore"


def _policy_int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_REQUEST_LIMIT:
        raise ContextError("INVALID_INPUT", f"policy.{name} must be an integer from 1 to {MAX_REQUEST_LIMIT}")
    return value


def resolve_policy(value: Any = None) -> ContextPolicy:
    """Validate a policy given as a dict, ``ContextPolicyConfig``, ``ContextPolicy`` or ``None``."""
    if value is None:
        return ContextPolicy()
    if isinstance(value, ContextPolicy):
        value = {name: getattr(value, name) for name in _FIELDS}
    fields = read_fields(value, _FIELDS, "policy")
    duplicate = fields.get("duplicate", "replace")
    if duplicate not in ("replace", "keep-first", "reject"):
        raise ContextError("INVALID_INPUT", "policy.duplicate must be replace, keep-first or reject")
    missing = fields.get("missing_removal", "ignore")
    if missing not in ("ignore", "reject"):
        raise ContextError("INVALID_INPUT", "policy.missingRemoval must be ignore or reject")
    max_tokens = fields.get("max_tokens")
    return ContextPolicy(
        max_inline_bytes=_policy_int(fields.get("max_inline_bytes", DEFAULT_MAX_INLINE_BYTES), "maxInlineBytes"),
        max_items=_policy_int(fields.get("max_items", DEFAULT_MAX_ITEMS), "maxItems"),
        max_tokens=None if max_tokens is None else _policy_int(max_tokens, "maxTokens"),
        duplicate=duplicate,
        missing_removal=missing,
    )


def tighten(request: int | None, policy: int | None) -> int | None:
    """The effective limit: the smaller of request and policy, either may be unset."""
    if request is None:
        return policy
    if policy is None:
        return request
    return min(request, policy)
