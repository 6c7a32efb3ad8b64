"""JSON values as the seeds define them, and their immutable form.

``JsonValue`` is any value ``JSON.stringify`` round-trips: ``None``, ``bool``,
finite ``int``/``float``, ``str``, lists and string-keyed objects. Snapshots we
hand back are *frozen*: objects become :class:`FrozenDict` (a ``dict`` that
refuses mutation, so ``json.dumps`` and pydantic still accept it) and arrays
become tuples.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, NoReturn, TypeAlias

from pydantic import BaseModel

__all__ = [
    "MAX_JSON_DEPTH",
    "FrozenDict",
    "InvalidJson",
    "JsonObject",
    "JsonValue",
    "check_json",
    "freeze_json",
    "js_json_dumps",
    "plain_json",
    "thaw_json",
]

JsonValue: TypeAlias = Any
JsonObject: TypeAlias = Mapping[str, Any]


class InvalidJson(ValueError):
    """A value is not finite, acyclic JSON. ``path`` locates the bad part."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path or '<root>'}: {reason}")


class FrozenDict(dict[str, Any]):
    """A ``dict`` that cannot be changed after construction."""

    __slots__ = ()

    def _readonly(self, *_: object, **__: object) -> NoReturn:
        raise TypeError("this mapping is a read-only snapshot")

    __setitem__ = _readonly
    __delitem__ = _readonly
    __ior__ = _readonly
    clear = _readonly
    pop = _readonly
    popitem = _readonly
    setdefault = _readonly
    update = _readonly

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(sorted(self.items(), key=lambda kv: kv[0])))

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenDict:
        return self

    def __reduce__(self) -> tuple[type[FrozenDict], tuple[dict[str, Any]]]:
        return (FrozenDict, (dict(self),))


#: Deeper values are refused: they would exhaust Python's stack in every recursive walk
#: (freezing, serialising) and no real context or memory record nests this far.
MAX_JSON_DEPTH = 256


def check_json(value: Any, path: str = "") -> None:
    """Raise :class:`InvalidJson` unless ``value`` is finite, acyclic JSON.

    Also refused: strings that are not valid Unicode (lone surrogates cannot be
    written as UTF-8), integers beyond a double's range (JavaScript could not
    read them back) and nesting deeper than :data:`MAX_JSON_DEPTH`.
    """
    _check(value, path, set(), 0)


def _check_text(text: str, path: str) -> None:
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidJson(path, "strings must be valid Unicode (no lone surrogates)") from None


def _check(value: Any, path: str, active: set[int], depth: int) -> None:
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, str):
        _check_text(value, path)
        return
    if isinstance(value, int):
        try:
            float(value)
        except OverflowError:
            raise InvalidJson(path, "integers must fit a double") from None
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidJson(path, "numbers must be finite")
        return
    if depth >= MAX_JSON_DEPTH:
        raise InvalidJson(path, f"value is nested deeper than {MAX_JSON_DEPTH} levels")
    if isinstance(value, Mapping):
        ident = id(value)
        if ident in active:
            raise InvalidJson(path, "value contains a cycle")
        active.add(ident)
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidJson(path, "object keys must be strings")
            _check_text(key, path)
            _check(item, f"{path}.{key}" if path else key, active, depth + 1)
        active.discard(ident)
        return
    if isinstance(value, (list, tuple)):
        ident = id(value)
        if ident in active:
            raise InvalidJson(path, "value contains a cycle")
        active.add(ident)
        for index, item in enumerate(value):
            _check(item, f"{path}[{index}]", active, depth + 1)
        active.discard(ident)
        return
    raise InvalidJson(path, f"{type(value).__name__} is not a JSON value")


def freeze_json(value: Any) -> Any:
    """Deep-copy ``value`` into its immutable form (assumes it passed :func:`check_json`)."""
    if isinstance(value, FrozenDict):
        return value
    if isinstance(value, Mapping):
        return FrozenDict({key: freeze_json(item) for key, item in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(freeze_json(item) for item in value)
    return value


def thaw_json(value: Any) -> Any:
    """A mutable deep copy (plain ``dict``/``list``) of a JSON value."""
    if isinstance(value, Mapping):
        return {key: thaw_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [thaw_json(item) for item in value]
    return value


def _normalise_floats(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return int(value)
    if isinstance(value, Mapping):
        return {key: _normalise_floats(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_normalise_floats(item) for item in value]
    return value


def js_json_dumps(value: Any) -> str:
    """Serialise like JavaScript's ``JSON.stringify``: no spaces, non-ASCII kept.

    Used wherever the seed measures "JSON UTF-8 bytes" (inline limits, the
    default token estimator, stable ids), so sizes match the TypeScript original.
    One known difference: non-integral floats in exponent form keep Python's
    spelling (``1e-07`` where JavaScript writes ``1e-7``, ``1e-05`` for
    ``0.00001``), a byte or two in rare values.
    """
    return json.dumps(_normalise_floats(value), ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False)



_SCALARS = frozenset({str, int, float, bool, type(None)})


def plain_json(value: Any) -> Any:
    """``value`` with every pydantic model inside it replaced by its camelCase JSON object.

    Typed values copied into a JSON field (``metadata={"source": candidate.source}``)
    are plain objects in the seeds' TypeScript; here they are models, which
    :func:`check_json` would refuse. A value without models is returned as it is
    (no copy); cycles and over-deep nesting are left for :func:`check_json` to refuse.
    """
    return _to_plain(value, set(), 0) if _has_model(value, set(), 0) else value


def _has_model(value: Any, seen: set[int], depth: int) -> bool:
    if type(value) in _SCALARS:  # the common case, decided without isinstance checks
        return False
    if isinstance(value, BaseModel):
        return True
    if depth >= MAX_JSON_DEPTH or not isinstance(value, (Mapping, list, tuple)) or id(value) in seen:
        return False
    seen.add(id(value))
    items = value.values() if isinstance(value, Mapping) else value
    return any(_has_model(item, seen, depth + 1) for item in items)


def _to_plain(value: Any, active: set[int], depth: int) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    if depth >= MAX_JSON_DEPTH or not isinstance(value, (Mapping, list, tuple)) or id(value) in active:
        return value
    active.add(id(value))
    try:
        if isinstance(value, Mapping):
            return {key: _to_plain(item, active, depth + 1) for key, item in value.items()}
        return [_to_plain(item, active, depth + 1) for item in value]
    finally:
        active.discard(id(value))
