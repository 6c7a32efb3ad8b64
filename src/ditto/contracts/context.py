"""Working-context data types shared by CONTEXT, MEMORY adapters and workflows (seed 001)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ._base import DittoModel

__all__ = ["Context", "ContextItem", "ContextPurpose", "ContextSelection", "Message", "Reference"]

ContextPurpose = Literal["infer", "memory"]


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
