"""The transport's JSON codec (issue 19): one reading of a body whatever parser is installed."""

from __future__ import annotations

import dataclasses
import enum
import json
import math
import uuid
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ditto.contracts._base import DittoModel
from ditto.contracts.json import frozen_json
from ditto.transport.wire import (
    MAX_WIRE_DEPTH,
    NotJson,
    NotSerializable,
    dumps,
    dumps_wire,
    loads,
    to_wire_value,
    wire_bytes,
)

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


class _Colour(enum.Enum):
    RED = "red"


class _Hit(DittoModel):
    doc_id: str
    score: float
    extra: Any = None


@dataclasses.dataclass
class _Point:
    x: Any


class _Text(str):
    pass


def _hit(doc_id: str, score: float, extra: Any) -> _Hit:
    return _Hit.model_construct(doc_id=doc_id, score=score, extra=extra)  # unvalidated, as workers build answers


def frozen_json_or_raw(value: dict[str, Any]) -> Any:
    try:
        return frozen_json(value)
    except Exception:
        return value


hostile_leaves = (st.none() | st.booleans() | st.integers() | st.integers(min_value=-(10**400), max_value=10**400)
                  | st.sampled_from([2**63, 2**64, -(2**63) - 1, 10**309, -0.0])
                  | st.floats() | st.text() | st.sampled_from(["\ud800", "a\udfffb", _Text("sub")])
                  | st.sampled_from(["null", "the null hypothesis", "x:null", "[null]", ",null", "nullnull", "nul"])
                  | st.uuids() | st.just(_Colour.RED) | st.just(object()))
hostile_values = st.recursive(
    hostile_leaves,
    lambda inner: st.lists(inner, max_size=4) | st.lists(inner, max_size=3).map(tuple)
    | st.dictionaries(st.text(max_size=6) | st.sampled_from(["\ud800", 1]), inner, max_size=4)  # type: ignore[arg-type]
    | st.dictionaries(st.text(max_size=6), inner, max_size=3).map(frozen_json_or_raw)
    | st.builds(_hit, st.text(max_size=8), st.floats(), inner) | st.builds(_Point, x=inner),
    max_leaves=16)



def _exact(value: Any) -> bytes | type[NotSerializable]:
    try:
        return dumps_wire(to_wire_value(value))
    except NotSerializable:
        return NotSerializable


@settings(max_examples=500, deadline=None)
@given(value=hostile_values)
def test_wire_bytes_is_exactly_the_walked_encoding(value: Any) -> None:
    """Issue 19 (RETRIEVAL.SEARCH cost): ``wire_bytes`` (orjson checking and writing in one pass) gives the same
    bytes as walking the value with ``to_wire_value`` and writing it, and refuses exactly the values that path
    refuses: NaN/inf, lone surrogates, non-string keys, integers beyond a double, unknown objects, at any depth,
    inside models, dataclasses, tuples and FrozenDicts."""
    expected = _exact(value)
    if expected is NotSerializable:
        with pytest.raises(NotSerializable):
            wire_bytes(value)
    else:
        assert wire_bytes(value) == expected


def test_the_word_null_inside_text_keeps_the_one_pass_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 19 (RETRIEVAL.SEARCH cost): an answer whose text says "null" (SciFact: "null mice", "the null
    hypothesis") is written by the one-pass path, not walked again; a real ``null`` or a NaN still is."""
    import ditto.transport.wire as wire

    text = _hit("d1", 1.5, {"content": "in null mice the null hypothesis held", "n": ["null", "nullnull"]})
    others = ([None], {"a": None}, [1, math.nan], _hit("d", math.inf, None), {"t": "x:null"})
    expected = [_exact(value) for value in (text, *others)]
    walked: list[Any] = []
    exact = wire.to_wire_value
    monkeypatch.setattr(wire, "to_wire_value", lambda value: walked.append(value) or exact(value))
    assert wire_bytes(text) == expected[0]
    assert walked == []
    for value, wanted in zip(others, expected[1:], strict=True):
        walked.clear()
        if wanted is NotSerializable:
            with pytest.raises(NotSerializable):
                wire_bytes(value)
        else:
            assert wire_bytes(value) == wanted
        assert walked, value


def test_wire_bytes_of_deep_values_matches_the_walk() -> None:
    """Issue 19: nesting past orjson's own limit (254) takes the exact path: accepted up to the contract depth,
    NotSerializable beyond it, never RecursionError."""
    from ditto.contracts.json import MAX_JSON_DEPTH

    for depth in (253, 254, 255, MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1, 2000):
        value: Any = []
        for _ in range(depth - 1):
            value = [value]
        assert (wire_bytes(value) if _exact(value) is not NotSerializable else NotSerializable) == _exact(value)


def test_uuids_and_enum_members_are_sent_as_their_canonical_form() -> None:
    """Issue 19: a UUID is its canonical string and an enum member its value, on both paths; an enum whose value
    JSON cannot carry is still refused."""
    ident = uuid.uuid4()
    assert to_wire_value({"id": ident, "colour": _Colour.RED}) == {"id": str(ident), "colour": "red"}
    assert wire_bytes({"id": ident, "colour": _Colour.RED}) == f'{{"id":"{ident}","colour":"red"}}'.encode()

    class Odd(enum.Enum):
        NAN = float("nan")

    with pytest.raises(NotSerializable):
        wire_bytes([Odd.NAN])


@pytest.mark.parametrize("raw", [b"[18446744073709551616]", b"[-9223372036854775809, 1]", b'{"a":"' + b"7" * 40 + b'"}',
                                 b'{"n":1234567890123456789}', b'{"n":123456789012345678}', b"[1.8446744073709552e19]",
                                 b'{"a":[' + b"1," * 3000 + b"1]}"])
def test_long_digit_runs_are_read_as_the_standard_library_reads_them(raw: bytes) -> None:
    """Issue 19 (codec cost): the scan for 19-digit runs (integers orjson would turn into floats) finds them in
    numbers and strings alike, and a body without one is read by orjson with the same result."""
    assert _same(loads(raw), json.loads(raw))
