"""The whole task as a loop body: request → queries → evidence → brief, each stage checkpointed.

:func:`run_research_loop` is the seed's ``run*Loop``: it runs one task inside
a loop the caller owns, so an application can put a research task in its own
``runtime.loop()`` next to its other stage graphs and share the 1024-execution
budget. Each entry's ``run()`` is exactly one ``runtime.loop()`` around it.

After each stage its record is archived in MEMORY (:mod:`.checkpoints`); a
resumed task starts after the last archived stage and never calls the model
or a source again for it. Archived evidence is checked against the snapshots
again before a brief is written from it: a checkpoint edited in MEMORY is
refused (``RESEARCH_CHECKPOINT_INVALID``), never published.

Example::

    async def body(loop, _input):
        first = await run_research_loop(loop, task_a)
        second = await run_research_loop(loop, task_b)
        return first, second

    results = await runtime.loop(body, None)        # both tasks, one budget
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ...errors import DittoError, GraphError, InvalidArgumentError
from ...runtime import LoopContext, Runtime
from .checkpoints import CheckpointStore
from .config import ResearchOptions
from .errors import ResearchError
from .records import EvidenceRecord, QueriesRecord, RequestRecord
from .stages import (
    StageOutcome,
    StageRun,
    brief_stage,
    evidence_stage,
    queries_stage,
    request_stage,
    write_artifacts,
)
from .taskdir import ResearchTask, TaskLock, open_task, snapshot_text
from .types import Brief, Entry, ResearchResult, ResultError

__all__ = ["run_entry", "run_research_loop"]

logger = logging.getLogger("ditto.workflows.research")


async def run_research_loop(loop: LoopContext, task: ResearchTask | Path | str,
                            options: ResearchOptions | Mapping[str, Any] | None = None) -> ResearchResult:
    """Run (or resume) ``task`` inside ``loop``; every node call is charged to the loop's budget.

    Holds the task's lock while it runs. A task failure (blocked, rejected,
    an unavailable store) is the returned result's ``error``; the loop's
    ``LOOP_BUDGET_EXHAUSTED`` propagates to whoever owns the loop.
    """
    opened = task if isinstance(task, ResearchTask) else open_task(task)
    chosen = _options(options)
    lock = TaskLock(opened.directory)
    try:
        lock.acquire()
    except ResearchError as error:
        return _failed(opened, error.code, error.message)
    try:
        run = StageRun(opened, loop, chosen)
        try:
            return await _stages(run)
        except StageOutcome as outcome:
            return outcome.result
        except ResearchError as error:
            return run.result("failed", error=ResultError(code=error.code, message=error.message))
    finally:
        lock.release()


async def _stages(run: StageRun) -> ResearchResult:
    checkpoints = CheckpointStore(run.invoke, run.task.request_id, str(run.task.directory), run.task.checkpoint_id)
    archived = await checkpoints.load()
    cache = await checkpoints.sync_cache(archived)
    run.progress("resume", f"checkpoints: {', '.join(archived) or 'none'}; cache {cache}")

    request = _restored(RequestRecord, archived.get("request"))
    if request is None:
        request = await request_stage(run)
        await checkpoints.save("request", request.to_json_dict())
    run.stage = "request"

    queries = _restored(QueriesRecord, archived.get("queries"))
    if queries is None:
        queries = await queries_stage(run)
        await checkpoints.save("queries", queries.to_json_dict())
    run.stage = "queries"
    run.progress("queries", "; ".join(query.text for query in queries.queries), count=len(queries.queries))
    if run.options.stop_after == "queries":
        return run.result("stopped", summary=f"stopped after queries: {len(queries.queries)} query(ies)")

    evidence = _restored(EvidenceRecord, archived.get("evidence"))
    if evidence is None:
        evidence = await evidence_stage(run, queries, request)
        await checkpoints.save("evidence", evidence.to_json_dict())
    else:
        _recheck(run, evidence)
    run.stage = "evidence"
    if run.options.stop_after == "evidence":
        count = len(evidence.evidence)
        return run.result("stopped", evidence=count, summary=f"stopped after evidence: {count} excerpt(s)",
                          failed_sources=evidence.failed_sources)

    brief = _restored(Brief, archived.get("brief"))
    if brief is None:
        brief = await brief_stage(run, queries, evidence)
        await checkpoints.save("brief", brief.to_json_dict())
    elif brief.evidence != evidence.evidence:
        raise ResearchError("RESEARCH_CHECKPOINT_INVALID", "the archived brief does not hold the archived evidence")
    run.stage = "brief"
    return write_artifacts(run, brief)


def _restored(kind: Any, data: Any) -> Any:
    """An archived stage's record, validated back into its type; ``None`` when the stage is not archived."""
    if data is None:
        return None
    try:
        return kind.model_validate(data)
    except ValidationError:
        raise ResearchError("RESEARCH_CHECKPOINT_INVALID", "a task checkpoint in MEMORY is malformed") from None


