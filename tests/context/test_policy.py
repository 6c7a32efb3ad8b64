"""Policy, request limits, the default token estimator and input validation (CX-2, CX-3, CX-8)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ditto.contracts import Context, ContextItem, FrozenDict, InvalidJson, check_json, js_json_dumps, thaw_json
from ditto.worker.context import (
    CONTEXT_ERROR_CODES,
    ContextError,
    ContextPolicy,
    create_context,
    create_context_execution,
)
from ditto.worker.context.inputs import read_json
from ditto.worker.context.items import facts
from tests.context.helpers import error_code


def test_policy_defaults_and_bounds() -> None:
    """CX-2: defaults 65536 / 256 / unset / replace / ignore; policy ints 1..1,000,000."""
    policy = create_context().execution.policy
    assert policy == ContextPolicy(max_inline_bytes=65536, max_items=256, max_tokens=None, duplicate="replace",
                                   missing_removal="ignore")
    ok = create_context(policy={"maxInlineBytes": 1, "max_items": 1_000_000, "maxTokens": 5,
                                "duplicate": "reject", "missingRemoval": "reject"}).execution.policy
    assert (ok.max_inline_bytes, ok.max_items, ok.max_tokens, ok.duplicate, ok.missing_removal) == (
        1, 1_000_000, 5, "reject", "reject")
    for bad in ({"maxItems": 0}, {"maxItems": 1_000_001}, {"maxTokens": True}, {"maxInlineBytes": 1.5},
                {"duplicate": "merge"}, {"missingRemoval": "warn"}, {"unknown": 1}, "policy"):
        with pytest.raises(ContextError) as caught:
            create_context(policy=bad)
        assert caught.value.code == "INVALID_INPUT"


async def test_request_limits_and_tightening() -> None:
    """CX-2: request limit/maxItems/maxTokens are 0..1,000,000, 0 is a zero budget, requests only tighten."""
    client = create_context(policy={"maxItems": 3})
    context = await client.load({"sources": [{"id": f"i{n}", "content": "x"} for n in range(3)]})
    zero = await client.select({"context": context, "purpose": "infer", "limit": 0})
    assert zero.selected_item_ids == () and zero.context.items == ()
    assert (await client.select({"context": context, "purpose": "infer", "maxTokens": 0})).selected_item_ids == ()
    wide = await client.select({"context": context, "purpose": "infer", "limit": 1_000_000})
    assert len(wide.selected_item_ids) == 3  # the policy's 3, not the request's million
    assert (await client.compress({"context": context, "maxItems": 0})).items == ()  # nothing protected
    for field, value in (("limit", -1), ("limit", 1_000_001), ("maxTokens", 2.0), ("limit", True)):
        request = {"context": context, "purpose": "infer", field: value}
        assert await error_code(client.select(request)) == "INVALID_INPUT"


async def test_request_limits_are_clamped_to_the_policy() -> None:
    """CX-2: a SELECT/COMPRESS request asking for more items or tokens than the policy gets the policy's limit,
    observed on a context larger than the policy (built by a client with the default policy)."""
    context = await create_context().load({"sources": [{"id": f"i{n}", "content": "abcd"} for n in range(10)]})
    small = create_context(policy={"maxItems": 3})
    for limit in (None, 4, 10, 1_000_000):
        request: dict[str, Any] = {"context": context, "purpose": "infer"}
        if limit is not None:
            request["limit"] = limit
        assert len((await small.select(request)).selected_item_ids) == 3, limit
    assert len((await small.select({"context": context, "purpose": "infer", "limit": 2})).selected_item_ids) == 2
    assert len((await small.compress({"context": context, "maxItems": 1_000_000})).items) == 3
    assert len((await small.compress({"context": context, "maxItems": 2})).items) == 2
    # Each "abcd" item costs ceil(6 / 4) = 2 tokens: a policy budget of 5 tokens holds two of them.
    budget = create_context(policy={"maxTokens": 5})
    for max_tokens in (None, 6, 1_000_000):
        request = {"context": context, "purpose": "infer"}
        if max_tokens is not None:
            request["maxTokens"] = max_tokens
        assert len((await budget.select(request)).selected_item_ids) == 2, max_tokens
    assert len((await budget.select({"context": context, "purpose": "infer", "maxTokens": 3})).selected_item_ids) == 1
    assert len((await budget.compress({"context": context, "maxTokens": 1_000_000})).items) == 2


async def test_load_and_update_over_item_cap_fail() -> None:
    """CX-2: LOAD/UPDATE over maxItems fail with ITEM_LIMIT_EXCEEDED, never auto-compress."""
    client = create_context(policy={"maxItems": 2})
    sources = [{"id": f"i{n}", "content": n} for n in range(3)]
    assert await error_code(client.load({"sources": sources})) == "ITEM_LIMIT_EXCEEDED"
    context = await client.load({"sources": sources[:2]})
    assert await error_code(client.update({"context": context, "add": [sources[2]]})) == "ITEM_LIMIT_EXCEEDED"


async def test_inline_limit_counts_js_json_utf8_bytes() -> None:
    """CX-2 CX-3: maxInlineBytes counts JSON.stringify UTF-8 bytes of one item's content."""
    content = "é" * 10  # 20 UTF-8 bytes + 2 quotes
    assert len(js_json_dumps(content).encode()) == 22
    assert (await create_context(policy={"maxInlineBytes": 22}).load(
        {"sources": [{"id": "a", "content": content}]})).items[0].content == content
    assert await error_code(create_context(policy={"maxInlineBytes": 21}).load(
        {"sources": [{"id": "a", "content": content}]})) == "INLINE_LIMIT_EXCEEDED"


