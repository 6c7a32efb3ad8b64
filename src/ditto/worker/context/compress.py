"""COMPRESS (CX-7): drop whole item groups until the working set fits its budget.

Protected items (metadata ``protected``/``safety``/``currentGoal``/``pending``
true, or ``role == "system"``) are never dropped; items sharing a non-empty
string ``callId`` (a tool request and its result) are kept or dropped together.
When the protected groups alone exceed the budget the call fails with
BUDGET_UNSATISFIABLE rather than losing anything silently.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ...contracts import Context, ContextItem
from .config import ContextExecution, call_port, port_method, tighten
from .inputs import construct, read_fields, request_limit
from .items import coerce_context, context_facts, context_memo, facts, make_context, protected_by, trusted_context
from .merge import check_context_inline, check_inline
from .types import ContextCompressRequest, ContextError

__all__ = [
    "COMPRESS_FIELDS",
    "deterministic_compress",
    "is_protected_context_item",
    "parse_compress",
    "run_compress",
]

COMPRESS_FIELDS: Final = ("context", "max_items", "max_tokens")


def is_protected_context_item(item: ContextItem | Mapping[str, Any]) -> bool:
    """Whether COMPRESS must keep ``item`` (a ContextItem or an item dict)::

        protected_ids = [item.id for item in context.items if is_protected_context_item(item)]
    """
    meta = item.get("metadata") if isinstance(item, Mapping) else getattr(item, "metadata", None)
    return bool(meta) and isinstance(meta, Mapping) and protected_by(meta)


def _request(context: Context, max_items: int | None, max_tokens: int | None) -> ContextCompressRequest:
    return construct(ContextCompressRequest, {"context": context, "max_items": max_items, "max_tokens": max_tokens,
                                              "scope": None, "expected_version": None})


def parse_compress(input: Any) -> ContextCompressRequest:
    """A validated request (``context`` trusted and frozen) from a dict or a ``ContextCompressRequest``."""
    fields = read_fields(input, COMPRESS_FIELDS, "input")
    if "context" not in fields:
        raise ContextError("INVALID_INPUT", "context is required")
    return _request(trusted_context(fields["context"]), request_limit(fields.get("max_items"), "maxItems"),
                    request_limit(fields.get("max_tokens"), "maxTokens"))


class _Plan:
    """The static part of compressing one context: its groups and the order to drop them in."""

    __slots__ = ("default_tokens", "drop_order", "group_of", "groups", "protected")

    def __init__(self, context: Context) -> None:
        by_call: dict[str, int] = {}
        groups: list[list[int]] = []
        group_of: list[int] = []
        protected: list[bool] = []
        # Drop key per group: low priority, low relevance, re-retrievable (0), older (latest member) first.
        keys: list[tuple[float, float, int, int]] = []
        for index, (item, info) in enumerate(zip(context.items, context_facts(context), strict=True)):
            _, _, _, priority, relevance, guarded, call_id, retrievable = info.meta(item)
            position = None if call_id is None else by_call.get(call_id)
            if position is None:
                position = len(groups)
                if call_id is not None:
                    by_call[call_id] = position
                groups.append([index])
                keys.append((priority, relevance, 0 if retrievable else 1, index))
                protected.append(guarded)
            else:
                groups[position].append(index)
                old = keys[position]
                keys[position] = (max(old[0], priority), max(old[1], relevance),
                                  1 if old[2] or not retrievable else 0, index)
                protected[position] = protected[position] or guarded
            group_of.append(position)
        self.groups = groups
        self.group_of = group_of
        self.protected = protected
        self.drop_order = sorted((g for g in range(len(groups)) if not protected[g]), key=keys.__getitem__)
        self.default_tokens: list[int] | None = None

    def group_tokens(self, tokens: Sequence[int] | None) -> list[int]:
        sums = [0] * len(self.groups)
        if tokens is not None:
            for group, count in zip(self.group_of, tokens, strict=True):
                sums[group] += count
        return sums


def _plan(context: Context) -> _Plan:
    memo = context_memo(context)
    plan: _Plan | None = memo.get("compress")
    if plan is None:
        plan = memo["compress"] = _Plan(context)
    return plan


async def _group_token_counts(context: Context, plan: _Plan, max_tokens: int | None,
                              execution: ContextExecution) -> list[int] | None:
    if max_tokens is None:
        return None  # no budget, no estimation (CX-7)
    if execution.services.token_estimator is None:
        if plan.default_tokens is None:
            plan.default_tokens = plan.group_tokens([info.default_tokens for info in context_facts(context)])
        return plan.default_tokens
    return plan.group_tokens([await execution.estimate(item) for item in context.items])


def _check_protected(plan: _Plan, group_tokens: Sequence[int] | None, max_items: int,
                     max_tokens: int | None) -> None:
    count = sum(len(members) for members, kept in zip(plan.groups, plan.protected, strict=True) if kept)
    tokens = 0 if group_tokens is None else sum(
        tokens for tokens, kept in zip(group_tokens, plan.protected, strict=True) if kept)
    if count > max_items or (max_tokens is not None and tokens > max_tokens):
        raise ContextError("BUDGET_UNSATISFIABLE",
                           "the protected items alone do not fit the item or token budget")


def _limits(request: ContextCompressRequest, execution: ContextExecution) -> tuple[int, int | None]:
    max_items = tighten(request.max_items, execution.policy.max_items)
    assert max_items is not None
    return max_items, tighten(request.max_tokens, execution.policy.max_tokens)


async def deterministic_compress(input: Any, execution: ContextExecution) -> Context:
    """The default compression: drop the least valuable whole groups, keep order::

        compressed = await deterministic_compress({"context": context, "maxItems": 8}, execution)
    """
    request = parse_compress(input)
    context = request.context
    assert context is not None  # set by parse_compress
    items = context.items
    max_items, max_tokens = _limits(request, execution)
    plan = _plan(context)
    group_tokens = await _group_token_counts(context, plan, max_tokens, execution)
    count = len(items)
    total = 0 if group_tokens is None else sum(group_tokens)
    if count <= max_items and (max_tokens is None or total <= max_tokens):
        return context
    _check_protected(plan, group_tokens, max_items, max_tokens)
    budget = max_tokens if max_tokens is not None else 0
    sizes = [len(members) for members in plan.groups]
    weights = group_tokens if group_tokens is not None else [0] * len(sizes)
    dropped: list[int] = []
    for group in plan.drop_order:
        if count <= max_items and (max_tokens is None or total <= budget):
            break
        dropped.append(group)
        count -= sizes[group]
        total -= weights[group]
    # Greedy dropping may remove more than needed: put back what still fits, most valuable first.
    removed = bytearray(len(items))
    for group in reversed(dropped):
        if count + sizes[group] <= max_items and (max_tokens is None or total + weights[group] <= budget):
            count += sizes[group]
            total += weights[group]
        else:
            for index in plan.groups[group]:
                removed[index] = 1
    return make_context([item for item, gone in zip(items, removed, strict=True) if not gone])


def _same_item(before: ContextItem, after: ContextItem) -> bool:
    """Whether ``after`` is ``before`` unchanged: same content, source and metadata (as JSON, so ``1`` ≠ ``True``)."""
    if before is after:
        return True
    return (before.source == after.source
            and _canonical_json(before.content) == _canonical_json(after.content)
            and _canonical_json(before.metadata) == _canonical_json(after.metadata))


def _canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _check_kept_unchanged(plan: _Plan, items: Sequence[ContextItem], output: Sequence[ContextItem]) -> None:
    """Protected items and callId groups come back exactly as they were, members in their original order.

    Otherwise a compressor could keep a protected item's id while rewriting its
    content or dropping the ``role: system`` that protects it, and the next
    COMPRESS could then drop it: the seed's "may not remove protected items or
    split groups" would only hold once.
    """
    position = {item.id: index for index, item in enumerate(output)}
    for members, protected in zip(plan.groups, plan.protected, strict=True):
        first = items[members[0]]
        if not (protected or facts(first).meta(first).call_id is not None) or first.id not in position:
            continue
        where = [position[items[index].id] for index in members]
        if where != sorted(where):
            raise ContextError("INVALID_PROVIDER_OUTPUT", "the compressor reordered a callId group")
        for index, at in zip(members, where, strict=True):
            if not _same_item(items[index], output[at]):
                what = "a protected item" if protected else "a callId group member"
                raise ContextError("INVALID_PROVIDER_OUTPUT", f"the compressor changed {what}")


async def _custom_compress(request: ContextCompressRequest, max_items: int, max_tokens: int | None,
                           execution: ContextExecution) -> Context:
    context = request.context
    assert context is not None  # set by parse_compress
    items = context.items
    plan = _plan(context)
    _check_protected(plan, await _group_token_counts(context, plan, max_tokens, execution), max_items, max_tokens)
    execution.check()
    compressor = execution.services.compressor
    effective = _request(context, max_items, max_tokens)
    raw = await call_port(port_method(compressor, "compress"), (effective,), execution.options)
    output = coerce_context(raw, "compressor output", "INVALID_PROVIDER_OUTPUT")
    check_inline(output, execution.policy, "INVALID_PROVIDER_OUTPUT")
    known = {item.id for item in items}
    kept = {item.id for item in output}
    if not kept <= known:
        raise ContextError("INVALID_PROVIDER_OUTPUT", "the compressor added items that were not in the context")
    for members, protected in zip(plan.groups, plan.protected, strict=True):
        present = sum(1 for index in members if items[index].id in kept)
        if protected and present < len(members):
            raise ContextError("INVALID_PROVIDER_OUTPUT", "the compressor dropped a protected item")
        if 0 < present < len(members):
            raise ContextError("INVALID_PROVIDER_OUTPUT", "the compressor split a callId group")
    _check_kept_unchanged(plan, items, output)
    if len(output) > max_items:
        raise ContextError("INVALID_PROVIDER_OUTPUT", "the compressor output exceeds maxItems")
    result = make_context(output)
    if max_tokens is not None:
        out_tokens = await _group_token_counts(result, _plan(result), max_tokens, execution)
        if out_tokens is not None and sum(out_tokens) > max_tokens:
            raise ContextError("INVALID_PROVIDER_OUTPUT", "the compressor output exceeds maxTokens")
    return result


async def run_compress(input: Any, execution: ContextExecution) -> Context:
    """Fit ``input.context`` into ``max_items``/``max_tokens`` (with the custom compressor if one is set)."""
    request = parse_compress(input)
    context = request.context
    assert context is not None  # set by parse_compress
    check_context_inline(context, execution.policy)
    max_items, max_tokens = _limits(request, execution)
    if execution.services.compressor is not None:
        return await _custom_compress(request, max_items, max_tokens, execution)
    return await deterministic_compress(_request(context, max_items, max_tokens), execution)
