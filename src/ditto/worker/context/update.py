"""UPDATE (CX-5): removeIds → add → ingress, under the duplicate and missing-removal policies."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from ...contracts import Context, ContextItem, FrozenDict
from .errors import ContextError
from .execution import ContextExecution
from .items import coerce_context, coerce_item, coerce_reference, make_context, make_item
from .merge import WorkingSet, check_inline
from .validation import optional_str, read_fields, read_json

__all__ = ["INGRESS_FIELDS", "UPDATE_FIELDS", "parse_ingress", "run_update"]

UPDATE_FIELDS = ("context", "remove_ids", "add", "ingress")
INGRESS_FIELDS = ("id", "source_node", "content", "reference", "metadata")


def _array(value: Any, name: str) -> Sequence[Any]:
    if value is None:
        return ()
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        raise ContextError("INVALID_INPUT", f"{name} must be an array")
    return value


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
    """Apply removals, then additions, then ingress items to ``input.context``."""
    fields = read_fields(input, UPDATE_FIELDS, "input")
    if "context" not in fields:
        raise ContextError("INVALID_INPUT", "context is required")
    items = coerce_context(fields["context"])
    remove_ids = _array(fields.get("remove_ids"), "removeIds")
    for index, item_id in enumerate(remove_ids):
        if not isinstance(item_id, str) or not item_id:
            raise ContextError("INVALID_INPUT", f"removeIds[{index}] must be a non-empty string")
    added = [coerce_item(value, f"add[{index}]") for index, value in enumerate(_array(fields.get("add"), "add"))]
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
