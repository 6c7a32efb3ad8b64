"""``create_milvus_search_provider``: vector search over an injected ``pymilvus.MilvusClient`` (RET-6).

The application creates the client (a Milvus server URI, or Milvus Lite with a local
``.../milvus.db`` path), the collection and its index; Ditto only searches. The query is
either a pre-computed vector in ``query.content`` or text embedded by an external
:class:`~ditto.retrieval.providers.embedding.EmbeddingProvider` (checked by
``embed_contents``/``validate_vector``: wrong count, non-finite numbers or a wrong
dimension are ``RETRIEVAL_INVALID_EMBEDDING``).

Filters use the shared filter language (see :mod:`ditto.retrieval.engines.filters`),
restricted to the fields declared in ``filter_fields``, and become a Milvus boolean
expression. Field names are validated identifiers from the options; values are
rendered as literals by :func:`milvus_literal` (numbers via ``repr``, strings JSON-quoted,
strings with characters Milvus cannot escape refused), so request text can never
change the expression's structure. (Milvus Lite does not support expression
templates, which would otherwise be the parameter mechanism.)

The synchronous client runs in ``asyncio.to_thread``; the signal is checked before the
embedding, before the search and after it. Any client exception becomes
``RETRIEVAL_BACKEND_ERROR`` with a fixed message. Scores are higher-is-better: the
similarity for ``COSINE``/``IP``, the negated distance for ``L2``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator

from ...contracts import DittoModel, freeze_json
from ...errors import InvalidArgumentError, describe_validation_error
from .._results import trusted_candidate, trusted_output, trusted_source
from ..config import context_limit
from ..engines.filters import FilterCondition, parse_filter
from ..errors import INVALID_INPUT, RetrievalError
from ..types import (
    RetrievalExecutionContext,
    RetrievalSearchInput,
    RetrievalSearchOutput,
)
from .base import begin_search, check_signal, run_blocking
from .embedding import EmbeddingProvider, Vector, embed_contents, validate_vector

__all__ = ["MilvusSearchOptions", "MilvusSearchProvider", "create_milvus_search_provider", "milvus_filter_expression",
           "milvus_literal"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ESCAPABLE_CONTROLS = frozenset("\n\r\t")


def _check_name(value: str) -> str:
    if not _NAME.fullmatch(value):
        raise ValueError(f"{value!r} is not a valid Milvus field or collection name")
    return value


class MilvusSearchOptions(DittoModel):
    """Which collection and fields to search; every name is validated at construction."""

    collection: str
    vector_field: str = "vector"
    id_field: str = "id"
    content_field: str = "text"
    metadata_fields: tuple[str, ...] = ()
    filter_fields: dict[str, str] = Field(default_factory=dict)
    metric: Literal["COSINE", "IP", "L2"] = "COSINE"
    search_params: dict[str, Any] = Field(default_factory=dict)
    dimensions: int | None = Field(default=None, ge=1)
    batch_size: int | None = Field(default=None, ge=1, le=2048)

    @field_validator("collection", "vector_field", "id_field", "content_field")
    @classmethod
    def _names(cls, value: str) -> str:
        return _check_name(value)

    @field_validator("metadata_fields")
    @classmethod
    def _fields(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(_check_name(name) for name in value)

    @field_validator("filter_fields", mode="before")
    @classmethod
    def _filters(cls, value: Any) -> Any:
        if isinstance(value, (list, tuple)):
            value = {name: name for name in value}
        if isinstance(value, Mapping):
            for key, name in value.items():
                if not isinstance(key, str) or not key:
                    raise ValueError("filter keys must be non-empty strings")
                _check_name(name)
        return value


def milvus_literal(value: Any) -> str:
    """A Milvus expression literal for a filter scalar, or ``RETRIEVAL_INVALID_INPUT``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise RetrievalError(INVALID_INPUT, "filter numbers must be finite")
        return repr(value)
    if isinstance(value, str):
        if any(ord(char) < 0x20 and char not in _ESCAPABLE_CONTROLS for char in value):
            raise RetrievalError(INVALID_INPUT, "filter strings may not contain control characters")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise RetrievalError(INVALID_INPUT, "filter strings must be valid Unicode") from None
        # With the controls above refused, JSON quoting emits only escapes Milvus reads: \" \\ \n \r \t.
        return json.dumps(value, ensure_ascii=False)
    raise RetrievalError(INVALID_INPUT, "filter values must be strings, numbers or booleans")


