"""``ditto verify <task-dir>``: re-check a finished brief offline against its task directory.

The task directory may have been tampered with, so nothing in it is trusted:
every file is read without following links, only if it is a regular file, up
to a size cap (:mod:`.untrusted_files`), and JSON is parsed with a depth cap.
In order:

1. ``artifacts/brief.json`` validates against the shipped JSON Schema (integers
   must be JSON integers: ``38.0`` and ``"38"`` are not) and is byte for byte
   what ditto writes for its content;
2. ``request.json`` still hashes to its ``requestId``, and the brief's request
   id, question, entry, tenant, sources, knowledge mode and model are the request's;
3. the queries keep the request's query contract (count, provenance,
   vocabulary); every evidence item comes from a source the request reads, in
   reading order, numbered ``e1``, ``e2``, … and found by a listed query; its
   ``uri`` and ``locator`` have the shape that source writes (a record of an
   index's JSONL/BEIR file: ``file://…#<percent-encoded id>`` and the same id in
   the locator);
4. every snapshot's ``raw`` hashes to its folder name (a web page's
   ``extracted.txt`` to ``locator.extractedSha256``), and every quote is the
   snapshot text at ``start:end`` on lines ``lineStart``-``lineEnd``;
5. citations are the evidence ids in order; ``status``, ``failedSources`` and
   ``coverage`` follow from the evidence and the request; the answer cites
   existing evidence, and an ``extractive`` answer's sentences are in its quotes;
6. ``brief.json`` equals the brief the task archived in its own
   ``memory.sqlite`` (:mod:`.archived`), and ``artifacts/brief.md`` is exactly
   ``brief_markdown(brief.json)``;
7. with a signing key, ``artifacts/brief.sig`` is a valid MAC (:mod:`.signing`).

Nothing is fetched or re-run. Once the archived brief is forged too, ``createdAt``,
coverage ``notes``/``searched``/``hits``, a model name the request left to the
provider and the folder of a sample file's URI have nothing left to be checked
against; a consistent forgery of snapshots, request, brief and ``memory.sqlite``
together is detectable only with a signature.

Example::

    problems = verify_task("ditto-tasks/task-20260101-120000-ab12cd")
    assert problems == []
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path, PurePosixPath
from typing import Any, Final
from urllib.parse import unquote, urlsplit

import jsonschema
from pydantic import ValidationError

from ...errors import describe_validation_error
from ...text.files import is_html_name
from .archived import ArchiveError, archived_brief
from .brief import brief_json, brief_markdown, brief_schema
from .config import MAX_PASSAGES_PER_PAGE
from .entries import entry_spec
from .signing import SIGNATURE_FILE, check_signature, key_id
from .sources.base import SourceLimits
from .sources.indexed_documents import record_uri
from .taskdir import task_path
from .types import Brief, Evidence, ResearchRequest, SourceType, request_id
from .untrusted_files import UntrustedFileError, list_dir, open_dir, parse_json, read_file
from .verification import line_range

__all__ = ["VerifyReport", "check_task", "verify_task"]

logger = logging.getLogger(__name__)

MAX_BRIEF_BYTES: Final = 16 << 20
MAX_REQUEST_BYTES: Final = 4 << 20
#: Larger than anything a source saves (4 MiB files and pages).
MAX_SNAPSHOT_BYTES: Final = 16 << 20
_DIGEST: Final = re.compile(r"[0-9a-f]{64}")
_TASK_ID: Final = re.compile(r"[0-9a-f]{16}")
_MAX_SCHEMA_PROBLEMS: Final = 5
_EXTERNAL_TARGET: Final = "research-knowledge"
_CREATED_AT: Final = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z")


def _is_timestamp(text: str) -> bool:
    import datetime as dt

    try:
        dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """What ``verify`` found: ``problems`` (empty: the brief checks out) and ``notes`` (information only)."""

    problems: tuple[str, ...]
    notes: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


def verify_task(directory: Path | str, *, signing_key: bytes | str | None = None) -> list[str]:
    """Every mismatch found, one line each; an empty list means the brief checks out.

    With ``signing_key`` the signature ``artifacts/brief.sig`` must be present
    and valid. A ``directory`` that is not a usable path raises ``ResearchError``
    (``RESEARCH_INVALID_INPUT``); anything wrong inside it is a problem, never an exception.
    """
    return list(check_task(directory, signing_key=signing_key).problems)


def check_task(directory: Path | str, *, signing_key: bytes | str | None = None) -> VerifyReport:
    """:func:`verify_task` with the notes too (whether the brief is signed)."""
    root = task_path(directory)
    key = signing_key.encode("utf-8") if isinstance(signing_key, str) else signing_key
    check = _Check(key or None)
    try:
        with open_dir(str(root)) as root_fd:
            check.run(root_fd)
    except UntrustedFileError as error:
        check.problem(f"the task directory {error.reason}")
    except Exception:  # a bug, never a tampering we know of: say so once, with the traceback in the log
        logger.exception("verify failed unexpectedly on %s", root)
        check.problem("verify failed unexpectedly (see the log); the brief is not verified")
    return VerifyReport(tuple(check.problems), tuple(check.notes))


@cache
def _validator() -> Any:
    """The brief schema's validator; an integer must be a JSON integer (``38.0`` is not one here)."""
    base: Any = jsonschema.Draft202012Validator
    checker = base.TYPE_CHECKER.redefine(
        "integer", lambda _checker, value: isinstance(value, int) and not isinstance(value, bool))
    strict = jsonschema.validators.extend(base, type_checker=checker)
    return strict(brief_schema(), format_checker=jsonschema.FormatChecker())


