"""Reading request fields: dicts or models, camelCase or snake_case, strict about the rest.

Every check here raises :class:`ContextError` with a documented code, so a
malformed request never surfaces as a ``KeyError`` or a pydantic error.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import Any, Final

from pydantic import BaseModel
from pydantic.alias_generators import to_camel

from ...contracts import FrozenDict
from .errors import ContextError

__all__ = [
    "MAX_REQUEST_LIMIT",
    "MAX_SAFE_INTEGER",
    "NOT_JSON",
    "optional_bool",
    "optional_str",
    "read_fields",
    "read_json",
    "request_limit",
    "try_read_json",
    "valid_text",
]

MAX_REQUEST_LIMIT: Final = 1_000_000
MAX_SAFE_INTEGER: Final = 2**53 - 1
#: Deepest JSON nesting accepted. Deeper values (and cycles, which never end) could not be
#: serialised by ``json`` within Python's recursion limit, so they are refused up front.
MAX_JSON_DEPTH: Final = 256
#: Integers from here on are ``Infinity`` as a JavaScript number: not finite JSON.
_DOUBLE_OVERFLOW: Final = 2**1024
_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def valid_text(value: str) -> bool:
    """Whether ``value`` can be written as UTF-8 (no lone surrogates); ``isascii`` is O(1)."""
    return value.isascii() or _LONE_SURROGATE.search(value) is None


@cache
def _aliases(names: tuple[str, ...]) -> dict[str, str]:
    table: dict[str, str] = {}
    for name in names:
        table[name] = name
        table[to_camel(name)] = name
    return table


def read_fields(value: Any, names: tuple[str, ...], where: str, code: str = "INVALID_INPUT") -> dict[str, Any]:
    """The fields of ``value`` (a mapping or a pydantic model) by snake_case name.

    ``None`` values count as absent, as an omitted optional field does in the
    seed's TypeScript. Unknown keys are refused so typos do not pass silently.
    """
    aliases = _aliases(names)
    if isinstance(value, BaseModel):
        out: dict[str, Any] = {}
        for field in type(value).model_fields:
            name = aliases.get(field)
            if name is None:
                raise ContextError(code, f"{where} has an unknown field {field!r}")
            got = getattr(value, field)
            if got is not None:
                out[name] = got
        return out
    if not isinstance(value, Mapping):
        raise ContextError(code, f"{where} must be an object")
    out = {}
    for key, got in value.items():
        name = aliases.get(key) if isinstance(key, str) else None
        if name is None:
            raise ContextError(code, f"{where} has an unknown field {key!r}")
        if name in out:
            raise ContextError(code, f"{where} gives {name!r} twice (camelCase and snake_case)")
        if got is not None:
            out[name] = got
    return out


def request_limit(value: Any, name: str) -> int | None:
    """A request budget: an integer 0–1,000,000 (0 is a zero budget) or absent."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_REQUEST_LIMIT:
        raise ContextError("INVALID_INPUT", f"{name} must be an integer from 0 to {MAX_REQUEST_LIMIT}")
    return value


def optional_str(value: Any, name: str, code: str = "INVALID_INPUT") -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value or not valid_text(value):
        raise ContextError(code, f"{name} must be a non-empty string")
    return value


def optional_bool(value: Any, name: str) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise ContextError("INVALID_INPUT", f"{name} must be a boolean")
    return value


class _NotJson(Exception):
    """Raised by the fast walker; :func:`_explain` then finds the path and the reason."""


def _scalar_ok(value: Any) -> bool:
    """Whether a non-container value is finite, encodable JSON (any subclass of the JSON types)."""
    if isinstance(value, str):
        return value.isascii() or _LONE_SURROGATE.search(value) is None
    if value is None or isinstance(value, bool):
        return True
    if isinstance(value, int):
        return -_DOUBLE_OVERFLOW < value < _DOUBLE_OVERFLOW
    if isinstance(value, float):
        return value - value == 0.0  # false for inf and nan
    return False


