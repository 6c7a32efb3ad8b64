"""Input and port-output checks for MEMORY (MEM-1).

Everything a caller sends is checked here before any backend is touched, so a
malformed request is always ``MEMORY_INVALID_INPUT`` (never a pydantic or
sqlite exception), and everything a store or injected search provider answers
is checked before it reaches the caller, so a broken backend is always
``MEMORY_BACKEND_ERROR``. Messages are written here and name fields, never
echo the values or a backend's text.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn, TypeVar

from pydantic import BaseModel, ValidationError

from ...contracts import InvalidJson, check_json, freeze_json, js_json_dumps
from ...errors import describe_validation_error
from .types import (
    BACKEND_ERROR,
    CANCELLED,
    INVALID_INPUT,
    NOT_FOUND,
    TIMEOUT,
    DittoMemoryError,
    MemoryDeleteInput,
    MemoryGetInput,
    MemoryItem,
    MemorySearchHit,
    MemorySearchInput,
    MemoryWriteInput,
    MemoryWriteItem,
)

__all__ = [
    "BACKEND_ERROR",
    "BACKEND_MESSAGE",
    "CANCELLED",
    "DEFAULT_SEARCH_LIMIT",
    "INVALID_INPUT",
    "MAX_BATCH",
    "MAX_ID_LENGTH",
    "MAX_KEY_LENGTH",
    "NOT_FOUND",
    "TIMEOUT",
    "backend_error",
    "check_selector",
    "check_write_items",
    "freeze_item",
    "invalid",
    "item_from_json",
    "parse_delete_input",
    "parse_get_input",
    "parse_search_input",
    "parse_write_input",
    "validate_port_items",
    "validate_search_hits",
]


#: The one public message of every backend failure (paths, SQL and driver text stay private).
BACKEND_MESSAGE = "the memory backend failed"

DEFAULT_SEARCH_LIMIT = 10
#: Most records one WRITE may carry and most ids/keys one GET/DELETE may name.
MAX_BATCH = 10_000
MAX_ID_LENGTH = 512
MAX_KEY_LENGTH = 1024

M = TypeVar("M", bound=BaseModel)


def invalid(message: str) -> DittoMemoryError:
    return DittoMemoryError(INVALID_INPUT, message)


def backend_error() -> DittoMemoryError:
    return DittoMemoryError(BACKEND_ERROR, BACKEND_MESSAGE)


# -- caller input ---------------------------------------------------------------


def _parse(model: type[M], raw: Any, what: str) -> M:
    """``model.model_validate`` with pydantic's error turned into a public one."""
    if isinstance(raw, model):
        return raw
    if not isinstance(raw, Mapping):
        raise invalid(f"{what} input must be an object")
    try:
        return model.model_validate(dict(raw))
    except ValidationError as error:
        raise invalid(f"{what} input is invalid: {describe_validation_error(error, root='<root>')}") from None
    except (TypeError, ValueError, RecursionError):  # exotic mappings / keys pydantic cannot read
        raise invalid(f"{what} input is invalid") from None


def _text_ok(value: str) -> bool:
    """SQLite stores UTF-8: lone surrogates cannot be stored, NUL breaks key prefixes."""
    if "\x00" in value:
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _check_identifier(value: Any, what: str, max_length: int) -> None:
    if not isinstance(value, str) or not value:
        raise invalid(f"{what} must be a non-empty string")
    if len(value) > max_length:
        raise invalid(f"{what} is longer than {max_length} characters")
    if not _text_ok(value):
        raise invalid(f"{what} must be valid text without NUL characters")


def _check_json_value(value: Any, what: str) -> str:
    """The value's JSON text (``JSON.stringify`` style); encoding it proves it is storable UTF-8."""
    try:
        check_json(value)
        text = js_json_dumps(value)
        text.encode("utf-8")
    except (InvalidJson, ValueError, UnicodeEncodeError, RecursionError):
        raise invalid(f"{what} must be finite, acyclic JSON") from None
    return text


def check_write_items(items: Sequence[MemoryWriteItem]) -> list[tuple[str, str | None]]:
    """Checks shared by the SDK and the SQLite store (which may be called directly).

    Returns each item's ``(content, metadata)`` JSON text, which the check has
    to produce anyway, so the store does not serialise twice.
    """
    if len(items) > MAX_BATCH:
        raise invalid(f"a write may carry at most {MAX_BATCH} memories")
    ids: set[str] = set()
    keys: set[str] = set()
    texts: list[tuple[str, str | None]] = []
    for index, item in enumerate(items):
        if not isinstance(item, MemoryWriteItem):
            raise invalid(f"memories[{index}] must be a memory object")
        where = f"memories[{index}]"
        if item.id is not None:
            _check_identifier(item.id, f"{where}.id", MAX_ID_LENGTH)
            if item.id in ids:
                raise invalid(f"{where}.id repeats an id written earlier in the same call")
            ids.add(item.id)
        if item.key is not None:
            _check_identifier(item.key, f"{where}.key", MAX_KEY_LENGTH)
            if item.key in keys:
                raise invalid(f"{where}.key repeats a key written earlier in the same call")
            keys.add(item.key)
        content = _check_json_value(item.content, f"{where}.content")
        metadata = None if item.metadata is None else _check_json_value(item.metadata, f"{where}.metadata")
        texts.append((content, metadata))
    return texts


