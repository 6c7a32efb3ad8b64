"""Metadata filters shared by every search backend (seed: ``filter: {year: {gte: 2024}}``).

The seed says a provider must either apply a filter or reject it explicitly, so the
language is small and every backend implements all of it:

* ``{"field": value}`` or ``{"field": {"eq": value}}`` — equality with a scalar
  (string, number, boolean or ``None``);
* ``{"field": {"ne": value}}`` — not equal (a document without the field passes);
* ``{"field": {"in": [v1, v2]}}`` / ``{"field": {"nin": [...]}}`` — (not) any listed scalar;
* ``{"field": {"gt"|"gte"|"lt"|"lte": number}}`` — numeric ranges (booleans are not numbers);
* several fields, or several operators on one field, all have to hold (AND).

This is the same language as the in-process vector index (:mod:`ditto.retrieval.filters`).
Anything else (lists as values, nested objects, unknown operators such as ``$or``
or ``regex``, NaN, empty field names) raises ``RETRIEVAL_INVALID_INPUT`` — never ignored.
:func:`parse_filter` is pure; backends compile its :class:`FilterCondition` tuple.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from ...contracts import valid_text
from ..errors import INVALID_INPUT, RetrievalError

__all__ = ["FILTER_OPERATORS", "FilterCondition", "FilterOperator", "Scalar", "parse_filter"]

FilterOperator = Literal["eq", "ne", "in", "nin", "gt", "gte", "lt", "lte"]
Scalar = str | int | float | bool | None

FILTER_OPERATORS: Final[frozenset[str]] = frozenset({"eq", "ne", "in", "nin", "gt", "gte", "lt", "lte"})
RANGE_OPERATORS: Final[frozenset[str]] = frozenset({"gt", "gte", "lt", "lte"})


@dataclass(frozen=True, slots=True)
class FilterCondition:
    """One check on one metadata field. ``value`` is a tuple of scalars for ``in``/``nin``."""

    field: str
    op: FilterOperator
    value: Any


def _invalid(message: str) -> RetrievalError:
    return RetrievalError(INVALID_INPUT, message)


def _is_scalar(value: object) -> bool:
    if value is None or isinstance(value, bool):
        return True
    if isinstance(value, str):
        return valid_text(value)
    return _is_number(value)


def _is_number(value: object) -> bool:
    """A finite double: an integer beyond one (10**400) is not a number any backend can compare."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def parse_filter(filter: Mapping[str, Any] | None) -> tuple[FilterCondition, ...]:
    """Validate ``filter`` and flatten it into conditions (AND); ``None``/``{}`` → ``()``."""
    if filter is None:
        return ()
    if not isinstance(filter, Mapping):
        raise _invalid("filter must be an object")
    conditions: list[FilterCondition] = []
    for field, spec in filter.items():
        if not isinstance(field, str) or not field or not valid_text(field):
            raise _invalid("filter field names must be non-empty strings")
        if isinstance(spec, Mapping):
            if not spec:
                raise _invalid(f"filter for field {field!r} has no operator")
            for op, operand in spec.items():
                conditions.append(_condition(field, op, operand))
        elif _is_scalar(spec):
            conditions.append(FilterCondition(field, "eq", spec))
        else:
            raise _invalid(f"unsupported filter value for field {field!r}; use a scalar or an operator object")
    return tuple(conditions)


def _condition(field: str, op: object, operand: object) -> FilterCondition:
    if not isinstance(op, str) or op not in FILTER_OPERATORS:
        raise _invalid(f"unsupported filter operator {op!r} for field {field!r}")
    if op in ("eq", "ne"):
        if not _is_scalar(operand):
            raise _invalid(f"filter {op!r} on field {field!r} needs a scalar")
        return FilterCondition(field, op, operand)  # type: ignore[arg-type]
    if op in ("in", "nin"):
        if not isinstance(operand, (list, tuple)) or not all(_is_scalar(item) for item in operand):
            raise _invalid(f"filter {op!r} on field {field!r} needs a list of scalars")
        return FilterCondition(field, op, tuple(operand))  # type: ignore[arg-type]
    if not _is_number(operand):
        raise _invalid(f"filter {op!r} on field {field!r} needs a finite number")
    return FilterCondition(field, op, operand)  # type: ignore[arg-type]