def _recheck(run: StageRun, evidence: EvidenceRecord) -> None:
    """Archived evidence must still be verbatim in this task's snapshots (a checkpoint is not trusted)."""
    texts: dict[str, str] = {}
    for item in evidence.evidence:
        digest = item.snapshot_sha256
        try:
            text = texts[digest] if digest in texts else texts.setdefault(
                digest, snapshot_text(run.task.snapshots / digest, check_hash=True))
        except UnicodeDecodeError:
            raise ResearchError("RESEARCH_CHECKPOINT_INVALID",
                                f"archived evidence {item.id}: its snapshot's text is unreadable") from None
        except ValueError:  # changed bytes: a brief quoting them would not verify
            raise ResearchError("RESEARCH_CHECKPOINT_INVALID",
                                f"archived evidence {item.id}: its snapshot {digest} does not hash to its name "
                                "(changed bytes)") from None
        except OSError:
            raise ResearchError("RESEARCH_CHECKPOINT_INVALID",
                                f"archived evidence {item.id} has no snapshot in this task") from None
        if text[item.start:item.end] != item.quote:
            raise ResearchError("RESEARCH_CHECKPOINT_INVALID",
                                f"archived evidence {item.id} is not verbatim in its snapshot")


def _options(options: ResearchOptions | Mapping[str, Any] | None) -> ResearchOptions:
    try:
        return ResearchOptions.coerce(options)
    except InvalidArgumentError as error:
        raise ResearchError("RESEARCH_INVALID_INPUT", error.message) from None


def _failed(task: ResearchTask, code: str, message: str) -> ResearchResult:
    return ResearchResult(status="failed", request_id=task.request_id, directory=str(task.directory),
                          error=ResultError(code=code, message=message))


def _input_directory(input: Any) -> Path:
    if isinstance(input, ResearchTask):
        return input.directory
    if isinstance(input, (str, Path)) and str(input) and "\x00" not in str(input):
        return Path(input)
    if isinstance(input, Mapping):
        directory = input.get("directory")
        extra = set(input) - {"directory"}
        if extra:
            raise ResearchError("RESEARCH_INVALID_INPUT", "run() takes {'directory': ...}; create the task with "
                                                          "create_task(ResearchRequest(...)) first")
        if isinstance(directory, (str, Path)) and str(directory) and "\x00" not in str(directory):
            return Path(directory)
    raise ResearchError("RESEARCH_INVALID_INPUT", "input must name the task directory: {'directory': ...}")


async def run_entry(entry: Entry, runtime: Runtime, input: Any,
                    options: ResearchOptions | Mapping[str, Any] | None = None) -> ResearchResult:
    """Run (or resume) the task in ``input['directory']`` as ``entry``: one ``runtime.loop()``.

    Failures of the task itself (a blocked source, a rejected model answer, an
    unavailable store, a locked task, a brief that could not be written) are
    returned as a :class:`ResearchResult` with an ``error``; only a malformed
    input or a directory without a task raises :class:`ResearchError`.
    """
    task = open_task(_input_directory(input))
    if task.request.entry != entry:
        raise ResearchError("RESEARCH_REQUEST_MISMATCH", f"the task was created for {task.request.entry}, not {entry}")
    chosen = _options(options)

    async def body(loop: LoopContext, _input: Any) -> ResearchResult:
        return await run_research_loop(loop, task, chosen)

    try:
        return await runtime.loop(body, None, max_executions=chosen.max_executions, signal=chosen.signal)
    except GraphError as error:
        code = "RESEARCH_BUDGET_EXHAUSTED" if error.code == "LOOP_BUDGET_EXHAUSTED" else "RESEARCH_INVALID_INPUT"
        return _failed(task, code, error.message)
    except DittoError as error:
        logger.exception("research task failed")
        return _failed(task, "RESEARCH_STORE_UNAVAILABLE", f"a worker failed ({error.code})")