def check_selector(ids: Sequence[str] | None, keys: Sequence[str] | None, what: str) -> tuple[str, tuple[str, ...]]:
    """Exactly one of ids/keys; returns ``("id" | "key", values)``."""
    if (ids is None) == (keys is None):
        raise invalid(f"{what} input needs exactly one of ids or keys")
    field, values = ("id", ids) if ids is not None else ("key", keys)
    assert values is not None
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise invalid(f"{what} input {field}s must be a list of strings")
    if len(values) > MAX_BATCH:
        raise invalid(f"{what} input may name at most {MAX_BATCH} {field}s")
    limit = MAX_ID_LENGTH if field == "id" else MAX_KEY_LENGTH
    for index, value in enumerate(values):
        _check_identifier(value, f"{field}s[{index}]", limit)
    return field, tuple(values)


def parse_write_input(raw: Any) -> MemoryWriteInput:
    parsed = _parse(MemoryWriteInput, raw, "write")
    check_write_items(parsed.memories)
    return parsed


def parse_get_input(raw: Any) -> MemoryGetInput:
    parsed = _parse(MemoryGetInput, raw, "get")
    check_selector(parsed.ids, parsed.keys, "get")
    return parsed


def parse_delete_input(raw: Any) -> MemoryDeleteInput:
    parsed = _parse(MemoryDeleteInput, raw, "delete")
    check_selector(parsed.ids, parsed.keys, "delete")
    return parsed


def parse_search_input(raw: Any) -> MemorySearchInput:
    """Validates and fills the default limit (10), so every provider sees the same limit."""
    parsed = _parse(MemorySearchInput, raw, "search")
    # Checked again for inputs built with model_construct (the RETRIEVAL adapter), which skip pydantic.
    if parsed.limit is not None and (isinstance(parsed.limit, bool) or not 1 <= parsed.limit <= 10_000):
        raise invalid("search input is invalid: limit must be an integer from 1 to 10000")
    _check_json_value(parsed.query, "query")
    if parsed.filter is not None:
        _check_json_value(parsed.filter, "filter")
    if parsed.options is not None:
        _check_json_value(parsed.options, "options")
    if parsed.strategy is not None and not _text_ok(parsed.strategy):
        raise invalid("strategy must be valid text")
    if parsed.limit is None:
        parsed = parsed.model_copy(update={"limit": DEFAULT_SEARCH_LIMIT})
    return parsed


# -- port output ------------------------------------------------------------------


def item_from_json(row: tuple[str, str | None, str, str | None]) -> MemoryItem:
    """A frozen MemoryItem from a stored ``(id, key, content JSON, metadata JSON)`` row.

    Both stores keep the JSON text a write produced; text that does not parse
    (or metadata that is not an object) is a backend fault.
    """
    record_id, key, content, metadata = row
    try:
        loaded_content = json.loads(content)
        loaded_metadata = None if metadata is None else json.loads(metadata)
    except (TypeError, ValueError):
        raise backend_error() from None
    if loaded_metadata is not None and not isinstance(loaded_metadata, dict):
        raise backend_error()
    return MemoryItem.model_construct(
        id=record_id, key=key, content=freeze_json(loaded_content),
        metadata=None if loaded_metadata is None else freeze_json(loaded_metadata),
    )


def freeze_item(item: MemoryItem) -> MemoryItem:
    """A snapshot whose content and metadata cannot be changed by the caller."""
    return MemoryItem.model_construct(
        id=item.id, key=item.key, content=freeze_json(item.content),
        metadata=None if item.metadata is None else freeze_json(item.metadata),
    )


def _port_item(value: Any) -> MemoryItem:
    try:
        item = value if isinstance(value, MemoryItem) else MemoryItem.model_validate(value)
        check_json(item.content)
        if item.metadata is not None:
            check_json(item.metadata)
    except (ValidationError, InvalidJson, TypeError, ValueError, RecursionError):
        _fail()
    return freeze_item(item)


def _fail() -> NoReturn:
    raise backend_error() from None


def _sequence(value: Any) -> Sequence[Any]:
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        _fail()
    return value


def validate_port_items(output: Any) -> tuple[MemoryItem, ...]:
    """A store's write/get answer: a sequence of MemoryItem (or dicts shaped like one)."""
    return tuple(_port_item(value) for value in _sequence(output))


def _port_hit(value: Any) -> MemorySearchHit:
    try:
        hit = value if isinstance(value, MemorySearchHit) else MemorySearchHit.model_validate(value)
        if hit.metadata is not None:
            check_json(hit.metadata)
    except (ValidationError, InvalidJson, TypeError, ValueError, RecursionError):
        _fail()
    if hit.score is not None and (isinstance(hit.score, bool) or not math.isfinite(hit.score)):
        _fail()
    return MemorySearchHit.model_construct(
        memory=_port_item(hit.memory), score=hit.score,
        metadata=None if hit.metadata is None else freeze_json(hit.metadata),
    )


def validate_search_hits(output: Any, limit: int) -> tuple[MemorySearchHit, ...]:
    """A search answer: at most ``limit`` hits with finite scores; order kept as returned."""
    hits = _sequence(output)
    if len(hits) > limit:
        _fail()
    return tuple(_port_hit(value) for value in hits)
