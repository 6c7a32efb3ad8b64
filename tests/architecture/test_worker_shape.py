"""One worker shape: every built-in worker has the same four modules and refuses a bad limit the same way."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ditto.errors import InvalidArgumentError
from ditto.retrieval import RetrievalTargetRegistry, create_retrieval_worker
from ditto.retrieval.providers.text import create_text_search_provider
from ditto.runtime.worker import valid_concurrency
from ditto.worker.context import create_context_worker
from ditto.worker.infer import create_infer_worker
from ditto.worker.interaction import create_interaction_worker
from ditto.worker.memory import create_memory_worker, create_sqlite_memory_store

WORKERS = ("ditto.worker.context", "ditto.worker.memory", "ditto.worker.infer", "ditto.worker.interaction",
           "ditto.retrieval")


@pytest.mark.parametrize("package", WORKERS)
def test_every_worker_has_the_four_modules(package: str) -> None:
    """RT-3: types.py, config.py, sdk.py and worker.py in every worker package, plus an ``__all__``."""
    module = importlib.import_module(package)
    folder = Path(module.__file__ or "").parent
    assert {"types.py", "config.py", "sdk.py", "worker.py"} <= {path.name for path in folder.iterdir()}
    assert module.__all__


def _factories(tmp: Path) -> dict[str, Callable[[Any], Any]]:
    registry = RetrievalTargetRegistry({"kb": {"default_strategy": "bm25",
                                               "providers": {"bm25": create_text_search_provider([])}}})
    return {
        "context": lambda limit: create_context_worker(concurrency=limit),
        "memory": lambda limit: create_memory_worker(store=create_sqlite_memory_store(tmp / "m.sqlite"),
                                                     concurrency=limit),
        "retrieval": lambda limit: create_retrieval_worker(registry, concurrency=limit),
        "infer": lambda limit: create_infer_worker(concurrency=limit),
        "interaction": lambda limit: create_interaction_worker(concurrency=limit),
    }


@pytest.mark.parametrize("limit", [0, -1, True, 1.5, "4"])
def test_bad_concurrency_is_an_invalid_argument_everywhere(limit: Any, tmp_path: Path) -> None:
    """RT-3: ``concurrency`` that is not None or a positive int is InvalidArgumentError (a ValueError) in
    every create_*_worker, raised by the factory before anything is built."""
    for name, make in _factories(tmp_path).items():
        with pytest.raises(InvalidArgumentError) as raised:
            make(limit)
        assert isinstance(raised.value, ValueError), name


def test_good_concurrency_reaches_the_definition(tmp_path: Path) -> None:
    """RT-3: a positive limit is the definition's per-replica concurrency in every worker."""
    for name, make in _factories(tmp_path).items():
        assert make(3).concurrency == 3, name
        assert make(None).concurrency is None, name


@given(st.one_of(st.none(), st.booleans(), st.integers(min_value=-10**30, max_value=10**30), st.floats(),
                 st.text(max_size=3)))
def test_valid_concurrency_is_none_or_a_positive_int(value: Any) -> None:
    """RT-3: the one rule — None, or an int ≥ 1 that is not a bool."""
    expected = value is None or (type(value) is int and value >= 1)
    assert valid_concurrency(value) is expected
