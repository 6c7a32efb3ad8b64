"""The evidence stage: each source's graph (search → read → excerpt choice), then verification and coverage.

Sources are read one after another in reading order (seed 004: a multi-source
plan runs source by source); inside one source's graph the queries run
concurrently and the model's excerpt choice is a node that depends on them, so
it starts as soon as the source's last search is done and is skipped (never
charged) when the source failed or found nothing. Its answer is verified
(source ids, verbatim quotes, limits); a refused answer gets one retry that
shows the model what was wrong, then rejects the task. A source that fails is
listed in ``failedSources`` and blocks the brief unless ``allow_partial`` is
set and valid evidence remains; a source without hits is not a failure.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from ....errors import DittoError
from ....runtime import SKIP, NodeResult
from ....worker.infer import ExcerptPassage, ExcerptTask
from ....worker.infer.tasks import AnswerEvidence, AnswerTask
from ....worker.infer.worker import infer_sample_node
from ..config import MAX_QUOTE_CHARS
from ..records import EvidenceRecord, Passage, QueriesRecord, RequestRecord
from ..sources.base import ResearchSource, SourceHits, SourceSetup
from ..sources.catalog import sources_for
from ..sources.registry import SourceSpec
from ..taskdir import snapshot_text
from ..types import Answer, Coverage, Evidence, FailedSource, QueryRecord
from ..verification import VerifiedExcerpt, line_range, verify_answer, verify_excerpts
from .run import StageRun

__all__ = ["evidence_stage", "excerpt_task", "name_passages"]

logger = logging.getLogger("ditto.workflows.research")


@dataclass
class _SourceRun:
    """What one source's graph left: its hits (collected inside the graph) and the excerpts chosen."""

    spec: SourceSpec
    source: ResearchSource
    hits: SourceHits = field(default_factory=SourceHits)
    passages: list[Passage] = field(default_factory=list)
    task: ExcerptTask | None = None
    excerpts: list[VerifiedExcerpt] = field(default_factory=list)


def name_passages(prefix: str, found: Sequence[Passage]) -> list[Passage]:
    """Passages under the task's ids ``<prefix>-1, -2 …``; one found by several queries is kept once."""
    named: dict[tuple[str, int, int], Passage] = {}
    for passage in found:
        key = (passage.uri, passage.start, passage.end)
        if key in named:
            named[key] = named[key].with_query(passage.query)
        else:
            named[key] = passage.named(f"{prefix}-{len(named) + 1}", passage.query)
    return list(named.values())


def excerpt_task(question: str, source: ResearchSource, passages: Sequence[Passage],
                 queries: Sequence[QueryRecord] = ()) -> ExcerptTask:
    """The model's excerpt task for one source, with that source's limits; the vocabulary queries chosen for
    the question (rewrite, expand) go with it as its restatements."""
    limits = source.limits
    shown = tuple(ExcerptPassage(source_id=p.id, text=p.text, page=p.page, context=p.context,
                                 document=p.page or p.uri) for p in passages)
    restatements = tuple(query.text for query in queries if query.provenance != "model") or None
    return ExcerptTask(question=question, passages=shown,
                       max_excerpts=limits.excerpts_for(question, len(passages)),
                       max_quote_chars=MAX_QUOTE_CHARS, max_per_source=limits.excerpts_per_passage,
                       restatements=restatements)


async def evidence_stage(run: StageRun, queries: QueriesRecord, request_record: RequestRecord) -> EvidenceRecord:
    setup = SourceSetup(run.task, request_record)
    runs = [_SourceRun(spec, spec.create(setup)) for spec in sources_for(run.request)]
    failures: list[FailedSource] = []
    for source_run in runs:
        await _read_source(run, source_run, list(queries.queries))
        failure = source_run.hits.failure
        if failure is not None:
            failures.append(failure)
            run.progress("evidence", f"failed ({failure.code})", source=source_run.spec.source_type)
            if not run.request.allow_partial:
                raise run.fail("blocked", "RESEARCH_SOURCE_FAILED", "a source failed and partial results are not "
                               "allowed", failed_sources=tuple(failures))
            continue
        if not source_run.passages:
            run.progress("evidence", "hits", source=source_run.spec.source_type, count=0)
    evidence, contexts = _located(run, runs)
    if not evidence and failures:
        raise run.fail("blocked", "RESEARCH_SOURCE_FAILED", "a source failed and no valid evidence remains",
                       failed_sources=tuple(failures))
    answer = await answer_step(run, evidence, contexts)
    return EvidenceRecord(passages=tuple(p for source_run in runs for p in source_run.passages),
                          evidence=tuple(evidence), failed_sources=tuple(failures),
                          coverage=tuple(_coverage(source_run, evidence) for source_run in runs), answer=answer)


