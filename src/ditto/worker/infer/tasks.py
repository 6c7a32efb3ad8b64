"""The structured tasks the research workflow asks a model, as data both sides agree on.

A task travels as an ordinary chat: a system message that tells a real model
what to do, and a user message whose content is the task as a JSON object
(``{"task": "choose_queries", ...}``). The answer must satisfy a JSON Schema
sent as the OpenAI-style ``response_format``. A hosted model reads the
instructions; the built-in ``builtin:extractive`` model parses the JSON task
and answers the same shape from lexical scores. Either way the answer goes
through the same schema validation, and the workflow then checks what a
schema cannot (vocabulary membership, verbatim quotes, known source ids).

Three tasks:

``choose_queries``
    pick ``minQueries``–``maxQueries`` distinct search queries for ``question``;
    when ``vocabulary`` is given every query must be one of its entries verbatim
    (rewrite: exactly 1; expand: 2–3). Answer ``{"queries": [str, ...]}``.
``choose_excerpts``
    pick at most ``maxExcerpts`` verbatim quotes (each ≤ ``maxQuoteChars``
    characters, at most ``maxPerSource`` per source) from ``passages`` that
    answer ``question``; ``[]`` when none does. Passages of one web page share a
    ``page``: at most ``maxPerSource`` quotes per page too. Answer
    ``{"excerpts": [{"sourceId": str, "quote": str}, ...]}``.
``answer_question``
    answer ``question`` in 1–3 sentences from the verified ``evidence``
    (``[{"id", "quote"}]``), most relevant first, each sentence citing the
    evidence ids it rests on. Answer
    ``{"sentences": [{"text": str, "evidence": [id, ...]}, ...]}``; the
    built-in model copies each sentence verbatim from a cited quote.

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
    "ANSWER_CHOICE_SCHEMA",
    "ANSWER_QUESTION",
    "CHOOSE_EXCERPTS",
    "CHOOSE_QUERIES",
    "EXCERPT_CHOICE_SCHEMA",
    "MAX_ANSWER_SENTENCES",
    "MAX_QUERY_CHARS",
    "MAX_QUOTE_CHARS",
    "QUERY_CHOICE_SCHEMA",
    "AnswerChoice",
    "AnswerEvidence",
    "AnswerSentence",
    "AnswerTask",
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
ANSWER_QUESTION: Final = "answer_question"
#: An answer has at most this many sentences.
MAX_ANSWER_SENTENCES: Final = 3
#: The longest quote a brief may carry (seed 004: ≤ 1000 characters per passage).
MAX_QUOTE_CHARS: Final = 1000
#: The longest search query a model may choose (a question may be longer: 4000 characters).
MAX_QUERY_CHARS: Final = 1000

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
    #: The web page the passage comes from: passages of one page share it and count together
    #: against ``maxPerSource`` (seed 004: at most 2 passages per page). ``None`` elsewhere.
    page: Annotated[str, Field(min_length=1, max_length=100_000)] | None = None
    #: Where the passage sits, e.g. a document's heading path ("GREP(1) › OPTIONS"): the model may use it
    #: to judge what the passage is about, never quote it.
    context: Annotated[str, Field(min_length=1, max_length=1000)] | None = None
    #: The document (file, record, page) the passage comes from: passages of one document share it, and the
    #: model may judge a passage by what its document's other passages say of the question's subject.
    #: ``None`` when the passage is a document of its own.
    document: Annotated[str, Field(min_length=1, max_length=100_000)] | None = None


class ExcerptTask(DittoModel):
    """Choose verbatim excerpts that answer a question from the given passages."""

    task: Literal["choose_excerpts"] = CHOOSE_EXCERPTS
    question: _Text
    passages: tuple[ExcerptPassage, ...]
    max_excerpts: _Count = 4
    max_quote_chars: Annotated[int, Field(ge=1, le=MAX_QUOTE_CHARS)] = MAX_QUOTE_CHARS
    max_per_source: _Count = 2
    #: The question in the index's controlled vocabulary, as chosen for it (rewrite, expand): a passage that
    #: answers one of these answers the question ("backup retention period" for "how long do we keep the
    #: backups around?"). ``None`` for a free question.
    restatements: tuple[Annotated[str, Field(min_length=1, max_length=1000)], ...] | None = Field(
        default=None, max_length=16)


class AnswerEvidence(DittoModel):
    """One verified evidence item the answer may cite: its id and its verbatim quote."""

    id: Annotated[str, Field(min_length=1, max_length=64)]
    quote: _Text
    #: Where the quote sits (a document's heading path, else its file name): what the quote is about when it
    #: does not say so itself ("the exit status is 1" under "GREP(1) › EXIT STATUS"); never copied.
    context: Annotated[str, Field(min_length=1, max_length=1000)] | None = None


class AnswerTask(DittoModel):
    """Answer a question in 1–3 sentences from verified evidence, citing evidence ids."""

    task: Literal["answer_question"] = ANSWER_QUESTION
    question: _Text
    evidence: tuple[AnswerEvidence, ...] = Field(max_length=100)


ResearchTask = QueryTask | ExcerptTask | AnswerTask


class QueryChoice(DittoModel):
    """The answer to a :class:`QueryTask`."""

    queries: tuple[str, ...]


class Excerpt(DittoModel):
    source_id: str
    quote: str


class ExcerptChoice(DittoModel):
    """The answer to an :class:`ExcerptTask`."""

    excerpts: tuple[Excerpt, ...]


class AnswerSentence(DittoModel):
    """One sentence of an answer and the ids of the evidence it rests on."""

    text: str
    evidence: tuple[str, ...]


class AnswerChoice(DittoModel):
    """The answer to an :class:`AnswerTask` (``[]`` only when there is no evidence to answer from)."""

    sentences: tuple[AnswerSentence, ...]


#: JSON Schema of a :class:`QueryChoice` answer (vocabulary membership is checked by the workflow).
QUERY_CHOICE_SCHEMA: Final[Mapping[str, Any]] = {
    "type": "object",
    "properties": {
        "queries": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS},
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

#: JSON Schema of an :class:`AnswerChoice` answer (citations and wording are checked by the workflow).
ANSWER_CHOICE_SCHEMA: Final[Mapping[str, Any]] = {
    "type": "object",
    "properties": {
        "sentences": {
            "type": "array",
            "maxItems": MAX_ANSWER_SENTENCES,
            "items": {
                "type": "object",
                "properties": {
                    "text": {"type": "string", "minLength": 1, "maxLength": MAX_QUOTE_CHARS},
                    "evidence": {"type": "array", "minItems": 1, "maxItems": 100,
                                 "items": {"type": "string", "minLength": 1, "maxLength": 64}},
                },
                "required": ["text", "evidence"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["sentences"],
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
        "sourceId (and, for web text, the page it comes from; for documents, the headings it sits under "
        "as context, which tells what the passage is about but may not be quoted; passages of one file or "
        "record share a document). Quote whole sentences "
        "that answer the question, copied verbatim from one passage (same characters, same spacing, line breaks kept), "
        "each quote at most maxQuoteChars characters. At most maxPerSource quotes from one sourceId and "
        "at most maxPerSource from one page; at most maxExcerpts in all. Never paraphrase, never invent a "
        "sourceId. A passage that only shares words with the question does not answer it: when none of "
        "the passages answers the question, return an empty excerpt list, {\"excerpts\": []}. When the task "
        "lists restatements (the question in the index's own vocabulary), a passage that answers one of "
        "them answers the question. Answer "
        "only with JSON: {\"excerpts\": [{\"sourceId\": \"...\", \"quote\": \"...\"}]}."
    ),
    ANSWER_QUESTION: (
        "You answer from evidence. The user message is a JSON task with a question and evidence items, "
        "each with an id and a verbatim quote. Answer the question in 1 to 3 short sentences, most "
        "relevant first, using only what the quotes say; each sentence lists the ids of the evidence "
        "items it rests on. Do not add facts the quotes do not state. Answer only with JSON: "
        "{\"sentences\": [{\"text\": \"...\", \"evidence\": [\"e1\"]}]}."
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
    elif task.task == ANSWER_QUESTION:
        name, schema = "ditto_research_answer", ANSWER_CHOICE_SCHEMA
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
            if kind == ANSWER_QUESTION:
                return AnswerTask.model_validate(data)
        except ValidationError:
            return None
        return None
    return None
