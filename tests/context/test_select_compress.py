"""SELECT (CX-6) and COMPRESS (CX-7): examples and hypothesis invariants."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ditto.contracts import Context, ContextItem, js_json_dumps
from ditto.worker.context import (
    ContextError,
    create_context,
    create_context_execution,
    default_select,
    deterministic_compress,
    is_protected_context_item,
)
from ditto.worker.context.items import QueryTerms, text_terms
from tests.context.helpers import error_code


def _tokens(item: ContextItem) -> int:
    return math.ceil(len(js_json_dumps(item.content).encode()) / 4)



async def test_infer_prefers_system_protected_and_goal() -> None:
    """CX-6: purpose infer ranks system/protected/currentGoal first, then priority/relevance/query/position."""
    client = create_context()
    context = await client.load({"sources": [
        {"id": "old", "content": "notes"},
        {"role": "system", "content": "rules"},
        {"id": "hi", "content": "x", "metadata": {"priority": 5}},
        {"id": "goal", "content": "g", "metadata": {"currentGoal": True}},
        {"id": "guard", "content": "g", "metadata": {"protected": True}},
        {"id": "api", "content": "the API reference"},
        {"id": "new", "content": "latest"},
    ]})
    ranked = [item.id for item in default_select({"context": context, "purpose": "infer", "query": "api"})]
    assert set(ranked[:3]) == {context.items[1].id, "goal", "guard"}
    assert ranked[3:] == ["hi", "api", "new", "old"]
    picked = await client.select({"context": context, "purpose": "infer", "query": "api", "limit": 4})
    assert picked.selected_item_ids == tuple(ranked[:4])
    assert [item.id for item in picked.context.items] == ranked[:4]


async def test_memory_purpose_filters_and_prefers() -> None:
    """CX-6: purpose memory prefers memoryCandidate/reusable/stable and excludes private / memoryEligible=false."""
    client = create_context()
    context = await client.load({"sources": [
        {"id": "plain", "content": "p"},
        {"id": "private", "content": "p", "metadata": {"private": True, "memoryCandidate": True}},
        {"id": "ineligible", "content": "p", "metadata": {"memoryEligible": False}},
        {"id": "stable", "content": "s", "metadata": {"stable": True}},
        {"id": "candidate", "content": "c", "metadata": {"memoryCandidate": True}},
        {"id": "reusable", "content": "r", "metadata": {"reusable": True}},
        {"id": "system", "content": "rules", "metadata": {"role": "system"}},
    ]})
    picked = await client.select({"context": context, "purpose": "memory"})
    assert picked.selected_item_ids[:3] == ("reusable", "candidate", "stable")
    assert set(picked.selected_item_ids) == {"reusable", "candidate", "stable", "plain", "system"}


async def test_budget_skips_items_that_do_not_fit_and_continues() -> None:
    """CX-6: items over the remaining token budget are skipped, later smaller ones still enter."""
    client = create_context()
    context = await client.load({"sources": [
        {"id": "small", "content": "a", "metadata": {"priority": 3}},
        {"id": "huge", "content": "x" * 400, "metadata": {"priority": 2}},
        {"id": "tiny", "content": "b", "metadata": {"priority": 1}},
    ]})
    picked = await client.select({"context": context, "purpose": "infer", "maxTokens": 2})
    assert picked.selected_item_ids == ("small", "tiny")
    limited = await create_context(policy={"maxTokens": 1}).select({"context": context, "purpose": "infer",
                                                                    "maxTokens": 50})
    assert limited.selected_item_ids == ("small",)  # the policy caps the request


async def test_cjk_query_terms_overlap_per_character() -> None:
    """CX-6: the default term overlap counts CJK characters one by one."""
    client = create_context()
    context = await client.load({"sources": [{"id": "zh", "content": "检索管道说明"},
                                             {"id": "en", "content": "unrelated"}]})
    picked = await client.select({"context": context, "purpose": "infer", "query": "检索", "limit": 1})
    assert picked.selected_item_ids == ("zh",)


async def test_provider_and_rag_strategies_route_to_services() -> None:
    """CX-6: {kind: provider} → services.selector, {kind: rag} → services.rag_strategy, else STRATEGY_UNAVAILABLE."""
    client = create_context()
    context = await client.load({"sources": [{"id": "a", "content": 1}, {"id": "b", "content": 2}]})
    provider = {"context": context, "purpose": "infer", "strategy": {"kind": "provider", "name": "n"}}
    rag = {"context": context, "purpose": "infer", "strategy": {"kind": "rag", "corpus": {"uri": "urn:c"}}}
    assert await error_code(client.select(provider)) == "STRATEGY_UNAVAILABLE"
    assert await error_code(client.select(rag)) == "STRATEGY_UNAVAILABLE"
    seen: list[Any] = []

    async def selector(input: Any, options: Any) -> list[Any]:
        seen.append((input.strategy.name, input.purpose, options))
        return [input.context.items[1], {"id": "a", "content": 1}, input.context.items[1]]

    async def rag_select(input: Any) -> list[Any]:
        seen.append(input.strategy.corpus.uri)
        return [{"id": "fresh", "content": "from corpus"}]

    both = create_context(services={"selector": selector, "ragStrategy": {"select": rag_select}})
    picked = await both.select(provider)
    assert picked.selected_item_ids == ("b", "a")  # repeated ids are dropped, order kept
    assert (await both.select(rag)).selected_item_ids == ("fresh",)
    assert seen[0][:2] == ("n", "infer") and seen[1] == "urn:c"
    bad = create_context(services={"selector": lambda input: "nope"})
    assert await error_code(bad.select(provider)) == "INVALID_PROVIDER_OUTPUT"
    bad_item = create_context(services={"selector": lambda input: [{"id": "", "content": 1}]})
    assert await error_code(bad_item.select(provider)) == "INVALID_PROVIDER_OUTPUT"
    assert await error_code(client.select({**provider, "strategy": {"kind": "provider"}})) == "INVALID_INPUT"


async def test_compress_protects_and_keeps_groups() -> None:
    """CX-7: protected items stay, callId groups go together, low priority/re-retrievable/old go first."""
    client = create_context()
    context = await client.load({"sources": [
        {"role": "system", "content": "rules"},
        {"id": "old", "content": "o"},
        {"id": "call-req", "content": "q", "metadata": {"callId": "c1"}},
        {"id": "ref", "content": "r", "source": {"uri": "urn:r"}},
        {"id": "call-res", "content": "s", "metadata": {"callId": "c1"}},
        {"id": "vip", "content": "v", "metadata": {"priority": 9}},
        {"id": "pending", "content": "p", "metadata": {"pending": True}},
    ]})
    ids = [item.id for item in context.items]
    three = await client.compress({"context": context, "maxItems": 5})
    assert [item.id for item in three.items] == [ids[0], "call-req", "call-res", "vip", "pending"]
    two = await client.compress({"context": context, "maxItems": 4})
    assert [item.id for item in two.items] == [ids[0], "old", "vip", "pending"]
    assert await error_code(client.compress({"context": context, "maxItems": 1})) == "BUDGET_UNSATISFIABLE"
    assert await error_code(client.compress({"context": context, "maxTokens": 2})) == "BUDGET_UNSATISFIABLE"
    assert (await client.compress({"context": context})).items == context.items


async def test_custom_compressor_output_is_checked() -> None:
    """CX-7: a compressor may not add ids, drop protected items or split callId groups."""
    client = create_context()
    context = await client.load({"sources": [
        {"id": "p", "content": "p", "metadata": {"safety": True}},
        {"id": "c1", "content": "a", "metadata": {"callId": "x"}},
        {"id": "c2", "content": "b", "metadata": {"callId": "x"}},
        {"id": "z", "content": "z"},
    ]})

    def compressor(result: list[Any]) -> Any:
        return lambda input: {"items": result}

    items = {item.id: item for item in context.items}
    cases = {
        "adds": [items["p"], {"id": "new", "content": 1}],
        "drops protected": [items["c1"], items["c2"]],
        "splits": [items["p"], items["c1"]],
        "too many": list(context.items),
    }
    for result in cases.values():
        custom = create_context(services={"compressor": compressor(result)})
        assert await error_code(custom.compress({"context": context, "maxItems": 3})) == "INVALID_PROVIDER_OUTPUT"
    summary = create_context(services={"compressor": compressor([items["p"], {"id": "z", "content": "sum"}])})
    assert [i.content for i in (await summary.compress({"context": context, "maxItems": 3})).items] == ["p", "sum"]
    never = create_context(services={"compressor": compressor([])})
    assert await error_code(never.compress({"context": context, "maxItems": 0})) == "BUDGET_UNSATISFIABLE"


def test_is_protected_context_item() -> None:
    """CX-7 CX-15: protected/safety/currentGoal/pending true or role=system."""
    for metadata in ({"protected": True}, {"safety": True}, {"currentGoal": True}, {"pending": True},
                     {"role": "system"}):
        assert is_protected_context_item(ContextItem(id="a", content=1, metadata=metadata))
        assert is_protected_context_item({"id": "a", "content": 1, "metadata": metadata})
    for metadata in (None, {}, {"protected": "yes"}, {"role": "user"}, {"pending": False}):
        assert not is_protected_context_item(ContextItem(id="a", content=1, metadata=metadata))


# -- hypothesis invariants ------------------------------------------------------------------------

_meta = st.fixed_dictionaries({}, optional={
    "priority": st.integers(-3, 3), "relevance": st.floats(0, 1), "callId": st.sampled_from(["c1", "c2", "c3", ""]),
    "protected": st.booleans(), "role": st.sampled_from(["system", "user"]), "private": st.booleans(),
    "memoryEligible": st.booleans(), "memoryCandidate": st.booleans(), "currentGoal": st.booleans(),
})
_content = st.one_of(st.text(max_size=40), st.integers(), st.lists(st.text(max_size=8), max_size=4))


@st.composite
def _contexts(draw: st.DrawFn) -> list[dict[str, Any]]:
    count = draw(st.integers(0, 14))
    return [{"id": f"i{n}", "content": draw(_content), "metadata": draw(_meta)} for n in range(count)]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sources=_contexts(), purpose=st.sampled_from(["infer", "memory"]), query=st.none() | st.text(max_size=10),
       limit=st.none() | st.integers(0, 10), max_tokens=st.none() | st.integers(0, 40))
async def test_select_invariants(sources: list[dict[str, Any]], purpose: str, query: str | None,
                                 limit: int | None, max_tokens: int | None) -> None:
    """CX-6: SELECT never exceeds limit or budget, keeps the strategy's order, honours memory exclusions."""
    client = create_context()
    context = await client.load({"sources": sources})
    request: dict[str, Any] = {"context": context, "purpose": purpose, "query": query, "limit": limit,
                               "maxTokens": max_tokens}
    picked = await client.select(request)
    ranked = [item.id for item in default_select(request)]
    ids = list(picked.selected_item_ids)
    assert ids == [item.id for item in picked.context.items]
    assert limit is None or len(ids) <= limit
    assert max_tokens is None or sum(_tokens(item) for item in picked.context.items) <= max_tokens
    positions = [ranked.index(item_id) for item_id in ids]
    assert positions == sorted(positions)  # a subsequence of the ranking
    if limit is None and max_tokens is None:
        assert ids == ranked
    if purpose == "memory":
        for item in picked.context.items:
            assert item.metadata is not None
            assert item.metadata.get("private") is not True and item.metadata.get("memoryEligible") is not False
    assert [item.id for item in context.items] == [s["id"] for s in sources]  # input untouched


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sources=_contexts(), max_items=st.none() | st.integers(0, 12), max_tokens=st.none() | st.integers(0, 60))
async def test_compress_invariants(sources: list[dict[str, Any]], max_items: int | None,
                                   max_tokens: int | None) -> None:
    """CX-7: COMPRESS keeps protected items and whole callId groups, keeps order, fits or BUDGET_UNSATISFIABLE."""
    execution = create_context_execution()
    context = await create_context().load({"sources": sources})
    items = context.items
    protected = [item for item in items if is_protected_context_item(item)]
    groups: dict[str, set[str]] = {}
    for item in items:
        call_id = item.metadata.get("callId") if item.metadata else None
        if call_id:
            groups.setdefault(call_id, set()).add(item.id)
    protected_ids = {item.id for item in protected}
    for members in groups.values():
        if members & protected_ids:
            protected_ids |= members
    protected_items = [item for item in items if item.id in protected_ids]
    impossible = (max_items is not None and len(protected_items) > max_items) or (
        max_tokens is not None and sum(_tokens(i) for i in protected_items) > max_tokens)
    request = {"context": context, "maxItems": max_items, "maxTokens": max_tokens}
    try:
        result = await deterministic_compress(request, execution)
    except ContextError as error:
        assert error.code == "BUDGET_UNSATISFIABLE" and impossible
        return
    assert not impossible or (len(items) <= (max_items or 256) and (
        max_tokens is None or sum(_tokens(i) for i in items) <= max_tokens))
    kept = [item.id for item in result.items]
    assert protected_ids <= set(kept)
    for members in groups.values():
        assert members <= set(kept) or not (members & set(kept))
    original = [item.id for item in items]
    assert [original.index(i) for i in kept] == sorted(original.index(i) for i in kept)
    assert max_items is None or len(kept) <= max_items
    assert max_tokens is None or sum(_tokens(item) for item in result.items) <= max_tokens
    assert isinstance(result, Context) and isinstance(result.items, tuple)


