"""``builtin:extractive``: the default model, offline and deterministic (INF-3, WF-11).

It reads the chat the way :mod:`ditto.worker.infer.tasks` poses it: when the last
user message is a ``choose_queries``, ``choose_excerpts`` or ``answer_question`` task
it answers that task's JSON (:mod:`ditto.worker.infer.extractive` makes the choices); otherwise it
answers a plain chat with the sentences of earlier messages that best match the
question. Answers are the JSON text a hosted model would write and go through
the SDK's schema validation like any other. No network, no key, no randomness:
the same chat always gets the same answer.

Optional embedding scores: ``ExtractiveProvider(embed=fn)`` where ``fn`` is an
async function from a list of texts to their vectors (e.g. RETRIEVAL's HTTP
embedding provider's ``embed``); the cosine of each sentence with the question
is added to its lexical score with weight ``embedding_weight``, opens the
relevance gate and the follow-up share to close sentences, and weighs in the
choice of the answer's sentences (English text only; see
:func:`~ditto.worker.infer.extractive.choose_excerpts`).

Model options (``ModelConfig.options``): ``passageWeight``, ``rankWeight`` and
``embeddingWeight`` (finite numbers in [0, 10]) override the constructor's weights
for one call; ``relevanceThreshold`` (a number in [0, 1]) the relevance gate under
which a passage is not evidence (0 quotes any passage that shares a term).
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Final

from ....contracts import js_json_dumps
from ....errors import InvalidArgumentError
from ....signal import CancelSignal
from ..extractive import (
    PASSAGE_WEIGHT,
    RANK_WEIGHT,
    RELEVANCE_THRESHOLD,
    answer_chat,
    answer_question,
    answer_sentences,
    choose_excerpts,
    choose_queries,
    semantic_sentences,
)
from ..tasks import AnswerTask, ExcerptTask, QueryTask, parse_task
from ..types import BUILTIN_PROVIDER, INVALID_INPUT, InferError, InferUsage, ProviderReply, ProviderRequest
from ..usage import estimate_tokens

__all__ = ["BUILTIN_MODEL", "EmbedFunction", "ExtractiveProvider", "create_extractive_provider"]

_log = logging.getLogger("ditto.worker.infer")

#: The model name the built-in provider reports.
BUILTIN_MODEL: Final = "extractive"
#: Chats larger than this many characters are scored in a worker thread, not on the event loop.
_THREAD_CHARS: Final = 200_000

EmbedFunction = Callable[[list[str]], Awaitable[Sequence[Sequence[float]]]]


def _weight(value: Any, name: str, top: float = 10) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0 <= value <= top:
        raise InferError(INVALID_INPUT, f"options.{name} must be a number from 0 to {top:g}")
    return float(value)


class ExtractiveProvider:
    """The built-in model. Stateless apart from its weights and the optional ``embed`` hook."""

    name: Final = BUILTIN_PROVIDER

    def __init__(self, *, embed: EmbedFunction | None = None, embedding_weight: float = 0.5,
                 passage_weight: float = PASSAGE_WEIGHT, rank_weight: float = RANK_WEIGHT) -> None:
        if embed is not None and not callable(embed):
            raise InvalidArgumentError("embed must be an async function from texts to vectors")
        for value, name in ((embedding_weight, "embedding_weight"), (passage_weight, "passage_weight"),
                            (rank_weight, "rank_weight")):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                    or not 0 <= value <= 10:
                raise InvalidArgumentError(f"{name} must be a number from 0 to 10")
        self._embed = embed
        self._embed_failed = False
        self._embedding_weight = float(embedding_weight)
        self._passage_weight = float(passage_weight)
        self._rank_weight = float(rank_weight)

    async def sample(self, request: ProviderRequest, signal: CancelSignal | None, /) -> ProviderReply:
        """Answer the chat in ``request`` (see the module docstring)."""
        options: Mapping[str, Any] = request.options
        embedding_weight = _weight(options.get("embeddingWeight", self._embedding_weight), "embeddingWeight")
        weights = (_weight(options.get("passageWeight", self._passage_weight), "passageWeight"),
                   _weight(options.get("rankWeight", self._rank_weight), "rankWeight"), embedding_weight,
                   _weight(options.get("relevanceThreshold", RELEVANCE_THRESHOLD), "relevanceThreshold", 1))
        messages = [(message["role"], message["content"]) for message in request.messages]
        task = parse_task(request.messages)
        similarities = None
        if isinstance(task, ExcerptTask) and self._embed is not None and embedding_weight > 0:
            similarities = await self._read_closely(task.question, semantic_sentences(task))
        elif isinstance(task, AnswerTask) and self._embed is not None:
            similarities = await self._read_closely(task.question, [text for _, text in answer_sentences(task)])
        size = sum(len(content) for _, content in messages)

        def answer() -> tuple[str, str]:
            return _answer(task, messages, request, weights, similarities)

        content, finish = await asyncio.to_thread(answer) if size > _THREAD_CHARS else answer()
        usage = InferUsage(input_tokens=estimate_tokens(list(map(dict, request.messages))),
                           output_tokens=estimate_tokens(content))
        return ProviderReply(content=content, model=request.model or BUILTIN_MODEL, finish_reason=finish,
                             usage=usage)

    async def _read_closely(self, question: str, texts: Sequence[str | None]) -> list[float] | None:
        """The cosines, or ``None`` when the ``embed`` hook fails: embeddings refine the reading, the words
        suffice for it, so the task goes on by words alone and the failure is logged (with its traceback,
        once per provider: every later task would log the same)."""
        try:
            return await self._similarities(question, texts)
        except Exception:
            if not self._embed_failed:
                self._embed_failed = True
                _log.exception("the built-in model's embedding hook failed; reading by words alone")
            return None

    async def _similarities(self, question: str, texts: Sequence[str | None]) -> list[float]:
        """Each text's cosine with the question, by the ``embed`` hook (0 for ``None``, which is not embedded)."""
        assert self._embed is not None
        wanted = [text for text in texts if text is not None]
        if not wanted:
            return [0.0] * len(texts)
        vectors = await self._embed([question, *wanted])
        if len(vectors) != len(wanted) + 1:
            raise InferError("INFER_PROVIDER_UNAVAILABLE", "The embedding function returned a wrong number of vectors")
        cosines = iter([_cosine(vectors[0], vector) for vector in vectors[1:]])
        return [0.0 if text is None else next(cosines) for text in texts]

    def __repr__(self) -> str:
        return f"<ExtractiveProvider embed={'yes' if self._embed else 'no'}>"


