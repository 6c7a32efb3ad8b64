"""The brief stage: the brief from the archived queries and evidence, then ``brief.json`` and ``brief.md``.

The brief is checkpointed before it is written, so a failed write is retried
by resuming without calling the model or a source again.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from ..brief import brief_json, brief_markdown, summarize
from ..records import EvidenceRecord, QueriesRecord
from ..signing import sign_brief
from ..taskdir import atomic_write
from ..types import Brief, ModelRef, ResearchResult
from .run import StageRun

__all__ = ["brief_stage", "write_artifacts"]

logger = logging.getLogger("ditto.workflows.research")


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


async def brief_stage(run: StageRun, queries: QueriesRecord, evidence: EvidenceRecord) -> Brief:
    """``completed`` with evidence, ``partial`` with evidence and failed sources, else ``no-evidence``."""
    status: Any = ("partial" if evidence.evidence and evidence.failed_sources else
                   "completed" if evidence.evidence else "no-evidence")
    request = run.request
    model = request.model if queries.model is None else ModelRef(provider=request.model.provider,
                                                                 model=queries.model)
    return Brief(status=status, request_id=run.task.request_id, entry=request.entry, question=request.question,
                 tenant=request.tenant, sources=request.sources,
                 knowledge=request.knowledge if "knowledge" in request.sources else None, model=model,
                 queries=queries.queries, evidence=evidence.evidence,
                 citations=tuple(item.id for item in evidence.evidence), failed_sources=evidence.failed_sources,
                 coverage=evidence.coverage, created_at=_now())


def write_artifacts(run: StageRun, brief: Brief) -> ResearchResult:
    """Write ``artifacts/brief.json`` and ``brief.md`` atomically; a failure is retried by resuming."""
    artifacts = run.task.artifacts
    json_path, md_path = artifacts / "brief.json", artifacts / "brief.md"
    try:
        artifacts.mkdir(exist_ok=True)
        atomic_write(json_path, brief_json(brief).encode("utf-8"))
        atomic_write(md_path, brief_markdown(brief).encode("utf-8"))
        if run.options.signing_key is not None:
            sign_brief(run.task.directory, run.options.signing_key)
    except OSError:
        logger.exception("writing the brief failed")
        raise run.fail("failed", "RESEARCH_BRIEF_WRITE_FAILED",
                       "the brief could not be written; fix the artifacts folder and resume the task") from None
    run.progress("brief", summarize(brief), count=len(brief.citations))
    return run.result(brief.status, brief=str(json_path), brief_markdown=str(md_path), summary=summarize(brief),
                      evidence=len(brief.evidence), citations=len(brief.citations),
                      failed_sources=brief.failed_sources)