async def _read_source(run: StageRun, source_run: _SourceRun, queries: list[QueryRecord]) -> None:
    """One source's graph: its search (and read) nodes, then the excerpt choice depending on all of them."""
    source = source_run.source
    plan = source.plan(queries)
    if plan is None:  # nothing to search (no knowledge keys): the source still says what it would have searched
        source_run.hits = source.collect(queries, {})
        return
    deps = [node.id for node in plan.nodes]
    choose = f"excerpts-{source_run.spec.prefix}"

    def choose_input(_input: Any, results: Mapping[str, NodeResult[Any]]) -> Any:
        try:
            source_run.hits = source.collect(queries, results)
        except DittoError as error:  # a node answered with the wrong shape
            logger.exception("the %s source's answer could not be read", source_run.spec.source_type)
            source_run.hits = SourceHits(failure=FailedSource(source=source_run.spec.source_type, code=error.code,
                                                              message="the source answered with the wrong shape"))
        if source_run.hits.failure is not None:
            return SKIP
        source_run.passages = name_passages(source_run.spec.prefix, source_run.hits.passages)
        if not source_run.passages:
            return SKIP
        source_run.task = excerpt_task(run.request.question, source, source_run.passages, queries)
        run.progress("evidence", "hits", source=source_run.spec.source_type, count=len(source_run.passages))
        run.progress("evidence", "choosing excerpts", source=source_run.spec.source_type,
                     count=len(source_run.passages))
        return run.model_input(source_run.task)

    plan = plan.node(choose, infer_sample_node.type, deps, choose_input)
    result = await run.run("evidence", plan)
    if choose in result.skipped:
        return
    chosen = result.results.get(choose)
    if chosen is not None and chosen.error is not None and chosen.error.code == "GRAPH_INPUT_FAILED":
        logger.error("collecting the %s source failed: %s", source_run.spec.source_type, chosen.error.message)
        raise run.fail("failed", "RESEARCH_SOURCE_FAILED", f"the {source_run.spec.source_type} source could not be "
                                                           "read")
    assert source_run.task is not None
    task, passages = source_run.task, source_run.passages
    source_run.excerpts = await run.checked(
        "evidence", f"excerpts-{source_run.spec.prefix}", task, run.answer_of(chosen).parsed,
        lambda parsed: verify_excerpts(parsed, task, passages), lambda message: _named(message, passages))


async def answer_step(run: StageRun, evidence: Sequence[Evidence], contexts: Mapping[str, str]) -> Answer | None:
    """The model answers from the verified evidence (no evidence, no answer); a refused answer gets one retry.

    ``contexts`` maps an evidence id to where its quote sits (see :func:`_located`)."""
    if not evidence:
        return None
    task = AnswerTask(question=run.request.question,
                      evidence=tuple(AnswerEvidence(id=item.id, quote=item.quote, context=contexts.get(item.id))
                                     for item in evidence))
    kind = "extractive" if run.request.model.provider == "builtin:extractive" else "model"
    answer = await run.ask("evidence", "answer", task)
    return await run.checked("evidence", "answer", task, answer.parsed,
                             lambda parsed: verify_answer(parsed, evidence, kind),
                             lambda message: f"the answer was refused: {message}")


def _named(message: str, passages: Sequence[Passage]) -> str:
    """A rejection message that also names the file or URL of the passage it is about."""
    for passage in passages:
        if message.endswith(f"source {passage.id}"):
            return f"{message} ({passage.uri})"
    return message


def _located(run: StageRun, runs: Sequence[_SourceRun]) -> tuple[list[Evidence], dict[str, str]]:
    """Check each excerpt against its snapshot file on disk and record offsets and lines.

    Also returns each evidence id's context for the answer: its passage's heading path, else a
    document's file name (what a quote is about when it does not say so itself)."""
    evidence = []
    contexts: dict[str, str] = {}
    texts: dict[str, str] = {}
    number = 0
    for source_run in runs:
        for excerpt in source_run.excerpts:
            number += 1
            passage = excerpt.passage
            digest = passage.snapshot_sha256
            if digest not in texts:
                try:
                    texts[digest] = snapshot_text(run.task.snapshots / digest)
                except (OSError, UnicodeDecodeError):
                    raise run.fail("failed", "RESEARCH_QUOTE_NOT_FOUND", "a snapshot is missing") from None
            text = texts[digest]
            if text[excerpt.start:excerpt.end] != excerpt.quote:
                raise run.fail("rejected", "RESEARCH_QUOTE_NOT_FOUND", "a quote is not verbatim in its snapshot")
            line_start, line_end = line_range(text, excerpt.start, excerpt.end)
            evidence.append(Evidence(
                id=f"e{number}", source_type=source_run.spec.source_type,
                uri=passage.uri, snapshot_sha256=digest, quote=excerpt.quote, start=excerpt.start, end=excerpt.end,
                line_start=line_start, line_end=line_end, query=passage.query, found_by=passage.found_by,
                locator=dict(passage.locator) if passage.locator else None))
            name = unquote(passage.uri.rsplit("/", 1)[-1]) if passage.source_type == "document" else ""
            if passage.context or name:
                contexts[f"e{number}"] = (passage.context or name)[:1000]
    return evidence, contexts


def _coverage(source_run: _SourceRun, evidence: Sequence[Evidence]) -> Coverage:
    source_type = source_run.spec.source_type
    count = sum(1 for item in evidence if item.source_type == source_type)
    hits = len(source_run.passages)
    status = ("failed" if source_run.hits.failure is not None else "no-hits" if hits == 0
              else "evidence" if count else "no-excerpt")
    return Coverage(source=source_type, status=status, hits=hits, evidence=count,  # type: ignore[arg-type]
                    notes=source_run.hits.notes, searched=source_run.hits.searched)