def _clause(field: str, condition: FilterCondition) -> str:
    op, value = condition.op, condition.value
    if op in ("gt", "gte", "lt", "lte"):
        return f"{field} {({'gt': '>', 'gte': '>=', 'lt': '<', 'lte': '<='})[op]} {milvus_literal(value)}"
    if op == "eq":
        return f"{field} is null" if value is None else f"{field} == {milvus_literal(value)}"
    if op == "ne":
        return f"{field} is not null" if value is None else f"({field} is null or {field} != {milvus_literal(value)})"
    values = [item for item in value if item is not None]
    has_null = len(values) != len(value)
    listed = f"{field} in [{', '.join(milvus_literal(item) for item in values)}]"
    if op == "in":
        return f"({listed} or {field} is null)" if has_null else listed
    if has_null:
        return f"({field} is not null and {field} not in [{', '.join(milvus_literal(v) for v in values)}])"
    return f"({field} is null or {field} not in [{', '.join(milvus_literal(v) for v in values)}])"


def milvus_filter_expression(filter: Mapping[str, Any] | None, fields: Mapping[str, str]) -> str:
    """The Milvus boolean expression for ``filter`` over the declared ``fields`` ('' = none)."""
    clauses = []
    for condition in parse_filter(filter):
        field = fields.get(condition.field)
        if field is None:
            raise RetrievalError(INVALID_INPUT, f"filter field {condition.field!r} is not filterable here")
        clauses.append(f"({_clause(field, condition)})")
    return " and ".join(clauses)


class MilvusSearchProvider:
    """A ``RetrievalSearchProvider`` over an application-owned ``MilvusClient``."""

    def __init__(self, client: Any, options: MilvusSearchOptions, embedding: EmbeddingProvider | None) -> None:
        self._client = client
        self._options = options
        self._embedding = embedding
        outputs = [options.content_field, *options.metadata_fields]
        self._output_fields = list(dict.fromkeys(outputs))
        self._search_params = {"metric_type": options.metric, "params": dict(options.search_params)}

    @property
    def options(self) -> MilvusSearchOptions:
        return self._options

    async def search(self, input: RetrievalSearchInput | Mapping[str, Any],
                     context: RetrievalExecutionContext | None = None) -> RetrievalSearchOutput:
        request, signal = begin_search(input, context)
        expression = milvus_filter_expression(request.filter, self._options.filter_fields) if request.filter else ""
        limit = context_limit(request, context)
        vector = await self._query_vector(request.query.content, context)
        check_signal(signal)
        options = self._options

        def run() -> Any:
            return self._client.search(
                collection_name=options.collection, data=[list(vector)], limit=limit, filter=expression,
                output_fields=self._output_fields, search_params=self._search_params,
                anns_field=options.vector_field)

        hits = await run_blocking(run, signal)
        return self._output(request, hits[0] if len(hits) else [])

    async def _query_vector(self, content: Any, context: RetrievalExecutionContext | None) -> Vector:
        dimensions = self._options.dimensions
        if isinstance(content, str):
            if self._embedding is None:
                raise RetrievalError(INVALID_INPUT, "Text queries need an embedding provider; pass a vector instead")
            [vector] = await embed_contents(self._embedding, [content], batch_size=self._options.batch_size,
                                            dimensions=dimensions, context=context, query=True)
            return vector
        if isinstance(content, Sequence) and not isinstance(content, (bytes, bytearray)):
            return validate_vector(content, dimensions=dimensions)
        raise RetrievalError(INVALID_INPUT, "query.content must be text or a vector of numbers")

    def _output(self, request: RetrievalSearchInput, hits: Sequence[Mapping[str, Any]]) -> RetrievalSearchOutput:
        options = self._options
        target = request.target.name
        negate = options.metric == "L2"
        candidates = []
        for hit in hits:
            entity = hit.get("entity") or {}
            identifier = str(hit.get("id", entity.get(options.id_field)))
            distance = float(hit["distance"])
            metadata = ({name: entity.get(name) for name in options.metadata_fields}
                        if options.metadata_fields else None)
            candidates.append(trusted_candidate(
                identifier, entity.get(options.content_field), -distance if negate else distance,
                trusted_source(target, f"{options.collection}:{identifier}"),
                freeze_json(metadata) if metadata is not None else None))
        return trusted_output(tuple(candidates), request.target, request.strategy)


def create_milvus_search_provider(client: Any, options: MilvusSearchOptions | Mapping[str, Any], *,
                                  embedding: EmbeddingProvider | None = None) -> MilvusSearchProvider:
    """Vector search over ``client`` (a ``pymilvus.MilvusClient``, server or Milvus Lite).

    ``embedding`` embeds text queries; without it queries must be vectors::

        client = pymilvus.MilvusClient("milvus.db")  # Milvus Lite, or a server URI
        provider = create_milvus_search_provider(client, {"collection": "docs", "dimensions": 384},
                                                 embedding=embedder)
    """
    if client is None or not callable(getattr(client, "search", None)):
        raise InvalidArgumentError("create_milvus_search_provider needs the application's pymilvus.MilvusClient")
    try:
        resolved = options if isinstance(options, MilvusSearchOptions) else MilvusSearchOptions.model_validate(
            options)
    except ValidationError as error:
        raise InvalidArgumentError(f"invalid Milvus search options: {describe_validation_error(error, root='options')}"
                                   ) from None
    return MilvusSearchProvider(client, resolved, embedding)