async def test_default_estimator_is_bytes_over_four_rounded_up() -> None:
    """CX-3: ceil(len(JSON.stringify(content) UTF-8)/4); no spaces, non-ASCII kept."""
    client = create_context()
    contents = ["abc", "é", {"a": [1, 2.0, "x"]}, "x" * 9]
    context = await client.load({"sources": [{"id": str(n), "content": c} for n, c in enumerate(contents)]})
    for index, content in enumerate(contents):
        tokens = math.ceil(len(js_json_dumps(content).encode()) / 4)
        single = Context(items=(context.items[index],))
        fits = await client.select({"context": single, "purpose": "infer", "maxTokens": tokens,
                                    "strategy": {"kind": "default"}})
        assert fits.selected_item_ids == (str(index),)
        assert (await client.select({"context": single, "purpose": "infer", "maxTokens": tokens - 1}
                                    )).selected_item_ids == ()


async def test_estimator_skipped_without_budget_and_checked_with_one() -> None:
    """CX-3: no token budget → no estimation; injected estimators must return non-negative safe ints."""
    calls: list[Any] = []

    def estimate(content: Any) -> int:
        calls.append(content)
        return 1

    client = create_context(services={"tokenEstimator": estimate})
    context = await client.load({"sources": [{"id": "a", "content": "x"}, {"id": "b", "content": "y"}]})
    await client.select({"context": context, "purpose": "infer"})
    await client.compress({"context": context, "maxItems": 1})
    assert calls == []
    picked = await client.select({"context": context, "purpose": "infer", "maxTokens": 1})
    assert len(picked.selected_item_ids) == 1 and calls

    async def async_estimate(content: Any, options: Any) -> int:
        assert options.signal is None
        return 0

    free = create_context(services={"tokenEstimator": {"estimate": async_estimate}})
    assert len((await free.select({"context": context, "purpose": "infer", "maxTokens": 0})).selected_item_ids) == 2
    for bad in (-1, 1.5, True, 2**53, "3", None):
        broken = create_context(services={"tokenEstimator": lambda content, bad=bad: bad})
        assert await error_code(broken.select({"context": context, "purpose": "infer", "maxTokens": 5})) == (
            "INVALID_PROVIDER_OUTPUT")
        assert await error_code(broken.compress({"context": context, "maxTokens": 5})) == "INVALID_PROVIDER_OUTPUT"


