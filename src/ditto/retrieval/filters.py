"""Metadata filters for in-process providers (seed: ``filter: {year: {gte: 2024}}``).

The language and its validation are shared with the search backends
(:func:`ditto.retrieval.engines.filters.parse_filter`): equality (``{"f": v}``,
``eq``/``ne``), membership (``in``/``nin``) and numeric ``gt/gte/lt/lte``,
AND-ed. Anything else is ``RETRIEVAL_INVALID_INPUT``, never silently ignored:
a filter that is not applied could leak or drop evidence.

Matching follows the same rules as the BM25 engine, so a filter means the
same thing on every backend: JSON-typed equality (``1 == 1.0`` but ``True``
is not ``1``), a list-valued field (tags) matches ``eq``/``in`` when any
element does, ``ne``/``nin`` are the exact complement (a record without the
field passes), ranges apply to numbers only (never booleans).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .engines.filters import FilterCondition

__all__ = ["MetadataPredicate", "compile_filter", "equality_key"]

MetadataPredicate = Callable[[Mapping[str, Any] | None], bool]

_MISSING = object()


def equality_key(value: Any) -> tuple[str, Any] | None:
    """Values equal for filtering share a key: 1 == 1.0, but True is not 1 (JSON types).

    The one definition of filter equality, used here and by the BM25 engine."""
    if value is None:
        return ("null", None)
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, (int, float)):
        return ("num", float(value))
    if isinstance(value, str):
        return ("str", value)
    return None


def _keys(value: Any) -> set[tuple[str, Any]]:
    items = value if isinstance(value, (list, tuple)) else (value,)
    return {key for key in map(equality_key, items) if key is not None}


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _test(condition: FilterCondition) -> Callable[[Any], bool]:
    op = condition.op
    if op in ("eq", "ne", "in", "nin"):
        wanted = {equality_key(condition.value)} if op in ("eq", "ne") else {equality_key(v) for v in condition.value}
        negate = op in ("ne", "nin")

        def member(value: Any) -> bool:
            hit = value is not _MISSING and not wanted.isdisjoint(_keys(value))
            return hit != negate

        return member
    bound = float(condition.value)
    compare: Callable[[float, float], bool] = {
        "gt": lambda a, b: a > b, "gte": lambda a, b: a >= b, "lt": lambda a, b: a < b,
    }.get(op, lambda a, b: a <= b)

    def in_range(value: Any) -> bool:
        number = _number(value) if value is not _MISSING else None
        return number is not None and compare(number, bound)

    return in_range


def compile_filter(filter: Mapping[str, Any] | None) -> MetadataPredicate | None:
    """Turn a filter object into a predicate over candidate metadata (``None`` = no filter)."""
    if filter is None or (isinstance(filter, Mapping) and not filter):
        return None
    # Imported here: the engines package loads bm25s, which ``import ditto.retrieval`` must not.
    from .engines.filters import parse_filter

    conditions = parse_filter(filter)
    if not conditions:
        return None
    tests = [(condition.field, _test(condition)) for condition in conditions]

    def predicate(metadata: Mapping[str, Any] | None) -> bool:
        data = metadata or {}
        return all(test(data.get(field, _MISSING)) for field, test in tests)

    return predicate