def test_terms_split_cjk_characters_one_by_one() -> None:
    """CX-6: query-term overlap counts CJK characters one by one, also right after Latin letters."""
    assert text_terms("API检索_v2 Ünïcode, x1") == {"api", "检", "索", "v2", "ünïcode", "x1"}
    assert text_terms({"k": ["Redis", 3, None, True]}) == {"redis", "3"}


_text = st.text(alphabet=st.sampled_from(list("ab cA_1.-检索é İ\u0130\u212a\u00dfx")), max_size=30)


@settings(max_examples=300, deadline=None)
@given(query=_text, content=st.one_of(_text, st.lists(_text, max_size=3)))
def test_query_scan_matches_term_sets(query: str, content: Any) -> None:
    """CX-6: the scan used for plain-data contexts counts exactly the shared query terms of the term sets."""
    terms = text_terms(query)
    assert QueryTerms(terms).count(content) == len(terms & text_terms(content))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sources=_contexts(), purpose=st.sampled_from(["infer", "memory"]), query=st.none() | _text,
       limit=st.none() | st.integers(0, 10), max_tokens=st.none() | st.integers(0, 40))
async def test_plain_dict_context_selects_like_a_loaded_one(sources: list[dict[str, Any]], purpose: str,
                                                            query: str | None, limit: int | None,
                                                            max_tokens: int | None) -> None:
    """CX-6 CX-7: a context passed as plain dicts gives the same SELECT and COMPRESS as the loaded Context."""
    client = create_context()
    loaded = await client.load({"sources": sources})
    request: dict[str, Any] = {"purpose": purpose, "query": query, "limit": limit, "maxTokens": max_tokens}
    plain = await client.select({**request, "context": {"items": sources}})
    assert plain == await client.select({**request, "context": loaded})
    budget = {"maxItems": limit, "maxTokens": max_tokens}
    try:
        expected: Any = await client.compress({**budget, "context": loaded})
    except ContextError as error:
        expected = error.code
    try:
        got: Any = await client.compress({**budget, "context": {"items": sources}})
    except ContextError as error:
        got = error.code
    assert got == expected