async def test_validation_codes() -> None:
    """CX-8: ids non-empty, duplicate ids invalid, content finite acyclic JSON, unknown node."""
    client = create_context()
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    cases: list[Any] = [
        {"sources": [{"id": "", "content": 1}]},
        {"sources": [{"id": "a", "content": math.nan}]},
        {"sources": [{"id": "a", "content": cyclic}]},
        {"sources": [{"id": "a", "content": {1: "x"}}]},
        {"sources": [{"id": "a", "content": object()}]},
        {"sources": [{"id": "a"}]},
        {"sources": [{"id": "a", "content": 1, "metadata": []}]},
        {"sources": [{"content": 1}]},
        {"sources": "text"},
        {"sources": [{"role": "", "content": "x"}]},
        {"sources": [{"uri": ""}]},
        {"bogus": 1},
        {},
        [],
    ]
    for case in cases:
        assert await error_code(client.load(case)) == "INVALID_INPUT", case
    duplicate = {"items": [{"id": "a", "content": 1}, {"id": "a", "content": 2}]}
    assert await error_code(client.select({"context": duplicate, "purpose": "infer"})) == "INVALID_INPUT"
    assert await error_code(client.select({"context": {"items": []}, "purpose": "learn"})) == "INVALID_INPUT"
    assert await error_code(client.execute("CONTEXT.DELETE", {})) == "UNKNOWN_NODE"
    assert await error_code(client.select({"context": {"items": []}, "purpose": "infer",
                                      "strategy": {"kind": "magic"}})) == "STRATEGY_UNAVAILABLE"


async def test_outputs_are_frozen_independent_snapshots() -> None:
    """CX-8: outputs are deep-frozen and independent of the caller's inputs."""
    metadata: dict[str, Any] = {"tags": ["a"], "nested": {"k": 1}}
    content: dict[str, Any] = {"list": [1, 2]}
    context = await create_context().load({"sources": [{"id": "a", "content": content, "metadata": metadata}]})
    metadata["tags"].append("b")
    content["list"].append(3)
    item = context.items[0]
    assert item.metadata == {"tags": ("a",), "nested": {"k": 1}} and item.content == {"list": (1, 2)}
    assert isinstance(item.metadata, FrozenDict)
    with pytest.raises(TypeError):
        item.metadata["x"] = 1  # type: ignore[index]
    with pytest.raises(TypeError):
        item.content["list"] = []
    with pytest.raises(ValueError):
        item.id = "b"  # frozen model
    assert isinstance(context.items, tuple)


def test_error_codes_are_the_seed_set() -> None:
    """CX-8: the error codes are exactly the seed's list."""
    assert {
        "INVALID_INPUT", "UNKNOWN_NODE", "INLINE_LIMIT_EXCEEDED", "ITEM_LIMIT_EXCEEDED", "DUPLICATE_ITEM",
        "MISSING_ITEM", "STRATEGY_UNAVAILABLE", "INVALID_PROVIDER_OUTPUT", "BUDGET_UNSATISFIABLE",
        "STATE_STORE_UNAVAILABLE", "CONTEXT_NOT_FOUND", "STATE_CONFLICT", "INVALID_STATE",
        "RESOLVER_UNAVAILABLE", "QUEUE_FULL"} == CONTEXT_ERROR_CODES


def test_execution_is_resolved_and_frozen() -> None:
    """CX-15: create_context_execution resolves and freezes the policy."""
    execution = create_context_execution({"maxItems": 16})
    assert execution.policy.max_items == 16 and execution.policy.max_inline_bytes == 65536
    with pytest.raises((AttributeError, ValueError)):  # a frozen pydantic model refuses with a ValidationError
        execution.policy.max_items = 3  # type: ignore[misc]


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=5),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3),
    max_leaves=8,
)
_anything = st.one_of(_json, st.builds(object), st.sets(st.integers(), max_size=2), st.binary(max_size=3),
                      st.dictionaries(st.sampled_from(["id", "content", "role", "uri", "metadata", "x"]), _json,
                                      max_size=4))
_requests = st.dictionaries(
    st.sampled_from(["context", "sources", "purpose", "query", "limit", "maxTokens", "maxItems", "strategy",
                     "removeIds", "add", "ingress", "scope", "expectedVersion", "resolveReferences", "junk"]),
    st.one_of(_anything, st.lists(_anything, max_size=3),
              st.fixed_dictionaries({"items": st.lists(_anything, max_size=3)})),
    max_size=4,
) | _anything


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(node=st.sampled_from(["CONTEXT.LOAD", "CONTEXT.UPDATE", "CONTEXT.SELECT", "CONTEXT.COMPRESS", "X"]),
       request=_requests)
