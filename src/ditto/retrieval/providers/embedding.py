"""Embedding port and checks (RET-6): ``EmbeddingProvider``, ``embed_contents``, ``validate_vector``.

``embed_contents`` sends bounded batches *sequentially* (batch size is payload
size, not parallelism) and checks every answer: the vector count, each
vector's numbers and, when known, its dimension. A wrong vector is an error
(``RETRIEVAL_INVALID_EMBEDDING``), never truncated or padded.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Real
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ...contracts import js_json_dumps, valid_text
from ..config import DEFAULT_BATCH_SIZE, pick_number
from ..errors import INVALID_EMBEDDING, INVALID_INPUT, RetrievalError, check_signal
from ..types import RetrievalExecutionContext

__all__ = ["MAX_BATCH_SIZE", "EmbeddingProvider", "Vector", "embed_contents", "embedding_text", "validate_vector"]

MAX_BATCH_SIZE = 2048

#: A checked embedding: an immutable tuple of finite floats.
Vector = tuple[float, ...]


@runtime_checkable
class EmbeddingProvider(Protocol):
    """Turns contents (usually text) into vectors, one per content, in order.

    ``context`` carries the caller's signal and defaults; providers that do I/O
    must honour ``context.signal``. A provider whose model embeds search queries
    differently (E5's ``"query: "`` side) may also offer ``embed_queries`` with the
    same signature; :func:`embed_contents` calls it for queries when present.
    """

    async def embed(self, contents: Sequence[Any], context: RetrievalExecutionContext | None = None
                    ) -> Sequence[Sequence[float]]: ...


def validate_vector(value: Any, *, index: int | None = None, dimensions: int | None = None) -> Vector:
    """Return ``value`` as a tuple of floats or raise ``RETRIEVAL_INVALID_EMBEDDING``.

    Refuses non-sequences, strings, booleans, non-finite numbers, empty vectors
    and (when ``dimensions`` is given) any other length. ``index`` only names
    the vector in the error message.
    """
    where = "embedding" if index is None else f"embedding {index}"
    if isinstance(value, np.ndarray):
        if value.ndim != 1 or value.dtype.kind not in "fiu":
            raise RetrievalError(INVALID_EMBEDDING, f"{where} must be a one-dimensional numeric vector")
        if not np.isfinite(value).all():
            raise RetrievalError(INVALID_EMBEDDING, f"{where} has a non-finite number")
        vector: Vector = tuple(float(x) for x in value.tolist())
    else:
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
            raise RetrievalError(INVALID_EMBEDDING, f"{where} must be a list of numbers")
        try:
            for item in value:
                if isinstance(item, bool) or not isinstance(item, Real) or not math.isfinite(item):
                    raise RetrievalError(INVALID_EMBEDDING, f"{where} must contain finite numbers only")
            vector = tuple(float(x) for x in value)
        except OverflowError:  # an integer beyond a double (a 400-digit number in a server's answer)
            raise RetrievalError(INVALID_EMBEDDING, f"{where} must contain finite numbers only") from None
    if not vector:
        raise RetrievalError(INVALID_EMBEDDING, f"{where} is empty")
    if dimensions is not None and len(vector) != dimensions:
        raise RetrievalError(INVALID_EMBEDDING, f"{where} has {len(vector)} dimensions, expected {dimensions}")
    return vector


def embedding_text(content: Any, *, index: int | None = None) -> str:
    """The text a content is embedded as: a string itself, anything else its JSON text.

    Refuses (``RETRIEVAL_INVALID_INPUT``) strings that are not valid Unicode (lone
    surrogates cannot be encoded, hashed or tokenised) and values JSON cannot carry.
    """
    where = "content" if index is None else f"content {index}"
    if isinstance(content, str):
        text = content
    else:
        try:
            text = js_json_dumps(content)
        except (TypeError, ValueError, RecursionError):
            raise RetrievalError(INVALID_INPUT, f"{where} is neither text nor a JSON value") from None
    if not valid_text(text):
        raise RetrievalError(INVALID_INPUT, f"{where} is not valid Unicode (it holds a lone surrogate)")
    return text


def check_batch_size(batch_size: int) -> int:
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or not 1 <= batch_size <= MAX_BATCH_SIZE:
        raise RetrievalError(INVALID_INPUT, f"embedding batch_size must be an integer from 1 to {MAX_BATCH_SIZE}")
    return batch_size


def check_dimensions(dimensions: int | None) -> int | None:
    if dimensions is not None and (isinstance(dimensions, bool) or not isinstance(dimensions, int)
                                   or dimensions < 1):
        raise RetrievalError(INVALID_INPUT, "embedding dimensions must be a positive integer")
    return dimensions


def effective_dimensions(dimensions: int | None, context: RetrievalExecutionContext | None) -> int | None:
    """Constructor/explicit value → ``context.defaults.embedding.dimensions`` → unknown."""
    if dimensions is not None:
        return dimensions
    if context is not None and context.defaults.embedding is not None:
        return context.defaults.embedding.dimensions
    return None


async def embed_contents(provider: EmbeddingProvider, contents: Sequence[Any], *, batch_size: int | None = None,
                         dimensions: int | None = None, context: RetrievalExecutionContext | None = None,
                         query: bool = False) -> list[Vector]:
    """Embed ``contents`` in sequential batches and validate every vector.

    ``batch_size``: argument → ``context.defaults.embedding.batch_size`` → 64
    (1–2048). ``dimensions``: argument → ``context.defaults.embedding.dimensions``
    → the first vector's length (all vectors must then agree). The signal in
    ``context`` is checked before every batch. ``query=True``: the contents are
    search queries, sent to the provider's ``embed_queries`` when it has one (models
    such as E5 embed a query differently from the passages it searches), else to
    ``embed`` like any content.
    """
    if isinstance(contents, (str, bytes)) or not isinstance(contents, Sequence):
        raise RetrievalError(INVALID_INPUT, "contents must be a list")
    size = check_batch_size(pick_number(batch_size, context, "embedding", "batch_size", DEFAULT_BATCH_SIZE))
    expected = check_dimensions(effective_dimensions(dimensions, context))
    signal = context.signal if context is not None else None
    embed = getattr(provider, "embed_queries", None) if query else None
    if not callable(embed):
        embed = provider.embed
    vectors: list[Vector] = []
    for start in range(0, len(contents), size):
        check_signal(signal)
        batch = list(contents[start:start + size])
        answer = await embed(batch, context)
        if isinstance(answer, (str, bytes)) or not isinstance(answer, (Sequence, np.ndarray)):
            raise RetrievalError(INVALID_EMBEDDING, "the embedding provider did not return a list of vectors")
        if len(answer) != len(batch):
            raise RetrievalError(INVALID_EMBEDDING,
                                 f"the embedding provider returned {len(answer)} vectors for {len(batch)} contents")
        for offset, raw in enumerate(answer):
            vector = validate_vector(raw, index=start + offset, dimensions=expected)
            if expected is None:
                expected = len(vector)
            vectors.append(vector)
    check_signal(signal)
    return vectors
