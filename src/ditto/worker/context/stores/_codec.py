"""The JSON form of a stored scope: ``{"version": "...", "context": {"items": [...]}}``.

``version`` is always written first, so the Redis CAS script can compare it by
looking at the string's prefix instead of decoding the whole document.
"""

from __future__ import annotations

import json
from typing import Any, Final

from ....contracts import Context, ContextItem
from ..errors import ContextError
from ..items import coerce_reference, construct, encode_json, facts, is_trusted, make_context, make_item
from ..ports import StoredContext
from ..validation import read_json, valid_text

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


def _item_fragment(item: ContextItem) -> str:
    info = facts(item)
    fragment = info.json
    if fragment is None:
        fragment = encode_json(_item_json(item))
        if is_trusted(item):
            info.json = fragment  # items are immutable, so their JSON never changes
    return fragment


def dump_stored(version: str, context: Context) -> str:
    """The stored document. Frozen values (FrozenDict, tuples) serialise natively."""
    return (version_prefix(version) + '"context":{"items":['
            + ",".join([_item_fragment(item) for item in context.items]) + "]}}")


def stored(version: str, context: Context) -> StoredContext:
    return construct(StoredContext, {"version": version, "context": context})


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_ITEM_KEYS: Final = frozenset({"id", "content", "source", "metadata"})


def _invalid(reason: str) -> ContextError:
    return ContextError("INVALID_STATE", f"the stored context is corrupt: {reason}")


def _decode_item(raw: Any) -> ContextItem:
    """A stored item, checked like input: ``json.loads`` turns ``"\\ud800"`` into a lone surrogate."""
    if type(raw) is not dict or "content" not in raw or not raw.keys() <= _ITEM_KEYS:
        raise _invalid("an item has an unexpected shape")
    item_id = raw.get("id")
    if type(item_id) is not str or not item_id or not valid_text(item_id):
        raise _invalid("an item id is missing")
    metadata = raw.get("metadata")
    if metadata is not None and type(metadata) is not dict:
        raise _invalid("an item's metadata is not an object")
    source = raw.get("source")
    return make_item(item_id, read_json(raw["content"], "stored content", "INVALID_STATE"),
                     None if source is None else coerce_reference(source, "stored source", "INVALID_STATE"),
                     None if metadata is None else read_json(metadata, "stored metadata", "INVALID_STATE"))


def load_stored(raw: str | bytes) -> StoredContext:
    """Parse a stored document; anything unexpected is INVALID_STATE (never an empty context)."""
    try:
        body = json.loads(raw, parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise ContextError("INVALID_STATE", "the stored context is not valid JSON") from None
    if type(body) is not dict or body.keys() != {"version", "context"}:
        raise ContextError("INVALID_STATE", "the stored context has an unexpected shape")
    version = body["version"]
    if not isinstance(version, str) or not version:
        raise ContextError("INVALID_STATE", "the stored context has no version")
    context = body["context"]
    if type(context) is not dict or context.keys() != {"items"} or type(context["items"]) is not list:
        raise _invalid("context.items is missing")
    items = [_decode_item(entry) for entry in context["items"]]
    if len({item.id for item in items}) != len(items):
        raise _invalid("an item id appears twice")
    return stored(version, make_context(items))
