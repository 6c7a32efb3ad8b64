"""The research workflow's one error class and its codes.

A task's own outcome (no evidence, a failed source, a rejected model answer)
is reported in the :class:`~ditto.workflows.research.types.ResearchResult`, not
raised; :class:`ResearchError` is raised for what stops a task from running at
all (bad input, a locked or foreign task directory, unavailable stores) and
is also the carrier of every code that ends up in a result's ``error``.
"""

from __future__ import annotations

from typing import Final

from ...errors import DittoError

__all__ = ["RESEARCH_ERROR_CODES", "ResearchError"]

RESEARCH_ERROR_CODES: Final = frozenset({
    # input and task directory
    "RESEARCH_INVALID_INPUT",
    "RESEARCH_TASK_NOT_FOUND",
    "RESEARCH_TASK_LOCKED",
    "RESEARCH_REQUEST_MISMATCH",
    "RESEARCH_UNSAFE_TASK_DIRECTORY",
    # stores and workers
    "RESEARCH_STORE_UNAVAILABLE",
    "RESEARCH_CHECKPOINT_INVALID",
    "RESEARCH_MODEL_FAILED",
    "RESEARCH_SOURCE_FAILED",
    "RESEARCH_BRIEF_WRITE_FAILED",
    "RESEARCH_BUDGET_EXHAUSTED",
    # a model answer that fails verification (rejected, never fixed up)
    "RESEARCH_QUERY_OUT_OF_VOCABULARY",
    "RESEARCH_QUERY_COUNT",
    "RESEARCH_QUERY_DUPLICATE",
    "RESEARCH_QUOTE_NOT_FOUND",
    "RESEARCH_QUOTE_TOO_LONG",
    "RESEARCH_UNKNOWN_SOURCE",
    "RESEARCH_TOO_MANY_EXCERPTS",
    # run control
    "RESEARCH_CANCELLED",
    "RESEARCH_TIMEOUT",
})


class ResearchError(DittoError):
    """A research task failure with a stable ``code`` and a public ``message``."""

    codes = RESEARCH_ERROR_CODES
    cancelled_code = "RESEARCH_CANCELLED"
    timeout_code = "RESEARCH_TIMEOUT"
