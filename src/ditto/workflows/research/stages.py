"""The task controller: request → queries → evidence → brief inside one ``runtime.loop()`` (seed 004).

Every model, source and store call is a public node executed through the
loop's :class:`~ditto.runtime.LoopContext` (stage graphs via ``loop.run``,
single steps via ``loop.invoke``), so the whole task shares one budget of 1024
graph node executions. After each stage its result is archived in MEMORY
(:mod:`.checkpoints`); a resumed task starts after the last archived stage and
never calls the model or a source again for it.

Sources are read in a fixed order (documents, internal knowledge, external
knowledge, web); the queries of one source run concurrently inside its graph.
A source that fails is listed in ``failedSources`` and blocks the brief unless
``allow_partial`` is set and valid evidence remains; a source without hits is
not a failure.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import logging
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from ...contracts import thaw_json
from ...contracts.json import plain_json
from ...errors import DittoError, GraphError, InvalidArgumentError, RoutingError
from ...runtime import GraphResult, LoopContext, NodeError, NodeResult, Runtime, graph
from ...worker.infer import ExcerptPassage, ExcerptTask, QueryTask, response_format, task_messages
from .brief import brief_json, brief_markdown, summarize
from .checkpoints import CheckpointStore
from .config import MAX_EXCERPTS_PER_GROUP, MAX_QUOTE_CHARS, MAX_RECORDS_PER_QUERY, ProgressEvent, ResearchOptions
from .errors import ResearchError
from .sources.documents import DOCUMENTS_TARGET
from .sources.knowledge import (
    EXTERNAL_TARGET,
    import_internal_knowledge,
    internal_hits,
    internal_memory_key,
    internal_search_input,
)
from .sources.web import web_group
from .taskdir import ResearchTask, TaskLock, atomic_write, open_task, snapshot_text
from .types import (
    Brief,
    Coverage,
    Entry,
    Evidence,
    FailedSource,
    QueryRecord,
    ResearchResult,
    ResultError,
    SourceType,
    Stage,
)
from .verification import Passage, line_range, verify_excerpts, verify_queries

__all__ = ["run_entry", "source_groups"]

logger = logging.getLogger(__name__)

_PREFIX: Final[dict[str, str]] = {"document": "doc", "knowledge-internal": "int", "knowledge-external": "ext",
                                   "web": "web"}
#: The most characters of one knowledge record shown to the model as a passage.
_MAX_RECORD_PASSAGE: Final = 20_000


def source_groups(task: ResearchTask) -> list[SourceType]:
    """The source groups a request reads, in reading order (internal and external knowledge apart)."""
    request = task.request
    groups: list[SourceType] = []
    if "documents" in request.sources:
        groups.append("document")
    if "knowledge" in request.sources:
        if request.knowledge in ("internal", "both"):
            groups.append("knowledge-internal")
        if request.knowledge in ("external", "both"):
            groups.append("knowledge-external")
    if "web" in request.sources:
        groups.append("web")
    return groups


def external_target(task: ResearchTask) -> str:
    kb = task.request.kb
    return kb[len("target:"):] if kb is not None and kb.startswith("target:") else EXTERNAL_TARGET


def external_base_uri(task: ResearchTask) -> str:
    """Where external records live, without credentials: a file URI, a DSN host/db or a target name."""
    kb = task.request.kb
    if kb is None:
        return task.knowledge_path.as_uri()
    if kb.startswith("target:"):
        return f"retrieval:{kb[len('target:'):]}"
    if kb.startswith(("postgres://", "postgresql://")):
        from urllib.parse import urlsplit

        parts = urlsplit(kb)
        host = parts.hostname or "localhost"
        port = f":{parts.port}" if parts.port else ""
        return f"postgresql://{host}{port}{parts.path}"
    return Path(kb).resolve().as_uri()


def _parsed(output: Any) -> Any:
    parsed = output.get("parsed") if isinstance(output, Mapping) else getattr(output, "parsed", None)
    if parsed is None:  # a model that answered text only: its content must be the JSON
        message = output.get("message") if isinstance(output, Mapping) else getattr(output, "message", None)
        content = message.get("content") if isinstance(message, Mapping) else getattr(message, "content", None)
        if isinstance(content, str):
            try:
                return json.loads(content)
            except ValueError:
                return None
    return _plain(parsed)


def _plain(value: Any) -> Any:
    """A plain, mutable copy of a node's output: models as camelCase objects, tuples as lists."""
    return thaw_json(plain_json(value))


