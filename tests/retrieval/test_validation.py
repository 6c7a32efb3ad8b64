"""Input (RET-1) and output (RET-4) validation, including hypothesis fuzzing."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ditto import create_ditto
from ditto.retrieval import (
    RetrievalCandidate,
    RetrievalCandidateSource,
    RetrievalError,
    RetrievalSearchInput,
    RetrievalSearchOutput,
    RetrievalTarget,
    RetrievalTargetRegistry,
    create_retrieval,
    create_retrieval_worker,
    parse_search_input,
    validate_search_output,
)

from .providers import ListProvider, RawProvider

GOOD = {"query": {"content": "agent memory"}, "target": {"name": "kb"}}


def _registry(provider: Any) -> RetrievalTargetRegistry:
    return RetrievalTargetRegistry({"kb": {"default_strategy": "custom", "providers": {"custom": provider}}})


@pytest.mark.parametrize("content", ["text", [0.1, 0.2], {"sql": "x"}, None, 0, ""])
def test_query_content_any_value_accepted(content: Any) -> None:
    """RET-1: query.content must be present but may be any value (text, vector, object, null)."""
    parsed = parse_search_input({"query": {"content": content}, "target": {"name": "kb"}})
    assert parsed.query.content == content
    assert parsed.limit is None


@pytest.mark.parametrize("bad", [
    None, [], "x", {}, {"query": {"content": "x"}},
    {"query": {}, "target": {"name": "kb"}},
    {"query": "x", "target": {"name": "kb"}},
    {"query": {"content": "x"}, "target": {}},
    {"query": {"content": "x"}, "target": {"name": ""}},
    {"query": {"content": "x"}, "target": {"name": "  "}},
    {"query": {"content": "x"}, "target": "kb"},
    {"query": {"content": "x"}, "target": {"name": "kb", "type": ""}},
    {"query": {"content": "x"}, "target": {"name": "kb", "namespace": ""}},
    {"query": {"content": "x"}, "target": {"name": "kb", "metadata": []}},
    {"query": {"content": "x", "metadata": "m"}, "target": {"name": "kb"}},
    {**GOOD, "strategy": ""},
    {**GOOD, "filter": []},
    {**GOOD, "options": "fast"},
    {**GOOD, "limit": 0},
    {**GOOD, "limit": 10_001},
    {**GOOD, "limit": 2.5},
    {**GOOD, "limit": "5"},
    {**GOOD, "limit": True},
    {**GOOD, "collection": "secret"},
])
def test_invalid_inputs(bad: Any) -> None:
    """RET-1: names non-empty, objects are objects, limit integer 1–10000, no unknown fields."""
    with pytest.raises(RetrievalError) as info:
        parse_search_input(bad)
    assert info.value.code == "RETRIEVAL_INVALID_INPUT"


def test_typed_model_accepted() -> None:
    """RET-1: the typed model and a dict are both accepted."""
    model = RetrievalSearchInput(query={"content": "x"}, target={"name": "kb"}, limit=3)  # type: ignore[arg-type]
    assert parse_search_input(model) is model
    assert parse_search_input({**GOOD, "limit": 10_000}).limit == 10_000


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5)
                     | st.floats(allow_nan=True), lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=8)


def _is_valid(value: Any) -> bool:
    if isinstance(value, str):  # the one-target registry below takes a plain string as the query (issue 20)
        value = {"query": {"content": value}, "target": {"name": "kb"}}
    try:
        parse_search_input(value)
    except RetrievalError:
        return False
    return True


@given(st.one_of(_json, st.fixed_dictionaries(
    {"query": st.one_of(_json, st.fixed_dictionaries({"content": _json})), "target": _json},
    optional={"limit": _json, "strategy": _json, "filter": _json, "options": _json})))
async def test_fuzzed_inputs_only_raise_invalid_input(value: Any) -> None:
    """RET-1/RET-5 (hypothesis): any malformed search input yields RETRIEVAL_INVALID_INPUT through
    the SDK, never another exception type."""
    retrieval = create_retrieval(_registry(ListProvider([])))
    result = await retrieval.search(value)
    if _is_valid(value):
        assert result.status in ("success", "error")
        if result.status == "error":
            assert result.error is not None
            assert result.error.code in ("RETRIEVAL_TARGET_NOT_FOUND", "RETRIEVAL_STRATEGY_UNSUPPORTED")
    else:
        assert result.status == "error"
        assert result.error is not None and result.error.code == "RETRIEVAL_INVALID_INPUT"


_WORKER_RUNTIME = create_ditto(workers=[create_retrieval_worker(_registry(ListProvider([])))])


@given(st.one_of(_json, st.fixed_dictionaries(
    {"query": st.one_of(_json, st.fixed_dictionaries({"content": _json})), "target": _json},
    optional={"limit": _json, "strategy": _json, "filter": _json, "options": _json})))
async def test_fuzzed_inputs_through_the_worker(value: Any) -> None:
    """RET-1/RET-5 (hypothesis): through runtime.invoke("RETRIEVAL.SEARCH") a malformed input is a
    RETRIEVAL_INVALID_INPUT NodeResult too, never the runtime's generic HANDLER_ERROR."""
    result = await _WORKER_RUNTIME.invoke("RETRIEVAL.SEARCH", value)
    if _is_valid(value):
        assert result.status == "success" or (result.error is not None and result.error.code in (
            "RETRIEVAL_TARGET_NOT_FOUND", "RETRIEVAL_STRATEGY_UNSUPPORTED"))
    else:
        assert result.status == "error"
        assert result.error is not None and result.error.code == "RETRIEVAL_INVALID_INPUT"


