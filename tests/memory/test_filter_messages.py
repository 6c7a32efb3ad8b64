"""Search filter refusals with the message a caller reads, and the compiled form of the trivial filters (MEM-2).

The store tests check the code of every refused filter; these pin the message, so a refusal raised from the
wrong branch (same code, another reason) is caught too."""

from __future__ import annotations

from typing import Any

import pytest

from ditto.worker.memory import DittoMemoryError, MemorySearchInput, SqliteMemoryStore
from ditto.worker.memory._filters import compile_filter

KEY_TEXT = "must be a non-empty string of at most 1024 characters"


@pytest.mark.parametrize(("filter", "message"), [
    ({"tenant": "acme"}, "filter supports only key, keyPrefix and metadata"),
    ({"key": 5}, 'filter key must be a string or {"in": [keys]}'),
    ({"key": ""}, f"filter key {KEY_TEXT}"),
    ({"key": "a\x00b"}, f"filter key {KEY_TEXT}"),
    ({"key": "k" * 1025}, f"filter key {KEY_TEXT}"),
    ({"key": {"eq": "x"}}, 'filter key must be a string or {"in": [keys]}'),
    ({"key": {"in": "abc"}}, "filter key.in must be a list of keys"),
    ({"key": {"in": ["k"] * 10_001}}, "filter key.in may name at most 10000 keys"),
    ({"key": {"in": [1]}}, f"filter key.in entry {KEY_TEXT}"),
    ({"keyPrefix": ""}, f"filter keyPrefix {KEY_TEXT}"),
    ({"key_prefix": None}, f"filter keyPrefix {KEY_TEXT}"),
    ({"metadata": {}}, "filter metadata must be a non-empty object of field: value pairs"),
    ({"metadata": "x"}, "filter metadata must be a non-empty object of field: value pairs"),
    ({"metadata": {"": 1}}, f"filter metadata field {KEY_TEXT}"),
    ({"metadata": {"a": [1]}}, "filter metadata values must be strings, numbers, booleans or null"),
    ({"metadata": {"a": 2**63}}, "filter metadata integers must fit in 64 bits"),
    ({"metadata": {"a": -(2**63) - 1}}, "filter metadata integers must fit in 64 bits"),
])
async def test_refused_filters_say_why(store: SqliteMemoryStore, filter: dict[str, Any], message: str) -> None:
    """MEM-2: each refused filter is MEMORY_INVALID_INPUT with a message naming the field and the rule."""
    with pytest.raises(DittoMemoryError) as raised:
        await store.search(MemorySearchInput(query="x", filter=filter))
    assert (raised.value.code, raised.value.message) == ("MEMORY_INVALID_INPUT", message)


async def test_integer_bounds_of_metadata_filters_are_inclusive(store: SqliteMemoryStore) -> None:
    """MEM-2: the smallest and largest 64-bit integers are accepted metadata filter values."""
    for value in (2**63 - 1, -(2**63)):
        assert await store.search(MemorySearchInput(query="x", filter={"metadata": {"a": value}})) == ()


def test_compiled_trivial_filters() -> None:
    """MEM-2: no filter and an empty filter match every record; a filter that is not an object is refused."""
    assert compile_filter(None) == ("1", [])
    assert compile_filter({}) == ("1", [])
    with pytest.raises(DittoMemoryError) as raised:
        compile_filter(["key"])  # type: ignore[arg-type]
    assert (raised.value.code, raised.value.message) == ("MEMORY_INVALID_INPUT", "filter must be an object")
