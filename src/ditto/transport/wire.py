"""Turning inputs and outputs into JSON for the HTTP transport.

Pydantic models are written with their camelCase aliases and without unset
optional fields (the seed's JSON shape); read-only snapshots (FrozenDict,
tuples) become plain objects and arrays. Anything else is refused rather than
silently stringified, so a worker that returns, say, a socket gets a clear
``OUTPUT_NOT_SERIALIZABLE`` instead of a surprise on the other side.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from ..contracts.json import MAX_JSON_DEPTH

try:
    import orjson as _orjson
except ImportError:  # pragma: no cover - an optional speed-up
    _orjson = None  # type: ignore[assignment]

__all__ = ["NotJson", "NotSerializable", "dumps", "dumps_wire", "loads", "to_wire_value"]


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


#: 19 digits in a row: text orjson may read differently from json (it turns an integer beyond 64 bits
#: into a float). Such bodies, and any orjson refuses, are read by the standard library.
_LONG_DIGITS = re.compile(rb"\d{19,}")


def loads(raw: bytes) -> Any:
    """Read standard JSON only: :class:`NotJson` for malformed text, the NaN/Infinity literals, invalid
    UTF-8 and nesting deeper than :data:`MAX_WIRE_DEPTH` (so ``RecursionError`` never escapes, and how deep
    a body may be does not depend on which stack parsed it).

    orjson reads the body when installed and when it reads it exactly as the standard library would
    (about 4× faster, so a large body parsed in a thread holds the GIL, and the event loop, that much
    less); the standard library reads the rest and decides every refusal, so both give the same
    values and the same errors.
    """
    if _orjson is not None and _LONG_DIGITS.search(raw) is None:
        try:
            value = _orjson.loads(raw)
        except _orjson.JSONDecodeError:
            pass  # NaN literals, lone surrogates, too deep, bad UTF-8...: the standard library says which
        else:
            return _checked_depth(raw, value)
    try:
        value = json.loads(raw, parse_constant=_no_constants)
    except RecursionError:
        raise NotJson("nested too deeply") from None
    except (ValueError, UnicodeDecodeError) as error:  # JSONDecodeError, NotJson, 4,300+ digit integers
        raise NotJson("not valid JSON") from error
    return _checked_depth(raw, value)


def _checked_depth(raw: bytes, value: Any) -> Any:
    # Counting brackets is C speed; only a body with enough of them to be too deep is walked.
    if raw.count(b"[") + raw.count(b"{") > MAX_WIRE_DEPTH and _deeper_than(value, MAX_WIRE_DEPTH):
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


_PLAIN: frozenset[type] = frozenset({str, int, bool, type(None)})


def to_wire_value(value: Any, _depth: int = 0) -> Any:
    """``value`` as plain JSON types; :class:`NotSerializable` for anything else, including nesting deeper
    than ``MAX_JSON_DEPTH`` (the contracts' own bound), so no walk here or in ``json.dumps`` recurses out."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise NotSerializable("non-finite number")
        return value
    if _depth >= MAX_JSON_DEPTH:
        raise NotSerializable(f"nested deeper than {MAX_JSON_DEPTH} levels")
    if isinstance(value, BaseModel):
        try:
            dumped = value.model_dump(by_alias=True, exclude_none=True)
        except RecursionError:
            raise NotSerializable("nested too deeply") from None
        return to_wire_value(dumped, _depth)
    depth = _depth + 1
    # Children of the plain scalar types are taken as they are, without a call each: a search answer
    # is mostly strings, and the walk was half the cost of writing it.
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise NotSerializable("object keys must be strings")
            out[key] = item if type(item) in _PLAIN else to_wire_value(item, depth)
        return out
    if isinstance(value, (list, tuple)):
        return [item if type(item) in _PLAIN else to_wire_value(item, depth) for item in value]
    to_wire = getattr(value, "to_wire", None)
    if callable(to_wire):
        return to_wire_value(to_wire(), _depth)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_wire_value({f.name: getattr(value, f.name) for f in dataclasses.fields(value)}, _depth)
    raise NotSerializable(f"{type(value).__name__} cannot be sent as JSON")


def dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON; ``ValueError`` for NaN/infinity or a lone surrogate."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


def dumps_wire(value: Any) -> bytes:
    """:func:`dumps` for a value :func:`to_wire_value` produced (so every number in it is finite).

    orjson when installed: about 8× faster, so a large answer written in a thread holds the GIL, and
    with it the event loop, that much less. orjson writes NaN as ``null``, which is why only checked
    values come here; what it refuses (integers beyond 64 bits, lone surrogates) goes through
    :func:`dumps`, which writes the big integers and refuses the rest.
    """
    if _orjson is not None:
        try:
            return _orjson.dumps(value)
        except TypeError:
            pass
    return dumps(value)