async def test_malformed_input_always_raises_a_documented_context_error(node: str, request: Any) -> None:
    """CX-8: any malformed input yields a ContextError with a documented code, never another exception."""
    client = create_context()
    try:
        result = await client.execute(node, request)
    except ContextError as error:
        assert error.code in CONTEXT_ERROR_CODES
    else:
        assert isinstance(result, Context) or hasattr(result, "selected_item_ids")
        items = result.items if isinstance(result, Context) else result.context.items
        assert all(isinstance(item, ContextItem) for item in items)


async def test_unencodable_deep_or_huge_json_is_invalid_input() -> None:
    """CX-8: lone surrogates, JSON nested too deeply (or cyclic) and numbers beyond a double are INVALID_INPUT.

    Such values cannot be written as UTF-8 JSON (Redis, stable ids, byte sizes) or read back by
    ``JSON.parse`` as a finite number, so they must fail with a ContextError, not a Python exception.
    """
    client = create_context()
    deep: list[Any] = []
    level = deep
    for _ in range(5000):
        level.append([])
        level = level[0]
    bad_sources: list[Any] = [
        [{"id": "a", "content": "\ud800"}],
        [{"id": "a", "content": "x", "metadata": {"k": "\udfff"}}],
        [{"id": "a", "content": {"\ud800": 1}}],
        [{"id": "\ud800", "content": 1}],
        [{"role": "user", "content": "\ud800"}],
        [{"uri": "urn:\ud800"}],
        [{"id": "a", "content": deep}],
        [{"id": "a", "content": 10**400}],
    ]
    for sources in bad_sources:
        assert await error_code(client.load({"sources": sources})) == "INVALID_INPUT"
    assert await error_code(client.select({"context": {"items": []}, "purpose": "infer", "query": deep})) == (
        "INVALID_INPUT")
    assert await error_code(client.load({"scope": {"sessionId": "\ud800"}})) == "INVALID_INPUT"
    ok = await client.load({"sources": [{"id": "é😀", "content": {"k": ["ü", 2**60, 1.5]}}]})
    assert ok.items[0].content == {"k": ("ü", 2**60, 1.5)}


_finite_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(content=_finite_json)
async def test_item_size_is_js_json_utf8_bytes(content: Any) -> None:
    """CX-2 CX-3: the size behind maxInlineBytes and the default estimate is JSON.stringify's UTF-8 byte count."""
    item = (await create_context().load({"sources": [{"id": "a", "content": content}]})).items[0]
    assert facts(item).nbytes == len(js_json_dumps(content).encode("utf-8"))
    assert facts(item).default_tokens == math.ceil(facts(item).nbytes / 4)


_any_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**1030), 2**1030) | st.floats() | st.text(max_size=4)
    | st.builds(object) | st.binary(max_size=2),
    lambda children: st.lists(children, max_size=3) | st.tuples(children, children)
    | st.dictionaries(st.text(max_size=2) | st.integers(0, 3), children, max_size=3),
    max_leaves=10,
)


def _frozen_deep(value: Any) -> bool:
    if isinstance(value, dict):
        return isinstance(value, FrozenDict) and all(_frozen_deep(child) for child in value.values())
    if isinstance(value, list):
        return False
    if isinstance(value, tuple):
        return all(_frozen_deep(child) for child in value)
    return True


@settings(max_examples=400, deadline=None)
@given(value=_any_json)
def test_read_json_accepts_exactly_finite_encodable_json_and_freezes_it(value: Any) -> None:
    """CX-8: the one-pass check agrees with check_json, adds the UTF-8/double rules, and returns a frozen copy."""
    try:
        check_json(value)
        encodable = js_json_dumps(value).encode("utf-8") is not None and all(
            abs(number) < 2**1024 for number in _ints(value))
    except (InvalidJson, UnicodeEncodeError, OverflowError):
        encodable = False
    try:
        frozen = read_json(value, "value")
    except ContextError as error:
        assert error.code == "INVALID_INPUT" and not encodable
        return
    assert encodable and _frozen_deep(frozen) and thaw_json(frozen) == thaw_json(value)


def _ints(value: Any) -> list[int]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [value]
    if isinstance(value, dict):
        return [n for child in value.values() for n in _ints(child)]
    if isinstance(value, (list, tuple)):
        return [n for child in value for n in _ints(child)]
    return []
