"""SELECT (CX-6): a projection of the working set for inference or long-term memory.

The default strategy is a pure ranking (:func:`default_select`); the node then
removes repeated ids, applies the item limit and skips items that do not fit
the token budget, continuing with later ones. SELECT never writes anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from pydantic import BaseModel

from ...contracts import Context, ContextItem, ContextSelection
from .config import ContextExecution, call_port, port_method, tighten
from .inputs import construct, optional_str, read_fields, read_json, request_limit
from .items import (
    QueryTerms,
    coerce_item,
    coerce_reference,
    context_facts,
    context_memo,
    facts,
    make_context,
    text_terms,
    trusted_context,
)
from .merge import check_context_inline, check_inline
from .types import DEFAULT_STRATEGY, ContextError, ContextSelectRequest, ContextStrategy, SelectOrder

__all__ = [
    "SELECT_FIELDS",
    "default_select",
    "fit_budget",
    "parse_select",
    "parse_strategy",
    "run_select",
]

SELECT_FIELDS: Final = ("context", "purpose", "query", "limit", "max_tokens", "strategy", "order")

#: Weight of the fraction of query terms found in an item (0..1).
QUERY_WEIGHT: Final = 1.0
#: Weight of an item's position, 0 for the oldest and this value for the newest.
POSITION_WEIGHT: Final = 0.1

def parse_strategy(value: Any) -> ContextStrategy:
    if value is None:
        return DEFAULT_STRATEGY
    if not isinstance(value, (Mapping, BaseModel)):
        raise ContextError("INVALID_INPUT", "strategy must be an object")
    fields = read_fields(value, ("kind", "name", "options", "corpus"), "strategy")
    kind = fields.get("kind")
    if not isinstance(kind, str):
        raise ContextError("INVALID_INPUT", "strategy.kind must be a string")
    if kind not in ("default", "provider", "rag"):
        raise ContextError("STRATEGY_UNAVAILABLE", f"the selection strategy {kind!r} is not supported")
    allowed = {"default": {"kind"}, "provider": {"kind", "name", "options"},
               "rag": {"kind", "corpus", "options"}}[kind]
    extra = set(fields) - allowed
    if extra:
        raise ContextError("INVALID_INPUT", f"strategy {kind} does not take {', '.join(sorted(extra))}")
    name = optional_str(fields.get("name"), "strategy.name")
    if kind == "provider" and name is None:
        raise ContextError("INVALID_INPUT", "strategy provider needs a name")
    options = fields.get("options")
    if options is not None and not isinstance(options, Mapping):
        raise ContextError("INVALID_INPUT", "strategy.options must be an object")
    corpus = fields.get("corpus")
    if kind == "default":
        return DEFAULT_STRATEGY
    return construct(ContextStrategy, {
        "kind": kind,
        "name": name,
        "options": None if options is None else read_json(options, "strategy.options"),
        "corpus": None if corpus is None else coerce_reference(corpus, "strategy.corpus"),
    })


def parse_select(input: Any) -> ContextSelectRequest:
    """A validated request (``context`` trusted and frozen) from a dict or a ``ContextSelectRequest``."""
    fields = read_fields(input, SELECT_FIELDS, "input")
    if "context" not in fields:
        raise ContextError("INVALID_INPUT", "context is required")
    purpose = fields.get("purpose")
    if purpose not in ("infer", "memory"):
        raise ContextError("INVALID_INPUT", "purpose must be infer or memory")
    return construct(ContextSelectRequest, {
        "purpose": purpose,
        "context": trusted_context(fields["context"]),
        "query": None if fields.get("query") is None else read_json(fields["query"], "query"),
        "limit": request_limit(fields.get("limit"), "limit"),
        "max_tokens": request_limit(fields.get("max_tokens"), "maxTokens"),
        "strategy": parse_strategy(fields.get("strategy")),
        "order": _order(fields.get("order")),
        "scope": None,
        "expected_version": None,
    })


def _order(value: Any) -> SelectOrder:
    if value is None or value == "ranking":
        return "ranking"
    if value == "context":
        return "context"
    raise ContextError("INVALID_INPUT", "order must be ranking or context")


def in_context_order(chosen: list[ContextItem], context: Context) -> list[ContextItem]:
    """``chosen`` in working-set order; items the context does not hold (RAG results) follow in ranking order.

    The choice itself is unchanged: the same items as ``order: "ranking"``, so a
    chat built from them reads in the order things happened.
    """
    memo = context_memo(context)
    positions: dict[str, int] | None = memo.get("positions")
    if positions is None:
        positions = memo["positions"] = {item.id: index for index, item in enumerate(context.items)}
    outside = len(positions)
    keys = [positions.get(item.id, outside + rank) for rank, item in enumerate(chosen)]
    return [chosen[index] for index in sorted(range(len(chosen)), key=keys.__getitem__)]


def _rank_basis(context: Context, purpose: str) -> tuple[list[int], list[int], list[float]]:
    """Per context and purpose: preferred indices, other indices, score without the query part."""
    memo = context_memo(context)
    key = ("select", purpose)
    basis: tuple[list[int], list[int], list[float]] | None = memo.get(key)
    if basis is None:
        items = context.items
        memory = purpose == "memory"
        step = POSITION_WEIGHT / max(len(items) - 1, 1)
        preferred: list[int] = []
        rest: list[int] = []
        base = [0.0] * len(items)
        for index, (item, info) in enumerate(zip(items, context_facts(context), strict=True)):
            infer_preferred, memory_preferred, excluded, priority, relevance, _, _, _ = info.meta(item)
            if memory and excluded:
                continue
            base[index] = priority + relevance + step * index
            (preferred if (memory_preferred if memory else infer_preferred) else rest).append(index)
        basis = memo[key] = (preferred, rest, base)
    return basis


def _term_sets(context: Context) -> list[frozenset[str]]:
    memo = context_memo(context)
    terms: list[frozenset[str]] | None = memo.get("terms")
    if terms is None:
        terms = memo["terms"] = [info.terms(item) for item, info in zip(context.items, context_facts(context),
                                                                         strict=True)]
    return terms


def default_select(input: Any) -> tuple[ContextItem, ...]:
    """Rank the items of ``input.context`` for ``input.purpose`` (the default strategy).

    ``infer`` puts system messages and ``protected``/``currentGoal`` items first;
    ``memory`` puts ``memoryCandidate``/``reusable``/``stable`` items first and
    drops ``private: true`` and ``memoryEligible: false`` items. Inside each
    group the score is ``priority + relevance + QUERY_WEIGHT × (share of query
    terms in the item) + POSITION_WEIGHT × position`` (newer items score more);
    ties keep context order. Limits and budgets are applied by ``run_select``::

        ordered = default_select({"context": context, "purpose": "infer", "query": "API"})
    """
    return _rank(parse_select(input))


def _rank(request: ContextSelectRequest) -> tuple[ContextItem, ...]:
    context = request.context
    assert context is not None  # set by parse_select
    preferred, rest, base = _rank_basis(context, request.purpose)
    query_terms = text_terms(request.query) if request.query is not None else frozenset()
    if query_terms:
        share = QUERY_WEIGHT / len(query_terms)
        if context_memo(context).get("transient"):  # used once: scan instead of memoising term sets
            count = QueryTerms(query_terms).count
            overlap = [count(item.content) for item in context.items]
        else:
            overlap = [len(query_terms & terms) for terms in _term_sets(context)]
        score = [weight + share * count for weight, count in zip(base, overlap, strict=True)]
    else:
        score = base
    # reverse=True keeps equal scores in context order (sorting is stable).
    order = sorted(preferred, key=score.__getitem__, reverse=True)
    order += sorted(rest, key=score.__getitem__, reverse=True)
    items = context.items
    return tuple(items[index] for index in order)


def _provider_items(raw: Any, who: str, execution: ContextExecution) -> list[ContextItem]:
    if isinstance(raw, (str, bytes, Mapping)) or not isinstance(raw, Sequence):
        raise ContextError("INVALID_PROVIDER_OUTPUT", f"the {who} must return an array of context items")
    items = [coerce_item(value, f"{who} output[{index}]", "INVALID_PROVIDER_OUTPUT")
             for index, value in enumerate(raw)]
    check_inline(items, execution.policy, "INVALID_PROVIDER_OUTPUT")
    return items


async def fit_budget(candidates: Sequence[ContextItem], limit: int | None, max_tokens: int | None,
                     execution: ContextExecution) -> list[ContextItem]:
    """First occurrence of each id, at most ``limit`` items, skipping those over the token budget."""
    chosen: list[ContextItem] = []
    if limit == 0:
        return chosen
    seen: set[str] = set()
    used = 0
    default_estimator = execution.services.token_estimator is None
    for item in candidates:
        if item.id in seen:
            continue
        seen.add(item.id)
        if max_tokens is not None:
            tokens = facts(item).default_tokens if default_estimator else await execution.estimate(item)
            if used + tokens > max_tokens:
                continue
            used += tokens
        chosen.append(item)
        if limit is not None and len(chosen) >= limit:
            break
        if default_estimator and max_tokens is not None and used >= max_tokens:
            break  # every default estimate is at least 1 token
    return chosen


async def run_select(input: Any, execution: ContextExecution) -> ContextSelection:
    """Choose items for ``purpose`` with the requested strategy, within limit and budget."""
    request = parse_select(input)
    context = request.context
    assert context is not None  # set by parse_select
    check_context_inline(context, execution.policy)
    kind = request.strategy.kind
    if kind == "default":
        candidates: Sequence[ContextItem] = _rank(request)
    else:
        service = execution.services.selector if kind == "provider" else execution.services.rag_strategy
        who, wanted = ("selector", "selector") if kind == "provider" else ("RAG strategy", "ragStrategy")
        if service is None:
            raise ContextError("STRATEGY_UNAVAILABLE", f"strategy {kind} needs services.{wanted}")
        execution.check()
        raw = await call_port(port_method(service, "select"), (request,), execution.options)
        candidates = _provider_items(raw, who, execution)
    chosen = await fit_budget(candidates, tighten(request.limit, execution.policy.max_items),
                              tighten(request.max_tokens, execution.policy.max_tokens), execution)
    if request.order == "context":
        chosen = in_context_order(chosen, context)
    return ContextSelection.model_construct(purpose=request.purpose, context=make_context(chosen),
                                            selected_item_ids=tuple(item.id for item in chosen))
