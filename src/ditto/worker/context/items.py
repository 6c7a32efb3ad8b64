"""Frozen context items and what we remember about them.

Items this package creates are immutable (content and metadata frozen with
``freeze_json``), so anything derived from them never changes: the JSON size
(for the inline limit and the default token estimator) and the query terms
(for the default SELECT score). Those facts are computed once per item and
kept in a registry keyed by object identity and dropped when the item is
garbage collected. A registered item is *trusted*: passing it back in does not
re-validate it, which keeps SELECT/COMPRESS on 10,000 items within budget.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import weakref
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, NamedTuple, TypeVar

from pydantic import BaseModel

from ...contracts import Context, ContextItem, FrozenDict, Message, Reference, js_json_dumps
from .errors import ContextError
from .validation import optional_str, read_fields, read_json, valid_text

__all__ = [
    "ItemFacts",
    "MetaFacts",
    "coerce_context",
    "coerce_item",
    "coerce_reference",
    "construct",
    "content_text",
    "context_facts",
    "context_memo",
    "facts",
    "is_trusted_context",
    "make_context",
    "make_item",
    "message_item",
    "reference_item",
    "stable_id",
    "text_terms",
]

M = TypeVar("M", bound=BaseModel)

_ITEM_FIELDS: Final = ("id", "content", "source", "metadata")
_REFERENCE_FIELDS: Final = ("uri", "media_type", "digest")
_TERM = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]|[^\W_]+")


class MetaFacts(NamedTuple):
    """What SELECT and COMPRESS read from an item's metadata, read once."""

    infer_preferred: bool
    memory_preferred: bool
    memory_excluded: bool
    priority: float
    relevance: float
    protected: bool
    call_id: str | None
    retrievable: bool


def _number(value: Any) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return 0.0


_PROTECTING_FLAGS: Final = ("protected", "safety", "currentGoal", "pending")
_NO_META: Final = MetaFacts(False, False, False, 0.0, 0.0, False, None, False)


def read_meta(item: ContextItem) -> MetaFacts:
    meta = item.metadata
    if not meta or not isinstance(meta, Mapping):
        return _NO_META._replace(retrievable=True) if item.source is not None else _NO_META
    call_id = meta.get("callId")
    system = meta.get("role") == "system"
    return MetaFacts(
        infer_preferred=system or meta.get("protected") is True or meta.get("currentGoal") is True,
        memory_preferred=(meta.get("memoryCandidate") is True or meta.get("reusable") is True
                          or meta.get("stable") is True),
        memory_excluded=meta.get("private") is True or meta.get("memoryEligible") is False,
        priority=_number(meta.get("priority")),
        relevance=_number(meta.get("relevance")),
        protected=system or any(meta.get(flag) is True for flag in _PROTECTING_FLAGS),
        call_id=call_id if isinstance(call_id, str) and call_id else None,
        retrievable=item.source is not None or meta.get("retrievable") is True,
    )


