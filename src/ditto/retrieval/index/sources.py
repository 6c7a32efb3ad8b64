"""What ``ditto index SOURCE…`` reads: folders and files of text, JSONL records, BEIR corpora.

* **A folder or a text file** (``.md``, ``.markdown``, ``.txt``, ``.text``, ``.rst``) is
  walked like a research task's ``--documents`` (:mod:`ditto.text.files`: no link
  followed, only regular files, every skip named) and each file is cut into the
  research workflow's structure-aware passages (:func:`ditto.text.passages.cut_passages`).
  Passage id: ``<absolute path>#<ordinal>`` (1-based, in file order): stable while the
  file is unchanged; a changed file's passages are all replaced.
* **An HTML file** (``.html``, ``.htm``, ``.xhtml``, also gzip-compressed, where the ``web`` extra
  is installed) is read as its main text, extracted as a web read extracts a page (in the
  extraction child, within a deadline), and cut as web text is (one paragraph a line, title lines
  heading the paragraphs under them). Its passages' offsets and lines point into that text, which
  the index keeps beside the file's bytes (a research snapshot holds both, as a web page's does).
* **A ``.jsonl`` file**: one JSON object per line with ``id`` (string or integer),
  ``content`` (string) and optional ``metadata`` (object). **A BEIR corpus**: a folder
  holding ``corpus.jsonl`` (``_id``, ``title``, ``text``, ``metadata``), indexed as
  ``title`` + newline + ``text``. A record is one passage, kept whole, with the
  record's id; its "line" is its line in the file.

Bad input, decided once:

* a text file that cannot be read, holds a NUL byte (binary), is not UTF-8 or is larger
  than :attr:`IndexLimits.max_file_bytes` (16 MiB) is **skipped with a warning naming
  it** (the rest of the folder is still worth indexing);
* a source that yields nothing to index (an empty folder, only skipped files), a JSONL
  line that is not a JSON object or lacks ``id``/``content``, a record holding NUL or a
  lone surrogate, metadata using a key the index sets itself (:data:`RESERVED_METADATA`:
  it would be overwritten, and a filter on it would match the index's value, not the
  record's), a line over 1 MiB, and an id given twice are **refused**
  (``INDEX_INVALID_INPUT`` naming the file and line): the index is left as it was.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from ...contracts import InvalidJson, check_json
from ...errors import DittoError
from ...redaction import printable
from ...text.files import (
    DOCUMENT_SUFFIXES,
    HTML_SUFFIXES,
    WalkLimits,
    WalkReport,
    is_html_name,
    read_document,
    walk_documents,
)
from ...text.passages import Layout, cut_passages, heading_over
from ...text.sentences import ends_a_sentence
from .errors import INDEX_INVALID_INPUT, SearchIndexError

__all__ = ["INDEX_LIMITS", "LINK_LISTS_SKIPPED", "DocumentText", "HtmlReader", "IndexLimits", "PassageRow",
           "SourceFile", "discover", "document_suffixes", "document_text", "lists_links", "load_file"]

#: A JSONL line longer than this is refused (a record is a passage, not a corpus).
MAX_RECORD_BYTES: Final = 1 << 20
_READ_CHUNK: Final = 1 << 20
#: Passages a file may be cut into before the rest of it is refused as not a document.
_MAX_PASSAGES_PER_FILE: Final = 200_000


@dataclass(frozen=True, slots=True)
class IndexLimits:
    """The bounds of one indexing run (each one reached is a warning, never silent)."""

    max_files: int = 1_000_000
    max_entries: int = 5_000_000
    max_depth: int = 32
    max_file_bytes: int = 16 * 1024 * 1024
    max_records_file_bytes: int = 16 * 1024 * 1024 * 1024

    def walk(self) -> WalkLimits:
        return WalkLimits(max_files=self.max_files, max_entries=self.max_entries, max_depth=self.max_depth,
                          max_file_bytes=self.max_file_bytes, max_total_bytes=1 << 62, max_passages=1 << 62)


INDEX_LIMITS: Final = IndexLimits()

FileKind = Literal["text", "records"]


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A file found under a source: where, what kind, and its size and time (to skip unchanged files)."""

    path: str
    kind: FileKind
    size: int
    mtime_ns: int
    beir: bool = False


