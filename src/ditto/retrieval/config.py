"""RETRIEVAL's options: the factories' options object, and the default layering
(seed 000 "Provider 参数决定候选池与计算成本").

* ``create_retrieval`` / ``create_retrieval_worker`` take the seed's options
  object ``{providers, defaults?, concurrency?}`` or the same as keywords;
  :func:`retrieval_options` reads either into one :class:`RetrievalOptions`.

* Final ``limit``: request → worker/SDK defaults → runtime YAML → 10.
* Provider numbers (``embedding.batch_size``, ``hybrid.candidate_limit``,
  ``hybrid.rrf_k``, ``rerank.candidate_limit``): constructor option → the
  merged defaults in ``RetrievalExecutionContext.defaults`` (worker defaults,
  then YAML) → built-in value.

The merge is done once per worker/SDK (not per call), so the hot path reads a
frozen model and never touches a file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, TypeAlias, TypeVar

from pydantic import BaseModel, ValidationError

from ..errors import describe_validation_error
from ..runtime.worker import valid_concurrency
from .errors import INVALID_INPUT, PROVIDER_UNAVAILABLE, RetrievalArgumentError, RetrievalError
from .types import (
    DEFAULT_SEARCH_LIMIT,
    RetrievalDefaults,
    RetrievalEmbeddingDefaults,
    RetrievalExecutionContext,
    RetrievalHybridDefaults,
    RetrievalProviderRegistry,
    RetrievalRerankDefaults,
    RetrievalSearchInput,
)

if TYPE_CHECKING:
    from ..config import RuntimeConfig

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_CANDIDATE_LIMIT",
    "DEFAULT_RRF_K",
    "DEFAULT_SEARCH_LIMIT",
    "DefaultsLayer",
    "RetrievalOptions",
    "coerce_defaults",
    "context_limit",
    "merge_defaults",
    "pick_number",
    "resolve_limit",
    "retrieval_options",
]

DEFAULT_BATCH_SIZE = 64
DEFAULT_CANDIDATE_LIMIT = 100
DEFAULT_RRF_K = 60

_SECTIONS: dict[str, type[BaseModel]] = {
    "embedding": RetrievalEmbeddingDefaults,
    "hybrid": RetrievalHybridDefaults,
    "rerank": RetrievalRerankDefaults,
}

T = TypeVar("T")

#: One layer of defaults: the model, ``config.retrieval``, a whole ``RuntimeConfig`` or a mapping.
DefaultsLayer: TypeAlias = "RetrievalDefaults | RuntimeConfig | Mapping[str, Any] | None"

_EMPTY = RetrievalDefaults()


def coerce_defaults(value: DefaultsLayer) -> RetrievalDefaults:
    """Accept ``None``, :class:`RetrievalDefaults` (which *is* ``config.retrieval``'s
    ``RetrievalWorkerConfig``), a mapping (camelCase or snake_case) or a whole ``RuntimeConfig``."""
    if value is None:
        return _EMPTY
    if isinstance(value, RetrievalDefaults):
        return value
    raw: object = value
    retrieval_section = getattr(raw, "retrieval", None)
    if isinstance(raw, BaseModel) and isinstance(retrieval_section, BaseModel):  # RuntimeConfig
        raw = retrieval_section
        if isinstance(raw, RetrievalDefaults):
            return raw
    if isinstance(raw, BaseModel):
        raw = raw.model_dump(exclude_none=True)
    if not isinstance(raw, Mapping):
        raise RetrievalError(INVALID_INPUT, "retrieval defaults must be an object")
    try:
        return RetrievalDefaults.model_validate(dict(raw))
    except ValidationError as error:
        raise RetrievalError(INVALID_INPUT, "retrieval defaults are invalid: "
                             + describe_validation_error(error, root="defaults")) from None


def merge_defaults(*layers: DefaultsLayer) -> RetrievalDefaults:
    """Merge layers field by field; the first layer that sets a value wins."""
    models = [coerce_defaults(layer) for layer in layers if layer is not None]
    if not models:
        return _EMPTY
    if len(models) == 1:
        return models[0]
    merged: dict[str, Any] = {}
    search_limit = next((m.search_limit for m in models if m.search_limit is not None), None)
    if search_limit is not None:
        merged["search_limit"] = search_limit
    for name, section_type in _SECTIONS.items():
        section: dict[str, Any] = {}
        for field in section_type.model_fields:
            for model in models:
                part = getattr(model, name)
                if part is not None and getattr(part, field) is not None:
                    section[field] = getattr(part, field)
                    break
        if section:
            merged[name] = section_type(**section)
    return RetrievalDefaults(**merged)


def resolve_limit(request_limit: int | None, defaults: RetrievalDefaults | None) -> int:
    """Request → merged defaults (worker, then YAML) → 10."""
    if request_limit is not None:
        return request_limit
    if defaults is not None and defaults.search_limit is not None:
        return defaults.search_limit
    return DEFAULT_SEARCH_LIMIT


def context_limit(input: RetrievalSearchInput, context: RetrievalExecutionContext | None) -> int:
    """A provider's final limit. The SDK/worker always sets ``input.limit``; the fallback keeps a
    provider that is called directly on the same precedence (context defaults → 10)."""
    return resolve_limit(input.limit, context.defaults if context is not None else None)


def pick_number(constructor: int | None, context: RetrievalExecutionContext | None, section: str, field: str,
                builtin: int) -> int:
    """Constructor option → ``context.defaults.<section>.<field>`` → built-in."""
    if constructor is not None:
        return constructor
    if context is not None:
        part = getattr(context.defaults, section, None)
        value = getattr(part, field, None) if part is not None else None
        if isinstance(value, int):
            return value
    return builtin


@dataclass(frozen=True, slots=True)
class RetrievalOptions:
    """The factories' options, read once: ``providers`` has a ``resolve``; ``defaults`` is merged."""

    providers: RetrievalProviderRegistry
    defaults: RetrievalDefaults
    concurrency: int | None = None
    config: RetrievalDefaults | None = None


