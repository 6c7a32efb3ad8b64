"""Malformed input is always MEMORY_INVALID_INPUT, never a pydantic or sqlite exception (MEM-1)."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ditto.runtime import create_ditto
from ditto.worker.memory import DittoMemoryError, create_memory, create_memory_worker, create_sqlite_memory_store

_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
                     | st.text(max_size=5), lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=3), inner, max_size=3), max_leaves=6)
_not_str = st.none() | st.booleans() | st.integers() | st.floats() | st.lists(st.integers(), max_size=2) \
    | st.dictionaries(st.text(max_size=2), st.integers(), max_size=2)
_present_not_str = _not_str.filter(lambda v: v is not None)
_not_list = st.none() | st.booleans() | st.integers() | st.text(max_size=4) \
    | st.dictionaries(st.text(max_size=2), st.integers(), max_size=2)
_not_object = st.booleans() | st.integers() | st.text(max_size=4) | st.lists(st.integers(), max_size=2)
_bad_text = st.sampled_from(["", "a\x00b", "\ud800", "x" * 2000])
_bad_json = st.sampled_from([float("nan"), float("inf"), {1: "int key"}, {"set": {1, 2}}, b"bytes", object()])
_bad_limit = st.sampled_from([0, -1, 10_001, True, 2.5, "5", 5.0, [5]])

# (node, input) pairs that are wrong in exactly one way.
_malformed = st.one_of(
    st.tuples(st.sampled_from(["write", "get", "search", "delete"]), _not_object),
    st.tuples(st.just("write"), st.fixed_dictionaries({"memories": _not_list})),
    st.tuples(st.just("write"), st.fixed_dictionaries({"memories": st.lists(_not_object, min_size=1, max_size=2)})),
    st.tuples(st.just("write"), st.just({"memories": [{"id": "no-content"}]})),
    st.tuples(st.just("write"), st.just({})),
    st.tuples(st.just("write"), st.builds(lambda v: {"memories": [{"id": v, "content": 1}]},
                                          _present_not_str | _bad_text)),
    st.tuples(st.just("write"), st.builds(lambda v: {"memories": [{"key": v, "content": 1}]},
                                          _present_not_str | _bad_text)),
    st.tuples(st.just("write"), st.builds(lambda v: {"memories": [{"content": v}]}, _bad_json)),
    st.tuples(st.just("write"), st.builds(lambda v: {"memories": [{"content": 1, "metadata": v}]},
                                          _not_object | _bad_json)),
    st.tuples(st.just("write"), st.builds(lambda k: {"memories": [{"content": 1, k: 1}]},
                                          st.text(min_size=1, max_size=5).filter(
                                              lambda k: k not in {"id", "key", "content", "metadata"}))),
    st.tuples(st.just("write"), st.just({"memories": [{"id": "d", "content": 1}, {"id": "d", "content": 2}]})),
    st.tuples(st.sampled_from(["get", "delete"]), st.just({})),
    st.tuples(st.sampled_from(["get", "delete"]), st.just({"ids": ["a"], "keys": ["b"]})),
    st.tuples(st.sampled_from(["get", "delete"]), st.builds(lambda v: {"ids": v}, _not_list)),
    st.tuples(st.sampled_from(["get", "delete"]), st.builds(lambda v: {"keys": [v]}, _not_str | _bad_text)),
    st.tuples(st.just("get"), st.builds(lambda v: {"ids": ["a"], "strict": v}, st.sampled_from([1, "yes", None]))),
    st.tuples(st.just("delete"), st.just({"ids": ["a"], "strict": True})),
    st.tuples(st.just("search"), st.just({"limit": 5})),
    st.tuples(st.just("search"), st.builds(lambda v: {"query": "q", "limit": v}, _bad_limit)),
    st.tuples(st.just("search"), st.builds(lambda v: {"query": v}, _bad_json)),
    st.tuples(st.just("search"), st.builds(lambda v: {"query": "q", "filter": v}, _not_object)),
    st.tuples(st.just("search"), st.builds(lambda v: {"query": "q", "options": v}, _not_object)),
    st.tuples(st.just("search"), st.builds(lambda v: {"query": "q", "strategy": v}, _present_not_str | st.just(""))),
    st.tuples(st.just("search"), st.builds(lambda k: {"query": "q", "filter": {k: "x"}},
                                           st.text(min_size=1, max_size=6).filter(
                                               lambda k: k not in {"key", "keyPrefix", "key_prefix", "metadata"}))),
    st.tuples(st.just("search"), st.just({"query": "q", "extra": 1})),
)


def _run_sdk(node: str, payload: Any) -> DittoMemoryError | None:
    async def run() -> DittoMemoryError | None:
        with tempfile.TemporaryDirectory() as directory:
            store = create_sqlite_memory_store(Path(directory) / "memory.sqlite")
            memory = create_memory(store=store)
            try:
                await getattr(memory, node)(payload)
            except DittoMemoryError as error:
                return error
            finally:
                await store.close()
        return None

    return asyncio.run(run())


@given(_malformed)
def test_malformed_input_is_invalid_input(case: tuple[str, Any]) -> None:
    """MEM-1: any malformed input to any node is MEMORY_INVALID_INPUT with a message that echoes no value."""
    node, payload = case
    error = _run_sdk(node, payload)
    assert error is not None and error.code == "MEMORY_INVALID_INPUT", (node, payload, error)
    assert "\ud800" not in error.message and "x" * 100 not in error.message


_anything = st.one_of(_json, st.dictionaries(st.sampled_from(["memories", "ids", "keys", "query", "limit", "filter",
                                                               "strategy", "options", "strict", "id", "content"]),
                                             _json, max_size=4))


@given(st.sampled_from(["write", "get", "search", "delete"]), _anything)
def test_arbitrary_input_is_answered_or_invalid(node: str, payload: Any) -> None:
    """MEM-1: whatever a caller sends, the answer is a result or MEMORY_INVALID_INPUT, never a backend error."""
    error = _run_sdk(node, payload)
    assert error is None or error.code == "MEMORY_INVALID_INPUT", (node, payload, error)


@pytest.mark.parametrize(("node", "payload"), [
    ("MEMORY.WRITE", {"memories": [{"content": float("nan")}]}),
    ("MEMORY.WRITE", {"memories": "not a list"}),
    ("MEMORY.GET", {"ids": "abc"}),
    ("MEMORY.DELETE", {}),
    ("MEMORY.SEARCH", {"query": "q", "limit": 0}),
    ("MEMORY.SEARCH", {"query": "q", "filter": {"tenant": "acme"}}),
    ("MEMORY.SEARCH", "just a string"),
])
async def test_runtime_reports_invalid_input_as_a_result(tmp_path: Path, node: str, payload: Any) -> None:
    """MEM-1: through the runtime, malformed input is a NodeResult with MEMORY_INVALID_INPUT (status error)."""
    async with create_sqlite_memory_store(tmp_path / "memory.sqlite") as store:
        runtime = create_ditto(workers=[create_memory_worker(store=store)])
        result = await runtime.invoke(node, payload)
        assert result.status == "error" and result.error is not None
        assert result.error.code == "MEMORY_INVALID_INPUT"
        await runtime.close()


def test_typed_inputs_refuse_lax_limits_and_flags() -> None:
    """MEM-1: typed inputs are as strict as dicts: True, 5.0 and "5" are not limits, 1 is not a strict flag."""
    from pydantic import ValidationError

    from ditto.worker.memory import MemoryGetInput, MemorySearchInput

    for limit in (True, 5.0, "5"):
        with pytest.raises(ValidationError):
            MemorySearchInput(query="q", limit=limit)
    with pytest.raises(ValidationError):
        MemoryGetInput.model_validate({"ids": ["a"], "strict": 1})
    assert MemorySearchInput(query="q", limit=5).limit == 5


@pytest.mark.parametrize("payload", [{"memories": [{"content": 1, "x" * 5000: 1}]}, {"query": "q", "y" * 5000: 1}])
def test_unknown_field_names_are_not_echoed_at_length(payload: dict[str, Any]) -> None:
    """MEM-1: a caller's unknown field is named in the message, shortened: public messages stay small."""
    error = _run_sdk("write" if "memories" in payload else "search", payload)
    assert error is not None and error.code == "MEMORY_INVALID_INPUT"
    assert len(error.message) < 200 and "x" * 100 not in error.message and "y" * 100 not in error.message
