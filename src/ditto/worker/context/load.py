"""LOAD (CX-4): messages, references and items into one normalised Context."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...contracts import Context, ContextItem, Message, Reference
from .errors import ContextError
from .execution import ContextExecution
from .items import coerce_item, coerce_reference, make_context, message_item, reference_item
from .merge import WorkingSet, check_inline
from .ports import call_port, port_method
from .validation import optional_bool, read_fields, read_json

__all__ = ["LOAD_FIELDS", "parse_source", "run_load"]

LOAD_FIELDS = ("sources", "resolve_references")


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


async def _resolve(reference: Reference, execution: ContextExecution) -> ContextItem:
    resolver = execution.services.reference_resolver
    if resolver is None:  # checked before, kept for direct callers
        raise ContextError("RESOLVER_UNAVAILABLE", "resolveReferences needs services.referenceResolver")
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
    if resolve and execution.services.reference_resolver is None:
        raise ContextError("RESOLVER_UNAVAILABLE", "resolveReferences needs services.referenceResolver")
    parsed = [parse_source(value, f"sources[{index}]") for index, value in enumerate(sources)]
    working = WorkingSet(execution.policy)
    for source in parsed:
        if isinstance(source, Reference):
            item = await _resolve(source, execution) if resolve else reference_item(source)
        else:
            item = source
        check_inline((item,), execution.policy)
        working.add(item)
    return make_context(working.finish())