def _field(value: Any, name: str) -> Any:
    return value.get(name) if isinstance(value, Mapping) else getattr(value, name, None)


class _Outcome(Exception):
    """Ends the run early with a result (blocked, rejected, failed); nothing further is archived."""

    def __init__(self, result: ResearchResult) -> None:
        super().__init__(result.status)
        self.result = result


class _Controller:
    def __init__(self, task: ResearchTask, loop: LoopContext, options: ResearchOptions) -> None:
        self.task = task
        self.request = task.request
        self.loop = loop
        self.options = options
        self.checkpoints = CheckpointStore(self._invoke, task.request_id, str(task.directory), task.task_id)
        self.stage: Stage | None = None

    # -- plumbing -------------------------------------------------------------------
    def _trace(self, stage: str, node: str, result: NodeResult[Any], step: str | None = None,
               plan: str | None = None) -> None:
        record: dict[str, Any] = {"stage": stage, "node": node, "status": result.status}
        if plan is not None:
            record["graph"] = plan
        if step is not None:
            record["step"] = step
        if result.error is not None:
            record["code"] = result.error.code
        self.task.trace(record)

    def _check_signal(self) -> None:
        signal = self.loop.signal
        if signal is not None and signal.aborted:
            raise ResearchError.from_signal(signal.reason)

    async def _invoke(self, stage: str, node: str, input: Any) -> NodeResult[Any]:
        self._check_signal()
        try:
            result = await self.loop.invoke(node, input)
        except RoutingError as error:
            result = NodeResult("", node, "error", error=NodeError(error.code, error.message))
        self._trace(stage, node, result)
        self._check_signal()
        return result

    async def _run(self, stage: str, plan: Any, input: Any = None) -> GraphResult:
        self._check_signal()
        try:
            result = await self.loop.run(plan, input)
        except RoutingError as error:
            problem = NodeError(error.code, error.message)
            failed: dict[str, NodeResult[Any]] = {
                node.id: NodeResult("", node.node_type, "error", error=problem) for node in plan.nodes}
            result = GraphResult(plan.name, failed)
        for node_id, node_result in result.results.items():
            self._trace(stage, node_result.node, node_result, node_id, plan.name)
        self._check_signal()
        return result

    def _progress(self, stage: str, message: str, source: str | None = None, count: int | None = None) -> None:
        if self.options.progress is not None:
            self.options.progress(ProgressEvent(stage, message, source, count))

    async def _pause(self, point: str) -> None:
        if self.options.pause_at == point:
            sys.stderr.write(f"ditto-research-paused {point}\n")
            sys.stderr.flush()
            await asyncio.Event().wait()

    def _result(self, status: Any, **fields: Any) -> ResearchResult:
        return ResearchResult(status=status, request_id=self.task.request_id, directory=str(self.task.directory),
                              stage=self.stage, **fields)

    def _fail(self, status: Any, code: str, message: str, **fields: Any) -> _Outcome:
        return _Outcome(self._result(status, error=ResultError(code=code, message=message), **fields))

    async def _model(self, stage: str, task: QueryTask | ExcerptTask, step: str) -> Any:
        infer_input = {"model": self.request.model.to_json_dict(), "messages": task_messages(task),
                       "responseFormat": response_format(task)}
        plan = graph(f"research-{step}").node(step, "INFER.SAMPLE", (), lambda _input, _deps: infer_input)
        result = (await self._run(stage, plan))[step]
        if result.status != "success":
            code = result.error.code if result.error is not None else "UNKNOWN"
            raise self._fail("failed", "RESEARCH_MODEL_FAILED", f"the model call failed ({code})")
        return _parsed(result.output)

    # -- the task -------------------------------------------------------------------
    async def run(self) -> ResearchResult:
        archived = await self.checkpoints.load()
        cache = await self.checkpoints.sync_cache(archived)
        self._progress("resume", f"checkpoints: {', '.join(archived) or 'none'}; cache {cache}")
        request_data = archived.get("request")
        if request_data is None:
            request_data = await self._request_stage()
            await self.checkpoints.save("request", request_data)
        self.stage = "request"
        await self._pause("after:request")

        queries_data = archived.get("queries")
        if queries_data is None:
            queries_data = {"queries": [q.to_json_dict() for q in await self._queries_stage()]}
            await self.checkpoints.save("queries", queries_data)
        self.stage = "queries"
        queries = [QueryRecord.model_validate(item) for item in queries_data["queries"]]
        self._progress("queries", "; ".join(q.text for q in queries), count=len(queries))
        await self._pause("after:queries")
        if self.options.stop_after == "queries":
            return self._result("stopped", summary=f"stopped after queries: {len(queries)} query(ies)")

        evidence_data = archived.get("evidence")
        if evidence_data is None:
            evidence_data = await self._evidence_stage(queries, request_data)
            await self.checkpoints.save("evidence", evidence_data)
        self.stage = "evidence"
        await self._pause("after:evidence")
        if self.options.stop_after == "evidence":
            count = len(evidence_data["evidence"])
            return self._result("stopped", evidence=count, summary=f"stopped after evidence: {count} excerpt(s)",
                                failed_sources=tuple(evidence_data["failedSources"]))

        brief_data = archived.get("brief")
        if brief_data is None:
            brief_data = self._build_brief(queries, evidence_data).to_json_dict()
            await self.checkpoints.save("brief", brief_data)
        self.stage = "brief"
        brief = Brief.model_validate(brief_data)
        await self._pause("after:brief")
        return self._write_artifacts(brief)

    async def _request_stage(self) -> dict[str, Any]:
        request = self.request
        keys: list[str] = []
        imported = 0
        if "knowledge" in request.sources and request.knowledge in ("internal", "both"):
            if request.memory is None:
                records = self._sample_internal_records()
                imported = await self._import(records)
                keys = [record["key"] for record in records]
            if request.internal_knowledge_keys is not None:
                keys = list(request.internal_knowledge_keys)
            elif request.memory is not None:
                keys = await self._list_internal_keys()
        self._progress("request", f"new task {self.task.request_id}", count=imported)
        return {"requestId": self.task.request_id, "internalKeys": keys[:12], "imported": imported}

    def _sample_internal_records(self) -> list[dict[str, str]]:
        try:
            document = json.loads(self.task.internal_knowledge_path.read_text(encoding="utf-8"))
            records = document["records"]
            if document.get("tenant") != self.request.tenant:
                return []
            return [{"key": str(record["key"]), "text": str(record["text"])} for record in records]
        except (OSError, ValueError, KeyError, TypeError):
            raise self._fail("failed", "RESEARCH_INVALID_INPUT", "internal-knowledge.json cannot be read") from None

    async def _import(self, records: Sequence[Mapping[str, Any]]) -> int:
        runtime = _LoopRuntime(self)
        try:
            return await import_internal_knowledge(runtime, tenant=self.request.tenant, records=records)
        except ResearchError as error:
            raise self._fail("failed", error.code, error.message) from None

    async def _list_internal_keys(self) -> list[str]:
        prefix = internal_memory_key(self.request.tenant, "")
        result = await self._invoke("request", "MEMORY.SEARCH",
                                    {"query": None, "limit": 12, "filter": {"keyPrefix": prefix}})
        if result.status != "success":
            raise self._fail("failed", "RESEARCH_STORE_UNAVAILABLE", "MEMORY is unavailable")
        keys = []
        for hit in result.output or ():
            key = _field(_field(hit, "memory"), "key")
            if isinstance(key, str) and key.startswith(prefix):
                keys.append(key[len(prefix):])
        return sorted(keys)

    async def _queries_stage(self) -> list[QueryRecord]:
        request = self.request
        vocabulary = request.vocabulary
        if request.entry == "rewrite":
            task = QueryTask(question=request.question, vocabulary=vocabulary, min_queries=1, max_queries=1)
            provenance = "rewrite"
        elif request.entry == "expand":
            assert vocabulary is not None
            task = QueryTask(question=request.question, vocabulary=vocabulary, min_queries=2,
                             max_queries=min(3, len(vocabulary)))
            provenance = "expand"
        else:
            task = QueryTask(question=request.question, vocabulary=vocabulary, min_queries=1,
                             max_queries=2 if vocabulary is None else min(3, len(vocabulary)))
            provenance = "model"
        self._progress("queries", "choosing queries")
        answer = await self._model("queries", task, "choose-queries")
        try:
            return verify_queries(answer, task, provenance)
        except ResearchError as error:
            raise self._fail("rejected", error.code, error.message) from None

    # -- evidence -------------------------------------------------------------------
    async def _evidence_stage(self, queries: list[QueryRecord], request_data: Mapping[str, Any]) -> dict[str, Any]:
        groups = source_groups(self.task)
        gathered: dict[str, list[Passage]] = {}
        hits: dict[str, int] = {}
        failures: list[FailedSource] = []
        for group in groups:
            self._progress("evidence", "searching", source=group)
            passages, failure = await self._gather(group, queries, request_data)
            hits[group] = len(passages)
            if failure is not None:
                failures.append(failure)
                self._progress("evidence", f"failed ({failure.code})", source=group)
                continue
            gathered[group] = passages
            self._progress("evidence", "hits", source=group, count=len(passages))
        if failures and not self.request.allow_partial:
            raise self._fail("blocked", "RESEARCH_SOURCE_FAILED", "a source failed and partial results are not "
                             "allowed", failed_sources=tuple(failures))
        await self._pause("mid:evidence")
        chosen: list[tuple[str, Any]] = []
        for group in groups:
            passages = gathered.get(group, [])
            if not passages:
                continue
            task = ExcerptTask(question=self.request.question,
                               passages=tuple(ExcerptPassage(source_id=p.id, text=p.text, context=p.context)
                                              for p in passages),
                               max_excerpts=min(MAX_EXCERPTS_PER_GROUP, 2 * len(passages)),
                               max_quote_chars=MAX_QUOTE_CHARS, max_per_source=2)
            self._progress("evidence", "choosing excerpts", source=group, count=len(passages))
            answer = await self._model("evidence", task, f"excerpts-{_PREFIX[group]}")
            try:
                excerpts = verify_excerpts(answer, task, passages)
            except ResearchError as error:
                raise self._fail("rejected", error.code, error.message, failed_sources=tuple(failures)) from None
            chosen.extend((group, excerpt) for excerpt in excerpts)
        evidence = self._located(chosen)
        if not evidence and failures:
            raise self._fail("blocked", "RESEARCH_SOURCE_FAILED", "a source failed and no valid evidence remains",
                             failed_sources=tuple(failures))
        coverage = []
        failed_groups = {failure.source for failure in failures}
        for group in groups:
            count = sum(1 for item in evidence if item.source_type == group)
            status = ("failed" if group in failed_groups else "no-hits" if hits[group] == 0
                      else "evidence" if count else "no-excerpt")
            coverage.append(Coverage.model_validate({"source": group, "status": status, "hits": hits[group],
                                                     "evidence": count}))
        if {item.source_type for item in evidence} - set(groups) or len(coverage) != len(groups):
            raise self._fail("rejected", "RESEARCH_COVERAGE_UNMET", "the evidence does not match the requested sources")
        return {"passages": [p.to_json() for ps in gathered.values() for p in ps],
                "evidence": [item.to_json_dict() for item in evidence],
                "failedSources": [failure.to_json_dict() for failure in failures],
                "coverage": [item.to_json_dict() for item in coverage]}

    def _located(self, chosen: list[tuple[str, Any]]) -> list[Evidence]:
        """Check each excerpt against its snapshot file on disk and record offsets and lines."""
        evidence = []
        texts: dict[str, str] = {}
        for number, (group, excerpt) in enumerate(chosen, start=1):
            passage = excerpt.passage
            digest = passage.snapshot_sha256
            if digest not in texts:
                try:
                    texts[digest] = snapshot_text(self.task.snapshots / digest)
                except (OSError, UnicodeDecodeError):
                    raise self._fail("failed", "RESEARCH_QUOTE_NOT_FOUND", "a snapshot is missing") from None
            text = texts[digest]
            if text[excerpt.start:excerpt.end] != excerpt.quote:
                raise self._fail("rejected", "RESEARCH_QUOTE_NOT_FOUND", "a quote is not verbatim in its snapshot")
            line_start, line_end = line_range(text, excerpt.start, excerpt.end)
            evidence.append(Evidence.model_validate({
                "id": f"e{number}", "sourceType": group, "uri": passage.uri, "snapshotSha256": digest,
                "quote": excerpt.quote, "start": excerpt.start, "end": excerpt.end, "lineStart": line_start,
                "lineEnd": line_end, "query": passage.query, "foundBy": passage.found_by,
                "locator": dict(passage.locator) if passage.locator else None}))
        return evidence

    async def _gather(self, group: str, queries: list[QueryRecord], request_data: Mapping[str, Any]
                      ) -> tuple[list[Passage], FailedSource | None]:
        if group == "web":
            return await web_group(self, queries)
        texts = [query.text for query in queries]
        plan = graph(f"research-{group}")
        keys = list(request_data.get("internalKeys") or [])
        if group == "knowledge-internal" and not keys:
            return [], None
        for index, text in enumerate(texts):
            if group == "document":
                node_input: Any = {"query": {"content": text}, "target": {"name": DOCUMENTS_TARGET},
                                   "limit": MAX_RECORDS_PER_QUERY}
                node = "RETRIEVAL.SEARCH"
            elif group == "knowledge-external":
                node_input = {"query": {"content": text}, "target": {"name": external_target(self.task)},
                              "limit": MAX_RECORDS_PER_QUERY}
                node = "RETRIEVAL.SEARCH"
            else:
                node_input = internal_search_input(text, self.request.tenant, keys)
                node = "MEMORY.SEARCH"
            plan = plan.node(f"q{index}", node, (), _constant(node_input))
        result = await self._run("evidence", plan)
        passages: dict[tuple[str, int, int], Passage] = {}
        for index, text in enumerate(texts):
            node_result = result[f"q{index}"]
            if node_result.status != "success":
                error = node_result.error
                return [], FailedSource(source=group, code=error.code if error else "UNKNOWN",
                                        message=error.message if error else "the source failed")
            for found in self._candidates(group, node_result, keys):
                key = (found.uri, found.start, found.end)
                if key in passages:
                    previous = passages[key]
                    if text not in previous.found_by:
                        passages[key] = _with_query(previous, text)
                    continue
                passages[key] = _renamed(found, f"{_PREFIX[group]}-{len(passages) + 1}", text)
        return list(passages.values()), None

    def _candidates(self, group: str, result: NodeResult[Any], keys: list[str]) -> list[Passage]:
        found: list[Passage] = []
        if group == "knowledge-internal":
            for record in internal_hits(result, self.request, keys):
                found.append(self._record_passage(group, record.text, record.uri,
                                                  {"memoryKey": internal_memory_key(self.request.tenant, record.key)}))
            return found
        candidates = _field(result.output, "candidates") or ()
        for candidate in candidates[:MAX_RECORDS_PER_QUERY]:
            content = _field(candidate, "content")
            if group == "document":
                meta = _plain(_field(candidate, "metadata")) or {}
                found.append(Passage(id="", source_type=group, uri=meta["uri"], snapshot_sha256=meta["snapshotSha256"],
                                     text=content, start=meta["start"], end=meta["end"], query="", found_by=(),
                                     context=meta.get("heading")))
                continue
            text = content if isinstance(content, str) else json.dumps(_plain(content), ensure_ascii=False)
            source = _field(candidate, "source")
            ref = _field(source, "ref") or _field(candidate, "id") or ""
            target = _field(source, "target") or external_target(self.task)
            locator = {"target": target, "ref": ref}
            found.append(self._record_passage(group, text, f"{external_base_uri(self.task)}#{ref}", locator))
        return found

    def _record_passage(self, group: str, text: str, uri: str, locator: dict[str, Any]) -> Passage:
        digest = self.task.save_snapshot(text.encode("utf-8"))
        end = min(len(text), _MAX_RECORD_PASSAGE)
        return Passage(id="", source_type=group, uri=uri, snapshot_sha256=digest, text=text[:end], start=0, end=end,
                       query="", found_by=(), locator=locator)

    # -- brief ----------------------------------------------------------------------
    def _build_brief(self, queries: list[QueryRecord], evidence_data: Mapping[str, Any]) -> Brief:
        evidence = tuple(Evidence.model_validate(item) for item in evidence_data["evidence"])
        failures = tuple(FailedSource.model_validate(item) for item in evidence_data["failedSources"])
        coverage = tuple(Coverage.model_validate(item) for item in evidence_data["coverage"])
        status: Any = "partial" if evidence and failures else "completed" if evidence else "no-evidence"
        request = self.request
        return Brief(status=status, request_id=self.task.request_id, entry=request.entry, question=request.question,
                     tenant=request.tenant, sources=request.sources,
                     knowledge=request.knowledge if "knowledge" in request.sources else None, model=request.model,
                     queries=tuple(queries), evidence=evidence, citations=tuple(item.id for item in evidence),
                     failed_sources=failures, coverage=coverage,
                     created_at=dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"))

    def _write_artifacts(self, brief: Brief) -> ResearchResult:
        artifacts = self.task.artifacts
        json_path, md_path = artifacts / "brief.json", artifacts / "brief.md"
        try:
            artifacts.mkdir(exist_ok=True)
            atomic_write(json_path, brief_json(brief).encode("utf-8"))
            atomic_write(md_path, brief_markdown(brief).encode("utf-8"))
        except OSError:
            logger.exception("writing the brief failed")
            raise self._fail("failed", "RESEARCH_BRIEF_WRITE_FAILED",
                             "the brief could not be written; fix the artifacts folder and resume the task") from None
        self._progress("brief", summarize(brief), count=len(brief.citations))
        return self._result(brief.status, brief=str(json_path), brief_markdown=str(md_path), summary=summarize(brief),
                            evidence=len(brief.evidence), citations=len(brief.citations),
                            failed_sources=brief.failed_sources)


def _constant(value: Any) -> Any:
    """An ``input_fn`` that ignores the graph input and returns ``value``."""
    def input_fn(_input: Any, _deps: Any) -> Any:
        return value

    return input_fn


def _with_query(passage: Passage, query: str) -> Passage:
    return Passage(passage.id, passage.source_type, passage.uri, passage.snapshot_sha256, passage.text, passage.start,
                   passage.end, passage.query, (*passage.found_by, query), passage.locator, passage.page,
                   passage.context)


def _renamed(passage: Passage, identifier: str, query: str) -> Passage:
    return Passage(identifier, passage.source_type, passage.uri, passage.snapshot_sha256, passage.text, passage.start,
                   passage.end, query, (query,), passage.locator, passage.page, passage.context)


class _LoopRuntime:
    """A RuntimeClient whose calls go through the controller's loop (charged, traced)."""

    def __init__(self, controller: _Controller) -> None:
        self._controller = controller

    async def invoke(self, node: str, input: Any, *, signal: Any = None, timeout: float | None = None
                     ) -> NodeResult[Any]:
        return await self._controller._invoke("request", node, input)


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
    """Run (or resume) the task in ``input['directory']`` as ``entry`` on ``runtime``.

    Failures of the task itself (a blocked source, a rejected model answer, an
    unavailable store, a locked task, a brief that could not be written) are
    returned as a :class:`ResearchResult` with an ``error``; only a malformed
    input or a directory without a task raises :class:`ResearchError`.
    """
    task = open_task(_input_directory(input))
    if task.request.entry != entry:
        raise ResearchError("RESEARCH_REQUEST_MISMATCH", f"the task was created for {task.request.entry}, not {entry}")
    try:
        chosen = ResearchOptions.coerce(options)
    except InvalidArgumentError as error:
        raise ResearchError("RESEARCH_INVALID_INPUT", error.message) from None
    lock = TaskLock(task.directory)
    base: dict[str, Any] = {"request_id": task.request_id, "directory": str(task.directory)}
    try:
        lock.acquire()
    except ResearchError as error:
        return ResearchResult(status="failed", error=ResultError(code=error.code, message=error.message), **base)
    try:
        async def body(loop: LoopContext, _input: Any) -> ResearchResult:
            controller = _Controller(task, loop, chosen)
            try:
                return await controller.run()
            except _Outcome as outcome:
                return outcome.result
            except ResearchError as error:
                return controller._result("failed", error=ResultError(code=error.code, message=error.message))

        return await runtime.loop(body, None, max_executions=chosen.max_executions, signal=chosen.signal)
    except GraphError as error:
        code = "RESEARCH_BUDGET_EXHAUSTED" if error.code == "LOOP_BUDGET_EXHAUSTED" else "RESEARCH_INVALID_INPUT"
        return ResearchResult(status="failed", error=ResultError(code=code, message=error.message), **base)
    except DittoError as error:
        logger.exception("research task failed")
        return ResearchResult(status="failed", error=ResultError(code="RESEARCH_STORE_UNAVAILABLE",
                                                                 message=f"a worker failed ({error.code})"), **base)
    finally:
        lock.release()
