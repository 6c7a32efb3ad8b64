"""The queries stage: the model chooses the task's queries under the entry's query contract.

The entry table says the mode (``model``, ``rewrite``, ``expand``) and the
counts; the answer is checked by :func:`~..verification.verify_queries` and a
failing answer rejects the task (no repair, no retry: a query contract is
simple enough that a model that breaks it is not to be trusted with excerpts).
"""

from __future__ import annotations

from ....worker.infer import QueryTask
from ..entries import entry_spec
from ..errors import ResearchError
from ..records import QueriesRecord
from ..verification import verify_queries
from .run import StageRun

__all__ = ["queries_stage", "query_task"]


def query_task(run: StageRun) -> tuple[QueryTask, str]:
    """The model task for the request and the provenance its queries get."""
    request = run.request
    spec = entry_spec(request.entry)
    vocabulary = request.vocabulary
    low, high = spec.query_counts(len(vocabulary) if vocabulary is not None else None)
    return QueryTask(question=request.question, vocabulary=vocabulary, min_queries=low, max_queries=high), \
        spec.query_mode


async def queries_stage(run: StageRun) -> QueriesRecord:
    task, provenance = query_task(run)
    run.progress("queries", "choosing queries")
    answer = await run.ask("queries", "choose-queries", task)
    try:
        queries = verify_queries(answer.parsed, task, provenance)
    except ResearchError as error:
        raise run.fail("rejected", error.code, error.message) from None
    return QueriesRecord(queries=tuple(queries), model=answer.model)
