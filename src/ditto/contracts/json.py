"""JSON values as the seeds define them, and their immutable form.

``JsonValue`` is any value ``JSON.stringify`` round-trips: ``None``, ``bool``,
finite ``int``/``float``, ``str``, lists and string-keyed objects. Snapshots we
hand back are *frozen*: objects become :class:`FrozenDict` (a ``dict`` that
refuses mutation, so ``json.dumps`` and pydantic still accept it) and arrays
become tuples.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final, NoReturn, TypeAlias

from pydantic import BaseModel

__all__ = [
    "MAX_JSON_DEPTH",
    "NOT_JSON",
    "FrozenDict",
    "InvalidJson",
    "JsonObject",
    "JsonValue",
    "check_json",
    "freeze_json",
    "frozen_json",
    "js_json_dumps",
    "json_text_depth",
    "plain_json",
    "thaw_json",
    "try_frozen_json",
    "valid_text",
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
#: The smallest integer magnitude that is ``Infinity`` as a double (it rounds up to 2**1024):
#: JavaScript could not read it back as a finite number.
_DOUBLE_OVERFLOW: Final = 2**1024 - 2**970
_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def valid_text(value: str) -> bool:
    """Whether ``value`` can be written as UTF-8 (no lone surrogates); ``isascii`` is O(1)."""
    return value.isascii() or _LONE_SURROGATE.search(value) is None


# -- the one JSON walker ------------------------------------------------------
#
# ``_frozen`` is the hot path: one pass that checks and freezes, testing exact types before
# the slower ``isinstance`` checks and building no path strings or cycle set (a cycle shows
# up as too much depth). Only when it refuses a value does ``_explain`` walk it again to
# find where and why. ``check_json``, ``frozen_json`` and ``try_frozen_json`` are all this pair.


class _NotJson(Exception):
    """Raised by the fast walker; :func:`_explain` then finds the path and the reason."""


def _scalar_ok(value: Any) -> bool:
    """Whether a non-container value is finite, encodable JSON (any subclass of the JSON types)."""
    if isinstance(value, str):
        return valid_text(value)
    if value is None or isinstance(value, bool):
        return True
    if isinstance(value, int):
        return -_DOUBLE_OVERFLOW < value < _DOUBLE_OVERFLOW
    if isinstance(value, float):
        return value - value == 0.0  # false for inf and nan
    return False


def _frozen(value: Any, depth: int) -> Any:
    """A frozen copy of ``value``, or ``_NotJson``; frozen containers with frozen children come back as they are."""
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


#: Longest object key quoted in a refusal's path, and longest path: keys are the caller's text, and a
#: path quoted whole through 300 levels of 26 kB keys was a 6.6 MB error message.
_MAX_PATH_KEY = 40
_MAX_PATH = 200


def _render_path(prefix: str, parts: list[str | int]) -> str:
    """``prefix`` then ``.key`` / ``[index]`` for each part: long keys cut, the middle of a long path elided."""
    pieces = [f"[{part}]" if isinstance(part, int) else
              "." + (part if len(part) <= _MAX_PATH_KEY else part[:_MAX_PATH_KEY] + "…") for part in parts]
    if not prefix and pieces and pieces[0].startswith("."):
        pieces[0] = pieces[0][1:]
    path = prefix + "".join(pieces)
    if len(path) > _MAX_PATH:
        path = path[:_MAX_PATH // 2] + "…" + path[-_MAX_PATH // 2:]
    return path


def _explain(value: Any, path: str, depth: int, active: set[int]) -> InvalidJson | None:
    """Where and why ``value`` is not JSON (the slow path, only after ``_frozen`` refused it).

    The path is kept as a list of parts and rendered (bounded) only for the problem found, so a deep
    value with long keys costs linear memory, not a path string per level.
    """
    parts: list[str | int] = []
    found = _explain_at(value, parts, depth, active)
    if found is None:
        return None
    reason, where = found
    return InvalidJson(_render_path(path, where), reason)


def _explain_at(value: Any, parts: list[str | int], depth: int,
                active: set[int]) -> tuple[str, list[str | int]] | None:
    if not isinstance(value, (Mapping, list, tuple)):
        if _scalar_ok(value):
            return None
        if isinstance(value, str):
            return "strings must be valid Unicode (no lone surrogates)", list(parts)
        if isinstance(value, int):
            return "integers must fit a double", list(parts)
        if isinstance(value, float):
            return "numbers must be finite", list(parts)
        return f"{type(value).__name__} is not a JSON value", list(parts)
    if id(value) in active:
        return "value contains a cycle", list(parts)
    if depth >= MAX_JSON_DEPTH:
        return f"value is nested deeper than {MAX_JSON_DEPTH} levels", list(parts)
    active.add(id(value))
    if isinstance(value, Mapping):
        for key, child in value.items():
            if not isinstance(key, str):
                return "object keys must be strings", list(parts)
            if not valid_text(key):
                return "strings must be valid Unicode (no lone surrogates)", list(parts)
            parts.append(key)
            found = _explain_at(child, parts, depth + 1, active)
            parts.pop()
            if found:
                return found
    else:
        for index, child in enumerate(value):
            parts.append(index)
            found = _explain_at(child, parts, depth + 1, active)
            parts.pop()
            if found:
                return found
    active.discard(id(value))
    return None


#: What :func:`try_frozen_json` returns for a value that is not JSON.
NOT_JSON: Final = object()


def try_frozen_json(value: Any) -> Any:
    """The frozen copy of ``value`` if it is finite, acyclic, encodable JSON, else :data:`NOT_JSON`."""
    try:
        return _frozen(value, 0)
    except _NotJson:
        return NOT_JSON


def frozen_json(value: Any, path: str = "") -> Any:
    """The frozen copy of ``value``; :class:`InvalidJson` (with the path of the first problem) if it is not JSON."""
    try:
        return _frozen(value, 0)
    except _NotJson:
        raise _explain(value, path, 0, set()) or InvalidJson(path, "not a JSON value") from None


def check_json(value: Any, path: str = "") -> None:
    """Raise :class:`InvalidJson` unless ``value`` is finite, acyclic JSON.

    Also refused: strings that are not valid Unicode (lone surrogates cannot be
    written as UTF-8), integers beyond a double's range (JavaScript could not
    read them back) and nesting deeper than :data:`MAX_JSON_DEPTH`.
    """
    frozen_json(value, path)


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


def json_text_depth(text: str) -> int:
    """The deepest ``[``/``{`` nesting of JSON text, ignoring brackets inside strings (linear, no recursion):
    checked before ``json.loads``, whose recursion depends on the interpreter's limit and stack."""
    deepest = depth = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest
