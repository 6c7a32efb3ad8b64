"""The typed runtime configuration (root YAML ``workers.*``, ``transport.*``).

Keys accept the seed's camelCase (``ttlMs``) and Python's snake_case
(``ttl_ms``). Unset values stay ``None`` so the documented precedence
(constructor → worker defaults → YAML → built-in) can tell "not configured"
from "configured to the default".
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr
from pydantic.alias_generators import to_camel

from ..contracts.context import ContextPolicy
from ..contracts.types import PositiveInt, TtlMs

__all__ = [
    "ContextCacheConfig",
    "ContextLocalCacheConfig",
    "ContextPolicyConfig",
    "ContextQueueConfig",
    "ContextWorkerConfig",
    "HttpTransportConfig",
    "InteractionWebConfig",
    "InteractionWorkerConfig",
    "MemoryWorkerConfig",
    "RetrievalEmbeddingConfig",
    "RetrievalHybridConfig",
    "RetrievalRerankConfig",
    "RetrievalWorkerConfig",
    "RuntimeConfig",
    "TransportConfig",
    "WorkersConfig",
]



class _Section(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True)


#: ``workers.context.policy`` is CONTEXT's own policy model (one schema for YAML and SDK).
ContextPolicyConfig = ContextPolicy


class ContextCacheConfig(_Section):
    ttl_ms: TtlMs | None = None
    key_prefix: StrictStr | None = None


class ContextLocalCacheConfig(_Section):
    ttl_ms: TtlMs | None = None
    max_entries: PositiveInt | None = None


class ContextQueueConfig(_Section):
    max_pending: PositiveInt | None = None


class ContextWorkerConfig(_Section):
    policy: ContextPolicy | None = None
    cache: ContextCacheConfig | None = None
    local_cache: ContextLocalCacheConfig | None = None
    queue: ContextQueueConfig | None = None


class RetrievalEmbeddingConfig(_Section):
    batch_size: Annotated[StrictInt, Field(ge=1, le=2048)] | None = None
    dimensions: PositiveInt | None = None


#: A candidate pool is a search limit sent on to a branch: at most the largest search limit.
CandidateLimit = Annotated[StrictInt, Field(ge=1, le=10_000)]


class RetrievalHybridConfig(_Section):
    candidate_limit: CandidateLimit | None = None
    rrf_k: PositiveInt | None = None


class RetrievalRerankConfig(_Section):
    candidate_limit: CandidateLimit | None = None


class RetrievalWorkerConfig(_Section):
    search_limit: Annotated[StrictInt, Field(ge=1, le=10_000)] | None = None
    embedding: RetrievalEmbeddingConfig | None = None
    hybrid: RetrievalHybridConfig | None = None
    rerank: RetrievalRerankConfig | None = None


class MemoryWorkerConfig(_Section):
    path: StrictStr | None = None


class InteractionWebConfig(_Section):
    """``workers.interaction.web``: search engine, readable origins and request bounds (no secrets here)."""

    search_engine: Literal["wikipedia", "brave"] | None = None
    allowed_origins: tuple[StrictStr, ...] | None = None
    wikipedia_url: StrictStr | None = None
    brave_url: StrictStr | None = None
    timeout_ms: Annotated[StrictInt, Field(ge=1, le=3_600_000)] | None = None
    max_response_bytes: PositiveInt | None = None


class InteractionWorkerConfig(_Section):
    web: InteractionWebConfig | None = None


class WorkersConfig(_Section):
    context: ContextWorkerConfig = Field(default_factory=ContextWorkerConfig)
    interaction: InteractionWorkerConfig = Field(default_factory=InteractionWorkerConfig)
    memory: MemoryWorkerConfig = Field(default_factory=MemoryWorkerConfig)
    retrieval: RetrievalWorkerConfig = Field(default_factory=RetrievalWorkerConfig)


class HttpTransportConfig(_Section):
    max_body_bytes: PositiveInt | None = None


class TransportConfig(_Section):
    http: HttpTransportConfig = Field(default_factory=HttpTransportConfig)


class RuntimeConfig(_Section):
    """The root document. ``config.context`` etc. are shortcuts to ``config.workers.*``."""

    workers: WorkersConfig = Field(default_factory=WorkersConfig)
    transport: TransportConfig = Field(default_factory=TransportConfig)

    @property
    def context(self) -> ContextWorkerConfig:
        return self.workers.context

    @property
    def interaction(self) -> InteractionWorkerConfig:
        return self.workers.interaction

    @property
    def memory(self) -> MemoryWorkerConfig:
        return self.workers.memory

    @property
    def retrieval(self) -> RetrievalWorkerConfig:
        return self.workers.retrieval
