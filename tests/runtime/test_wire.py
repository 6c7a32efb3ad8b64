"""The transport's JSON codec (issue 19): one reading of a body whatever parser is installed."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ditto.transport.wire import MAX_WIRE_DEPTH, NotJson, dumps, dumps_wire, loads, to_wire_value

values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(value=values)
def test_loads_reads_what_json_reads(value: Any) -> None:
    """Issue 19: the fast path (orjson) and the standard library give the same value and type for any JSON,
    integers beyond 64 bits included; written by dumps_wire, read back unchanged."""
    text = json.dumps(value).encode()
    assert _same(loads(text), json.loads(text))
    assert _same(loads(dumps_wire(to_wire_value(value))), value)


def _same(left: Any, right: Any) -> bool:
    if type(left) is not type(right):
        return False
    if isinstance(left, float):
        return left == right and math.copysign(1, left) == math.copysign(1, right)
    if isinstance(left, list):
        return len(left) == len(right) and all(_same(a, b) for a, b in zip(left, right, strict=True))
    if isinstance(left, dict):
        return left.keys() == right.keys() and all(_same(left[k], right[k]) for k in left)
    return bool(left == right)


@pytest.mark.parametrize("raw", [b"NaN", b'{"a":Infinity}', b"[-Infinity]", b"[" * 300 + b"]" * 300,
                                 b"[" * 5000 + b"]" * 5000, b"\xff", b'{"a":1', b"1" * 5000])
def test_loads_refuses_what_is_not_standard_json(raw: bytes) -> None:
    """Issue 19 findings 2, 7: NaN/Infinity literals, nesting past MAX_WIRE_DEPTH, invalid UTF-8, truncated
    text and 5,000-digit integers are NotJson (a ValueError), never RecursionError."""
    with pytest.raises(NotJson):
        loads(raw)


def test_depth_bound_is_exact() -> None:
    """Issue 19: MAX_WIRE_DEPTH levels are read, one more is refused."""
    assert loads(b"[" * MAX_WIRE_DEPTH + b"]" * MAX_WIRE_DEPTH) is not None
    with pytest.raises(NotJson):
        loads(b"[" * (MAX_WIRE_DEPTH + 1) + b"]" * (MAX_WIRE_DEPTH + 1))


def test_lone_surrogates_reach_the_worker() -> None:
    """Issue 19: an escaped lone surrogate is valid JSON text; it is read (the worker refuses it with its own
    code), and an answer holding one cannot be written."""
    assert loads(b'["\\ud800"]') == ["\ud800"]
    with pytest.raises(ValueError):
        dumps_wire(["\ud800"])
    with pytest.raises(ValueError):
        dumps([math.nan])
