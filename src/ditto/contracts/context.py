"""Working-context data types shared by CONTEXT, MEMORY adapters and workflows (seed 001)."""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import ConfigDict, Field

from ._base import DittoModel
from .types import PositiveLimit

__all__ = [
    "DEFAULT_MAX_INLINE_BYTES",
    "DEFAULT_MAX_ITEMS",
    "Context",
    "ContextItem",
    "ContextPolicy",
    "ContextPurpose",
    "ContextSelection",
    "DuplicatePolicy",
    "Message",
    "MissingRemovalPolicy",
    "Reference",
]

ContextPurpose = Literal["infer", "memory"]
DuplicatePolicy = Literal["replace", "keep-first", "reject"]
MissingRemovalPolicy = Literal["ignore", "reject"]

DEFAULT_MAX_INLINE_BYTES: Final = 65_536
DEFAULT_MAX_ITEMS: Final = 256


class Reference(DittoModel):
    """A pointer to material that stays outside the context until resolved."""

    uri: str = Field(min_length=1)
    media_type: str | None = None
    digest: str | None = None


class Message(DittoModel):
    """A chat message; LOAD turns it into a ContextItem with ``role``/``name`` in metadata."""

    role: str = Field(min_length=1)
    content: Any
    name: str | None = None


class ContextItem(DittoModel):
    """One entry of a working context. ``content`` is any finite JSON value."""

    id: str = Field(min_length=1)
    content: Any
    source: Reference | None = None
    metadata: dict[str, Any] | None = None


class Context(DittoModel):
    """An ordered working set; item order is meaningful (insertion order)."""

    items: tuple[ContextItem, ...] = ()


class ContextSelection(DittoModel):
    """A projection chosen by SELECT; it never changes the stored context."""

    purpose: ContextPurpose
    context: Context
    selected_item_ids: tuple[str, ...] = ()


class ContextPolicy(DittoModel):
    """The CONTEXT limits every request is held to (YAML ``workers.context.policy`` and the SDK's ``policy``).

    One model for both: the config loader validates the YAML section with it and
    ``create_context(policy=...)`` resolves to it. Numbers are integers
    1–1,000,000; ``max_tokens=None`` means no token budget. A request can only
    tighten these limits. Which fields a YAML file actually set is
    ``model_fields_set``.
    """

    model_config = ConfigDict(use_attribute_docstrings=True)  # merged with DittoModel's; feeds docs/configuration.md

    max_inline_bytes: PositiveLimit = DEFAULT_MAX_INLINE_BYTES
    """Largest JSON (UTF-8 bytes) of one item's content; an unresolved reference may exceed it."""
    max_items: PositiveLimit = DEFAULT_MAX_ITEMS
    """Items a context may hold: LOAD/UPDATE beyond it fail (`ITEM_LIMIT_EXCEEDED`), nothing is dropped."""
    max_tokens: PositiveLimit | None = None
    """Upper bound of SELECT/COMPRESS token budgets (unset: no bound); never limits LOAD/UPDATE."""
    duplicate: DuplicatePolicy = "replace"
    """A second item with an id already present: `replace` (keeps the position), `keep-first` or `reject`."""
    missing_removal: MissingRemovalPolicy = "ignore"
    """Removing an id that is not there: `ignore`, or `reject` (`MISSING_ITEM`)."""
