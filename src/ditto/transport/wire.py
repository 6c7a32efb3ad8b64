"""Turning inputs and outputs into JSON for the HTTP transport.

Pydantic models are written with their camelCase aliases and without unset
optional fields (the seed's JSON shape); read-only snapshots (FrozenDict,
tuples) become plain objects and arrays. Anything else is refused rather than
silently stringified, so a worker that returns, say, a socket gets a clear
``OUTPUT_NOT_SERIALIZABLE`` instead of a surprise on the other side. So is
what JSON cannot carry faithfully: NaN and infinities, integers beyond a
double's range (JavaScript, the seed's language, could not read them back),
strings with lone surrogates (not UTF-8) and nesting deeper than
:data:`~ditto.contracts.json.MAX_JSON_DEPTH` (it would exhaust the stack of
every recursive reader).
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from typing import Any

import orjson
from pydantic import BaseModel

from ..contracts.json import MAX_JSON_DEPTH, valid_text

__all__ = ["NotSerializable", "dumps", "dumps_wire", "loads", "to_wire_value"]

#: Integers in this range are written by orjson without a range check.
_INT64 = 2**63


class NotSerializable(TypeError):
    """The value has a part JSON cannot carry."""


def to_wire_value(value: Any) -> Any:
    """The plain JSON form of ``value``; :class:`NotSerializable` names what cannot be sent."""
    return _wire(value, 0)


def _wire(value: Any, depth: int) -> Any:
    kind = type(value)
    # Exact types first (the common case, a dict of plain scalars), then subclasses and conversions.
    if kind is str:
        if value.isascii() or valid_text(value):
            return value
        raise NotSerializable("a string holds a lone surrogate")
    if kind is dict and depth < MAX_JSON_DEPTH:
        out: dict[str, Any] = {}
        for key, item in value.items():
            if type(key) is not str or not (key.isascii() or valid_text(key)):
                return _wire_object(value, depth)  # let the general path name the problem
            out[key] = item if type(item) is str and item.isascii() else _wire(item, depth + 1)
        return out
    if value is None or kind is bool or (kind is int and -_INT64 <= value < _INT64):
        return value
    if kind is float and value - value == 0.0:  # false for NaN and infinities
        return value
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        if not valid_text(value):
            raise NotSerializable("a string holds a lone surrogate")
        return value
    if isinstance(value, int):
        try:
            float(value)  # an integer that rounds to infinity as a double is not a JSON number
        except OverflowError:
            raise NotSerializable("an integer is beyond a double's range") from None
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise NotSerializable("non-finite number")
        return value
    if depth >= MAX_JSON_DEPTH:
        raise NotSerializable(f"the value is nested deeper than {MAX_JSON_DEPTH} levels")
    if isinstance(value, Mapping):
        return _wire_object(value, depth)
    if isinstance(value, (list, tuple)):
        return [_wire(item, depth + 1) for item in value]
    # Conversions count as a level too, so an object whose to_wire() returns itself ends at the depth bound.
    if isinstance(value, BaseModel):
        return _wire(value.model_dump(by_alias=True, exclude_none=True), depth + 1)
    to_wire = getattr(value, "to_wire", None)
    if callable(to_wire):
        return _wire(to_wire(), depth + 1)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _wire({f.name: getattr(value, f.name) for f in dataclasses.fields(value)}, depth + 1)
    raise NotSerializable(f"{type(value).__name__} cannot be sent as JSON")


def _wire_object(value: Mapping[Any, Any], depth: int) -> dict[str, Any]:
    if depth >= MAX_JSON_DEPTH:
        raise NotSerializable(f"the value is nested deeper than {MAX_JSON_DEPTH} levels")
    out: dict[str, Any] = {}
    for key, item in value.items():
        if not isinstance(key, str):
            raise NotSerializable("object keys must be strings")
        if not valid_text(key):
            raise NotSerializable("an object key holds a lone surrogate")
        out[key] = _wire(item, depth + 1)
    return out


def dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON; refuses NaN and infinities (``ValueError``)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


def dumps_wire(value: Any) -> bytes:
    """:func:`dumps` for a value :func:`to_wire_value` produced, with orjson (about 20× faster on small values).

    orjson is safe here only because :func:`to_wire_value` already refused NaN
    (which orjson would write as ``null``) and bad strings; it cannot write
    integers beyond 64 bits or nest past 254 levels, and those rare values go
    through :func:`dumps` instead.
    """
    try:
        return orjson.dumps(value)
    except TypeError:  # orjson.JSONEncodeError
        return dumps(value)


def loads(data: bytes) -> Any:
    """Strict JSON from a peer: ``ValueError`` for NaN/Infinity literals, invalid UTF-8 and nesting past
    1,024 levels (never a ``RecursionError``). Integers beyond 64 bits arrive as floats, as in JavaScript."""
    return orjson.loads(data)
