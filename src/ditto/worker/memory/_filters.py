"""Search filters of the MEMORY stores: checked once, rendered as SQLite or PostgreSQL conditions.

The grammar is small on purpose (see ``docs/memory.md``): exact ``key``,
``key: {"in": [...]}``, ``keyPrefix`` (namespaces such as ``knowledge:acme:``)
and top-level ``metadata`` equality. Every other field is refused with
``MEMORY_INVALID_INPUT`` rather than ignored, because an ignored filter would
silently widen a search across namespaces or tenants.

:func:`read_filter` does every check and yields dialect-free clauses, so both
stores refuse exactly the same filters with the same messages;
:func:`compile_filter` (SQLite, ``?`` placeholders over ``json_each``) and
:func:`compile_postgres_filter` (psycopg ``%s`` placeholders over a ``jsonb``
view of the metadata) only render them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .validation import MAX_BATCH, MAX_KEY_LENGTH, invalid

__all__ = [
    "FilterClause",
    "compile_filter",
    "compile_postgres_filter",
    "jsonb_scalars",
    "prefix_upper_bound",
    "read_filter",
]

_KEY_PREFIX_FIELDS = ("keyPrefix", "key_prefix")


@dataclass(frozen=True, slots=True)
class FilterClause:
    """One checked filter clause: ``kind`` is ``key``, ``key_in``, ``prefix`` or ``metadata``.

    ``value`` is the key, the tuple of keys, the prefix, or the ``(field, value)``
    pairs of a metadata equality.
    """

    kind: str
    value: Any


def prefix_upper_bound(prefix: str) -> str | None:
    """The smallest string above every string that starts with ``prefix`` (UTF-8 byte order).

    Lets SQLite (and PostgreSQL under the ``C`` collation) use the unique index on
    ``key`` for a prefix scan; ``None`` when the last character cannot be
    incremented (U+10FFFF), where the exact prefix check alone decides.
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


def _key_clause(value: Any) -> FilterClause:
    if isinstance(value, str):
        return FilterClause("key", _text(value, "key"))
    if isinstance(value, Mapping) and set(value) == {"in"}:
        keys = value["in"]
        if isinstance(keys, (str, bytes)) or not isinstance(keys, Sequence):
            raise invalid("filter key.in must be a list of keys")
        if len(keys) > MAX_BATCH:
            raise invalid(f"filter key.in may name at most {MAX_BATCH} keys")
        return FilterClause("key_in", tuple(_text(key, "key.in entry") for key in keys))
    raise invalid('filter key must be a string or {"in": [keys]}')


def _metadata_clause(value: Any) -> FilterClause:
    """Equality on top-level metadata fields, typed so ``true`` never equals ``1``."""
    if not isinstance(value, Mapping) or not value:
        raise invalid("filter metadata must be a non-empty object of field: value pairs")
    pairs: list[tuple[str, Any]] = []
    for field, expected in value.items():
        name = _text(field, "metadata field")
        if isinstance(expected, int) and not isinstance(expected, bool) and not -(2**63) <= expected < 2**63:
            raise invalid("filter metadata integers must fit in 64 bits")
        if expected is not None and not isinstance(expected, (bool, int, float, str)):
            raise invalid("filter metadata values must be strings, numbers, booleans or null")
        pairs.append((name, expected))
    return FilterClause("metadata", tuple(pairs))


def read_filter(filter: Mapping[str, Any] | None) -> tuple[FilterClause, ...]:
    """The checked clauses of ``filter`` (AND-ed); ``()`` for none or ``{}``."""
    if filter is None:
        return ()
    if not isinstance(filter, Mapping):
        raise invalid("filter must be an object")
    clauses: list[FilterClause] = []
    for field, value in filter.items():
        if field == "key":
            clauses.append(_key_clause(value))
        elif field in _KEY_PREFIX_FIELDS:
            clauses.append(FilterClause("prefix", _text(value, "keyPrefix")))
        elif field == "metadata":
            clauses.append(_metadata_clause(value))
        else:
            raise invalid("filter supports only key, keyPrefix and metadata")
    return tuple(clauses)


# -- SQLite ---------------------------------------------------------------------------