def _candidate_values() -> st.SearchStrategy[Any]:
    return st.one_of(
        _json,
        st.fixed_dictionaries({}, optional={"id": _json, "content": _json, "score": _json, "source": _json,
                                            "metadata": _json, "extra": _json}),
    )


@given(st.one_of(_json, st.fixed_dictionaries(
    {}, optional={"candidates": st.one_of(_json, st.lists(_candidate_values(), max_size=4)),
                  "target": st.one_of(_json, st.just({"name": "kb"})), "strategy": _json, "metadata": _json})))
async def test_fuzzed_outputs_only_raise_invalid_backend_output(raw: Any) -> None:
    """RET-4/RET-5 (hypothesis): any malformed provider output yields RETRIEVAL_INVALID_BACKEND_OUTPUT,
    a well-formed one succeeds; never another exception type."""
    request = parse_search_input(GOOD)
    try:
        validate_search_output(raw, request, limit=10, strategy="custom")
        valid = True
    except RetrievalError as error:
        assert error.code == "RETRIEVAL_INVALID_BACKEND_OUTPUT"
        valid = False
    result = await create_retrieval(_registry(RawProvider(lambda _input: raw))).search(GOOD)
    if valid:
        assert result.status == "success"
    else:
        assert result.error is not None and result.error.code == "RETRIEVAL_INVALID_BACKEND_OUTPUT"


def _output(candidates: Any, **extra: Any) -> dict[str, Any]:
    return {"candidates": candidates, "target": {"name": "kb"}, **extra}


@pytest.mark.parametrize("raw", [
    None, [], {"target": {"name": "kb"}}, _output("abc"), _output({"a": 1}),
    _output([{"id": "a"}]),                                   # content missing
    _output([{"content": "x", "score": math.nan}]),
    _output([{"content": "x", "score": math.inf}]),
    _output([{"content": "x", "score": "1"}]),
    _output([{"content": "x", "score": True}]),
    _output([{"content": "x", "id": 3}]),
    _output([{"content": "x", "id": ""}]),
    _output([{"content": "x", "source": "kb"}]),
    _output([{"content": "x", "source": {"target": 1}}]),
    _output([{"content": "x", "metadata": [1]}]),
    _output([{"content": "x"}] * 4),                          # over limit 3
    {"candidates": []},                                        # no target
    {"candidates": [], "target": {"name": "other"}},
    {"candidates": [], "target": {"name": "kb", "namespace": "n"}},
    _output([], strategy="vector"),                            # explicit strategy differs
    _output([], metadata="m"),
])
def test_invalid_outputs(raw: Any) -> None:
    """RET-4: candidates list, content required, finite score, count ≤ limit, target and strategy match."""
    request = parse_search_input({**GOOD, "strategy": "custom", "limit": 3})
    with pytest.raises(RetrievalError) as info:
        validate_search_output(raw, request, limit=3, strategy="custom")
    assert info.value.code == "RETRIEVAL_INVALID_BACKEND_OUTPUT"


