"""The research workflow's data: the request, the brief it produces and the result of a run.

Every type is a frozen :class:`~ditto.contracts.DittoModel`: snake_case in
Python, camelCase in JSON (``request.json``, ``brief.json``, the CLI output),
both spellings accepted on input.

Example::

    request = ResearchRequest(entry="document-search", question="How long are backups kept?",
                              sources=("documents",))
    request_id(request)   # 'r-…', changes exactly when the request's content changes
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Annotated, Any, Final, Literal

from pydantic import (
    AfterValidator,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from ...contracts import DittoModel
from .entries import ENTRIES, Entry, entry_spec
from .sources.registry import registered_kinds

__all__ = [
    "DEFAULT_MODEL",
    "ENTRIES",
    "MAX_INTERNAL_KEYS",
    "Answer",
    "AnswerSentence",
    "Brief",
    "Coverage",
    "Entry",
    "Evidence",
    "FailedSource",
    "KnowledgeMode",
    "ModelRef",
    "QueryRecord",
    "ResearchRequest",
    "ResearchResult",
    "ResultError",
    "SourceKind",
    "SourceType",
    "Stage",
    "check_knowledge_key",
    "check_source_kind",
    "check_tenant",
    "default_sources",
    "request_id",
]

KnowledgeMode = Literal["internal", "external", "both"]


def check_source_kind(value: str) -> str:
    """A request source kind some registered source answers to (``documents``, ``knowledge``, ``web``, yours)."""
    kinds = registered_kinds()
    if value not in kinds:
        raise ValueError(f"unknown source kind; registered kinds are {', '.join(kinds)}")
    return value


#: A request's source kind: ``documents``, ``knowledge``, ``web`` or a registered one.
SourceKind = Annotated[str, AfterValidator(check_source_kind)]
#: An evidence item's source type: ``document``, ``knowledge-internal``, ``knowledge-external``, ``web``
#: or a registered source's own.
SourceType = Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]{0,31}$")]
Stage = Literal["request", "queries", "evidence", "brief"]
#: Internal knowledge: at most 12 exact keys per request (seed 004).
MAX_INTERNAL_KEYS: Final = 12

_TENANT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,127}")


def _clean_text(value: str) -> str:
    if "\x00" in value:
        raise ValueError("text may not contain NUL")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("text must be valid Unicode (no lone surrogates)") from None
    return value


def _non_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return _clean_text(value)


def check_tenant(value: str) -> str:
    """A tenant name: 1-64 letters, digits, '.', '_' or '-' (no ':' so keys stay unambiguous)."""
    if not isinstance(value, str) or not _TENANT.fullmatch(value):
        raise ValueError("a tenant is 1-64 letters, digits, '.', '_' or '-'")
    return value


def check_knowledge_key(value: str) -> str:
    """An internal knowledge key: 1-128 letters, digits, '.', '_', '/' or '-'."""
    if not isinstance(value, str) or not _KEY.fullmatch(value):
        raise ValueError("a knowledge key is 1-128 letters, digits, '.', '_', '/' or '-'")
    return value


Question = Annotated[str, Field(min_length=1, max_length=4000), AfterValidator(_non_blank)]
ShortText = Annotated[str, Field(min_length=1, max_length=1000), AfterValidator(_non_blank)]
PathText = Annotated[str, Field(min_length=1, max_length=4096), AfterValidator(_clean_text)]


class ModelRef(DittoModel):
    """Which model INFER.SAMPLE uses: the ``builtin:extractive`` provider unless configured.

    ``model`` ``None`` lets the provider use its own default.
    """

    provider: Annotated[str, Field(min_length=1, max_length=256)] = "builtin:extractive"
    model: Annotated[str, Field(min_length=1, max_length=256)] | None = None


DEFAULT_MODEL: Final = ModelRef()


def is_postgres_dsn(value: str | None) -> bool:
    """``kb`` and ``memory`` may name a PostgreSQL database (``postgresql://…``) instead of a SQLite file."""
    return value is not None and value.startswith(("postgres://", "postgresql://"))


def default_sources(entry: Entry) -> tuple[str, ...]:
    """The source kinds an entry reads when the caller names none (the entry table's row)."""
    return entry_spec(entry).sources


class ResearchRequest(DittoModel):
    """Everything that defines a task; its canonical JSON is hashed into the request id.

    ``None`` for ``documents`` / ``kb`` / ``memory`` means "use the task's
    generated sample data of that kind" (``documents`` with no ``index``).
    ``index`` names a prepared index (``ditto index``) the documents source
    searches instead of reading folders. ``urls`` (direct web reading, at most
    2 pages) defaults to SQLite's documentation for ``web-read``. ``wiki_url``
    points web search at any MediaWiki's API (``https://wiki.example/w/api.php``;
    Wikipedia's when ``None``): the wiki searched is part of the request.
    """

    entry: Entry
    question: Question
    tenant: Annotated[str, AfterValidator(check_tenant)] = "acme"
    sources: tuple[SourceKind, ...] = ()
    knowledge: KnowledgeMode = "external"
    allow_partial: bool = Field(default=False, strict=True)
    search_engine: Literal["wikipedia", "brave"] = "wikipedia"
    wiki_url: Annotated[str, Field(max_length=4096, pattern=r"^https://[^\s]+$"),
                        AfterValidator(_clean_text)] | None = None
    documents: tuple[PathText, ...] | None = Field(default=None, max_length=64)
    #: A prepared index (``ditto index``) searched instead of reading ``documents``.
    index: PathText | None = None
    ignore: tuple[ShortText, ...] = Field(default=(), max_length=64)
    kb: PathText | None = None
    memory: PathText | None = None
    urls: tuple[PathText, ...] | None = Field(default=None, min_length=1, max_length=2)
    allowed_origins: tuple[PathText, ...] | None = Field(default=None, max_length=32)
    vocabulary: tuple[Annotated[str, Field(min_length=1, max_length=200), AfterValidator(_non_blank)], ...] | None = (
        Field(default=None, min_length=1, max_length=256))
    internal_knowledge_keys: tuple[Annotated[str, AfterValidator(check_knowledge_key)], ...] | None = Field(
        default=None, max_length=MAX_INTERNAL_KEYS)
    model: ModelRef = DEFAULT_MODEL

    @model_validator(mode="after")
    def _normalise(self) -> ResearchRequest:
        sources = self.sources or default_sources(self.entry)
        ordered = tuple(kind for kind in registered_kinds() if kind in sources)
        if ordered != self.sources:
            object.__setattr__(self, "sources", ordered)
        if self.vocabulary is not None and len(set(self.vocabulary)) != len(self.vocabulary):
            raise ValueError("vocabulary entries must be distinct")
        if self.index is not None and self.documents is not None:
            raise ValueError("give documents (folders read and indexed by the task) or index (an index made by "
                             "`ditto index`), not both")
        if len(set(sources)) != len(sources):
            raise ValueError("a source kind is named twice")
        if ("web" in sources and self.search_engine == "brave" and self.allowed_origins is None
                and self.entry != "web-read" and self.urls is None):
            raise ValueError("Brave searches the whole web: give the origins pages may be read from "
                             "(allowed_origins / --allowed-origin); the application decides what is trusted")
        if self.entry in ("rewrite", "expand") and self.vocabulary is None:
            raise ValueError(f"{self.entry} needs a controlled vocabulary")
        if self.entry == "expand" and self.vocabulary is not None and len(self.vocabulary) < 2:
            raise ValueError("expand needs a vocabulary of at least 2 entries")
        return self

    @property
    def web_mode(self) -> Literal["search", "read"]:
        """Direct page reading for ``web-read`` or when URLs are given; otherwise a search engine."""
        return "read" if self.entry == "web-read" or self.urls is not None else "search"


def request_id(request: ResearchRequest) -> str:
    """``r-`` + 24 hex digits of the SHA-256 of the request's canonical JSON.

    Every field is content (question, sources, tenant, configuration), so the id
    changes when any of them changes, and only then.
    """
    content = request.model_dump(mode="json", by_alias=True)
    for name in _LATER_FIELDS:  # unset, they leave the id of a request made before they existed unchanged
        if content.get(name) is None:
            content.pop(name, None)
    canonical = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "r-" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:24]


