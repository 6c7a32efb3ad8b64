"""The typed record of each stage: what is checkpointed in MEMORY and what the next stage receives.

request → :class:`RequestRecord` → :class:`QueriesRecord` → :class:`EvidenceRecord`
→ :class:`~ditto.workflows.research.types.Brief`. Each is a frozen model whose
camelCase JSON is the checkpoint's ``data``; a resumed task validates the
stored JSON back into the same type, so a damaged checkpoint is refused
(``RESEARCH_CHECKPOINT_INVALID``) instead of travelling on as a dict.

Example::

    record = QueriesRecord(queries=(QueryRecord(text="backup retention", provenance="model"),))
    QueriesRecord.model_validate(record.to_json_dict()) == record
"""

from __future__ import annotations

from typing import Any

from ...contracts import DittoModel
from .types import Coverage, Evidence, FailedSource, QueryRecord

__all__ = ["EvidenceRecord", "Passage", "QueriesRecord", "RequestRecord"]


class Passage(DittoModel):
    """A piece of a snapshot shown to the model under ``id``; ``text == snapshot_text[start:end]``.

    ``page`` groups a web page's passages (the per-page excerpt limit);
    ``found_by`` lists every query that found it, ``query`` the first.
    """

    id: str
    source_type: str
    uri: str
    snapshot_sha256: str
    text: str
    start: int
    end: int
    query: str
    found_by: tuple[str, ...]
    locator: dict[str, Any] | None = None
    page: str | None = None

    def with_query(self, query: str) -> Passage:
        """The same passage, also found by ``query``."""
        return self if query in self.found_by else self.model_copy(update={"found_by": (*self.found_by, query)})

    def named(self, identifier: str, query: str) -> Passage:
        """The passage under the task's id ``identifier``, first found by ``query``."""
        return self.model_copy(update={"id": identifier, "query": query, "found_by": (query,)})


class RequestRecord(DittoModel):
    """The request stage: which internal knowledge keys the task searches and how many records it imported."""

    request_id: str
    internal_keys: tuple[str, ...] = ()
    imported: int = 0
    #: How many knowledge keys the tenant had when the keys were taken from the store (``None``: given).
    available_keys: int | None = None


class QueriesRecord(DittoModel):
    """The queries stage: the queries to run, with provenance, and the model that chose them."""

    queries: tuple[QueryRecord, ...]
    model: str | None = None


class EvidenceRecord(DittoModel):
    """The evidence stage: every passage shown to the model, the verified evidence, failures and coverage."""

    passages: tuple[Passage, ...]
    evidence: tuple[Evidence, ...]
    failed_sources: tuple[FailedSource, ...]
    coverage: tuple[Coverage, ...]