@dataclass(frozen=True, slots=True)
class PassageRow:
    """One passage as stored in ``passages`` (and, with its search text, in BM25 and the vectors)."""

    id: str
    path: str
    ordinal: int
    start: int
    end: int
    line_start: int
    line_end: int
    sha256: str
    heading: str | None
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def search_text(self) -> str:
        """What BM25 and the embedding model see: the heading path over the passage (as research scores it)."""
        return heading_over(self.text, self.heading)

    def search_metadata(self) -> dict[str, Any]:
        """The metadata searches return and filter on: the passage's own plus where it lies
        (:data:`RESERVED_METADATA`, which a record's own metadata may not use).

        Kept with the BM25 document, so a search builds its candidates from memory, not SQLite.
        """
        return {**self.metadata, "path": self.path, "lineStart": self.line_start, "lineEnd": self.line_end,
                "start": self.start, "end": self.end, "heading": self.heading, "sha256": self.sha256}


@dataclass(slots=True)
class LoadedFile:
    """A file read and cut: its hash, its exact bytes (text files: research snapshots), its passages, and for an
    HTML file the main text they were cut from."""

    source: SourceFile
    sha256: str
    raw: bytes | None
    passages: list[PassageRow]
    extracted: str | None = None


@dataclass(frozen=True, slots=True)
class DocumentText:
    """What a document file says: the text its passages are cut from and quoted in, and how its lines make
    paragraphs. ``extracted`` is true for HTML, whose text is not its bytes but its extracted main text."""

    text: str
    extracted: bool = False

    @property
    def layout(self) -> Layout:
        return "lines" if self.extracted else "wrapped"


#: Reads an HTML file's bytes as its main text; raises a :class:`~ditto.errors.DittoError` saying why it cannot
#: (the web reader's extraction: ``ditto.worker.interaction.extractor.html_document_reader``).
HtmlReader = Callable[[bytes], str]


#: How :func:`document_text` says that HTML pages were skipped as :func:`lists_links` (one note for them all).
LINK_LISTS_SKIPPED: Final = "HTML page(s) skipped: lists of links or index terms, not prose"
#: A page's text is a list of links when fewer of its characters than this are in lines that read as prose.
_LIST_PROSE_SHARE: Final = 0.3
#: ... and it has at least this many lines (a short page is judged by nothing of the kind).
_LIST_MIN_LINES: Final = 20
#: What may close a sentence after its full stop ('… value."', "(… too.)").
_CLOSERS: Final = "'\"”’)]"
#: A line of code as a page shows it: ending in ``;``, ``{``, ``(``, ``)``, ``,``, ``=``, ``\`` or ``*/``.
_ENDS_CODE = re.compile(r"(?:[;{(),=\\]|\*/)$")


def lists_links(text: str) -> bool:
    """Whether a page's extracted ``text`` is a list of links or index terms rather than prose: a manual's
    keyword index, site map or cross-reference (SQLite's ``keyword_index.html``, ``sitemap.html``, a Sphinx
    ``genindex.html``), whose lines name pages ("sqrt() SQL function", "→ RELEASE SAVEPOINT savepoint").
    Such a page matches every question's words in a few characters, takes a document's place among those
    shown, and says nothing a brief could quote. Prose is a line that ends a sentence or holds eight words, and
    a line of code counts with it (libffi's closure example is a page of code); a list is at least
    :data:`_LIST_MIN_LINES` lines with under :data:`_LIST_PROSE_SHARE` of the characters in either. On the
    HTML documentation of this machine (SQLite, Node.js, libffi, libxslt, Valgrind) the index pages, site maps,
    cross-references and syntax diagrams are at 0.00–0.27 and every other page at 0.41 and up.
    """
    lines = [line.strip() for line in text.split("\n")]
    lines = [line for line in lines if line]
    if len(lines) < _LIST_MIN_LINES:
        return False
    prose = sum(len(line) for line in lines
                if ends_a_sentence(line.rstrip(_CLOSERS)) or _ENDS_CODE.search(line) or len(line.split()) >= 8)
    return prose < _LIST_PROSE_SHARE * sum(len(line) for line in lines)


def document_suffixes(html: bool) -> frozenset[str]:
    """The suffixes of a folder's documents: Markdown and plain text, and HTML when there is a reader for it."""
    return DOCUMENT_SUFFIXES | HTML_SUFFIXES if html else DOCUMENT_SUFFIXES