def _schema_problems(data: Any) -> list[str]:
    errors = sorted(_validator().iter_errors(data), key=lambda error: [str(part) for part in error.absolute_path])
    problems = []
    for error in errors[:_MAX_SCHEMA_PROBLEMS]:
        where = "/".join(str(part) for part in error.absolute_path) or "brief"
        message = error.message if len(error.message) <= 200 else error.message[:200] + "…"
        problems.append(f"brief.json does not match the brief schema: {where}: {message}")
    if len(errors) > _MAX_SCHEMA_PROBLEMS:
        problems.append(f"brief.json does not match the brief schema: {len(errors) - _MAX_SCHEMA_PROBLEMS} more")
    return problems


def source_groups(request: ResearchRequest) -> list[SourceType]:
    """The source types a request reads, in reading order (the order the brief lists them in)."""
    from .sources.catalog import sources_for

    return [spec.source_type for spec in sources_for(request)]


def _file_path(uri: str) -> PurePosixPath | None:
    parts = urlsplit(uri)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost") or parts.query or parts.fragment:
        return None
    path = PurePosixPath(unquote(parts.path))
    if not path.is_absolute() or ".." in path.parts or path.as_uri() != uri:  # only the form ditto writes
        return None
    return path


def _html_locator_fits(path: PurePosixPath, locator: Any) -> bool:
    """``locator`` is what the documents source writes for an HTML file: the hash of the text quotes point into."""
    return (is_html_name(path.name) and isinstance(locator, dict) and set(locator) == {"extractedSha256"}
            and isinstance(locator["extractedSha256"], str) and _DIGEST.fullmatch(locator["extractedSha256"])
            is not None)


def _record_fits(uri: str, locator: Any) -> bool:
    """``uri``/``locator`` are what the documents source writes for a JSONL/BEIR record of an index.

    The URI is rebuilt from the file path and the decoded id (:func:`record_uri`), so only the one
    encoding ditto writes passes, and the locator names the same id and a line of the file.
    """
    base, _, fragment = uri.partition("#")
    path = _file_path(base)
    record_id = _unquoted(fragment)
    if path is None or not record_id or record_uri(str(path), record_id) != uri:
        return False
    if not isinstance(locator, dict) or set(locator) != {"recordId", "recordLine"}:
        return False
    line = locator["recordLine"]
    return locator["recordId"] == record_id and type(line) is int and line >= 1