def _cosine(left: Sequence[float], right: Sequence[float]) -> float:
    dot = sum(a * b for a, b in zip(left, right, strict=False))
    norm = math.sqrt(sum(a * a for a in left)) * math.sqrt(sum(b * b for b in right))
    value = dot / norm if norm > 0 else 0.0
    return value if math.isfinite(value) else 0.0


def _fits(content: str, max_tokens: int | None) -> bool:
    return max_tokens is None or estimate_tokens(content) <= max_tokens


def _answer(task: QueryTask | ExcerptTask | AnswerTask | None, messages: list[tuple[str, str]],
            request: ProviderRequest, weights: tuple[float, float, float, float], similarities: list[float] | None
            ) -> tuple[str, str]:
    """The answer text and its finish reason; a ``maxTokens`` budget drops trailing choices first."""
    limit = request.max_tokens
    if isinstance(task, ExcerptTask):
        passage_weight, rank_weight, embedding_weight, threshold = weights
        excerpts = choose_excerpts(task, passage_weight=passage_weight, rank_weight=rank_weight,
                                   similarities=similarities, embedding_weight=embedding_weight,
                                   relevance_threshold=threshold)
        items = [excerpt.to_json_dict() for excerpt in excerpts]
        while items and not _fits(js_json_dumps({"excerpts": items}), limit):
            items.pop()
        content = js_json_dumps({"excerpts": items})
    elif isinstance(task, AnswerTask):
        sentences = [sentence.to_json_dict() for sentence in answer_question(task, similarities=similarities)]
        while len(sentences) > 1 and not _fits(js_json_dumps({"sentences": sentences}), limit):
            sentences.pop()
        content = js_json_dumps({"sentences": sentences})
    elif isinstance(task, QueryTask):
        queries = choose_queries(task)
        while len(queries) > 1 and not _fits(js_json_dumps({"queries": queries}), limit):
            queries.pop()
        content = js_json_dumps({"queries": queries})
    else:
        text = answer_chat(messages)
        wants_json = request.response_format is not None and request.response_format.get("type") in (
            "json_object", "json_schema")
        content = js_json_dumps({"answer": text}) if wants_json else text
    if _fits(content, limit):
        return content, "stop"
    assert limit is not None
    return content[:limit * 4].encode("utf-8")[:limit * 4].decode("utf-8", "ignore"), "length"


def create_extractive_provider(*, embed: EmbedFunction | None = None, embedding_weight: float = 0.5,
                               passage_weight: float = PASSAGE_WEIGHT, rank_weight: float = RANK_WEIGHT
                               ) -> ExtractiveProvider:
    """The built-in model, optionally with an embedding function.

    Example::

        provider = create_extractive_provider()
        client = create_infer_client({"builtin:extractive": provider})
    """
    return ExtractiveProvider(embed=embed, embedding_weight=embedding_weight, passage_weight=passage_weight,
                              rank_weight=rank_weight)