def test_output_preserved_as_returned() -> None:
    """RET-4: order, scores, ids, metadata and duplicates are kept; nothing invented; strategy filled."""
    raw = _output([
        {"content": "b", "score": 0.1, "id": "x", "metadata": {"k": 1}},
        {"content": "a", "score": 0.9},
        {"content": "b", "score": 0.1, "id": "x", "source": {"target": "kb", "ref": "r"}},
    ])
    request = parse_search_input(GOOD)
    output = validate_search_output(raw, request, limit=10, strategy="custom")
    assert [c.content for c in output.candidates] == ["b", "a", "b"]
    assert [c.score for c in output.candidates] == [0.1, 0.9, 0.1]
    assert [c.id for c in output.candidates] == ["x", None, "x"]
    assert output.candidates[0].metadata == {"k": 1}
    assert output.strategy == "custom"
    assert output.target.name == "kb"


async def test_empty_result_keeps_target_and_strategy() -> None:
    """RET-4: an empty result is {candidates: [], target, strategy}."""
    result = await create_retrieval(_registry(ListProvider([]))).search(GOOD)
    assert result.status == "success" and result.output is not None
    assert result.output.candidates == ()
    assert result.output.to_json_dict() == {"candidates": [], "target": {"name": "kb"}, "strategy": "custom"}


_field_values = st.one_of(st.none(), st.text(max_size=3), st.integers(), st.booleans(),
                          st.floats(allow_nan=True, allow_infinity=True), st.lists(st.integers(), max_size=2),
                          st.dictionaries(st.integers(), st.integers(), max_size=2), st.builds(object))


@given(st.lists(st.fixed_dictionaries({"id": _field_values, "content": _field_values, "score": _field_values,
                                       "source": st.one_of(_field_values, st.builds(
                                           lambda t, r: RetrievalCandidateSource.model_construct(target=t, ref=r),
                                           _field_values, _field_values)),
                                       "metadata": _field_values}), max_size=3),
       st.one_of(st.just({"name": "kb"}), _field_values,
                 st.fixed_dictionaries({}, optional={"name": _field_values, "type": _field_values})),
       _field_values, _field_values)
async def test_fuzzed_model_outputs(candidates: list[dict[str, Any]], target: Any, strategy: Any,
                                    metadata: Any) -> None:
    """RET-4/RET-5 (hypothesis): outputs built with model_construct (no pydantic checks) are validated
    too: any malformed one is RETRIEVAL_INVALID_BACKEND_OUTPUT, never another exception type."""
    output = RetrievalSearchOutput.model_construct(
        candidates=tuple(RetrievalCandidate.model_construct(**c) for c in candidates),
        target=RetrievalTarget.model_construct(**target)
        if isinstance(target, dict) and all(isinstance(k, str) for k in target) else target,
        strategy=strategy, metadata=metadata)
    result = await create_retrieval(_registry(RawProvider(lambda _input: output))).search(GOOD)
    if result.status == "success":
        assert result.output is not None
        for got in result.output.candidates:
            assert got.score is None or (type(got.score) in (int, float) and math.isfinite(got.score))
            assert got.id is None or (isinstance(got.id, str) and got.id.strip())
    else:
        assert result.error is not None and result.error.code == "RETRIEVAL_INVALID_BACKEND_OUTPUT"