def _unquoted(fragment: str) -> str:
    """The percent-decoded ``fragment``; empty when its bytes are not UTF-8."""
    try:
        return unquote(fragment, errors="strict")
    except UnicodeDecodeError:
        return ""


def _external_base(request: ResearchRequest) -> tuple[str, ...]:
    """The URI bases external records of this request may have (the task folder may have moved)."""
    kb = request.kb
    if kb is None:
        return ()
    if kb.startswith("target:"):
        return (f"retrieval:{kb[len('target:'):]}",)
    if kb.startswith(("postgres://", "postgresql://")):
        parts = urlsplit(kb)
        port = f":{parts.port}" if parts.port else ""
        return (f"postgresql://{parts.hostname or 'localhost'}{port}{parts.path}",)
    path = PurePosixPath(kb)
    return (path.as_uri(),) if path.is_absolute() else ()  # a relative kb was resolved against a cwd now unknown


def _under(path: PurePosixPath, root: str) -> bool:
    """``path`` is ``root`` or inside it; a relative ``root`` (resolved against an unknown cwd) may sit anywhere."""
    base = PurePosixPath(root)
    if base.is_absolute():
        return path == base or base in path.parents
    size = len(base.parts)
    return any(path.parts[index:index + size] == base.parts for index in range(len(path.parts) - size + 1))


def _origin(url: str) -> str | None:
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        return None
    if parts.scheme != "https" or not parts.hostname:
        return None
    return f"https://{parts.hostname.lower()}{f':{port}' if port and port != 443 else ''}"


def _web_origins(request: ResearchRequest) -> set[str] | None:
    """The origins the request lets pages come from, when the request alone says (else ``None``)."""
    if request.allowed_origins is not None:
        return {origin for origin in map(_origin, request.allowed_origins) if origin}
    if request.urls is not None:
        return {origin for origin in map(_origin, request.urls) if origin}
    return None


