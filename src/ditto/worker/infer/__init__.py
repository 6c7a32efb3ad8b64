"""The INFER worker: models behind one node, ``INFER.SAMPLE``."""

from .tasks import (
    CHOOSE_EXCERPTS,
    CHOOSE_QUERIES,
    EXCERPT_CHOICE_SCHEMA,
    MAX_QUOTE_CHARS,
    QUERY_CHOICE_SCHEMA,
    Excerpt,
    ExcerptChoice,
    ExcerptPassage,
    ExcerptTask,
    QueryChoice,
    QueryTask,
    ResearchTask,
    parse_task,
    response_format,
    task_messages,
)

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
