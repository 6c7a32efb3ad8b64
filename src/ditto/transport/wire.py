"""Turning inputs and outputs into JSON for the HTTP transport.

Pydantic models are written with their camelCase aliases and without unset
optional fields (the seed's JSON shape); read-only snapshots (FrozenDict,
tuples) become plain objects and arrays, a UUID its canonical string and an
enum member its value. Anything else is refused rather than
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
import enum
import json
import math
import uuid
from collections.abc import Mapping
from typing import Any

import orjson
from pydantic import BaseModel

from ..contracts.json import MAX_JSON_DEPTH, valid_text

__all__ = ["NotJson", "NotSerializable", "dumps", "dumps_wire", "loads", "to_wire_value", "wire_bytes"]

#: Integers in this range are written by orjson without a range check.
_INT64 = 2**63


class NotSerializable(TypeError):
    """The value has a part JSON cannot carry."""


class NotJson(ValueError):
    """The bytes are not standard JSON, or nest too deeply to be read."""


def _no_constants(name: str) -> Any:
    # ``json.loads`` reads NaN/Infinity/-Infinity by default; JSON has no such literals (RFC 8259).
    raise NotJson(f"{name} is not a JSON value")


#: Deepest nesting a message may have: a value the contracts accept (``MAX_JSON_DEPTH``) inside the
#: request or result envelope. Deeper bodies are refused whole, the same way on every thread and stack.
MAX_WIRE_DEPTH = MAX_JSON_DEPTH + 2


#: Every digit becomes ``0``, every ``[`` and ``{`` becomes ``[``, every other byte a space: one C pass
#: (``bytes.translate``) from which both checks below are plain substring scans. A regular expression for
#: the digit runs cost 30 ns a byte (half a millisecond for a 15 kB search answer), this about 2.
_SCAN = bytes(48 if 48 <= byte <= 57 else 91 if byte in (91, 123) else 32 for byte in range(256))
#: 19 digits in a row: text orjson may read differently from json (it turns an integer beyond 64 bits
#: into a float). Such bodies, and any orjson refuses, are read by the standard library.
_LONG_DIGITS = b"0" * 19


def loads(raw: bytes) -> Any:
    """Read standard JSON only: :class:`NotJson` for malformed text, the NaN/Infinity literals, invalid
    UTF-8 and nesting deeper than :data:`MAX_WIRE_DEPTH` (so ``RecursionError`` never escapes, and how deep
    a body may be does not depend on which stack parsed it).

    orjson reads the body when installed and when it reads it exactly as the standard library would
    (about 4× faster, so a large body parsed in a thread holds the GIL, and the event loop, that much
    less); the standard library reads the rest and decides every refusal, so both give the same
    values and the same errors.
    """
    scanned = raw.translate(_SCAN)
    if scanned.find(_LONG_DIGITS) < 0:  # find: `in` raises and clears a TypeError on every call
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass  # NaN literals, lone surrogates, too deep, bad UTF-8...: the standard library says which
        else:
            return value if len(raw) <= MAX_WIRE_DEPTH else _checked_depth(scanned, value)
    try:
        value = json.loads(raw, parse_constant=_no_constants)
    except RecursionError:
        raise NotJson("nested too deeply") from None
    except (ValueError, UnicodeDecodeError) as error:  # JSONDecodeError, NotJson, 4,300+ digit integers
        raise NotJson("not valid JSON") from error
    return _checked_depth(scanned, value)


def _checked_depth(scanned: bytes, value: Any) -> Any:
    # Counting brackets is C speed; only a body with enough of them to be too deep is walked (and a
    # body shorter than the bound cannot hold that many: the caller skips the count).
    if scanned.count(b"[") > MAX_WIRE_DEPTH and _deeper_than(value, MAX_WIRE_DEPTH):
        raise NotJson("nested too deeply")
    return value


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether a parsed JSON value nests more than ``limit`` containers (iterative: no recursion)."""
    if type(value) is not dict and type(value) is not list:
        return False
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        current, depth = stack.pop()
        children = current.values() if type(current) is dict else current
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if type(child) is dict or type(child) is list)
    return False


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
        try:
            dumped = value.model_dump(by_alias=True, exclude_none=True)
        except RecursionError:
            raise NotSerializable("nested too deeply") from None
        return _wire(dumped, depth + 1)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, enum.Enum):
        return _wire(value.value, depth + 1)
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
    """Compact UTF-8 JSON; ``ValueError`` for NaN/infinity or a lone surrogate."""
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


#: orjson hands these to ``default`` instead of writing them itself: subclasses of str/int/dict/list (a
#: FrozenDict, a str subclass), dataclasses and datetimes, none of which it may convert on our behalf.
_PLAIN_ONLY = orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME


def _not_plain(_value: Any) -> Any:
    raise TypeError


def wire_bytes(value: Any) -> bytes:
    """``dumps_wire(to_wire_value(value))`` in one step, refusing exactly the same values (:class:`NotSerializable`).

    Most outputs are plain data, or pydantic models of plain data, and for them orjson checks and writes
    in one C pass: a 15 kB search answer costs 2–3 µs instead of 20–25 µs walked in Python first and
    written afterwards. orjson refuses what this module refuses (lone surrogates, integers beyond 64 bits,
    non-string keys, nesting past 254 levels) and hands everything it is not sure of to a ``default``
    that refuses too; the one value it writes differently, NaN and infinity as ``null``, is caught by
    looking for ``null`` in its output. Whatever it refuses, and any output holding a ``null``, takes the
    exact path (:func:`to_wire_value`, then :func:`dumps_wire`), which decides and names the problem.
    """
    raw = _plain_bytes(value)
    if raw is None or _holds_null(raw):
        return dumps_wire(to_wire_value(value))
    return raw


#: The bytes orjson's compact output puts right before a value: after a key, a comma or an opening bracket.
_BEFORE_VALUE = frozenset(b":,[")


def _holds_null(raw: bytes) -> bool:
    """Whether orjson's output may hold a JSON ``null`` token (where it writes NaN and infinity).

    Every token orjson writes sits at the start or right after ``:``, ``,`` or ``[`` (it writes no
    whitespace), so a ``null`` anywhere else is text inside a string: SciFact abstracts speak of "null
    mice" and "the null hypothesis", and counting those sent one answer in seven down the exact path
    (twice the cost) for nothing. A string that happens to hold ``:null`` still takes the exact path,
    which is only slower, never different.
    """
    at = raw.find(b"null")  # find, not `in`: `in` first tries the needle as an int
    while at >= 0:
        if at == 0 or raw[at - 1] in _BEFORE_VALUE:
            return True
        at = raw.find(b"null", at + 4)
    return False


def _plain_bytes(value: Any) -> bytes | None:
    # Plain data first: isinstance against pydantic's metaclass is slow enough to matter on small calls.
    try:
        return orjson.dumps(value, default=_not_plain, option=_PLAIN_ONLY)
    except (TypeError, RecursionError):
        if not isinstance(value, BaseModel):
            return None
    try:
        return orjson.dumps(value.model_dump(by_alias=True, exclude_none=True), default=_not_plain,
                            option=_PLAIN_ONLY)
    except (TypeError, ValueError, RecursionError):
        return None
