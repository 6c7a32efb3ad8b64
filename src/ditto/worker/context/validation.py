"""Reading request fields: dicts or models, camelCase or snake_case, strict about the rest.

Every check here raises :class:`ContextError` with a documented code, so a
malformed request never surfaces as a ``KeyError`` or a pydantic error.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any, Final

from pydantic import BaseModel
from pydantic.alias_generators import to_camel

from ...contracts import InvalidJson, check_json, freeze_json
from .errors import ContextError

__all__ = [
    "MAX_REQUEST_LIMIT",
    "MAX_SAFE_INTEGER",
    "optional_bool",
    "optional_str",
    "read_fields",
    "read_json",
    "request_limit",
]

MAX_REQUEST_LIMIT: Final = 1_000_000
MAX_SAFE_INTEGER: Final = 2**53 - 1


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
    if not isinstance(value, str) or not value:
        raise ContextError(code, f"{name} must be a non-empty string")
    return value


def optional_bool(value: Any, name: str) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise ContextError("INVALID_INPUT", f"{name} must be a boolean")
    return value


def read_json(value: Any, name: str, code: str = "INVALID_INPUT") -> Any:
    """A frozen copy of ``value`` after checking it is finite, acyclic JSON."""
    try:
        check_json(value)
    except InvalidJson as error:
        where = f"{name}.{error.path}" if error.path else name
        raise ContextError(code, f"{where} is not valid JSON: {error.reason}") from None
    return freeze_json(value)
