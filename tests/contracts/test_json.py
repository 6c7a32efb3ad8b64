"""JSON value rules shared by every worker (SPEC §0: content is finite, acyclic JSON; snapshots immutable)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ditto.contracts import FrozenDict, InvalidJson, check_json, freeze_json, js_json_dumps, thaw_json
from ditto.contracts.json import MAX_JSON_DEPTH

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20)


@given(json_values)
def test_freeze_round_trip_and_immutability(value: Any) -> None:
    """CX-8: frozen snapshots equal their input, serialise the same, and refuse mutation."""
    check_json(value)
    frozen = freeze_json(value)
    assert thaw_json(frozen) == thaw_json(value)
    assert json.loads(js_json_dumps(frozen)) == json.loads(js_json_dumps(value))
    if isinstance(frozen, FrozenDict):
        with pytest.raises(TypeError):
            frozen["new"] = 1  # type: ignore[index]
        with pytest.raises(TypeError):
            frozen.update({"x": 1})
    thawed = thaw_json(frozen)
    if isinstance(thawed, dict):
        thawed["mutated"] = True  # a thawed copy is independent of the snapshot
        assert "mutated" not in frozen or (isinstance(value, dict) and "mutated" in value)


@pytest.mark.parametrize(("value", "reason"), [
    (float("nan"), "finite"), (float("inf"), "finite"), ({"a": [1, float("-inf")]}, "finite"),
    ({1: "x"}, "keys"), (object(), "not a JSON value"), ({"a": {1, 2}}, "not a JSON value"),
    ("bad \ud800 surrogate", "Unicode"), ({"k\udfff": 1}, "Unicode"), (10**400, "double"),
])
def test_invalid_values_are_refused(value: Any, reason: str) -> None:
    """CX-8: non-finite numbers, non-string keys, non-JSON types, lone surrogates and huge ints are refused."""
    with pytest.raises(InvalidJson) as raised:
        check_json(value)
    assert reason in raised.value.reason


def test_cycles_and_depth_are_refused_without_recursion_errors() -> None:
    """CX-8: cyclic values and very deep nesting give InvalidJson, never RecursionError."""
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    with pytest.raises(InvalidJson, match="cycle"):
        check_json(cyclic)
    listed: list[Any] = []
    listed.append(listed)
    with pytest.raises(InvalidJson, match="cycle"):
        check_json(listed)
    deep: Any = "leaf"
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(InvalidJson, match="deeper"):
        check_json(deep)
    ok: Any = "leaf"
    for _ in range(MAX_JSON_DEPTH - 1):
        ok = {"k": ok}
    check_json(ok)
    shared = [1, 2]
    check_json({"a": shared, "b": shared})  # the same object twice is not a cycle


def test_js_json_dumps_matches_json_stringify() -> None:
    """CX-3: no spaces, non-ASCII kept, integral floats printed without a fraction (like JavaScript)."""
    assert js_json_dumps({"a": [1.0, 2.5, "é"], "b": None}) == '{"a":[1,2.5,"é"],"b":null}'
    assert len(js_json_dumps("汉字").encode()) == 8
    with pytest.raises(ValueError):
        js_json_dumps(float("nan"))
