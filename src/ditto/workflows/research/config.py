"""Options of a run (what does not change the request) and the workflow's fixed limits.

Limits come from seed 004 and are not configurable: at most 3 document or
external knowledge records per query, 12 internal knowledge keys with at most
1 record each, 5 search candidates (the first allowed one not read yet is read), 2 pages in
direct web mode, 2 passages per page and 1000 characters per passage.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from ...errors import InvalidArgumentError
from ...signal import CancelSignal

__all__ = [
    "BASE_DIR_ENV",
    "DEFAULT_BASE_DIR",
    "MAX_EXCERPTS_PER_GROUP",
    "MAX_PASSAGES_PER_PAGE",
    "MAX_QUOTE_CHARS",
    "MAX_RECORDS_PER_QUERY",
    "MAX_SEARCH_CANDIDATES",
    "MAX_WEB_PAGES",
    "ProgressEvent",
    "ResearchOptions",
    "default_base_dir",
]

MAX_RECORDS_PER_QUERY: Final = 3
MAX_SEARCH_CANDIDATES: Final = 5
MAX_WEB_PAGES: Final = 2
MAX_PASSAGES_PER_PAGE: Final = 2
MAX_QUOTE_CHARS: Final = 1000
#: Excerpts the model may choose per source (documents, internal, external, web) in one task; see
#: ``SourceLimits.excerpts`` for the reason.
MAX_EXCERPTS_PER_GROUP: Final = 6

#: Where new task directories go unless a base folder is given: ``./ditto-tasks/``.
DEFAULT_BASE_DIR: Final = "ditto-tasks"
BASE_DIR_ENV: Final = "DITTO_RESEARCH_TASKS_DIR"


def default_base_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$DITTO_RESEARCH_TASKS_DIR`` or ``./ditto-tasks``."""
    source = os.environ if env is None else env
    return Path(source.get(BASE_DIR_ENV) or DEFAULT_BASE_DIR)


@dataclass(frozen=True, slots=True)
class ProgressEvent:
    """One step of a running task, for a progress display (stage, source, counts).

    With ``total``, the step is ``count`` of ``total`` in a longer phase (indexing a documents folder): a display
    shows it in place rather than as a line of its own until ``count`` reaches ``total``.
    """

    stage: str
    message: str
    source: str | None = None
    count: int | None = None
    total: int | None = None


@dataclass(frozen=True, slots=True)
class ResearchOptions:
    """How to run a task (none of this changes the request id).

    ``stop_after`` ends the run after that stage's checkpoint; ``progress`` is
    called with each :class:`ProgressEvent`; ``max_executions`` is the loop's budget of node
    executions (1024, the runtime's default); ``signal`` cancels the task: every
    node call receives it, and a fired signal ends the run with
    ``RESEARCH_CANCELLED`` / ``RESEARCH_TIMEOUT`` (nothing of the running stage
    is archived); ``signing_key`` signs the brief (``artifacts/brief.sig``, an
    HMAC-SHA256 over the brief and the snapshots it cites) as soon as it is written.
    """

    stop_after: Literal["queries", "evidence"] | None = None
    progress: Callable[[ProgressEvent], None] | None = None
    max_executions: int = 1024
    signal: CancelSignal | None = None
    signing_key: bytes | None = field(default=None, repr=False)
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.stop_after not in (None, "queries", "evidence"):
            raise InvalidArgumentError("stop_after must be 'queries', 'evidence' or None")
        if self.progress is not None and not callable(self.progress):
            raise InvalidArgumentError("progress must be a callable taking a ProgressEvent")
        budget = self.max_executions
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
            raise InvalidArgumentError("max_executions must be a positive integer")
        if self.signal is not None and not isinstance(self.signal, CancelSignal):
            raise InvalidArgumentError("signal must be a CancelSignal")
        if self.signing_key is not None and (not isinstance(self.signing_key, bytes) or not self.signing_key):
            raise InvalidArgumentError("signing_key must be non-empty bytes")

    @classmethod
    def coerce(cls, value: ResearchOptions | Mapping[str, Any] | None) -> ResearchOptions:
        """``None`` (the defaults), options, or a plain mapping with snake_case or camelCase keys.

        Example::

            ResearchOptions.coerce({"stopAfter": "evidence"}) == ResearchOptions(stop_after="evidence")
        """
        if value is None:
            return cls()
        if isinstance(value, ResearchOptions):
            return value
        if not isinstance(value, Mapping):
            raise InvalidArgumentError("options must be ResearchOptions, a mapping or None")
        names = {"stop_after", "progress", "max_executions", "signal", "signing_key", "extra"}
        fields: dict[str, Any] = {}
        for key, item in value.items():
            name = _snake(key) if isinstance(key, str) else None
            if name not in names or name in fields:
                raise InvalidArgumentError(f"unknown or repeated option {str(key)[:40]!r}")
            fields[name] = item
        return cls(**fields)


def _snake(name: str) -> str:
    return "".join(f"_{char.lower()}" if char.isupper() else char for char in name)
