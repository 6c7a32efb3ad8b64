"""Typed request models for the four nodes, for callers who prefer models to dicts.

They are plain frozen ``DittoModel``s (camelCase aliases, ``extra="forbid"``);
the SDK reads them field by field exactly like a dict, so every check and
error code is the same either way.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ...contracts import Context, ContextItem, DittoModel, Reference
from .scope import ContextScope

__all__ = [
    "ContextCompressInput",
    "ContextIngressItem",
    "ContextLoadInput",
    "ContextSelectInput",
    "ContextUpdateInput",
]


class ContextIngressItem(DittoModel):
    """An item arriving from another worker; ``source_node`` is written to ``metadata.sourceNode``."""

    id: str = Field(min_length=1)
    source_node: str = Field(min_length=1)
    content: Any
    reference: Reference | None = None
    metadata: dict[str, Any] | None = None


class ContextLoadInput(DittoModel):
    sources: tuple[Any, ...] | None = None
    resolve_references: bool | None = None
    scope: ContextScope | None = None
    expected_version: str | None = None


class ContextUpdateInput(DittoModel):
    context: Context | None = None
    remove_ids: tuple[str, ...] | None = None
    add: tuple[ContextItem, ...] | None = None
    ingress: tuple[ContextIngressItem, ...] | None = None
    scope: ContextScope | None = None
    expected_version: str | None = None


class ContextSelectInput(DittoModel):
    purpose: Literal["infer", "memory"]
    context: Context | None = None
    query: Any = None
    limit: int | None = None
    max_tokens: int | None = None
    strategy: dict[str, Any] | None = None
    order: Literal["ranking", "context"] | None = None
    scope: ContextScope | None = None
    expected_version: str | None = None


class ContextCompressInput(DittoModel):
    context: Context | None = None
    max_items: int | None = None
    max_tokens: int | None = None
    scope: ContextScope | None = None
    expected_version: str | None = None
