"""COMPRESS (CX-7): drop whole item groups until the working set fits its budget.

Protected items (metadata ``protected``/``safety``/``currentGoal``/``pending``
true, or ``role == "system"``) are never dropped; items sharing a non-empty
string ``callId`` (a tool request and its result) are kept or dropped together.
When the protected groups alone exceed the budget the call fails with
BUDGET_UNSATISFIABLE rather than losing anything silently.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ...contracts import Context, ContextItem
from .errors import ContextError
from .execution import ContextExecution
from .items import coerce_context, facts, make_context
from .merge import check_inline
from .policy import tighten
from .ports import call_port, port_method
from .validation import read_fields, request_limit

__all__ = [
    "COMPRESS_FIELDS",
    "ContextCompressRequest",
    "compress_node",
    "deterministic_compress",
    "is_protected_context_item",
    "parse_compress",
]

COMPRESS_FIELDS: Final = ("context", "max_items", "max_tokens")
_PROTECTING_FLAGS: Final = ("protected", "safety", "currentGoal", "pending")


@dataclass(frozen=True, slots=True)
class ContextCompressRequest:
    """A validated COMPRESS request; what ``compressor.compress`` receives.

    ``max_items`` / ``max_tokens`` are the *effective* limits (request tightened
    by policy), so a compressor only has to honour what it is given.
    """

    context: Context
    max_items: int | None = None
    max_tokens: int | None = None


def is_protected_context_item(item: Any) -> bool:
    """Whether COMPRESS must keep ``item`` (a ContextItem or an item dict)."""
    meta = item.get("metadata") if isinstance(item, Mapping) else getattr(item, "metadata", None)
    if not meta or not isinstance(meta, Mapping):
        return False
    return meta.get("role") == "system" or any(meta.get(flag) is True for flag in _PROTECTING_FLAGS)


def parse_compress(input: Any) -> ContextCompressRequest:
    if isinstance(input, ContextCompressRequest):
        return input
    fields = read_fields(input, COMPRESS_FIELDS, "input")
    if "context" not in fields:
        raise ContextError("INVALID_INPUT", "context is required")
    context = fields["context"]
    items = coerce_context(context)
    return ContextCompressRequest(
        context=context if isinstance(context, Context) and context.items is items else make_context(items),
        max_items=request_limit(fields.get("max_items"), "maxItems"),
        max_tokens=request_limit(fields.get("max_tokens"), "maxTokens"),
    )


def _number(value: Any) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return 0.0


def _call_id(item: ContextItem) -> str | None:
    meta = item.metadata
    if meta:
        call_id = meta.get("callId")
        if isinstance(call_id, str) and call_id:
            return call_id
    return None


class _Group:
    __slots__ = ("last", "members", "priority", "protected", "relevance", "retrievable", "tokens")

    def __init__(self) -> None:
        self.members: list[int] = []
        self.protected = False
        self.priority = -math.inf
        self.relevance = -math.inf
        self.retrievable = True
        self.last = 0
        self.tokens = 0

    def add(self, index: int, item: ContextItem, tokens: int) -> None:
        self.members.append(index)
        self.last = index
        self.tokens += tokens
        meta = item.metadata or {}
        self.protected = self.protected or is_protected_context_item(item)
        self.priority = max(self.priority, _number(meta.get("priority")))
        self.relevance = max(self.relevance, _number(meta.get("relevance")))
        # Re-retrievable: it points at a source it can be loaded from again.
        self.retrievable = self.retrievable and (item.source is not None or meta.get("retrievable") is True)

    def drop_key(self) -> tuple[float, float, int, int]:
        """Smaller drops first: low priority, low relevance, re-retrievable, older."""
        return (self.priority, self.relevance, 0 if self.retrievable else 1, self.last)


def group_items(items: Sequence[ContextItem], tokens: Sequence[int] | None) -> list[_Group]:
    """Singleton groups, except items sharing a non-empty ``callId``."""
    by_call: dict[str, _Group] = {}
    groups: list[_Group] = []
    for index, item in enumerate(items):
        call_id = _call_id(item)
        if call_id is None:
            group = _Group()
            groups.append(group)
        else:
            found = by_call.get(call_id)
            if found is None:
                found = by_call[call_id] = _Group()
                groups.append(found)
            group = found
        group.add(index, item, 0 if tokens is None else tokens[index])
    return groups


async def _token_counts(items: Sequence[ContextItem], max_tokens: int | None,
                        execution: ContextExecution) -> list[int] | None:
    if max_tokens is None:
        return None  # no budget, no estimation (CX-7)
    if execution.services.token_estimator is None:
        return [facts(item).default_tokens for item in items]
    return [await execution.estimate(item) for item in items]


def _check_protected(groups: Sequence[_Group], max_items: int, max_tokens: int | None) -> None:
    count = sum(len(group.members) for group in groups if group.protected)
    tokens = sum(group.tokens for group in groups if group.protected)
    if count > max_items or (max_tokens is not None and tokens > max_tokens):
        raise ContextError("BUDGET_UNSATISFIABLE",
                           "the protected items alone do not fit the item or token budget")


def _limits(request: ContextCompressRequest, execution: ContextExecution) -> tuple[int, int | None]:
    max_items = tighten(request.max_items, execution.policy.max_items)
    assert max_items is not None
    return max_items, tighten(request.max_tokens, execution.policy.max_tokens)


async def deterministic_compress(input: Any, execution: ContextExecution) -> Context:
    """The default compression: drop the least valuable whole groups, keep order."""
    request = parse_compress(input)
    items = request.context.items
    max_items, max_tokens = _limits(request, execution)
    tokens = await _token_counts(items, max_tokens, execution)
    count = len(items)
    total = 0 if tokens is None else sum(tokens)
    if count <= max_items and (max_tokens is None or total <= max_tokens):
        return request.context if request.context.items is items else make_context(items)
    groups = group_items(items, tokens)
    _check_protected(groups, max_items, max_tokens)

    def fits(count: int, total: int) -> bool:
        return count <= max_items and (max_tokens is None or total <= max_tokens)

    dropped: list[_Group] = []
    for group in sorted((group for group in groups if not group.protected), key=_Group.drop_key):
        if fits(count, total):
            break
        dropped.append(group)
        count -= len(group.members)
        total -= group.tokens
    # Greedy dropping may have removed more than needed: put back what still fits, most valuable first.
    restored: set[int] = set()
    for position in range(len(dropped) - 1, -1, -1):
        group = dropped[position]
        if fits(count + len(group.members), total + group.tokens):
            count += len(group.members)
            total += group.tokens
            restored.add(position)
    removed = {index for position, group in enumerate(dropped) if position not in restored
               for index in group.members}
    return make_context(item for index, item in enumerate(items) if index not in removed)


async def _custom_compress(request: ContextCompressRequest, max_items: int, max_tokens: int | None,
                           execution: ContextExecution) -> Context:
    items = request.context.items
    tokens = await _token_counts(items, max_tokens, execution)
    groups = group_items(items, tokens)
    _check_protected(groups, max_items, max_tokens)
    execution.check()
    compressor = execution.services.compressor
    effective = ContextCompressRequest(request.context, max_items, max_tokens)
    raw = await call_port(port_method(compressor, "compress"), (effective,), execution.options)
    output = coerce_context(raw, "compressor output", "INVALID_PROVIDER_OUTPUT")
    check_inline(output, execution.policy, "INVALID_PROVIDER_OUTPUT")
    known = {item.id for item in items}
    kept = {item.id for item in output}
    if not kept <= known:
        raise ContextError("INVALID_PROVIDER_OUTPUT", "the compressor added items that were not in the context")
    for group in groups:
        present = sum(1 for index in group.members if items[index].id in kept)
        if group.protected and present < len(group.members):
            raise ContextError("INVALID_PROVIDER_OUTPUT", "the compressor dropped a protected item")
        if 0 < present < len(group.members):
            raise ContextError("INVALID_PROVIDER_OUTPUT", "the compressor split a callId group")
    if len(output) > max_items:
        raise ContextError("INVALID_PROVIDER_OUTPUT", "the compressor output exceeds maxItems")
    if max_tokens is not None:
        out_tokens = await _token_counts(output, max_tokens, execution)
        if out_tokens is not None and sum(out_tokens) > max_tokens:
            raise ContextError("INVALID_PROVIDER_OUTPUT", "the compressor output exceeds maxTokens")
    return make_context(output)


async def compress_node(input: Any, execution: ContextExecution) -> Context:
    """Fit ``input.context`` into ``max_items``/``max_tokens`` (with the custom compressor if one is set)."""
    request = parse_compress(input)
    check_inline(request.context.items, execution.policy)
    max_items, max_tokens = _limits(request, execution)
    if execution.services.compressor is not None:
        return await _custom_compress(request, max_items, max_tokens, execution)
    return await deterministic_compress(ContextCompressRequest(request.context, max_items, max_tokens), execution)
