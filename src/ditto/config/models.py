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
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True,
                              use_attribute_docstrings=True)  # the docstrings are docs/configuration.md


#: ``workers.context.policy`` is CONTEXT's own policy model (one schema for YAML and SDK).
ContextPolicyConfig = ContextPolicy


class ContextCacheConfig(_Section):
    """``workers.context.cache``: the Redis store of cached working sets (the client comes from the application)."""

    ttl_ms: TtlMs | None = None
    """How long a scope lives after its last write, in ms (built-in 3,600,000; reads do not extend it)."""
    key_prefix: StrictStr | None = None
    """Prefix of each scope's Redis key, before the SHA-256 of the scope (built-in `ditto:context:`)."""


class ContextLocalCacheConfig(_Section):
    """``workers.context.localCache``: the in-process store (`create_in_memory_context_store`)."""

    ttl_ms: TtlMs | None = None
    """How long a scope lives after its last write, in ms (built-in 3,600,000)."""
    max_entries: PositiveInt | None = None
    """Scopes kept before the least recently used is evicted (built-in 1,000)."""


class ContextQueueConfig(_Section):
    """``workers.context.queue``: the per-scope operation queue (`create_context_operation_queue`)."""

    max_pending: PositiveInt | None = None
    """Operations waiting or running at once before `QUEUE_FULL` (built-in 1,024)."""


class ContextWorkerConfig(_Section):
    """``workers.context``: the CONTEXT worker's limits, caches and queue."""

    policy: ContextPolicy | None = None
    """The limits every CONTEXT request is held to."""
    cache: ContextCacheConfig | None = None
    """The Redis store of cached working sets."""
    local_cache: ContextLocalCacheConfig | None = None
    """The in-process store."""
    queue: ContextQueueConfig | None = None
    """The per-scope operation queue."""


class RetrievalEmbeddingConfig(_Section):
    """``workers.retrieval.embedding``: how texts are sent to an embedding provider."""

    batch_size: Annotated[StrictInt, Field(ge=1, le=2048)] | None = None
    """Texts per embedding request (built-in 64)."""
    dimensions: PositiveInt | None = None
    """The vector length every embedding must have (unset: not checked)."""


class RetrievalHybridConfig(_Section):
    """``workers.retrieval.hybrid``: reciprocal-rank fusion of several branches."""

    candidate_limit: PositiveInt | None = None
    """Candidates asked of each branch before fusing (built-in 100)."""
    rrf_k: PositiveInt | None = None
    """The `k` in weight / (k + rank) (built-in 60)."""


class RetrievalRerankConfig(_Section):
    """``workers.retrieval.rerank``: the pool a reranker reorders."""

    candidate_limit: PositiveInt | None = None
    """Candidates fetched before reranking, at least the request's limit (built-in 100)."""


class RetrievalWorkerConfig(_Section):
    """``workers.retrieval``: defaults of the RETRIEVAL worker and its providers."""

    search_limit: Annotated[StrictInt, Field(ge=1, le=10_000)] | None = None
    """Candidates returned when a request gives no `limit` (built-in 10)."""
    embedding: RetrievalEmbeddingConfig | None = None
    """Embedding requests."""
    hybrid: RetrievalHybridConfig | None = None
    """Hybrid fusion."""
    rerank: RetrievalRerankConfig | None = None
    """Reranking."""


class MemoryWorkerConfig(_Section):
    """``workers.memory``: the MEMORY worker's default store."""

    path: StrictStr | None = None
    """The SQLite file of the default store (`ditto serve` opens `memory.sqlite` when unset)."""


class InteractionWebConfig(_Section):
    """``workers.interaction.web``: search engine, readable origins and request bounds (no secrets here)."""

    search_engine: Literal["wikipedia", "brave"] | None = None
    """Where web searches go (built-in `wikipedia`; `brave` needs `BRAVE_API_KEY` in the environment)."""
    allowed_origins: tuple[StrictStr, ...] | None = None
    """The `https://host[:port]` origins pages may be read from (unset or empty: none)."""
    wikipedia_url: StrictStr | None = None
    """The MediaWiki site searched (built-in `https://en.wikipedia.org`)."""
    brave_url: StrictStr | None = None
    """The Brave search endpoint (built-in `https://api.search.brave.com/res/v1/web/search`)."""
    timeout_ms: Annotated[StrictInt, Field(ge=1, le=3_600_000)] | None = None
    """Deadline of one web request, in ms (built-in 20,000)."""
    max_response_bytes: PositiveInt | None = None
    """Largest response body read, in bytes (built-in 4 MiB)."""


class InteractionWorkerConfig(_Section):
    """``workers.interaction``: the INTERACTION worker."""

    web: InteractionWebConfig | None = None
    """Web search and reading."""


class WorkersConfig(_Section):
    """``workers``: one section per worker."""

    context: ContextWorkerConfig = Field(default_factory=ContextWorkerConfig)
    """CONTEXT."""
    interaction: InteractionWorkerConfig = Field(default_factory=InteractionWorkerConfig)
    """INTERACTION."""
    memory: MemoryWorkerConfig = Field(default_factory=MemoryWorkerConfig)
    """MEMORY."""
    retrieval: RetrievalWorkerConfig = Field(default_factory=RetrievalWorkerConfig)
    """RETRIEVAL."""


class HttpTransportConfig(_Section):
    """``transport.http``: the HTTP worker server (`ditto serve`, `create_worker_http_app`)."""

    max_body_bytes: PositiveInt | None = None
    """Largest request body accepted, in bytes (built-in 8 MiB; larger is refused with 413)."""


class TransportConfig(_Section):
    """``transport``: how workers are served."""

    http: HttpTransportConfig = Field(default_factory=HttpTransportConfig)
    """The HTTP transport."""
    replica_cooldown_ms: Annotated[StrictInt, Field(ge=1, le=3_600_000)] | None = None
    """How long a remote replica whose connection failed is skipped before a re-probe (default 5,000 ms)."""


class RuntimeConfig(_Section):
    """The root document. ``config.context`` etc. are shortcuts to ``config.workers.*``."""

    workers: WorkersConfig = Field(default_factory=WorkersConfig)
    """The workers' sections."""
    transport: TransportConfig = Field(default_factory=TransportConfig)
    """The transports' sections."""

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
