"""Frozen context items and what we remember about them.

Items this package creates are immutable (content and metadata frozen by
``read_json``), so anything derived from them never changes: the JSON size
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
from typing import Any, Final, NamedTuple

from ...contracts import NOT_JSON, Context, ContextItem, FrozenDict, Message, Reference, js_json_dumps
from ...text import CJK_CLASS, word_terms
from .inputs import (
    check_item_id,
    check_metadata,
    construct,
    metadata_fits,
    optional_str,
    read_fields,
    read_json,
    try_read_json,
    valid_item_id,
)
from .types import ContextError

__all__ = [
    "ItemFacts",
    "MetaFacts",
    "QueryTerms",
    "coerce_context",
    "coerce_item",
    "coerce_reference",
    "content_text",
    "context_facts",
    "context_memo",
    "facts",
    "is_trusted_context",
    "is_unresolved_reference",
    "make_context",
    "make_item",
    "message_item",
    "protected_by",
    "reference_item",
    "stable_id",
    "text_terms",
    "trusted_context",
]

_ITEM_FIELDS: Final = ("id", "content", "source", "metadata")
_REFERENCE_FIELDS: Final = ("uri", "media_type", "digest")
#: A term is :func:`ditto.text.word_terms`'s: one CJK character, or a run of other letters/digits
#: (``str.isalnum``) without ``_``. The helpers below count the same terms faster.
_CJK_CHAR: Final = re.compile(f"[{CJK_CLASS}]")
#: For ASCII text ``word_terms`` are the runs of [0-9a-z] once every other byte is a space.
_ASCII_TERM_BYTES: Final = bytes(c if 0x30 <= c <= 0x39 or 0x61 <= c <= 0x7A else 0x20 for c in range(256))


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


def protected_by(meta: Mapping[str, Any]) -> bool:
    """COMPRESS keeps an item whose metadata has protected/safety/currentGoal/pending true or role system."""
    get = meta.get
    return (get("role") == "system" or get("protected") is True or get("safety") is True
            or get("currentGoal") is True or get("pending") is True)


_NO_META: Final = MetaFacts(False, False, False, 0.0, 0.0, False, None, False)
_NO_META_RETRIEVABLE: Final = _NO_META._replace(retrievable=True)
#: Metadata without any of these keys reads as no metadata at all.
_META_KEYS: Final = frozenset({"role", "protected", "safety", "currentGoal", "pending", "memoryCandidate", "reusable",
                               "stable", "private", "memoryEligible", "priority", "relevance", "callId",
                               "retrievable"})


def read_meta(item: ContextItem) -> MetaFacts:
    meta = item.metadata
    has_source = item.source is not None
    if not meta or not isinstance(meta, Mapping) or meta.keys().isdisjoint(_META_KEYS):
        return _NO_META_RETRIEVABLE if has_source else _NO_META
    get = meta.get
    call_id = get("callId")
    system = get("role") == "system"
    return MetaFacts(
        system or get("protected") is True or get("currentGoal") is True,
        get("memoryCandidate") is True or get("reusable") is True or get("stable") is True,
        get("private") is True or get("memoryEligible") is False,
        _number(get("priority")),
        _number(get("relevance")),
        protected_by(meta),
        call_id if isinstance(call_id, str) and call_id else None,
        has_source or get("retrievable") is True,
    )


def _forget(ref: ItemFacts) -> None:
    if _FACTS.get(ref.key) is ref:
        del _FACTS[ref.key]


class ItemFacts(weakref.ref[ContextItem]):
    """Derived, immutable facts about one frozen item.

    It is also the weak reference that removes them from the registry when
    the item is collected: one object per item instead of three.
    """

    __slots__ = ("_meta", "_terms", "default_tokens", "json", "key", "nbytes")

    def __new__(cls, item: ContextItem, nbytes: int, register: bool = False) -> ItemFacts:
        return super().__new__(cls, item, _forget if register else None)

    def __init__(self, item: ContextItem, nbytes: int, register: bool = False) -> None:
        self.key = id(item)  # the weak reference itself was made in __new__
        self.nbytes = nbytes
        #: The default estimate: JSON UTF-8 bytes / 4, rounded up (CX-3).
        self.default_tokens = -(-nbytes // 4)
        self._terms: frozenset[str] | None = None
        self._meta: MetaFacts | None = None
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


#: Maps every byte JSON escapes inside a string to ``"``: an ASCII string without one is its length + 2 quotes.
#: (``bytes.translate`` plus ``in`` scans several times faster than a regex or ``isprintable``.)
_ESCAPED_TO_QUOTE: Final = bytes.maketrans(bytes(range(32)) + b"\\", b'"' * 33)
#: JSON like ``JSON.stringify`` except for floats; one encoder object for every call.
encode_json: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


def _json_size(content: Any) -> int:
    """UTF-8 bytes of ``JSON.stringify(content)`` (content is checked, encodable JSON)."""
    if type(content) is str and content.isascii() and b'"' not in content.encode("ascii").translate(_ESCAPED_TO_QUOTE):
        return len(content) + 2
    text = encode_json(content)
    if type(content) is not str and (".0" in text or "e+" in text):  # a float JavaScript may write differently
        text = js_json_dumps(content)
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def facts(item: ContextItem) -> ItemFacts:
    """The cached facts of a trusted item; computed (not cached) for any other item."""
    found = _FACTS.get(id(item))
    if found is not None and found() is item:
        return found
    return ItemFacts(item, _json_size(item.content))


def is_trusted(item: Any) -> bool:
    found = _FACTS.get(id(item))
    return found is not None and found() is item


def make_item(item_id: str, content: Any, source: Reference | None, metadata: FrozenDict | None) -> ContextItem:
    """Build a trusted item from values that are already checked and frozen."""
    fields_set = {"id", "content"}
    if source is not None:
        fields_set.add("source")
    if metadata is not None:
        fields_set.add("metadata")
    item = construct(ContextItem, {"id": item_id, "content": content, "source": source, "metadata": metadata},
                     fields_set)
    _FACTS[id(item)] = ItemFacts(item, _json_size(content), register=True)
    return item


def make_context(items: Iterable[ContextItem], *, transient: bool = False) -> Context:
    """A trusted Context from trusted items with unique ids (the caller guarantees both).

    ``transient`` marks a context built from caller data for one call, which
    will most likely be thrown away: per-item data is then not worth memoising.
    """
    context = construct(Context, {"items": tuple(items)}, {"items"})
    key = id(context)
    ref = weakref.ref(context, lambda _ref, key=key: _CONTEXTS.pop(key, None))  # type: ignore[misc]
    entry = _CONTEXTS[key] = _ContextEntry(ref)
    if transient:
        entry.memo["transient"] = True
    return context


def is_trusted_context(context: Any) -> bool:
    entry = _CONTEXTS.get(id(context))
    return entry is not None and entry.ref() is context


def trusted_context(value: Any, where: str = "context", code: str = "INVALID_INPUT") -> Context:
    """``value`` itself when this package made it, else a validated, frozen copy.

    A copy is marked transient: it was built from caller data for one call.
    """
    if is_trusted_context(value):
        return value  # type: ignore[no-any-return]
    return make_context(coerce_context(value, where, code), transient=True)


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


_ITEM_KEYS: Final = frozenset(_ITEM_FIELDS)


def _plain_item(value: Any) -> ContextItem | None:
    """The fast path: a trusted item as it is, or a well-formed item ``dict`` frozen in one go.

    Returns ``None`` for anything else (other shapes, aliases, invalid values),
    which :func:`coerce_item` then handles or reports with the exact error.
    """
    if type(value) is not dict:
        return value if is_trusted(value) else None
    if "content" not in value or not value.keys() <= _ITEM_KEYS or value.get("source") is not None:
        return None
    item_id = value.get("id")
    if type(item_id) is not str or not valid_item_id(item_id):
        return None
    content = value["content"]
    if type(content) is not str or not content.isascii():  # an ASCII str is valid and frozen as it is
        content = try_read_json(content)
    metadata: Any = value.get("metadata")
    if metadata is not None:
        metadata = try_read_json(metadata) if isinstance(metadata, dict) else NOT_JSON
    if content is NOT_JSON or metadata is NOT_JSON or not metadata_fits(metadata):
        return None
    return make_item(item_id, content, None, metadata)


def coerce_item(value: Any, where: str, code: str = "INVALID_INPUT") -> ContextItem:
    """A trusted, frozen copy of an item given as a ContextItem or a dict."""
    fast = _plain_item(value)
    if fast is not None:
        return fast
    if isinstance(value, ContextItem):
        fields = {"id": value.id, "content": value.content, "source": value.source, "metadata": value.metadata}
    else:
        fields = read_fields(value, _ITEM_FIELDS, where, code)
        if "content" not in fields and isinstance(value, Mapping) and "content" not in value:
            raise ContextError(code, f"{where}.content is required")
    item_id = check_item_id(fields.get("id"), f"{where}.id", code)
    content = read_json(fields.get("content"), f"{where}.content", code)
    source = fields.get("source")
    metadata = fields.get("metadata")
    if metadata is not None and not isinstance(metadata, Mapping):
        raise ContextError(code, f"{where}.metadata must be an object")
    return make_item(
        item_id,
        content,
        None if source is None else coerce_reference(source, f"{where}.source", code),
        None if metadata is None else check_metadata(read_json(metadata, f"{where}.metadata", code),
                                                     f"{where}.metadata", code),
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
    found = [_plain_item(entry) for entry in raw]
    for index, item in enumerate(found):
        if item is None:
            found[index] = coerce_item(raw[index], f"{where}.items[{index}]", code)
    items: tuple[ContextItem, ...] = tuple(found)  # type: ignore[arg-type]
    if len({item.id for item in items}) != len(items):
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


def is_unresolved_reference(item: ContextItem) -> bool:
    """Whether ``item`` is a reference LOAD kept unresolved: its content is its own source's descriptor."""
    return item.source is not None and item.content == _reference_json(item.source)


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