#: Request fields added after tasks existed: left out of the id (and request.json's meaning) while unset.
_LATER_FIELDS: Final = ("wikiUrl",)


class QueryRecord(DittoModel):
    """A query the task executed and where it came from.

    ``vocabularyEntry`` is always written (``null`` for a free model query) so
    every query in ``brief.json`` states its provenance the same way.
    """

    text: str
    provenance: Literal["model", "rewrite", "expand"]
    vocabulary_entry: str | None = None

    @model_serializer(mode="wrap")
    def _keep_vocabulary_entry(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
                               ) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        data.setdefault("vocabularyEntry" if info.by_alias else "vocabulary_entry", self.vocabulary_entry)
        return data


class Evidence(DittoModel):
    """One verified excerpt: verbatim in its snapshot at ``start:end`` (lines ``line_start``-``line_end``)."""

    id: str
    source_type: SourceType
    uri: str
    snapshot_sha256: str
    quote: str
    start: int
    end: int
    line_start: int
    line_end: int
    query: str
    found_by: tuple[str, ...] = ()
    locator: dict[str, Any] | None = None


class FailedSource(DittoModel):
    """A source that could not be read (a fault, never an empty result)."""

    source: str
    code: str
    message: str


class Coverage(DittoModel):
    """What became of one requested source: evidence, no hits, hits without a usable excerpt, or failure.

    ``notes`` says, in words, every limit that was hit and every entry that was
    skipped while reading the source (a capped file walk, a file too large, a
    link out of the folder), so a ``no-evidence`` is never silently a truncation.
    ``searched`` names what was searched where that is a choice (the internal
    knowledge keys).
    """

    source: SourceType
    status: Literal["evidence", "no-hits", "no-excerpt", "failed"]
    hits: int = 0
    evidence: int = 0
    notes: tuple[str, ...] = ()
    searched: tuple[str, ...] = ()