class _Check:
    """One verification run: the problems and notes found so far, and the texts of the snapshots read."""

    def __init__(self, key: bytes | None) -> None:
        self.key = key
        self.problems: list[str] = []
        self.notes: list[str] = []
        self.texts: dict[str, str | None] = {}
        self.extracted: dict[str, str | None] = {}
        self.snapshots_fd: int | None = None

    def problem(self, text: str) -> None:
        self.problems.append(text)

    # -- the whole run ------------------------------------------------------------
    def run(self, root: int) -> None:
        try:
            with open_dir("artifacts", parent=root) as artifacts:
                self._run(root, artifacts)
        except UntrustedFileError as error:
            if error.missing:
                self.problem("artifacts/brief.json is missing")
            else:
                self.problem(f"artifacts {error.reason}")

    def _run(self, root: int, artifacts: int) -> None:
        try:
            brief_bytes = read_file(artifacts, "brief.json", MAX_BRIEF_BYTES)
        except UntrustedFileError as error:
            self.problem(f"artifacts/brief.json {error.reason}")
            return
        try:
            data = parse_json(brief_bytes)
        except ValueError as error:
            self.problem(f"artifacts/brief.json is not readable JSON: {error}")
            return
        schema = _schema_problems(data)
        if schema:
            self.problems.extend(schema)
            return
        try:
            brief = Brief.model_validate(data)
        except ValidationError as error:
            described = describe_validation_error(error, root="brief")
            self.problem(f"brief.json does not match the brief schema: {described}")
            return
        if not _CREATED_AT.fullmatch(brief.created_at) or not _is_timestamp(brief.created_at):
            self.problem("createdAt is not a UTC timestamp as ditto writes it (YYYY-MM-DDTHH:MM:SS.mmmZ)")
        if brief_bytes != brief_json(brief).encode("utf-8"):
            self.problem("brief.json is not byte for byte what ditto writes for its content (edited or reformatted)")
        request = self._request(root)
        if request is not None:
            self._against_request(brief, request)
        self._citations(brief)
        try:
            with open_dir("snapshots", parent=root) as snapshots:
                self.snapshots_fd = snapshots
                self._snapshots(brief)
                self.snapshots_fd = None
        except UntrustedFileError as error:
            self.problem(f"snapshots {error.reason}")
        self._outcome(brief, request)
        self._answer(brief)
        if request is not None and brief.request_id == request_id(request):  # else already reported
            self._archived(root, data, request)
        self._markdown(artifacts, brief)
        self._signature(artifacts, brief_bytes, data)

    # -- request.json -------------------------------------------------------------
    def _request(self, root: int) -> ResearchRequest | None:
        try:
            raw = read_file(root, "request.json", MAX_REQUEST_BYTES)
        except UntrustedFileError as error:
            if error.missing:
                self.problem("request.json: the directory holds no research task (request.json)")
            else:
                self.problem(f"request.json {error.reason}")
            return None
        try:
            document = parse_json(raw)
        except ValueError as error:
            self.problem(f"request.json is not readable JSON: {error}")
            return None
        if not isinstance(document, dict):
            self.problem("request.json is not an object")
            return None
        stored = document.pop("requestId", None)
        try:
            request = ResearchRequest.model_validate(document)
        except ValidationError as error:
            self.problem(f"request.json is invalid: {describe_validation_error(error)}")
            return None
        if stored != request_id(request):
            self.problem("request.json: request.json was changed after the task started; start a new task instead")
            return None
        return request

    def _against_request(self, brief: Brief, request: ResearchRequest) -> None:
        if brief.request_id != request_id(request):
            self.problem("brief.json belongs to another request than request.json")
            return
        if (request.question, request.entry) != (brief.question, brief.entry):
            self.problem("brief.json's question or entry differs from its request")
        knowledge = request.knowledge if "knowledge" in request.sources else None
        # the model name is the one that answered when the request left it to the provider's default
        model = request.model.model or brief.model.model
        for name, mine, theirs in (("tenant", brief.tenant, request.tenant),
                                   ("sources", brief.sources, request.sources),
                                   ("knowledge", brief.knowledge, knowledge),
                                   ("model", (brief.model.provider, brief.model.model),
                                    (request.model.provider, model))):
            if mine != theirs:
                self.problem(f"brief.json's {name} differs from its request")
        self._queries(brief, request)
        groups = source_groups(request)
        order = {group: index for index, group in enumerate(groups)}
        positions = []
        for item in brief.evidence:
            if item.source_type not in order:
                self.problem(f"{item.id}: sourceType {item.source_type} is not a source the request reads")
                continue
            positions.append(order[item.source_type])
            self._origin(item, request)
        if positions != sorted(positions):
            self.problem("evidence is not in the reading order of the sources")
        self._coverage(brief, groups)

    def _queries(self, brief: Brief, request: ResearchRequest) -> None:
        vocabulary = request.vocabulary
        provenance = {"rewrite": "rewrite", "expand": "expand"}.get(request.entry, "model")
        low, high = entry_spec(request.entry).query_counts(len(vocabulary) if vocabulary is not None else None)
        texts = [query.text for query in brief.queries]
        if not low <= len(texts) <= high:
            self.problem(f"brief.json lists {len(texts)} queries; the request's query contract allows {low}-{high}")
        if len(set(texts)) != len(texts):
            self.problem("a query is listed twice")
        for number, query in enumerate(brief.queries, start=1):
            if query.provenance != provenance:
                self.problem(f"query {number}: provenance {query.provenance} is not what {request.entry} writes "
                             f"({provenance})")
            if not query.text.strip() or len(query.text) > 1000 or "\x00" in query.text:
                self.problem(f"query {number} is blank or oversized")
            if vocabulary is None:
                if query.vocabulary_entry is not None:
                    self.problem(f"query {number} names a vocabulary entry, but the request has no vocabulary")
            elif query.text not in vocabulary or query.vocabulary_entry != query.text:
                self.problem(f"query {number} is not an entry of the request's vocabulary")
        listed = set(texts)
        for item in brief.evidence:
            if (item.query not in listed or not set(item.found_by) <= listed or item.query not in item.found_by
                    or len(set(item.found_by)) != len(item.found_by)):
                self.problem(f"{item.id}: found by a query the brief does not list")

    def _origin(self, item: Evidence, request: ResearchRequest) -> None:
        """``uri`` and ``locator`` have the shape the item's source writes, for this request.

        A registered source's own type has no known shape: only the common checks apply to it.
        """
        wrong = f"{item.id}: uri or locator does not fit a {item.source_type} of this request"
        locator = item.locator
        if item.source_type == "document" and "#" in item.uri:  # a record of a prepared index's JSONL/BEIR file
            if request.index is None or not _record_fits(item.uri, locator):
                self.problem(wrong)
        elif item.source_type == "document":
            path = _file_path(item.uri)
            if path is None or not (locator is None or _html_locator_fits(path, locator)):
                self.problem(wrong)
            elif request.index is not None:
                pass  # any file the index holds: its snapshot (the indexed bytes) proves the quote
            elif request.documents is None:
                if path.name != "policy.md":
                    self.problem(wrong)
            elif not any(_under(path, root) for root in request.documents):
                self.problem(f"{item.id}: the file is not one of the request's documents")
        elif item.source_type == "knowledge-internal":
            prefix = f"memory:knowledge:{request.tenant}:"
            key = item.uri[len(prefix):] if item.uri.startswith(prefix) else ""
            if not key or locator != {"memoryKey": f"knowledge:{request.tenant}:{key}"}:
                self.problem(wrong)
            elif request.internal_knowledge_keys is not None and key not in request.internal_knowledge_keys:
                self.problem(f"{item.id}: the knowledge key is not one the request allows")
        elif item.source_type == "knowledge-external":
            target = request.kb[len("target:"):] if request.kb and request.kb.startswith("target:") else (
                _EXTERNAL_TARGET)
            base, _, ref = item.uri.rpartition("#")
            bases = _external_base(request)
            fits_base = base in bases if bases else (
                (path := _file_path(base)) is not None and path.name == "knowledge.sqlite")
            if locator != {"target": target, "ref": ref} or not ref or not fits_base:
                self.problem(wrong)
        elif item.source_type == "web":
            origin = _origin(item.uri)
            if (origin is None or locator is None or set(locator) != {"url", "extractedSha256"}
                    or locator["url"] != item.uri or not isinstance(locator["extractedSha256"], str)
                    or not _DIGEST.fullmatch(locator["extractedSha256"])):
                self.problem(wrong)
                return
            origins = _web_origins(request)
            if origins is not None and origin not in origins:
                self.problem(f"{item.id}: the page's origin is not one the request allows")

    def _coverage(self, brief: Brief, groups: Sequence[SourceType]) -> None:
        listed = [item.source for item in brief.coverage]
        if listed != list(groups):
            self.problem(f"coverage does not list the request's sources in reading order ({', '.join(groups)})")
        counts = Counter(item.source_type for item in brief.evidence)
        failed = {source.source for source in brief.failed_sources}
        for source in brief.failed_sources:
            if source.source not in groups:
                self.problem(f"failedSources names {source.source}, which is not a source the request reads")
        if len(failed) != len(brief.failed_sources):
            self.problem("failedSources lists a source twice")
        for item in brief.coverage:
            count = counts[item.source]
            if item.evidence != count:
                self.problem(f"coverage of {item.source} counts {item.evidence} excerpt(s); the brief has {count}")
            expected = ("failed" if item.source in failed else "no-hits" if item.hits == 0
                        else "evidence" if count else "no-excerpt")
            if item.status != expected:
                self.problem(f"coverage of {item.source} is {item.status}; its counts and failures make it {expected}")
            if count > SourceLimits().excerpts_for(brief.question, item.hits):
                self.problem(f"coverage of {item.source} has more excerpts than its hits allow")
        pages = Counter(item.uri for item in brief.evidence if item.source_type == "web")
        if any(count > MAX_PASSAGES_PER_PAGE for count in pages.values()):
            self.problem(f"more than {MAX_PASSAGES_PER_PAGE} excerpts from one web page")

    # -- ids, citations, outcome --------------------------------------------------
    def _citations(self, brief: Brief) -> None:
        ids = [item.id for item in brief.evidence]
        if len(set(ids)) != len(ids):
            self.problem("evidence ids are not unique")
        elif ids != [f"e{number}" for number in range(1, len(ids) + 1)]:
            self.problem("evidence ids are not e1, e2, … in order (an item was removed, added or moved)")
        known = set(ids)
        for citation in brief.citations:
            if citation not in known:
                self.problem(f"citation {citation} names no evidence")
        if list(brief.citations) != ids and set(brief.citations) <= known:
            self.problem("citations are not the evidence ids in order")

    def _outcome(self, brief: Brief, request: ResearchRequest | None) -> None:
        expected = ("partial" if brief.evidence and brief.failed_sources else "completed" if brief.evidence
                    else "no-evidence")
        if brief.status != expected:
            self.problem(f"status {brief.status} does not follow from the evidence and failed sources ({expected})")
        if brief.failed_sources and not brief.evidence:
            self.problem("a failed source with no evidence blocks a task; no brief is written for it")
        if brief.failed_sources and request is not None and not request.allow_partial:
            self.problem("failedSources is not empty, but the request does not allow partial results")

    def _answer(self, brief: Brief) -> None:
        if brief.answer is None:
            return
        by_id = {item.id: item for item in brief.evidence}
        for number, sentence in enumerate(brief.answer.sentences, start=1):
            missing = [item for item in sentence.evidence if item not in by_id]
            if missing or not sentence.evidence:
                self.problem(f"answer sentence {number} cites evidence the brief does not have")
                continue
            if brief.answer.kind == "extractive" and not any(
                    sentence.text in by_id[item].quote for item in sentence.evidence):
                self.problem(f"answer sentence {number} is not copied from the quotes it cites (extractive)")

    # -- snapshots ----------------------------------------------------------------
    def _snapshots(self, brief: Brief) -> None:
        assert self.snapshots_fd is not None
        for name, kind in list_dir(self.snapshots_fd):
            if kind == "link":
                self.problem(f"snapshots: {name[:80]} is a symbolic link (links are not followed)")
            elif kind != "dir" or not _DIGEST.fullmatch(name):
                self.problem(f"snapshots: {name[:80]} is not a snapshot folder")
            else:
                self._text(name, "snapshots")
        for item in brief.evidence:
            digest = item.snapshot_sha256
            text = self._text(digest, item.id)
            if text is None:
                continue
            extracted = self.extracted.get(digest)
            expected = (item.locator or {}).get("extractedSha256")
            if expected is None and extracted is not None:  # quotes would point into text nothing vouches for
                self.problem(f"{item.id}: snapshot {digest} has an extracted.txt its evidence names no "
                             "extractedSha256 for")
                continue
            if expected is not None and (extracted is None or
                                         hashlib.sha256(extracted.encode("utf-8")).hexdigest() != expected):
                self.problem(f"{item.id}: the extracted text of snapshot {digest} changed (extractedSha256)")
                continue
            if not 0 <= item.start < item.end <= len(text):
                self.problem(f"{item.id}: offsets {item.start}-{item.end} are outside the snapshot")
                continue
            if text[item.start:item.end] != item.quote:
                self.problem(f"{item.id}: the quote is not the snapshot text at {item.start}-{item.end}")
                continue
            if line_range(text, item.start, item.end) != (item.line_start, item.line_end):
                self.problem(f"{item.id}: lines {item.line_start}-{item.line_end} do not match the quote's position")

    def _text(self, digest: str, who: str) -> str | None:
        """The snapshot text quotes point into (``extracted.txt`` or ``raw`` as UTF-8), checked once per digest."""
        if digest in self.texts:
            return self.texts[digest]
        self.texts[digest] = None
        assert self.snapshots_fd is not None
        try:
            with open_dir(digest, parent=self.snapshots_fd) as folder:
                raw = read_file(folder, "raw", MAX_SNAPSHOT_BYTES)
                try:
                    extracted_bytes: bytes | None = read_file(folder, "extracted.txt", MAX_SNAPSHOT_BYTES)
                except UntrustedFileError as error:
                    if not error.missing:
                        self.problem(f"{who}: snapshot {digest}/extracted.txt {error.reason}")
                        return None
                    extracted_bytes = None
        except UntrustedFileError as error:
            if error.missing:
                self.problem(f"{who}: snapshot {digest} is missing")
            else:
                self.problem(f"{who}: snapshot {digest} (or its raw file) {error.reason}")
            return None
        if hashlib.sha256(raw).hexdigest() != digest:
            self.problem(f"{who}: snapshot {digest} does not hash to its name (changed bytes)")
            return None
        try:
            extracted = extracted_bytes.decode("utf-8") if extracted_bytes is not None else None
            text = extracted if extracted is not None else raw.decode("utf-8")
        except UnicodeDecodeError:
            self.problem(f"{who}: snapshot {digest} text is unreadable")
            return None
        self.extracted[digest] = extracted
        self.texts[digest] = text
        return text

    # -- the archived brief, brief.md and the signature ---------------------------
    def _archived(self, root: int, data: dict[str, Any], request: ResearchRequest) -> None:
        if request.memory is not None:
            self.notes.append("the task's checkpoints live in the request's own MEMORY store; brief.json was not "
                              "compared with its archived copy")
            return
        try:
            task_id = self._task_id(root)
        except ArchiveError as error:
            self.problem(str(error))
            return
        try:
            # The task's own store holds the seed's keys; a task made by an earlier version ended them in
            # its task id.
            archived = archived_brief(root, request_id(request), None)
            if archived is None and task_id is not None:
                archived = archived_brief(root, request_id(request), task_id)
        except ArchiveError as error:
            self.problem(f"the archived brief cannot be read: {error}")
            return
        if archived is None:
            self.problem("memory.sqlite holds no archived brief for this request")
        elif archived != data:
            fields = sorted(key for key in set(archived) | set(data) if archived.get(key) != data.get(key))
            self.problem(f"brief.json differs from the brief the task archived in memory.sqlite ({', '.join(fields)})")

    @staticmethod
    def _task_id(root: int) -> str | None:
        """The task's random id from ``.task-id`` (``None`` for a task made before it existed)."""
        try:
            text = read_file(root, ".task-id", 64).decode("ascii").strip()
        except UntrustedFileError as error:
            if error.missing:
                return None
            raise ArchiveError(f".task-id {error.reason}") from None
        except UnicodeDecodeError:
            text = ""
        if not _TASK_ID.fullmatch(text):
            raise ArchiveError(".task-id is not a task id")
        return text

    def _markdown(self, artifacts: int, brief: Brief) -> None:
        try:
            markdown = read_file(artifacts, "brief.md", MAX_BRIEF_BYTES)
        except UntrustedFileError as error:
            self.problem(f"artifacts/brief.md {error.reason}")
            return
        if markdown != brief_markdown(brief).encode("utf-8"):
            self.problem("artifacts/brief.md is not the rendering of brief.json (edited, or left from another brief)")

    def _signature(self, artifacts: int, brief_bytes: bytes, data: Any) -> None:
        try:
            signature: bytes | None = read_file(artifacts, SIGNATURE_FILE, 64 << 10)
        except UntrustedFileError as error:
            if not error.missing:
                self.problem(f"artifacts/{SIGNATURE_FILE} {error.reason}")
                return
            signature = None
        if self.key is None:
            self.notes.append("unsigned" if signature is None else
                              "signed, but the signature was not checked (no signing key is set)")
            return
        if signature is None:
            self.problem(f"artifacts/{SIGNATURE_FILE} is missing, but a signing key is set")
            return
        failure = check_signature(self.key, brief_bytes, data, signature)
        if failure is not None:
            self.problem(failure)
        else:
            self.notes.append(f"signature valid (key {key_id(self.key)})")
