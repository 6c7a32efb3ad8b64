"""The structured tasks the research workflow asks a model, as data both sides agree on.

A task travels as an ordinary chat: a system message that tells a real model
what to do, and a user message whose content is the task as a JSON object
(``{"task": "choose_queries", ...}``). The answer must satisfy a JSON Schema
sent as the OpenAI-style ``response_format``. A hosted model reads the
instructions; the built-in ``builtin:extractive`` model parses the JSON task
and answers the same shape from lexical scores. Either way the answer goes
through the same schema validation, and the workflow then checks what a
schema cannot (vocabulary membership, verbatim quotes, known source ids).

Two tasks:

``choose_queries``
    pick ``minQueries``–``maxQueries`` distinct search queries for ``question``;
    when ``vocabulary`` is given every query must be one of its entries verbatim
    (rewrite: exactly 1; expand: 2–3). Answer ``{"queries": [str, ...]}``.
``choose_excerpts``
    pick at most ``maxExcerpts`` verbatim quotes (each ≤ ``maxQuoteChars``
    characters, at most ``maxPerSource`` per source) from ``passages`` that
    answer ``question``; ``[]`` when none does. Answer
    ``{"excerpts": [{"sourceId": str, "quote": str}, ...]}``.

Example::

    task = ExcerptTask(question="How long are backups kept?",
                       passages=[ExcerptPassage(source_id="doc-1", text="Backups are kept for 30 days.")],
                       max_excerpts=2)
    messages = task_messages(task)
    answer_format = response_format(task)
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Final, Literal

from pydantic import Field, ValidationError

from ...contracts import DittoModel

__all__ = [
    "CHOOSE_EXCERPTS",
    "CHOOSE_QUERIES",
    "EXCERPT_CHOICE_SCHEMA",
    "MAX_QUOTE_CHARS",
    "QUERY_CHOICE_SCHEMA",
    "Excerpt",
    "ExcerptChoice",
    "ExcerptPassage",
    "ExcerptTask",
    "QueryChoice",
    "QueryTask",
    "ResearchTask",
    "parse_task",
    "response_format",
    "task_messages",
]

CHOOSE_QUERIES: Final = "choose_queries"
CHOOSE_EXCERPTS: Final = "choose_excerpts"
#: The longest quote a brief may carry (seed 004: ≤ 1000 characters per passage).
MAX_QUOTE_CHARS: Final = 1000

_Count = Annotated[int, Field(ge=0, le=100)]
_Text = Annotated[str, Field(min_length=1, max_length=100_000)]


class QueryTask(DittoModel):
    """Choose search queries for a question, optionally from a controlled vocabulary."""

    task: Literal["choose_queries"] = CHOOSE_QUERIES
    question: _Text
    vocabulary: tuple[Annotated[str, Field(min_length=1, max_length=1000)], ...] | None = None
    min_queries: Annotated[int, Field(ge=1, le=16)] = 1
    max_queries: Annotated[int, Field(ge=1, le=16)] = 1


class ExcerptPassage(DittoModel):
    """One passage the model may quote, under the source id the workflow gave it."""

    source_id: Annotated[str, Field(min_length=1, max_length=512)]
    text: _Text


class ExcerptTask(DittoModel):
    """Choose verbatim excerpts that answer a question from the given passages."""

    task: Literal["choose_excerpts"] = CHOOSE_EXCERPTS
    question: _Text
    passages: tuple[ExcerptPassage, ...]
    max_excerpts: _Count = 4
    max_quote_chars: Annotated[int, Field(ge=1, le=MAX_QUOTE_CHARS)] = MAX_QUOTE_CHARS
    max_per_source: _Count = 2


ResearchTask = QueryTask | ExcerptTask


class QueryChoice(DittoModel):
    """The answer to a :class:`QueryTask`."""

    queries: tuple[str, ...]


class Excerpt(DittoModel):
    source_id: str
    quote: str


class ExcerptChoice(DittoModel):
    """The answer to an :class:`ExcerptTask`."""

    excerpts: tuple[Excerpt, ...]


#: JSON Schema of a :class:`QueryChoice` answer (vocabulary membership is checked by the workflow).
QUERY_CHOICE_SCHEMA: Final[Mapping[str, Any]] = {
    "type": "object",
    "properties": {
        "queries": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 1000},
                    "minItems": 1, "maxItems": 16},
    },
    "required": ["queries"],
    "additionalProperties": False,
}

#: JSON Schema of an :class:`ExcerptChoice` answer (verbatim quotes are checked by the workflow).
EXCERPT_CHOICE_SCHEMA: Final[Mapping[str, Any]] = {
    "type": "object",
    "properties": {
        "excerpts": {
            "type": "array",
            "maxItems": 100,
            "items": {
                "type": "object",
                "properties": {
                    "sourceId": {"type": "string", "minLength": 1, "maxLength": 512},
                    "quote": {"type": "string", "minLength": 1, "maxLength": MAX_QUOTE_CHARS},
                },
                "required": ["sourceId", "quote"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["excerpts"],
    "additionalProperties": False,
}

_INSTRUCTIONS: Final = {
    CHOOSE_QUERIES: (
        "You choose search queries. The user message is a JSON task with a question, an optional "
        "controlled vocabulary and the number of queries wanted (minQueries to maxQueries). When a "
        "vocabulary is given, every query must be copied verbatim from it and the queries must be "
        "distinct. Answer only with JSON: {\"queries\": [\"...\"]}."
    ),
    CHOOSE_EXCERPTS: (
        "You choose evidence. The user message is a JSON task with a question and passages, each with a "
        "sourceId. Quote the sentences that answer the question, copied verbatim (same characters, same "
        "spacing) from one passage, each quote at most maxQuoteChars characters, at most maxPerSource "
        "quotes per source and maxExcerpts in all. Never paraphrase, never invent a sourceId. If no "
        "passage answers the question, answer with an empty list. Answer only with JSON: "
        "{\"excerpts\": [{\"sourceId\": \"...\", \"quote\": \"...\"}]}."
    ),
}


def task_messages(task: ResearchTask) -> list[dict[str, str]]:
    """The chat messages that pose ``task``: instructions, then the task as JSON."""
    content = json.dumps(task.to_json_dict(), ensure_ascii=False, separators=(",", ":"))
    return [{"role": "system", "content": _INSTRUCTIONS[task.task]}, {"role": "user", "content": content}]


def response_format(task: ResearchTask) -> dict[str, Any]:
    """The OpenAI-style ``response_format`` asking for the answer's JSON Schema."""
    if task.task == CHOOSE_QUERIES:
        name, schema = "ditto_research_queries", QUERY_CHOICE_SCHEMA
    else:
        name, schema = "ditto_research_excerpts", EXCERPT_CHOICE_SCHEMA
    return {"type": "json_schema", "json_schema": {"name": name, "schema": dict(schema), "strict": True}}


def parse_task(messages: Sequence[Mapping[str, Any]]) -> ResearchTask | None:
    """The task posed by the last user message, or ``None`` when it is not one of ours."""
    for message in reversed(messages):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if not isinstance(content, str) or not content.lstrip().startswith("{"):
            return None
        try:
            data = json.loads(content)
        except ValueError:
            return None
        kind = data.get("task") if isinstance(data, dict) else None
        try:
            if kind == CHOOSE_QUERIES:
                return QueryTask.model_validate(data)
            if kind == CHOOSE_EXCERPTS:
                return ExcerptTask.model_validate(data)
        except ValidationError:
            return None
        return None
    return None