def document_text(path: Path, raw: bytes, report: WalkReport, *, html: HtmlReader | None) -> DocumentText | None:
    """The text of the document file ``path`` whose bytes are ``raw``, or ``None`` (skipped, with a note).

    Binary files (a NUL byte) are skipped; Markdown and plain text must be UTF-8; HTML is read as its main
    text by ``html`` (whatever its encoding), and skipped, named, without one.
    """
    if b"\x00" in raw:
        report.note(f"{printable(path)} skipped: it holds NUL bytes (a binary file, not text)")
        return None
    if is_html_name(path.name):
        if html is None:
            report.note(f"{printable(path)} skipped: reading HTML needs the web extra (ditto-agents[web])")
            return None
        try:
            text = html(raw)
        except DittoError as error:
            report.note(f"{printable(path)} skipped: its HTML could not be read as text ({error.message})")
            return None
        if not text.strip():
            report.note(f"{printable(path)} skipped: no main text was found in its HTML")
            return None
        if lists_links(text):
            report.tally(LINK_LISTS_SKIPPED, printable(path))
            return None
        return DocumentText(text, extracted=True)
    try:
        return DocumentText(raw.decode("utf-8"))
    except UnicodeDecodeError:
        report.note(f"{printable(path)} skipped: not UTF-8")
        return None


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_size, info.st_mtime_ns) if stat.S_ISREG(info.st_mode) else None


def discover(roots: Sequence[Path], *, ignore: Sequence[str] = (), limits: IndexLimits = INDEX_LIMITS,
             report: WalkReport, records: bool = True, html: bool = False) -> Iterator[SourceFile]:
    """The files under ``roots``, in a stable order; skips and caps are notes in ``report``.

    ``records=False`` reads every root as text (a research task's ``--documents``, where a
    ``.jsonl`` file named as a root is a document like any other). With records, a ``.jsonl``
    file met inside a folder is named in the report and not read: only one named as a root is
    a record file.
    """
    text_roots: list[Path] = []
    named: set[str] = set()  # record files named as roots: met again inside a folder, they are not news
    for root in roots:
        beir = records and root.is_dir() and (root / "corpus.jsonl").is_file()
        if beir or (records and root.suffix.lower() == ".jsonl" and not root.is_dir()):
            path = root / "corpus.jsonl" if beir else root
            found = _stat(path)
            if found is None:
                raise SearchIndexError(INDEX_INVALID_INPUT, f"{printable(path)} cannot be read (or is not a "
                                                            "regular file)")
            report.roots_usable += 1
            named.add(str(path.resolve()))
            yield SourceFile(str(path.resolve()), "records", found[0], found[1], beir=beir)
        else:
            text_roots.append(root)
    if text_roots:
        # Resolved once here, so the paths walked below them are canonical already (the walk follows no
        # link below a root): no per-file resolve(), which costs a system call per path component.
        text_roots = [Path(os.path.realpath(root)) if os.path.lexists(root) else root for root in text_roots]
        suffixes = document_suffixes(html) | {".jsonl"} if records else document_suffixes(html)
        for path in walk_documents(text_roots, ignore=ignore, suffixes=suffixes, limits=limits.walk(),
                                   report=report):
            if path.suffix.lower() == ".jsonl":  # met inside a folder: a root .jsonl is a record file above
                # Not read: any .jsonl (logs, a BEIR folder's queries) would otherwise have to be a record file.
                if str(path) in named:
                    continue
                report.note(f"{printable(path)} skipped: a JSONL file inside a folder is not read; name it as a "
                            "source to index its records")
                continue
            found = _stat(path)
            if found is None:
                report.note(f"{printable(path)} skipped: it vanished or is not a regular file")
                continue
            yield SourceFile(str(path), "text", found[0], found[1])


def load_file(source: SourceFile, *, limits: IndexLimits = INDEX_LIMITS, report: WalkReport,
              html: HtmlReader | None = None) -> LoadedFile | None:
    """Read and cut ``source``; ``None`` when a text file is skipped (noted), ``INDEX_INVALID_INPUT`` for records."""
    if source.kind == "records":
        return _load_records(source, limits)
    path = Path(source.path)
    raw = read_document(path, limits=limits.walk(), report=report)
    if raw is None:
        return None
    read = document_text(path, raw, report, html=html)
    if read is None:
        return None
    text = read.text
    digest = hashlib.sha256(raw).hexdigest()
    suffix = path.suffix.lower()
    passages = []
    for ordinal, span in enumerate(cut_passages(text, layout=read.layout), start=1):
        if ordinal > _MAX_PASSAGES_PER_FILE:
            report.note(f"{printable(path)}: only its first {_MAX_PASSAGES_PER_FILE} passages are indexed", cap=True)
            break
        body = text[span.start:span.end]
        passages.append(PassageRow(
            id=f"{source.path}#{ordinal}", path=source.path, ordinal=ordinal, start=span.start, end=span.end,
            line_start=span.line_start, line_end=span.line_end, sha256=_text_hash(body), heading=span.heading,
            text=body, metadata={"path": source.path, "suffix": suffix}))
    return LoadedFile(source, digest, raw, passages, extracted=text if read.extracted else None)


