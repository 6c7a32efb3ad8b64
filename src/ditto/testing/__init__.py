"""Contract test suites a provider or store author runs in pytest (``pip install pytest`` is enough).

Subclass the contract in a test module, name the subclass ``Test…`` so pytest collects it, and fill in
the hooks the contract's docstring lists::

    from contextlib import asynccontextmanager
    from ditto.testing import RetrievalProviderContract

    class TestMyProvider(RetrievalProviderContract):
        refused_filter = {"colour": "red"}      # or honoured_filter = {"year": 2024}

        @asynccontextmanager
        async def provider(self):
            yield MyProvider(documents=self.documents)

        @asynccontextmanager
        async def failing_provider(self, secret):
            yield MyProvider(documents=self.documents, url=f"http://{secret}.invalid")

``MemoryStoreContract`` is the same for a MEMORY store (hooks ``store()`` and ``break_writes_of``); the
SQLite and PostgreSQL stores both run it, so a store of your own is held to exactly what they promise.
The test methods are plain functions that run their own event loop, so no pytest plugin is needed.
Importing this package imports nothing optional: each contract loads its worker when first named.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .memory import MemoryStoreContract
    from .research import ResearchSourceContract
    from .retrieval import RetrievalProviderContract

__all__ = ["MemoryStoreContract", "ResearchSourceContract", "RetrievalProviderContract"]

_LAZY = {"MemoryStoreContract": ".memory", "ResearchSourceContract": ".research",
         "RetrievalProviderContract": ".retrieval"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ditto.testing' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