def _terms_of(text: str) -> frozenset[str]:
    if text.isascii():  # the same terms as word_terms, by a byte translation instead of a regex
        return frozenset(text.encode("ascii").translate(_ASCII_TERM_BYTES).decode("ascii").split())
    return frozenset(word_terms(text))


def text_terms(content: Any) -> frozenset[str]:
    """The set of :func:`ditto.text.word_terms` of every string in ``content`` (lower-case; CJK one by one)."""
    return _terms_of(content_text(content).lower())


class QueryTerms:
    """The terms of a query, matched against texts without splitting those texts into terms.

    ``count(content)`` equals ``len(terms & text_terms(content))``: it scans the
    lower-cased text once per query term (``str.find``) and checks the
    characters around each hit, several times cheaper than building the
    content's term set when that set would be used only once (a context given
    as plain data).
    """

    __slots__ = ("_plan", "terms")

    def __init__(self, terms: frozenset[str]) -> None:
        self.terms = terms
        # A single CJK character is a term wherever it occurs; other terms need term boundaries.
        self._plan = tuple((term, len(term) == 1 and _CJK_CHAR.match(term) is not None) for term in terms)

    def count(self, content: Any) -> int:
        text = content_text(content).lower()
        length = len(text)
        found = 0
        for term, anywhere in self._plan:
            start = text.find(term)
            if start < 0:
                continue
            if anywhere:
                found += 1
                continue
            size = len(term)
            while start >= 0:
                end = start + size
                if (start == 0 or not _term_char(text[start - 1])) and (end == length or not _term_char(text[end])):
                    found += 1
                    break
                start = text.find(term, start + 1)
        return found


def _term_char(char: str) -> bool:
    """Whether ``char`` extends a non-CJK ``word_terms`` term (``[^\\W_]``, i.e. ``isalnum``, minus CJK)."""
    return char.isalnum() and _CJK_CHAR.match(char) is None