def _text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


#: Metadata keys every hit carries from the index itself (where the passage lies); a record may not set them.
RESERVED_METADATA: Final = ("path", "lineStart", "lineEnd", "start", "end", "heading", "sha256")


def _refuse(path: str, number: int, why: str) -> SearchIndexError:
    return SearchIndexError(INDEX_INVALID_INPUT, f"{printable(path)} line {number}: {why}")


def _load_records(source: SourceFile, limits: IndexLimits) -> LoadedFile:
    path = source.path
    if source.size > limits.max_records_file_bytes:
        raise SearchIndexError(INDEX_INVALID_INPUT, f"{printable(path)} is larger than "
                                                    f"{limits.max_records_file_bytes} bytes")
    digest = hashlib.sha256()
    passages: list[PassageRow] = []
    seen: set[str] = set()
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        raise SearchIndexError(INDEX_INVALID_INPUT, f"{printable(path)} cannot be read") from None
    with os.fdopen(fd, "rb") as handle:
        for number, line in enumerate(_lines(handle, digest, path), start=1):
            if not line.strip():
                continue
            row = _record(path, number, line, beir=source.beir)
            if row.id in seen:
                raise _refuse(path, number, f"the id {printable(row.id)} is given twice")
            seen.add(row.id)
            passages.append(row)
    if not passages:
        raise SearchIndexError(INDEX_INVALID_INPUT, f"{printable(path)} holds no record")
    return LoadedFile(source, digest.hexdigest(), None, passages)


def _lines(handle: Any, digest: Any, path: str) -> Iterator[bytes]:
    """The file's lines (hashing every byte), each at most :data:`MAX_RECORD_BYTES`."""
    pending = b""
    number = 0
    while True:
        chunk = handle.read(_READ_CHUNK)
        if not chunk:
            break
        digest.update(chunk)
        pending += chunk
        *complete, pending = pending.split(b"\n")
        for line in complete:
            number += 1
            if len(line) > MAX_RECORD_BYTES:
                raise _refuse(path, number, f"longer than {MAX_RECORD_BYTES} bytes")
            yield line
        if len(pending) > MAX_RECORD_BYTES:
            raise _refuse(path, number + 1, f"longer than {MAX_RECORD_BYTES} bytes")
    if pending:
        yield pending


def _record(path: str, number: int, line: bytes, *, beir: bool) -> PassageRow:
    try:
        value = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError:
        raise _refuse(path, number, "not UTF-8") from None
    except ValueError:
        raise _refuse(path, number, "not valid JSON") from None
    if not isinstance(value, dict):
        raise _refuse(path, number, "not a JSON object")
    raw_id = value.get("_id" if beir else "id")
    if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)) or raw_id == "":
        raise _refuse(path, number, f"needs a non-empty string or integer {'_id' if beir else 'id'}")
    record_id = str(raw_id)
    if beir:
        title, body = value.get("title", ""), value.get("text")
        if not isinstance(title, str) or not isinstance(body, str):
            raise _refuse(path, number, "a BEIR record needs string title and text")
        content = f"{title}\n{body}" if title else body
    else:
        given = value.get("content")
        if not isinstance(given, str):
            raise _refuse(path, number, "needs a string content")
        content = given
    metadata = value.get("metadata")
    if metadata is None:  # absent or null: none
        metadata = {}
    if not isinstance(metadata, dict):  # [], 0, "" included: they were once taken for {}
        raise _refuse(path, number, "metadata must be an object")
    taken = [key for key in RESERVED_METADATA if key in metadata]
    if taken:
        raise _refuse(path, number, f"metadata key {taken[0]!r} is set by the index (reserved: "
                                    f"{', '.join(RESERVED_METADATA)})")
    try:
        check_json(metadata)
        check_json(content)
        check_json(record_id)
    except InvalidJson:
        raise _refuse(path, number, "holds a lone surrogate, a non-finite number or nesting too deep") from None
    if "\x00" in content or "\x00" in record_id:
        raise _refuse(path, number, "holds a NUL character")
    if len(record_id) > 1024:
        raise _refuse(path, number, "the id is longer than 1024 characters")
    return PassageRow(id=record_id, path=path, ordinal=number, start=0, end=len(content), line_start=number,
                      line_end=number, sha256=_text_hash(content), heading=None, text=content,
                      metadata={**metadata, "path": path})
