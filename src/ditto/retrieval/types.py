"""RETRIEVAL data types (seed 000 "公共类型与 API", RET-1).

Inputs accept dicts (camelCase or snake_case) or these models. Validation of
the *public* shape happens in ``validation.py`` so that any malformed input
maps to ``RETRIEVAL_INVALID_INPUT`` rather than a pydantic exception.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from pydantic import Field

from ..config.models import (
    RetrievalEmbeddingConfig,
    RetrievalHybridConfig,
    RetrievalRerankConfig,
    RetrievalWorkerConfig,
)
from ..contracts import DittoModel
from ..signal import CancelSignal

__all__ = [
    "RetrievalCandidate",
    "RetrievalCandidateSource",
    "RetrievalDefaults",
    "RetrievalEmbeddingDefaults",
    "RetrievalExecutionContext",
    "RetrievalHybridDefaults",
    "RetrievalProviderRegistry",
    "RetrievalQuery",
    "RetrievalRerankDefaults",
    "RetrievalSearchInput",
    "RetrievalSearchOutput",
    "RetrievalSearchProvider",
    "RetrievalTarget",
]

DEFAULT_SEARCH_LIMIT = 10
MAX_SEARCH_LIMIT = 10_000


class RetrievalQuery(DittoModel):
    """``content`` is text, a vector or any structured query; the provider checks it."""

    content: Any
    metadata: dict[str, Any] | None = None


class RetrievalTarget(DittoModel):
    """A logical corpus name; never a connection string."""

    name: str = Field(min_length=1)
    type: str | None = Field(default=None, min_length=1)
    namespace: str | None = Field(default=None, min_length=1)
    metadata: dict[str, Any] | None = None


class RetrievalCandidateSource(DittoModel):
    target: str | None = None
    ref: str | None = None


class RetrievalCandidate(DittoModel):
    id: str | None = None
    content: Any
    score: float | None = None
    source: RetrievalCandidateSource | None = None
    metadata: dict[str, Any] | None = None


class RetrievalSearchInput(DittoModel):
    query: RetrievalQuery
    target: RetrievalTarget
    strategy: str | None = Field(default=None, min_length=1)
    filter: dict[str, Any] | None = None
    limit: int | None = Field(default=None, ge=1, le=MAX_SEARCH_LIMIT)
    options: dict[str, Any] | None = None


class RetrievalSearchOutput(DittoModel):
    candidates: tuple[RetrievalCandidate, ...] = ()
    strategy: str | None = None
    target: RetrievalTarget
    metadata: dict[str, Any] | None = None


#: Worker/SDK defaults are the YAML section ``workers.retrieval`` itself: one schema, one set of
#: bounds, whether the numbers come from ``create_retrieval(defaults=...)`` or from the file.
RetrievalDefaults = RetrievalWorkerConfig
RetrievalEmbeddingDefaults = RetrievalEmbeddingConfig
RetrievalHybridDefaults = RetrievalHybridConfig
RetrievalRerankDefaults = RetrievalRerankConfig


class RetrievalExecutionContext(DittoModel):
    """Passed to providers: the caller's signal and the merged defaults."""

    signal: CancelSignal | None = None
    defaults: RetrievalDefaults = Field(default_factory=RetrievalDefaults)


@runtime_checkable
class RetrievalSearchProvider(Protocol):
    async def search(self, input: RetrievalSearchInput,
                     context: RetrievalExecutionContext | None = None) -> RetrievalSearchOutput | Mapping[str, Any]:
        ...


@runtime_checkable
class RetrievalProviderRegistry(Protocol):
    def resolve(self, target: RetrievalTarget, strategy: str | None = None) -> RetrievalSearchProvider: ...
