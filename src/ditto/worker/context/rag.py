"""``create_rag_strategy`` (CX-14): optional embed → retrieve → optional rank, first item per id.

It is a SELECT strategy (``{kind: "rag"}``), not a node. Candidates' ``score``
and ``metadata`` are *not* merged into items: an adapter that wants the
default ranking to see a score writes it as ``metadata.relevance`` itself.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ...contracts import ContextItem
from .config import call_port, port_method
from .inputs import read_fields, read_json
from .items import coerce_item
from .select import parse_select
from .types import (
    ContextArgumentError,
    ContextCallOptions,
    ContextError,
    ContextSelectRequest,
    RagCandidate,
    RagStageInput,
)

__all__ = ["RagStrategyPipeline", "create_rag_strategy"]


def _candidates(raw: Any, stage: str) -> tuple[RagCandidate, ...]:
    if isinstance(raw, (str, bytes, Mapping)) or not isinstance(raw, Sequence):
        raise ContextError("INVALID_PROVIDER_OUTPUT", f"RAG {stage} must return an array of candidates")
    out: list[RagCandidate] = []
    for index, value in enumerate(raw):
        where = f"RAG {stage} output[{index}]"
        if isinstance(value, RagCandidate):
            fields: dict[str, Any] = {"item": value.item, "score": value.score, "metadata": value.metadata}
        else:
            fields = read_fields(value, ("item", "score", "metadata"), where, "INVALID_PROVIDER_OUTPUT")
        if "item" not in fields or fields["item"] is None:
            raise ContextError("INVALID_PROVIDER_OUTPUT", f"{where} has no item")
        score = fields.get("score")
        if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float))
                                  or not math.isfinite(score)):
            raise ContextError("INVALID_PROVIDER_OUTPUT", f"{where}.score must be a finite number")
        metadata = fields.get("metadata")
        if metadata is not None and not isinstance(metadata, Mapping):
            raise ContextError("INVALID_PROVIDER_OUTPUT", f"{where}.metadata must be an object")
        out.append(RagCandidate(
            coerce_item(fields["item"], f"{where}.item", "INVALID_PROVIDER_OUTPUT"),
            None if score is None else float(score),
            None if metadata is None else read_json(metadata, f"{where}.metadata", "INVALID_PROVIDER_OUTPUT"),
        ))
    return tuple(out)


class RagStrategyPipeline:
    """The object ``create_rag_strategy`` returns; pass it as ``services.rag_strategy``."""

    def __init__(self, retrieve: Any, embed: Any = None, rank: Any = None) -> None:
        self._retrieve = port_method(retrieve, "retrieve")
        self._embed = None if embed is None else port_method(embed, "embed")
        self._rank = None if rank is None else port_method(rank, "rank")

    async def select(self, input: ContextSelectRequest | Any,
                     options: ContextCallOptions | None = None) -> list[ContextItem]:
        request = parse_select(input)
        assert request.context is not None  # set by parse_select
        call_options = options or ContextCallOptions()
        stage = RagStageInput(request.query, request.context.items, request.strategy.corpus,
                              request.strategy.options)
        if self._embed is not None:
            call_options.raise_if_aborted()
            embedding = await call_port(self._embed, (stage,), call_options)
            stage = RagStageInput(stage.query, stage.items, stage.corpus, stage.options, embedding)
        call_options.raise_if_aborted()
        candidates = _candidates(await call_port(self._retrieve, (stage,), call_options), "retrieve")
        if self._rank is not None:
            call_options.raise_if_aborted()
            ranked_input = RagStageInput(stage.query, stage.items, stage.corpus, stage.options, stage.embedding,
                                         candidates)
            candidates = _candidates(await call_port(self._rank, (ranked_input,), call_options), "rank")
        seen: set[str] = set()
        items: list[ContextItem] = []
        for candidate in candidates:
            if candidate.item.id not in seen:
                seen.add(candidate.item.id)
                items.append(candidate.item)
        return items


def _stage(value: Any, method: str, name: str) -> None:
    if value is None:
        return
    if callable(value) or callable(getattr(value, method, None)) or (
            isinstance(value, Mapping) and callable(value.get(method))):
        return
    raise ContextArgumentError("INVALID_INPUT", f"{name} must provide {method}()")


def create_rag_strategy(embed: Any = None, retrieve: Any = None, rank: Any = None) -> RagStrategyPipeline:
    """Build a RAG selection strategy from stage objects (or plain async functions).

    Optional ``embed`` → required ``retrieve`` → optional ``rank``, then the first
    item per id; pass the result as ``services.rag_strategy``::

        async def retrieve(stage: RagStageInput) -> list[dict[str, Any]]:
            return [{"item": {"id": hit.id, "content": hit.text, "metadata": {"relevance": hit.score}}}
                    for hit in await my_index.search(stage.query, limit=20)]

        context = create_context(services={"rag_strategy": create_rag_strategy(retrieve=retrieve)})
        selection = await context.select({"context": working, "purpose": "infer", "query": "API",
                                          "strategy": {"kind": "rag"}, "limit": 8, "maxTokens": 3000})
    """
    if retrieve is None:
        raise ContextArgumentError("INVALID_INPUT", "create_rag_strategy needs retrieve")
    _stage(retrieve, "retrieve", "retrieve")
    _stage(embed, "embed", "embed")
    _stage(rank, "rank", "rank")
    return RagStrategyPipeline(retrieve, embed, rank)
