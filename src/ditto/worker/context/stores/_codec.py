"""The JSON form of a stored scope: ``{"version": "...", "context": {"items": [...]}}``.

``version`` is always written first, so the Redis CAS script can compare it by
looking at the string's prefix instead of decoding the whole document.
"""

from __future__ import annotations

import json
from typing import Any

from ....contracts import Context, ContextItem, js_json_dumps
from ..errors import ContextError
from ..items import coerce_context, make_context
from ..ports import StoredContext

__all__ = ["dump_stored", "load_stored", "stored", "version_prefix"]


def _item_json(item: ContextItem) -> dict[str, Any]:
    body: dict[str, Any] = {"id": item.id, "content": item.content}
    if item.source is not None:
        source: dict[str, Any] = {"uri": item.source.uri}
        if item.source.media_type is not None:
            source["mediaType"] = item.source.media_type
        if item.source.digest is not None:
            source["digest"] = item.source.digest
        body["source"] = source
    if item.metadata is not None:
        body["metadata"] = item.metadata
    return body


def version_prefix(version: str) -> str:
    return '{"version":' + json.dumps(version) + ","


def dump_stored(version: str, context: Context) -> str:
    items = js_json_dumps({"items": [_item_json(item) for item in context.items]})
    return version_prefix(version) + '"context":' + items + "}"


def stored(version: str, context: Context) -> StoredContext:
    return StoredContext.model_construct(version=version, context=context)


def load_stored(raw: str | bytes) -> StoredContext:
    """Parse a stored document; anything unexpected is INVALID_STATE (never an empty context)."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        body = json.loads(text)
    except (UnicodeDecodeError, ValueError):
        raise ContextError("INVALID_STATE", "the stored context is not valid JSON") from None
    if not isinstance(body, dict) or set(body) != {"version", "context"}:
        raise ContextError("INVALID_STATE", "the stored context has an unexpected shape")
    version = body["version"]
    if not isinstance(version, str) or not version:
        raise ContextError("INVALID_STATE", "the stored context has no version")
    items = coerce_context(body["context"], "stored context", "INVALID_STATE")
    return stored(version, make_context(items))
