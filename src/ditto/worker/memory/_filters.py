"""Search filters of the SQLite store, compiled into a parameterised SQL condition.

The grammar is small on purpose (see ``docs/memory.md``): exact ``key``,
``key: {"in": [...]}``, ``keyPrefix`` (namespaces such as ``knowledge:acme:``)
and top-level ``metadata`` equality. Every other field is refused with
``MEMORY_INVALID_INPUT`` rather than ignored, because an ignored filter would
silently widen a search across namespaces or tenants.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from .validation import MAX_BATCH, MAX_KEY_LENGTH, invalid

__all__ = ["compile_filter", "prefix_upper_bound"]

_KEY_PREFIX_FIELDS = ("keyPrefix", "key_prefix")


def prefix_upper_bound(prefix: str) -> str | None:
    """The smallest string above every string that starts with ``prefix`` (UTF-8 byte order).

    Lets SQLite use the unique index on ``key`` for a prefix scan; ``None`` when
    the last character cannot be incremented (U+10FFFF), where the exact
    ``substr`` check alone decides.
    """
    last = ord(prefix[-1])
    if last == 0x10FFFF:
        return None
    bumped = last + 1
    if 0xD800 <= bumped <= 0xDFFF:  # surrogates are not text; U+E000 follows U+D7FF in UTF-8
        bumped = 0xE000
    return prefix[:-1] + chr(bumped)


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value or len(value) > MAX_KEY_LENGTH or "\x00" in value:
        raise invalid(f"filter {what} must be a non-empty string of at most {MAX_KEY_LENGTH} characters")
    return value


def _key_condition(value: Any) -> tuple[str, list[Any]]:
    if isinstance(value, str):
        return "r.key = ?", [_text(value, "key")]
    if isinstance(value, Mapping) and set(value) == {"in"}:
        keys = value["in"]
        if isinstance(keys, (str, bytes)) or not isinstance(keys, Sequence):
            raise invalid("filter key.in must be a list of keys")
        if len(keys) > MAX_BATCH:
            raise invalid(f"filter key.in may name at most {MAX_BATCH} keys")
        checked = [_text(key, "key.in entry") for key in keys]
        return "r.key IN (SELECT value FROM json_each(?))", [json.dumps(checked, ensure_ascii=False)]
    raise invalid('filter key must be a string or {"in": [keys]}')


def _prefix_condition(value: Any) -> tuple[str, list[Any]]:
    prefix = _text(value, "keyPrefix")
    upper = prefix_upper_bound(prefix)
    exact = "substr(r.key, 1, ?) = ?"
    if upper is None:
        return f"(r.key >= ? AND {exact})", [prefix, len(prefix), prefix]
    return f"(r.key >= ? AND r.key < ? AND {exact})", [prefix, upper, len(prefix), prefix]


def _metadata_condition(value: Any) -> tuple[str, list[Any]]:
    """Equality on top-level metadata fields, typed so ``true`` never equals ``1``."""
    if not isinstance(value, Mapping) or not value:
        raise invalid("filter metadata must be a non-empty object of field: value pairs")
    clauses: list[str] = []
    params: list[Any] = []
    probe = "EXISTS (SELECT 1 FROM json_each(r.metadata) AS m WHERE m.key = ? AND {test})"
    for field, expected in value.items():
        name = _text(field, "metadata field")
        if expected is None:
            clauses.append(probe.format(test="m.type = 'null'"))
            params.append(name)
        elif isinstance(expected, bool):
            clauses.append(probe.format(test="m.type = ?"))
            params += [name, "true" if expected else "false"]
        elif isinstance(expected, (int, float)):
            if isinstance(expected, int) and not -(2**63) <= expected < 2**63:
                raise invalid("filter metadata integers must fit in 64 bits")
            clauses.append(probe.format(test="m.type IN ('integer', 'real') AND m.atom = ?"))
            params += [name, expected]
        elif isinstance(expected, str):
            clauses.append(probe.format(test="m.type = 'text' AND m.atom = ?"))
            params += [name, expected]
        else:
            raise invalid("filter metadata values must be strings, numbers, booleans or null")
    return " AND ".join(clauses), params


def compile_filter(filter: Mapping[str, Any] | None) -> tuple[str, list[Any]]:
    """``(condition, params)`` over the alias ``r`` (memory_records); ``("1", [])`` when empty."""
    if filter is None:
        return "1", []
    if not isinstance(filter, Mapping):
        raise invalid("filter must be an object")
    clauses: list[str] = []
    params: list[Any] = []
    for field, value in filter.items():
        if field == "key":
            clause, extra = _key_condition(value)
        elif field in _KEY_PREFIX_FIELDS:
            clause, extra = _prefix_condition(value)
        elif field == "metadata":
            clause, extra = _metadata_condition(value)
        else:
            raise invalid("filter supports only key, keyPrefix and metadata")
        clauses.append(clause)
        params += extra
    return (" AND ".join(clauses) or "1"), params
