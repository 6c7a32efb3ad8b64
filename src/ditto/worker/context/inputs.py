"""Reading caller data: request fields (dicts or models, camelCase or snake_case), JSON values and scopes.

Every check here raises :class:`ContextError` with a documented code, so a
malformed request never surfaces as a ``KeyError`` or a pydantic error. These
are hand-written rather than pydantic validation because they run for every
item of contexts of 10,000 items (``bench/context_select_compress.py``); the
rules are the ones the request models in :mod:`.types` declare.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from functools import cache
from typing import Any, Final, TypeVar

from pydantic import BaseModel
from pydantic.alias_generators import to_camel

from ...contracts import InvalidJson, frozen_json, try_frozen_json, valid_text
from ...contracts.types import MAX_LIMIT, MAX_SAFE_INTEGER
from .types import ContextArgumentError, ContextError, ContextScope

__all__ = [
    "MAX_ITEM_ID_LENGTH",
    "MAX_METADATA_BYTES",
    "MAX_REQUEST_LIMIT",
    "MAX_SAFE_INTEGER",
    "check_item_id",
    "check_metadata",
    "construct",
    "context_scope_key",
    "metadata_fits",
    "optional_bool",
    "optional_str",
    "options_or_value",
    "parse_scope",
    "read_fields",
    "read_json",
    "request_limit",
    "scope_tuple",
    "try_read_json",
    "valid_item_id",
    "valid_text",
]

M = TypeVar("M", bound=BaseModel)

MAX_REQUEST_LIMIT: Final = MAX_LIMIT

#: :func:`read_json` without the error: the frozen copy, or :data:`ditto.contracts.NOT_JSON`.
try_read_json: Final = try_frozen_json


@cache
def _aliases(names: tuple[str, ...]) -> dict[str, str]:
    table: dict[str, str] = {}
    for name in names:
        table[name] = name
        table[to_camel(name)] = name
    return table


def read_fields(value: Any, names: tuple[str, ...], where: str, code: str = "INVALID_INPUT",
                error: type[ContextError] = ContextError) -> dict[str, Any]:
    """The fields of ``value`` (a mapping or a pydantic model) by snake_case name.

    ``None`` values count as absent, as an omitted optional field does in the
    seed's TypeScript. Unknown keys are refused (``error(code, ...)``) so typos
    do not pass silently; factories pass ``ContextArgumentError``.
    """
    aliases = _aliases(names)
    if isinstance(value, BaseModel):
        out: dict[str, Any] = {}
        for field in type(value).model_fields:
            name = aliases.get(field)
            got = getattr(value, field)
            if name is None:
                if got is None:
                    continue  # an optional field this reader does not use, left unset
                raise error(code, f"{where} has an unknown field {field!r}")
            if got is not None:
                out[name] = got
        return out
    if not isinstance(value, Mapping):
        raise error(code, f"{where} must be an object")
    out = {}
    for key, got in value.items():
        name = aliases.get(key) if isinstance(key, str) else None
        if name is None:
            raise error(code, f"{where} has an unknown field {key!r}")
        if name in out:
            raise error(code, f"{where} gives {name!r} twice (camelCase and snake_case)")
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


#: Longest item id, in characters. The seed only asks for non-empty ids; an id is compared, hashed and
#: stored with every version of a cached context, so a megabyte id would be rewritten on every CAS.
MAX_ITEM_ID_LENGTH = 1024
#: Most an item's metadata may take as JSON (UTF-8 bytes, as the inline limit counts content). The seed
#: bounds content (``maxInlineBytes``) but not metadata; 5 MB or 100,000 keys of it would be rewritten on
#: every CAS. 100,000 keys are over this size, so no separate key count is needed.
MAX_METADATA_BYTES = 65536


def valid_item_id(value: Any) -> bool:
    """A non-empty string of valid text, without NUL, at most :data:`MAX_ITEM_ID_LENGTH` characters."""
    return isinstance(value, str) and 0 < len(value) <= MAX_ITEM_ID_LENGTH and "\x00" not in value \
        and valid_text(value)


def check_item_id(value: Any, name: str, code: str = "INVALID_INPUT") -> str:
    if not isinstance(value, str) or not value or not valid_text(value):
        raise ContextError(code, f"{name} must be a non-empty string")
    if len(value) > MAX_ITEM_ID_LENGTH or "\x00" in value:
        raise ContextError(code, f"{name} must be at most {MAX_ITEM_ID_LENGTH} characters, without NUL")
    return value


def metadata_fits(metadata: Any) -> bool:
    """Whether frozen ``metadata`` is at most :data:`MAX_METADATA_BYTES` as compact JSON."""
    if not metadata:
        return True
    text = json.dumps(metadata, ensure_ascii=False, separators=(",", ":"))
    if len(text) > MAX_METADATA_BYTES:
        return False
    return len(text) * 4 <= MAX_METADATA_BYTES or len(text.encode("utf-8")) <= MAX_METADATA_BYTES


def check_metadata(metadata: Any, name: str, code: str = "INVALID_INPUT") -> Any:
    if not metadata_fits(metadata):
        raise ContextError(code, f"{name} is larger than {MAX_METADATA_BYTES} bytes of JSON")
    return metadata


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


def read_json(value: Any, name: str, code: str = "INVALID_INPUT") -> Any:
    """A frozen copy of ``value`` after checking it is finite, acyclic, UTF-8-encodable JSON."""
    try:
        return frozen_json(value)
    except InvalidJson as error:
        # "content[0]" for an array position, "content.k" for an object key
        where = name + ("" if error.path.startswith("[") else ".") + error.path if error.path else name
        raise ContextError(code, f"{where} is not valid JSON: {error.reason}") from None


_object_new = object.__new__
_object_setattr = object.__setattr__


@cache
def _plain_model(model: type[Any]) -> bool:
    return not model.__pydantic_post_init__ and not model.__private_attributes__ and not model.__pydantic_root_model__


def construct(model: type[M], values: dict[str, Any], fields_set: set[str] | None = None) -> M:
    """``model.model_construct(**values)`` for complete, already valid values, without its overhead.

    ``model_construct`` costs several microseconds per call (alias handling,
    defaults); our values are complete, so for plain models we set the same four
    slots it sets, directly. A model with hooks falls back to ``model_construct``.
    """
    if not _plain_model(model):  # pragma: no cover - only if a model gains hooks
        return model.model_construct(**values)
    instance: M = _object_new(model)
    _object_setattr(instance, "__dict__", values)
    _object_setattr(instance, "__pydantic_fields_set__", fields_set if fields_set is not None
                    else {name for name, value in values.items() if value is not None})
    _object_setattr(instance, "__pydantic_extra__", None)
    _object_setattr(instance, "__pydantic_private__", None)
    return instance


# -- scopes -----------------------------------------------------------------------

_SCOPE_FIELDS: Final = ("session_id", "turn_id", "invocation_id")


def scope_tuple(scope: ContextScope) -> tuple[str | None, str | None, str | None]:
    return (scope.session_id, scope.turn_id, scope.invocation_id)


def parse_scope(value: Any, code: str = "INVALID_INPUT") -> ContextScope:
    """Validate a scope; empty strings count as absent, and one field must remain."""
    if isinstance(value, ContextScope) and (value.session_id or value.turn_id or value.invocation_id) and all(
            part is None or (isinstance(part, str) and part and valid_text(part)) for part in scope_tuple(value)):
        return value  # already in normal form
    fields = read_fields(value, _SCOPE_FIELDS, "scope", code)
    clean: dict[str, str] = {}
    for name, got in fields.items():
        if not isinstance(got, str) or not valid_text(got):
            raise ContextError(code, f"scope.{name} must be a string")
        if got:
            clean[name] = got
    if not clean:
        raise ContextError(code, "scope needs a non-empty sessionId, turnId or invocationId")
    return construct(ContextScope, {"session_id": clean.get("session_id"), "turn_id": clean.get("turn_id"),
                                    "invocation_id": clean.get("invocation_id")})


def context_scope_key(scope: ContextScope | Mapping[str, Any], key_prefix: str = "ditto:context:") -> str:
    """``key_prefix`` + SHA-256 (hex) of the JSON array ``[sessionId, turnId, invocationId]``.

    Missing fields are ``null`` in the array, so ``{sessionId: "a"}`` and
    ``{turnId: "a"}`` never share a key::

        context_scope_key({"sessionId": "tenant-a:session-1"})  # 'ditto:context:3f…'
    """
    parsed = parse_scope(scope)
    raw = json.dumps(list(scope_tuple(parsed)), ensure_ascii=False, separators=(",", ":"))
    return key_prefix + hashlib.sha256(raw.encode("utf-8")).hexdigest()


def options_or_value(first: Any, options: Any) -> tuple[Any, Any]:
    """A factory's first argument as ``(options, value)``: the spec's own value (``ttl_ms``,
    ``max_pending``) given positionally, or, as earlier releases took it, an options object there.

    ``create_in_memory_context_store(60_000)`` and ``create_in_memory_context_store({"ttlMs": 60_000})``
    both work; an options object given both ways is refused.
    """
    if isinstance(first, (Mapping, BaseModel)):
        if options is not None:
            raise ContextArgumentError("INVALID_INPUT", "options were given twice")
        return first, None
    return options, first
