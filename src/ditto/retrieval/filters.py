"""Metadata filters for the in-process providers (seed: ``filter: {year: {gte: 2024}}``).

Supported per field: a plain value (equality), ``{"eq": v}``, ``{"ne": v}``,
``{"in": [...]}``, ``{"nin": [...]}`` and numeric ``gt/gte/lt/lte`` (several
operators on one field are AND-ed). Anything else is refused with
``RETRIEVAL_INVALID_INPUT``, never silently ignored: a filter that is not
applied could leak or drop evidence.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from numbers import Real
from typing import Any

from .errors import INVALID_INPUT, RetrievalError

__all__ = ["MetadataPredicate", "compile_filter"]

MetadataPredicate = Callable[[Mapping[str, Any] | None], bool]

_MISSING = object()
_NUMERIC: dict[str, Callable[[Any, Any], bool]] = {
    "gt": lambda a, b: a > b, "gte": lambda a, b: a >= b, "lt": lambda a, b: a < b, "lte": lambda a, b: a <= b,
}


def _is_number(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(value)


def _numeric(compare: Callable[[Any, Any], bool], operand: Any) -> Callable[[Any], bool]:
    return lambda value: _is_number(value) and compare(value, operand)


def _equal(operand: Any, negate: bool) -> Callable[[Any], bool]:
    if negate:
        return lambda value: value is _MISSING or value != operand
    return lambda value: value is not _MISSING and value == operand


def _member(values: list[Any], negate: bool) -> Callable[[Any], bool]:
    if negate:
        return lambda value: value is _MISSING or value not in values
    return lambda value: value is not _MISSING and value in values


def _field_test(field: str, condition: Any) -> Callable[[Any], bool]:
    if not isinstance(condition, Mapping):
        return _equal(condition, False)
    if not condition:
        raise RetrievalError(INVALID_INPUT, f"filter on {field!r} is an empty object")
    tests: list[Callable[[Any], bool]] = []
    for op, operand in condition.items():
        if op in _NUMERIC:
            if not _is_number(operand):
                raise RetrievalError(INVALID_INPUT, f"filter {field}.{op} needs a finite number")
            tests.append(_numeric(_NUMERIC[op], operand))
        elif op in ("eq", "ne"):
            tests.append(_equal(operand, op == "ne"))
        elif op in ("in", "nin"):
            if isinstance(operand, (str, bytes, Mapping)) or not isinstance(operand, (list, tuple, set, frozenset)):
                raise RetrievalError(INVALID_INPUT, f"filter {field}.{op} needs a list")
            tests.append(_member(list(operand), op == "nin"))
        else:
            raise RetrievalError(INVALID_INPUT, f"filter operator {op!r} on {field!r} is not supported")
    return lambda value: all(test(value) for test in tests)


def compile_filter(filter: Mapping[str, Any] | None) -> MetadataPredicate | None:
    """Turn a filter object into a predicate over candidate metadata (``None`` = no filter)."""
    if not filter:
        return None
    if not isinstance(filter, Mapping):
        raise RetrievalError(INVALID_INPUT, "filter must be an object")
    tests = [(field, _field_test(field, condition)) for field, condition in filter.items()]

    def predicate(metadata: Mapping[str, Any] | None) -> bool:
        data = metadata or {}
        return all(test(data.get(field, _MISSING)) for field, test in tests)

    return predicate