class ItemFacts:
    """Derived, immutable facts about one frozen item."""

    __slots__ = ("_meta", "_ref", "_terms", "default_tokens", "json", "nbytes")

    def __init__(self, nbytes: int) -> None:
        self.nbytes = nbytes
        #: The default estimate: JSON UTF-8 bytes / 4, rounded up (CX-3).
        self.default_tokens = -(-nbytes // 4)
        self._terms: frozenset[str] | None = None
        self._meta: MetaFacts | None = None
        self._ref: weakref.ref[ContextItem] | None = None
        #: The item's stored JSON form, filled in by the state-store codec on first use.
        self.json: str | None = None

    def meta(self, item: ContextItem) -> MetaFacts:
        if self._meta is None:
            self._meta = read_meta(item)
        return self._meta

    def terms(self, item: ContextItem) -> frozenset[str]:
        if self._terms is None:
            self._terms = text_terms(item.content)
        return self._terms


_FACTS: dict[int, ItemFacts] = {}


class _ContextEntry:
    __slots__ = ("memo", "ref")

    def __init__(self, ref: weakref.ref[Context]) -> None:
        self.ref = ref
        self.memo: dict[Any, Any] = {}


_CONTEXTS: dict[int, _ContextEntry] = {}


def _json_size(content: Any) -> int:
    if type(content) is str and content.isascii() and content.isprintable() and '"' not in content \
            and "\\" not in content:
        return len(content) + 2
    return len(js_json_dumps(content).encode("utf-8"))


def _register(item: ContextItem, nbytes: int) -> ItemFacts:
    key = id(item)
    info = ItemFacts(nbytes)
    info._ref = weakref.ref(item, lambda _ref, key=key: _FACTS.pop(key, None))  # type: ignore[misc]
    _FACTS[key] = info
    return info


def facts(item: ContextItem) -> ItemFacts:
    """The cached facts of a trusted item; computed (not cached) for any other item."""
    found = _FACTS.get(id(item))
    if found is not None:
        return found
    return ItemFacts(_json_size(item.content))


def is_trusted(item: Any) -> bool:
    return type(item) is ContextItem and id(item) in _FACTS


_object_new = object.__new__
_object_setattr = object.__setattr__


def _plain_model(model: type[Any]) -> bool:
    return not model.__pydantic_post_init__ and not model.__private_attributes__ and not model.__pydantic_root_model__


# ``model_construct`` costs several microseconds per call (alias handling, defaults);
# our values are already complete, so for these two plain models we set the same
# four slots it sets, directly. Any model with hooks falls back to model_construct.
_FAST_CONSTRUCT: Final = _plain_model(ContextItem) and _plain_model(Context)


def construct(model: type[M], values: dict[str, Any]) -> M:
    """``model.model_construct(**values)`` for complete, already valid values, without its overhead."""
    if not _plain_model(model):  # pragma: no cover - only if a model gains hooks
        return model.model_construct(**values)
    instance: M = _object_new(model)
    _object_setattr(instance, "__dict__", values)
    _object_setattr(instance, "__pydantic_fields_set__", {name for name, value in values.items() if value is not None})
    _object_setattr(instance, "__pydantic_extra__", None)
    _object_setattr(instance, "__pydantic_private__", None)
    return instance


def _new_item(item_id: str, content: Any, source: Reference | None, metadata: FrozenDict | None) -> ContextItem:
    if not _FAST_CONSTRUCT:  # pragma: no cover - only if a pydantic upgrade adds hooks
        return ContextItem.model_construct(id=item_id, content=content, source=source, metadata=metadata)
    item: ContextItem = _object_new(ContextItem)
    _object_setattr(item, "__dict__", {"id": item_id, "content": content, "source": source, "metadata": metadata})
    fields_set = {"id", "content"}
    if source is not None:
        fields_set.add("source")
    if metadata is not None:
        fields_set.add("metadata")
    _object_setattr(item, "__pydantic_fields_set__", fields_set)
    _object_setattr(item, "__pydantic_extra__", None)
    _object_setattr(item, "__pydantic_private__", None)
    return item


def _new_context(items: tuple[ContextItem, ...]) -> Context:
    if not _FAST_CONSTRUCT:  # pragma: no cover
        return Context.model_construct(items=items)
    context: Context = _object_new(Context)
    _object_setattr(context, "__dict__", {"items": items})
    _object_setattr(context, "__pydantic_fields_set__", {"items"})
    _object_setattr(context, "__pydantic_extra__", None)
    _object_setattr(context, "__pydantic_private__", None)
    return context


def make_item(item_id: str, content: Any, source: Reference | None, metadata: FrozenDict | None) -> ContextItem:
    """Build a trusted item from values that are already checked and frozen."""
    item = _new_item(item_id, content, source, metadata)
    _register(item, _json_size(content))
    return item


def make_context(items: Iterable[ContextItem]) -> Context:
    """A trusted Context from trusted items with unique ids (the caller guarantees both)."""
    context = _new_context(tuple(items))
    key = id(context)
    ref = weakref.ref(context, lambda _ref, key=key: _CONTEXTS.pop(key, None))  # type: ignore[misc]
    _CONTEXTS[key] = _ContextEntry(ref)
    return context


def is_trusted_context(context: Any) -> bool:
    entry = _CONTEXTS.get(id(context))
    return entry is not None and entry.ref() is context


def context_facts(context: Context) -> list[ItemFacts]:
    """The facts of every item of ``context``, in order (memoised per trusted context)."""
    memo = context_memo(context)
    found: list[ItemFacts] | None = memo.get("facts")
    if found is None:
        found = memo["facts"] = [facts(item) for item in context.items]
    return found


def context_memo(context: Context) -> dict[Any, Any]:
    """A per-context memo for derived data (rankings, groups); a throwaway dict for untrusted contexts.

    Trusted contexts are immutable, so anything computed from them stays valid
    for as long as the context object lives.
    """
    entry = _CONTEXTS.get(id(context))
    if entry is not None and entry.ref() is context:
        return entry.memo
    return {}


def coerce_reference(value: Any, where: str, code: str = "INVALID_INPUT") -> Reference:
    if isinstance(value, Reference):
        return value
    fields = read_fields(value, _REFERENCE_FIELDS, where, code)
    uri = optional_str(fields.get("uri"), f"{where}.uri", code)
    if uri is None:
        raise ContextError(code, f"{where}.uri is required")
    return Reference.model_construct(
        uri=uri,
        media_type=optional_str(fields.get("media_type"), f"{where}.mediaType", code),
        digest=optional_str(fields.get("digest"), f"{where}.digest", code),
    )


def coerce_item(value: Any, where: str, code: str = "INVALID_INPUT") -> ContextItem:
    """A trusted, frozen copy of an item given as a ContextItem or a dict."""
    if is_trusted(value):
        return value  # type: ignore[no-any-return]
    if isinstance(value, ContextItem):
        fields = {"id": value.id, "content": value.content, "source": value.source, "metadata": value.metadata}
    else:
        fields = read_fields(value, _ITEM_FIELDS, where, code)
        if "content" not in fields and isinstance(value, Mapping) and "content" not in value:
            raise ContextError(code, f"{where}.content is required")
    item_id = fields.get("id")
    if not isinstance(item_id, str) or not item_id or not valid_text(item_id):
        raise ContextError(code, f"{where}.id must be a non-empty string")
    content = read_json(fields.get("content"), f"{where}.content", code)
    source = fields.get("source")
    metadata = fields.get("metadata")
    if metadata is not None and not isinstance(metadata, Mapping):
        raise ContextError(code, f"{where}.metadata must be an object")
    return make_item(
        item_id,
        content,
        None if source is None else coerce_reference(source, f"{where}.source", code),
        None if metadata is None else read_json(metadata, f"{where}.metadata", code),
    )


def coerce_context(value: Any, where: str = "context", code: str = "INVALID_INPUT") -> tuple[ContextItem, ...]:
    """The items of a Context (model or ``{"items": [...]}``); ids must be unique (CX-8)."""
    if isinstance(value, Context):
        if is_trusted_context(value):
            return value.items
        raw: Any = value.items
    else:
        raw = read_fields(value, ("items",), where, code).get("items", ())
    if isinstance(raw, (str, bytes)) or not isinstance(raw, Sequence):
        raise ContextError(code, f"{where}.items must be an array")
    items = tuple(coerce_item(entry, f"{where}.items[{index}]", code) for index, entry in enumerate(raw))
    seen: set[str] = set()
    for item in items:
        if item.id in seen:
            raise ContextError(code, f"{where} contains the id {item.id!r} twice")
        seen.add(item.id)
    return items


# -- stable ids for LOAD (CX-4) -------------------------------------------------

def _canonical(value: Any) -> str:
    # Normalise like JSON.stringify (1.0 -> 1), then sort keys so equal content hashes equally.
    return json.dumps(json.loads(js_json_dumps(value)), sort_keys=True, ensure_ascii=False,
                      separators=(",", ":"))


def stable_id(kind: str, value: Any) -> str:
    """``kind:`` + SHA-256 of the canonical JSON of ``value``."""
    return f"{kind}:{hashlib.sha256(_canonical(value).encode('utf-8')).hexdigest()}"


def _reference_json(reference: Reference) -> FrozenDict:
    body: dict[str, Any] = {"uri": reference.uri}
    if reference.media_type is not None:
        body["mediaType"] = reference.media_type
    if reference.digest is not None:
        body["digest"] = reference.digest
    return FrozenDict(body)


def reference_item(reference: Reference, content: Any = None, *, resolved: bool = False) -> ContextItem:
    """An unresolved reference keeps its descriptor as content; a resolved one its resolved value."""
    descriptor = _reference_json(reference)
    return make_item(stable_id("reference", descriptor), content if resolved else descriptor, reference, None)


def message_item(value: Message | Mapping[str, Any], where: str) -> ContextItem:
    if isinstance(value, Message):
        fields: dict[str, Any] = {"role": value.role, "content": value.content, "name": value.name}
    else:
        fields = read_fields(value, ("role", "content", "name"), where)
        if "content" not in value:
            raise ContextError("INVALID_INPUT", f"{where}.content is required")
    role = optional_str(fields.get("role"), f"{where}.role")
    if role is None:
        raise ContextError("INVALID_INPUT", f"{where}.role is required")
    name = optional_str(fields.get("name"), f"{where}.name")
    content = read_json(fields.get("content"), f"{where}.content")
    identity: dict[str, Any] = {"role": role, "content": content}
    metadata: dict[str, Any] = {"role": role}
    if name is not None:
        identity["name"] = name
        metadata["name"] = name
    return make_item(stable_id("message", identity), content, None, FrozenDict(metadata))


# -- text for the default SELECT score -----------------------------------------

def content_text(content: Any) -> str:
    """Every string inside a JSON value, joined by spaces (keys are not text)."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    stack = [content]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, Mapping):
            stack.extend(reversed(list(value.values())))
        elif isinstance(value, (list, tuple)):
            stack.extend(reversed(value))
        elif isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            parts.append(str(value))
    return " ".join(parts)


def text_terms(content: Any) -> frozenset[str]:
    """Lower-case word terms; CJK characters count one by one (no dictionary segmentation)."""
    return frozenset(_TERM.findall(content_text(content).lower()))