class AnswerSentence(DittoModel):
    """One sentence of the brief's answer and the evidence ids it rests on (at least one)."""

    text: str
    evidence: tuple[str, ...]


class Answer(DittoModel):
    """A short answer to the question, every sentence citing evidence ids.

    ``kind`` ``extractive``: each sentence is copied verbatim from the quote of
    an evidence item it cites (the built-in model). ``model``: the model's own
    wording, checked only for its citations; the quotes stay the only verified text.
    """

    kind: Literal["extractive", "model"]
    sentences: tuple[AnswerSentence, ...]


class Brief(DittoModel):
    """``artifacts/brief.json``; the JSON Schema in ``brief.schema.json`` describes the same shape."""

    schema_version: Literal[1] = 1
    status: Literal["completed", "no-evidence", "partial"]
    request_id: str
    entry: Entry
    question: str
    tenant: str
    sources: tuple[SourceType, ...]
    knowledge: KnowledgeMode | None = None
    model: ModelRef
    queries: tuple[QueryRecord, ...]
    evidence: tuple[Evidence, ...]
    citations: tuple[str, ...]
    failed_sources: tuple[FailedSource, ...]
    coverage: tuple[Coverage, ...]
    created_at: str
    answer: Answer | None = None


class ResultError(DittoModel):
    code: str
    message: str


class ResearchResult(DittoModel):
    """What an entry's ``run`` returns (and the CLI prints under ``result``).

    ``status`` is the brief's status when one was written (``completed``,
    ``no-evidence``, ``partial``), ``stopped`` after ``stop_after``, ``blocked``
    when a source failed without ``allow_partial`` (or nothing valid was left),
    ``rejected`` when a model answer failed verification, ``failed`` otherwise.
    """

    status: Literal["completed", "no-evidence", "partial", "stopped", "blocked", "rejected", "failed"]
    request_id: str | None = None
    directory: str
    stage: Stage | None = None
    brief: str | None = None
    brief_markdown: str | None = None
    summary: str | None = None
    evidence: int = 0
    citations: int = 0
    failed_sources: tuple[FailedSource, ...] = ()
    error: ResultError | None = None