#: A mapping of target names to bare providers (``{"docs": provider}``) is the most common first try.
_BARE_PROVIDERS: Final = (
    "{factory} takes a registry, not a mapping of target names ({names}) to providers: wrap one provider with "
    "RetrievalTargetRegistry.single(provider, target=\"docs\", strategy=\"bm25\"), or several with "
    "RetrievalTargetRegistry({{\"docs\": {{\"default_strategy\": \"bm25\", \"providers\": {{\"bm25\": provider}}}}}})"
)


def retrieval_options(providers: RetrievalProviderRegistry | Mapping[str, Any] | None, *, factory: str,
                      allowed: frozenset[str], defaults: DefaultsLayer = None, concurrency: int | None = None,
                      config: DefaultsLayer = None) -> RetrievalOptions:
    """Read the seed's options object (``providers`` is then a mapping of ``allowed`` names) or the
    keyword form. Keywords are the fallback for names the object omits. Mistakes raise
    :class:`~ditto.retrieval.errors.RetrievalArgumentError` (an ``InvalidArgumentError``)."""
    if isinstance(providers, Mapping):
        unknown = set(providers) - allowed
        if unknown:
            names = ", ".join(sorted(repr(name)[:40] for name in unknown))
            if any(callable(getattr(providers[name], "search", None)) for name in unknown):
                raise RetrievalArgumentError(INVALID_INPUT, _BARE_PROVIDERS.format(factory=factory, names=names))
            raise RetrievalArgumentError(INVALID_INPUT, f"unknown retrieval options: {names}; {factory} takes a "
                                         f"registry, or an options mapping of {', '.join(sorted(allowed))}")
        defaults = providers.get("defaults", defaults)
        concurrency = providers.get("concurrency", concurrency)
        config = providers.get("config", config)
        providers = providers.get("providers")
    if providers is None or not callable(getattr(providers, "resolve", None)):
        raise RetrievalArgumentError(PROVIDER_UNAVAILABLE, f"{factory} needs providers with a resolve method")
    if not valid_concurrency(concurrency):
        raise RetrievalArgumentError(INVALID_INPUT, "concurrency must be a positive integer or None")
    try:
        merged = coerce_defaults(defaults)
        pinned = None if config is None else coerce_defaults(config)
    except RetrievalError as error:
        raise RetrievalArgumentError(error.code, error.message) from None
    return RetrievalOptions(providers, merged, concurrency, pinned)
