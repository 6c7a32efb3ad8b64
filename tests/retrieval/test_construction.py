"""Building RETRIEVAL objects wrongly raises InvalidArgumentError everywhere (RET-2, RET-3, RET-6)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

import pytest

from ditto.errors import InvalidArgumentError
from ditto.retrieval import (
    RetrievalError,
    RetrievalTargetRegistry,
    create_hybrid_search_provider,
    create_milvus_search_provider,
    create_retrieval,
    create_retrieval_worker,
    create_sql_search_provider,
    create_text_search_provider,
)

from .providers import ListProvider

REGISTRY = RetrievalTargetRegistry({"kb": {"default_strategy": "x", "providers": {"x": ListProvider([])}}})

CASES: list[tuple[Callable[[], Any], str | None]] = [
    (lambda: RetrievalTargetRegistry([]), "RETRIEVAL_INVALID_INPUT"),  # type: ignore[arg-type]
    (lambda: RetrievalTargetRegistry({"kb": {"default_strategy": "x", "providers": {"x": object()}}}),
     "RETRIEVAL_PROVIDER_UNAVAILABLE"),
    (lambda: RetrievalTargetRegistry({"kb": {"default_strategy": "rag", "providers": {"rag": ListProvider([])}}}),
     "RETRIEVAL_STRATEGY_UNSUPPORTED"),
    (lambda: create_retrieval(None), "RETRIEVAL_PROVIDER_UNAVAILABLE"),  # type: ignore[arg-type]
    (lambda: create_retrieval({"providers": REGISTRY, "bogus": 1}), "RETRIEVAL_INVALID_INPUT"),
    (lambda: create_retrieval(REGISTRY, defaults={"searchLimit": 0}), "RETRIEVAL_INVALID_INPUT"),
    (lambda: create_retrieval_worker(REGISTRY, concurrency=0), "RETRIEVAL_INVALID_INPUT"),
    (lambda: create_hybrid_search_provider([]), "RETRIEVAL_INVALID_INPUT"),
    (lambda: create_text_search_provider(options={"k1": -1}), None),
    (lambda: create_sql_search_provider(None, {}), None),
    (lambda: create_sql_search_provider(sqlite3.connect(":memory:"), {"dialect": "sqlite", "table": "a b"}), None),
    (lambda: create_milvus_search_provider(None, {"collection": "docs"}), None),
]


@pytest.mark.parametrize(("build", "code"), CASES)
def test_construction_mistakes_are_invalid_argument_errors(build: Callable[[], Any], code: str | None) -> None:
    """RET-2/RET-3/RET-6: a factory, registry or provider built wrongly raises InvalidArgumentError (a
    ValueError); registry and factory mistakes keep the RETRIEVAL code they always had; the message names the
    problem without pydantic's input echo."""
    with pytest.raises(InvalidArgumentError) as raised:
        build()
    assert isinstance(raised.value, ValueError)
    if code is not None:
        assert isinstance(raised.value, RetrievalError) and raised.value.code == code
    assert "input_value" not in raised.value.message and "https://errors.pydantic.dev" not in raised.value.message