def _frozen(value: Any, depth: int) -> Any:
    """A frozen copy of ``value`` in one pass, or ``_NotJson``.

    Fused check-and-freeze for the hot path (contexts of 10,000 items): exact
    types are tested before the slower ``isinstance`` checks, and no path
    strings or cycle set are built (a cycle shows up as too much depth).
    Frozen containers whose children are already frozen are returned as they are.
    """
    kind = type(value)
    if kind is str:
        if value.isascii() or _LONE_SURROGATE.search(value) is None:
            return value
        raise _NotJson
    if value is None or kind is bool:
        return value
    if kind is int:
        if -_DOUBLE_OVERFLOW < value < _DOUBLE_OVERFLOW:
            return value
        raise _NotJson
    if kind is float:
        if value - value == 0.0:  # false for inf and nan
            return value
        raise _NotJson
    if kind is dict or kind is FrozenDict:
        return _frozen_object(value, kind, depth)
    if kind is list or kind is tuple:
        return _frozen_array(value, kind, depth)
    if isinstance(value, Mapping):
        return _frozen_object(value, kind, depth)
    if isinstance(value, (list, tuple)):
        return _frozen_array(value, kind, depth)
    if _scalar_ok(value):
        return value
    raise _NotJson


def _frozen_object(value: Mapping[Any, Any], kind: type, depth: int) -> FrozenDict:
    if depth >= MAX_JSON_DEPTH:
        raise _NotJson
    out: dict[str, Any] = {}
    same = kind is FrozenDict
    for key, child in value.items():
        if not isinstance(key, str) or not (key.isascii() or _LONE_SURROGATE.search(key) is None):
            raise _NotJson
        frozen = out[key] = _frozen(child, depth + 1)
        same = same and frozen is child
    return value if same else FrozenDict(out)  # type: ignore[return-value]


def _frozen_array(value: list[Any] | tuple[Any, ...], kind: type, depth: int) -> tuple[Any, ...]:
    if depth >= MAX_JSON_DEPTH:
        raise _NotJson
    items = tuple([_frozen(child, depth + 1) for child in value])
    if kind is tuple and all(new is old for new, old in zip(items, value, strict=True)):
        return value  # type: ignore[return-value]
    return items


def _explain(value: Any, path: str, depth: int, active: set[int]) -> tuple[str, str] | None:
    """Where and why ``value`` is not JSON (the slow path, only after ``_frozen`` refused it)."""
    if not isinstance(value, (Mapping, list, tuple)):
        if _scalar_ok(value):
            return None
        if isinstance(value, str):
            return path, "strings must be valid Unicode (no lone surrogates)"
        if isinstance(value, (int, float)):
            return path, "numbers must be finite"
        return path, f"{type(value).__name__} is not a JSON value"
    if id(value) in active:
        return path, "value contains a cycle"
    if depth >= MAX_JSON_DEPTH:
        return path, f"value nests deeper than {MAX_JSON_DEPTH} levels"
    active.add(id(value))
    if isinstance(value, Mapping):
        for key, child in value.items():
            if not isinstance(key, str) or not valid_text(key):
                return path, "object keys must be valid strings"
            found = _explain(child, f"{path}.{key}" if path else key, depth + 1, active)
            if found:
                return found
    else:
        for index, child in enumerate(value):
            found = _explain(child, f"{path}[{index}]", depth + 1, active)
            if found:
                return found
    active.discard(id(value))
    return None


#: What :func:`try_read_json` returns for a value that is not JSON.
NOT_JSON: Final = object()


def try_read_json(value: Any) -> Any:
    """:func:`read_json` without the error: the frozen copy, or :data:`NOT_JSON`."""
    try:
        return _frozen(value, 0)
    except _NotJson:
        return NOT_JSON


def read_json(value: Any, name: str, code: str = "INVALID_INPUT") -> Any:
    """A frozen copy of ``value`` after checking it is finite, acyclic, UTF-8-encodable JSON."""
    frozen = try_read_json(value)
    if frozen is not NOT_JSON:
        return frozen
    found = _explain(value, "", 0, set()) or ("", "not a JSON value")
    where = f"{name}.{found[0]}" if found[0] else name
    raise ContextError(code, f"{where} is not valid JSON: {found[1]}") from None