def _sqlite_metadata(pairs: tuple[tuple[str, Any], ...]) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    probe = "EXISTS (SELECT 1 FROM json_each(r.metadata) AS m WHERE m.key = ? AND {test})"
    for name, expected in pairs:
        if expected is None:
            clauses.append(probe.format(test="m.type = 'null'"))
            params.append(name)
        elif isinstance(expected, bool):
            clauses.append(probe.format(test="m.type = ?"))
            params += [name, "true" if expected else "false"]
        elif isinstance(expected, (int, float)):
            clauses.append(probe.format(test="m.type IN ('integer', 'real') AND m.atom = ?"))
            params += [name, expected]
        else:
            clauses.append(probe.format(test="m.type = 'text' AND m.atom = ?"))
            params += [name, expected]
    return " AND ".join(clauses), params


def _sqlite_clause(clause: FilterClause) -> tuple[str, list[Any]]:
    if clause.kind == "key":
        return "r.key = ?", [clause.value]
    if clause.kind == "key_in":
        return "r.key IN (SELECT value FROM json_each(?))", [json.dumps(list(clause.value), ensure_ascii=False)]
    if clause.kind == "prefix":
        prefix = clause.value
        upper = prefix_upper_bound(prefix)
        exact = "substr(r.key, 1, ?) = ?"
        if upper is None:
            return f"(r.key >= ? AND {exact})", [prefix, len(prefix), prefix]
        return f"(r.key >= ? AND r.key < ? AND {exact})", [prefix, upper, len(prefix), prefix]
    return _sqlite_metadata(clause.value)


def compile_filter(filter: Mapping[str, Any] | None) -> tuple[str, list[Any]]:
    """SQLite: ``(condition, params)`` over the alias ``r`` (memory_records); ``("1", [])`` when empty."""
    clauses: list[str] = []
    params: list[Any] = []
    for clause in read_filter(filter):
        sql, extra = _sqlite_clause(clause)
        clauses.append(sql)
        params += extra
    return (" AND ".join(clauses) or "1"), params


# -- PostgreSQL -------------------------------------------------------------------------


def _jsonb_text(value: str) -> str:
    """``value`` as ``jsonb`` can hold it: jsonb refuses U+0000, so NUL is spelled ``\\uFFFE0``.

    ``\\uFFFE`` itself is doubled first, which keeps the mapping one-to-one
    (two different strings never look alike), so equality is unchanged.
    """
    if "\x00" not in value and "\ufffe" not in value:
        return value
    return value.replace("\ufffe", "\ufffe\ufffe").replace("\x00", "\ufffe0")


def jsonb_scalars(metadata: Mapping[str, Any] | None) -> str | None:
    """The JSON text of the ``jsonb`` column that metadata filters read in PostgreSQL.

    Only top-level scalars can be filtered on, so only they are kept, with every
    string made storable by :func:`_jsonb_text` (the stored metadata itself is
    kept verbatim in a text column).
    """
    if not metadata:
        return None
    view: dict[str, Any] = {}
    for field, value in metadata.items():
        if value is None or isinstance(value, (bool, int, float)):
            view[_jsonb_text(field)] = value
        elif isinstance(value, str):
            view[_jsonb_text(field)] = _jsonb_text(value)
    return json.dumps(view, ensure_ascii=False, allow_nan=False) if view else None


def _postgres_clause(clause: FilterClause) -> tuple[str, list[Any]]:
    if clause.kind == "key":
        return "r.key = %s", [clause.value]
    if clause.kind == "key_in":
        return "r.key = ANY(%s::text[])", [list(clause.value)]
    if clause.kind == "prefix":
        prefix = clause.value
        upper = prefix_upper_bound(prefix)  # the key column is COLLATE "C": byte order, as in SQLite
        if upper is None:
            return "(r.key >= %s AND starts_with(r.key, %s))", [prefix, prefix]
        return "(r.key >= %s AND r.key < %s AND starts_with(r.key, %s))", [prefix, upper, prefix]
    expected = {_jsonb_text(name): _jsonb_text(value) if isinstance(value, str) else value
                for name, value in clause.value}
    # Containment compares JSON types: 1 matches 1.0, true never matches 1, "2" never matches 2.
    return "r.filter_view @> %s::jsonb", [json.dumps(expected, ensure_ascii=False, allow_nan=False)]


def compile_postgres_filter(filter: Mapping[str, Any] | None) -> tuple[str, list[Any]]:
    """PostgreSQL: ``(condition, params)`` over the alias ``r``; ``("true", [])`` when empty."""
    clauses: list[str] = []
    params: list[Any] = []
    for clause in read_filter(filter):
        sql, extra = _postgres_clause(clause)
        clauses.append(sql)
        params += extra
    return (" AND ".join(clauses) or "true"), params
