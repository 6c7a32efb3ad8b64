"""LOAD and UPDATE: normalising sources and merging items into a working set (CX-2, CX-4, CX-5).

LOAD turns messages, references and items into one Context (stable ids for
messages and references); UPDATE applies ``removeIds`` → ``add`` → ``ingress``.
Both merge through :class:`WorkingSet` under the duplicate and missing-removal
policies, and both fail over the item cap instead of compressing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from pydantic import BaseModel

from ...contracts import Context, ContextItem, ContextPolicy, FrozenDict, Message, Reference
from .config import ContextExecution, call_port, port_method
from .inputs import optional_bool, optional_str, read_fields, read_json
from .items import (
    coerce_context,
    coerce_item,
    coerce_reference,
    context_facts,
    context_memo,
    facts,
    is_unresolved_reference,
    make_context,
    make_item,
    message_item,
    reference_item,
)
from .types import ContextError

__all__ = [
    "INGRESS_FIELDS",
    "LOAD_FIELDS",
    "UPDATE_FIELDS",
    "WorkingSet",
    "check_context_inline",
    "check_inline",
    "parse_ingress",
    "parse_source",
    "run_load",
    "run_update",
]

def check_inline(items: Iterable[ContextItem], policy: ContextPolicy, code: str = "INLINE_LIMIT_EXCEEDED") -> None:
    """Every item's content must fit ``max_inline_bytes`` (JSON UTF-8 bytes).

    Unresolved reference items are exempt ("引用项允许超出"): their content is
    only the pointer (a long ``data:`` URI, say), no material is inlined.
    """
    limit = policy.max_inline_bytes
    for item in items:
        if facts(item).nbytes > limit and not is_unresolved_reference(item):
            raise ContextError(code, f"item {item.id!r} has more than {limit} bytes of inline content")


def check_context_inline(context: Context, policy: ContextPolicy) -> None:
    """:func:`check_inline` for a whole context, remembering its largest item."""
    memo = context_memo(context)
    largest = memo.get("max_nbytes")
    if largest is None:
        largest = memo["max_nbytes"] = max((info.nbytes for info in context_facts(context)), default=0)
    if largest > policy.max_inline_bytes:
        check_inline(context.items, policy)


class WorkingSet:
    """An ordered, id-unique list being edited by LOAD or UPDATE."""

    __slots__ = ("_index", "_items", "_policy")

    def __init__(self, policy: ContextPolicy, items: Iterable[ContextItem] = ()) -> None:
        self._policy = policy
        self._items: list[ContextItem | None] = list(items)
        self._index = {item.id: position for position, item in enumerate(self._items) if item is not None}

    def remove(self, item_id: str) -> None:
        position = self._index.pop(item_id, None)
        if position is None:
            if self._policy.missing_removal == "reject":
                raise ContextError("MISSING_ITEM", f"cannot remove {item_id!r}: no such item")
            return
        self._items[position] = None

    def add(self, item: ContextItem) -> None:
        """Append, or apply the duplicate policy (replace keeps the original position)."""
        position = self._index.get(item.id)
        if position is None:
            self._index[item.id] = len(self._items)
            self._items.append(item)
            return
        duplicate = self._policy.duplicate
        if duplicate == "reject":
            raise ContextError("DUPLICATE_ITEM", f"an item with id {item.id!r} already exists")
        if duplicate == "replace":
            self._items[position] = item

    def finish(self) -> list[ContextItem]:
        """The final items; LOAD/UPDATE over ``max_items`` fail, never auto-compress."""
        items = [item for item in self._items if item is not None]
        if len(items) > self._policy.max_items:
            raise ContextError("ITEM_LIMIT_EXCEEDED",
                               f"the context would hold {len(items)} items; the limit is {self._policy.max_items}")
        return items


# -- LOAD ---------------------------------------------------------------------------

LOAD_FIELDS: Final = ("sources", "resolve_references")


def parse_source(value: Any, where: str) -> ContextItem | Reference:
    """Classify one source: an item (has ``id``), a message (has ``role``) or a reference (has ``uri``)."""
    if isinstance(value, ContextItem):
        return coerce_item(value, where)
    if isinstance(value, Message):
        return message_item(value, where)
    if isinstance(value, Reference):
        return value
    if not isinstance(value, Mapping):
        raise ContextError("INVALID_INPUT", f"{where} must be a message, a reference or a context item")
    if "id" in value:
        return coerce_item(value, where)
    if "role" in value:
        return message_item(value, where)
    if "uri" in value:
        return coerce_reference(value, where)
    raise ContextError("INVALID_INPUT", f"{where} must be a message, a reference or a context item")


async def _resolve(reference: Reference, resolver: Any, execution: ContextExecution) -> ContextItem:
    execution.check()
    value = await call_port(port_method(resolver, "resolve"), (reference,), execution.options)
    content = read_json(value, f"the resolved content of {reference.uri!r}", "INVALID_PROVIDER_OUTPUT")
    return reference_item(reference, content, resolved=True)


async def run_load(input: Any, execution: ContextExecution) -> Context:
    """Normalise ``input.sources`` into a Context (no cache routing: see ``create_context``).

    Message and Reference sources get stable ids from their canonical content;
    a message's ``role``/``name`` go to metadata. References stay references
    unless ``resolve_references`` is true, which resolves them one by one in
    input order. Duplicate ids follow ``policy.duplicate``.
    """
    fields = read_fields(input, LOAD_FIELDS, "input")
    sources = fields.get("sources")
    resolve = optional_bool(fields.get("resolve_references"), "resolveReferences")
    if sources is None or isinstance(sources, (str, bytes, Mapping)) or not isinstance(sources, Sequence):
        raise ContextError("INVALID_INPUT", "sources must be an array")
    resolver = execution.services.reference_resolver
    if resolve and resolver is None:
        raise ContextError("RESOLVER_UNAVAILABLE", "resolveReferences needs services.referenceResolver")
    parsed = [parse_source(value, f"sources[{index}]") for index, value in enumerate(sources)]
    policy = execution.policy
    limit = policy.max_inline_bytes  # read once: the loop runs per source
    working = WorkingSet(policy)
    for source in parsed:
        if isinstance(source, Reference):
            item = await _resolve(source, resolver, execution) if resolve else reference_item(source)
        else:
            item = source
        if facts(item).nbytes > limit:
            check_inline((item,), policy)
        working.add(item)
    return make_context(working.finish())


# -- UPDATE -------------------------------------------------------------------------

UPDATE_FIELDS: Final = ("context", "remove_ids", "add", "ingress")
INGRESS_FIELDS: Final = ("id", "source_node", "content", "reference", "metadata")


def _array(value: Any, name: str) -> Sequence[Any]:
    if value is None:
        return ()
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        raise ContextError("INVALID_INPUT", f"{name} must be an array")
    return value


def parse_added(value: Any, where: str) -> ContextItem:
    """One ``add`` entry: a context item, or a message (``{role, content, name?}``, no ``id``).

    A message is mapped exactly as LOAD maps it (:func:`message_item`): a stable id from its canonical
    role/content/name, ``role``/``name`` in metadata. So a chat appends its turns with the shape it
    loaded them in, and a message added twice is one item under the duplicate policy, as in LOAD.
    """
    if isinstance(value, Message) or (isinstance(value, Mapping) and "id" not in value and "role" in value):
        return message_item(value, where)
    return coerce_item(value, where)


def parse_ingress(value: Any, where: str) -> ContextItem:
    """A cross-worker item; ``sourceNode`` is written into its metadata."""
    fields = read_fields(value, INGRESS_FIELDS, where)
    item_id = optional_str(fields.get("id"), f"{where}.id")
    source_node = optional_str(fields.get("source_node"), f"{where}.sourceNode")
    if item_id is None or source_node is None:
        raise ContextError("INVALID_INPUT", f"{where} needs id and sourceNode")
    if "content" not in fields and not isinstance(value, BaseModel) and "content" not in value:
        raise ContextError("INVALID_INPUT", f"{where}.content is required")
    content = read_json(fields.get("content"), f"{where}.content")
    metadata = fields.get("metadata")
    if metadata is not None and not isinstance(metadata, Mapping):
        raise ContextError("INVALID_INPUT", f"{where}.metadata must be an object")
    merged = dict(read_json(metadata, f"{where}.metadata")) if metadata is not None else {}
    merged["sourceNode"] = source_node
    reference = fields.get("reference")
    return make_item(item_id, content,
                     None if reference is None else coerce_reference(reference, f"{where}.reference"),
                     FrozenDict(merged))


async def run_update(input: Any, execution: ContextExecution) -> Context:
    """Apply removals, then additions, then ingress items to ``input.context``.

    ``add`` takes context items and messages (see :func:`parse_added`).
    """
    fields = read_fields(input, UPDATE_FIELDS, "input")
    if "context" not in fields:
        raise ContextError("INVALID_INPUT", "context is required")
    items = coerce_context(fields["context"])
    remove_ids = _array(fields.get("remove_ids"), "removeIds")
    for index, item_id in enumerate(remove_ids):
        if not isinstance(item_id, str) or not item_id:
            raise ContextError("INVALID_INPUT", f"removeIds[{index}] must be a non-empty string")
    added = [parse_added(value, f"add[{index}]") for index, value in enumerate(_array(fields.get("add"), "add"))]
    ingress = [parse_ingress(value, f"ingress[{index}]")
               for index, value in enumerate(_array(fields.get("ingress"), "ingress"))]
    check_inline(items, execution.policy)
    check_inline(added, execution.policy)
    check_inline(ingress, execution.policy)
    working = WorkingSet(execution.policy, items)
    for item_id in remove_ids:
        working.remove(item_id)
    for item in added:
        working.add(item)
    for item in ingress:
        working.add(item)
    return make_context(working.finish())
