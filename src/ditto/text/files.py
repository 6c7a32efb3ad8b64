"""The safe, bounded walk and read of a task's documents (seed 004, ``--documents``).

Document paths come from the person running the task, but the folders they
name may hold anything: links to ``/proc/self/environ`` or ``/etc``, FIFOs that
block a reader forever, files that vanish between listing and reading, a
million files, or gigabytes of text. This module decides, once, what is read:

* **No link is followed** below a given root. A symbolic link is skipped and
  named, whether it points inside the root or out of it: resolving and checking
  containment races with a planted link, not following never does. The roots
  themselves are used as given (the caller's choice; the CLI resolves them).
* **Only regular files are read.** Each file is opened with
  ``O_NOFOLLOW | O_NONBLOCK`` and ``fstat``-ed; a device, FIFO, socket or
  directory is skipped. Nothing under ``/proc``, ``/sys`` or ``/dev`` is walked
  or read, whatever link or mount leads there.
* **Every resource is bounded** (:class:`WalkLimits`): files taken, directory
  entries looked at, depth, bytes per file and bytes in all. The walk is
  iterative (``os.scandir``, one directory's entries sorted at a time), so it
  stops at a cap instead of listing the whole tree first.
* **Nothing is dropped silently.** Every skipped entry and every cap hit is a
  note in the :class:`WalkReport` (which the workflow copies into the brief's
  coverage notes) and one warning on the log; names are escaped so that a
  newline in a file name cannot forge a log line.
* **One bad entry never blocks the rest**: an unreadable, vanished or too
  deeply nested entry is skipped and named; the walk goes on.
"""

from __future__ import annotations

import contextlib
import errno
import fnmatch
import functools
import logging
import os
import re
import stat
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from ..redaction import printable

__all__ = [
    "DEFAULT_LIMITS",
    "DOCUMENT_SUFFIXES",
    "HTML_SUFFIXES",
    "OUTPUT_MARKER",
    "DocumentFile",
    "WalkLimits",
    "WalkReport",
    "documents_described",
    "is_document_name",
    "is_html_name",
    "read_document",
    "read_documents",
    "walk_documents",
    "without_compression",
]

logger = logging.getLogger(__name__)
#: POSIX flags (``0`` where the platform lacks them, so the package still imports there).
_O_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_O_NONBLOCK: Final = getattr(os, "O_NONBLOCK", 0)

#: What a document is, by name: Markdown, plain text and reStructuredText (read as plain text).
DOCUMENT_SUFFIXES: Final = frozenset({".md", ".markdown", ".txt", ".text", ".rst"})
#: HTML, read as its main text (the text a web read extracts from a page) where the ``web`` extra is installed:
#: documentation folders ship it (Debian's ``sqlite3-doc``, Python's, Valgrind's manual, ``changes.html``).
HTML_SUFFIXES: Final = frozenset({".html", ".htm", ".xhtml"})
#: The file that marks a folder as ditto's own output: every research task's folder holds it (its task id). A walk
#: over documents leaves such folders out, so a task run inside the folder it searches (``ditto-tasks/`` in the
#: current folder) never reads the briefs and snapshots of earlier tasks as documents.
OUTPUT_MARKER: Final = ".task-id"
#: A compressed document, read decompressed: Debian gzips every file of ``/usr/share/doc`` over a few kilobytes
#: (``README.Debian.gz``, ``changelog.gz``, ``NEWS.md.gz``).
COMPRESSED_SUFFIX: Final = ".gz"
#: Documentation named by convention rather than by a suffix: ``README``, ``README.Debian``, ``NEWS``,
#: ``changelog.Debian``, ``INSTALL``, ``TODO``: the name up to its first dot, in any case. Not the legal texts
#: (``COPYING``, ``LICENSE``, Debian's ``copyright``): every package of ``/usr/share/doc`` has one, mostly the same
#: licence, and they would crowd the answers to every question out of a folder of many packages (a legal text is
#: still read when named as a source itself).
_CONVENTIONAL_NAME = re.compile(
    r"(?:read[-_]?me|news|changes?|change[-_]?log|history|install(?:ation)?|upgrad(?:e|ing)|notice|authors"
    r"|contributors|credits|thanks|todo|bugs|faq|hacking|contributing|maintainers|release[-_]?notes|usage"
    r"|security|packaging)(?:\.[^/]*)?", re.IGNORECASE)
#: The same after a prefix, as files are copied out of their package's folder (``fontconfig.README.Debian``,
#: ``apache2-NEWS``): only the names written as documentation writes them, so a Debian upload's
#: ``pkg_1.0_amd64.changes`` stays out.
_PREFIXED_NAME = re.compile(r"[^/]+[._-](?:README|NEWS|CHANGELOG|ChangeLog|changelog|INSTALL|TODO|FAQ)(?:\.[^/]*)?")

#: Pseudo file systems whose "files" are the machine's state (environment, memory, devices), never documents.
FORBIDDEN_ROOTS: Final = (Path("/proc"), Path("/sys"), Path("/dev"))
_OPEN_FLAGS: Final = os.O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_READ_CHUNK: Final = 1 << 20


@dataclass(frozen=True, slots=True)
class WalkLimits:
    """The bounds of one documents source; each one reached is reported, never silent.

    ``max_files`` documents are read at most; ``max_entries`` directory entries
    are looked at in all (so ``--documents /`` ends in about a second);
    ``max_depth`` folders deep below a root; a file over ``max_file_bytes`` is
    skipped; reading stops once ``max_total_bytes`` have been read, and
    searching holds at most ``max_passages`` passages (so memory stays bounded
    whatever the paragraphs' size).
    """

    max_files: int = 10_000
    max_entries: int = 200_000
    max_depth: int = 32
    max_file_bytes: int = 4 * 1024 * 1024
    max_total_bytes: int = 64 * 1024 * 1024
    max_passages: int = 200_000


#: The limits a task's documents source uses (documented in docs/research.md).
DEFAULT_LIMITS: Final = WalkLimits()


@dataclass(slots=True)
class WalkReport:
    """What one walk and read skipped or stopped at, in words (``notes``), plus counters."""

    notes: list[str] = field(default_factory=list)
    files_read: int = 0
    bytes_read: int = 0
    #: Roots that exist and may be read; none at all means the source has nothing to search (a failure).
    roots_usable: int = 0
    #: Notes listed one by one; past this, further ones are counted in one last note (a folder of a million
    #: links must not become a million log lines).
    max_notes: int = 100
    unlisted: int = 0
    #: Entries skipped for one reason that would be many notes alike (a manual's index pages), by that reason:
    #: how many, and the first; :meth:`finish` says each in one note.
    tallies: dict[str, tuple[int, str]] = field(default_factory=dict)

    def tally(self, reason: str, name: str) -> None:
        """Count ``name`` as skipped for ``reason``; :meth:`finish` notes ``"<n> <reason> (the first: <name>)"``."""
        count, first = self.tallies.get(reason, (0, name))
        self.tallies[reason] = (count + 1, first)

    def finish(self) -> None:
        """Note each tally once (the walk is over)."""
        for reason, (count, first) in self.tallies.items():
            self.note(f"{count} {reason} (the first: {first})")
        self.tallies.clear()

    def note(self, text: str, *, cap: bool = False) -> None:
        """Record ``text`` and say it once on the log (a warning: the brief is built without it).

        A ``cap`` note (a limit that stopped the reading) is always listed.
        """
        if cap and self.unlisted:
            self.notes.insert(len(self.notes) - 1, text)
            logger.warning("documents: %s", text)
            return
        if cap or len(self.notes) < self.max_notes:
            self.notes.append(text)
            logger.warning("documents: %s", text)
            return
        self.unlisted += 1
        summary = f"{self.unlisted} more skipped entries or caps are not listed one by one"
        if self.unlisted == 1:
            self.notes.append(summary)
            logger.warning("documents: %s (from now on they are only counted)", text)
        else:
            self.notes[-1] = summary


@dataclass(frozen=True, slots=True)
class DocumentFile:
    """One document read whole: its path (as walked) and exact bytes."""

    path: Path
    raw: bytes


def _forbidden(path: Path) -> bool:
    """Whether ``path`` (absolute or not) lies under ``/proc``, ``/sys`` or ``/dev``."""
    absolute = Path(os.path.abspath(path))
    return any(absolute == root or root in absolute.parents for root in FORBIDDEN_ROOTS)


@functools.cache
def _forbidden_devices() -> frozenset[int]:
    """The file systems of ``/proc``, ``/sys`` and ``/dev``: mounted anywhere else, still never read."""
    devices: set[int] = set()
    for root in FORBIDDEN_ROOTS:
        try:
            devices.add(os.stat(root).st_dev)
        except OSError:
            continue
    with contextlib.suppress(OSError):
        devices.discard(os.stat("/").st_dev)  # a system without these mounts: never forbid the root's own
    return frozenset(devices)


def _ignored(relative: str, name: str, ignore: Sequence[str]) -> bool:
    return any(fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(name, pattern) for pattern in ignore)


def _reason(error: OSError) -> str:
    """A short, fixed reason for an ``OSError`` (never the system's own text, which may carry paths)."""
    if error.errno == errno.ENOENT:
        return "it vanished before it could be read"
    if error.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if error.errno == errno.ELOOP:
        return "it is a symbolic link (links are not followed)"
    if error.errno == errno.ENAMETOOLONG:
        return "its path is too long"
    return f"it cannot be read ({errno.errorcode.get(error.errno or 0, 'error')})"


def without_compression(name: str) -> str:
    """``name`` without :data:`COMPRESSED_SUFFIX`: ``README.Debian.gz`` is read as ``README.Debian``."""
    return name[: -len(COMPRESSED_SUFFIX)] if name.lower().endswith(COMPRESSED_SUFFIX) and \
        len(name) > len(COMPRESSED_SUFFIX) else name


def is_document_name(name: str, suffixes: frozenset[str]) -> bool:
    """Whether a file called ``name`` is read as a document inside a folder: its suffix is one of ``suffixes``, or
    it is documentation named by convention (``README``, ``README.Debian``, ``NEWS``, ``changelog``, also after a
    prefix: ``fontconfig.README.Debian``), compressed with gzip or not (``changelog.Debian.gz``, ``NEWS.md.gz``).

    Example::

        is_document_name("README.Debian.gz", DOCUMENT_SUFFIXES)   # True
        is_document_name("apache2.conf", DOCUMENT_SUFFIXES)       # False
    """
    plain = without_compression(name)
    return Path(plain).suffix.lower() in suffixes or _CONVENTIONAL_NAME.fullmatch(plain) is not None \
        or _PREFIXED_NAME.fullmatch(plain) is not None


def is_html_name(name: str) -> bool:
    """Whether a document called ``name`` is HTML (``changes.html``, ``changelog.html.gz``): read as its main text."""
    return Path(without_compression(name)).suffix.lower() in HTML_SUFFIXES


def documents_described(max_file_bytes: int) -> str:
    """What a folder's documents are, in words, for the note that a folder held none."""
    return (f"documents are UTF-8 {', '.join(sorted(DOCUMENT_SUFFIXES))} files, HTML pages (with the web extra) "
            f"and documentation named README, NEWS, changelog and the like, gzip-compressed or not, of at most "
            f"{max_file_bytes} bytes")


def walk_documents(roots: Sequence[Path], *, ignore: Sequence[str] = (), suffixes: frozenset[str],
                   limits: WalkLimits = DEFAULT_LIMITS, report: WalkReport) -> Iterator[Path]:
    """The document files under ``roots`` in a stable order, bounded by ``limits``.

    A root that is a file is taken as is (whatever its suffix); a root that is
    a folder is walked depth first, entries sorted by name within each folder,
    hidden entries (``.name``), ignored globs and files that are no document by
    name (:func:`is_document_name`) left out. A missing root is a note, not an
    error: the other roots are still read.
    """
    taken = 0
    seen = 0
    for root in roots:
        if _forbidden(root):
            report.note(f"{printable(root)} skipped: /proc, /sys and /dev are never read")
            continue
        try:
            info = root.lstat()
        except OSError as error:
            # A path the caller named that is not there never "vanished": it does not exist.
            missing = "it does not exist" if error.errno == errno.ENOENT else _reason(error)
            report.note(f"{printable(root)} skipped: {missing}")
            continue
        if stat.S_ISLNK(info.st_mode):
            # a link given as a root is the caller's choice; follow that one step only
            try:
                info = root.stat()
                resolved = root.resolve(strict=True)
            except OSError as error:
                report.note(f"{printable(root)} skipped: {_reason(error)}")
                continue
            if _forbidden(resolved):
                report.note(f"{printable(root)} skipped: it leads into /proc, /sys or /dev")
                continue
        report.roots_usable += 1
        if not stat.S_ISDIR(info.st_mode):
            if taken >= limits.max_files:
                report.note(f"file cap reached: only the first {limits.max_files} files were read; "
                            f"{printable(root)} and any later paths were not", cap=True)
                return
            taken += 1
            yield root
            continue
        stack: list[tuple[Path, int]] = [(root, 0)]  # (folder, depth); popped last-first
        outputs = 0  # research task folders left out
        while stack:
            folder, depth = stack.pop()
            try:
                with os.scandir(folder) as listing:
                    entries = []
                    for entry in listing:
                        seen += 1
                        if seen > limits.max_entries:
                            report.note(f"entry cap reached: stopped after looking at {limits.max_entries} "
                                        f"entries; the rest of {printable(root)} was not searched", cap=True)
                            return
                        entries.append(entry)
            except OSError as error:
                report.note(f"folder {printable(folder)} skipped: {_reason(error)}")
                continue
            entries.sort(key=lambda item: item.name)
            subfolders: list[Path] = []
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                path = Path(entry.path)
                relative = path.relative_to(root).as_posix()
                if _ignored(relative, entry.name, ignore):
                    continue
                try:
                    is_link = entry.is_symlink()
                    is_dir = not is_link and entry.is_dir(follow_symlinks=False)
                    is_file = not is_link and entry.is_file(follow_symlinks=False)
                except OSError as error:
                    report.note(f"{printable(path)} skipped: {_reason(error)}")
                    continue
                if is_link:
                    if is_dir or is_document_name(entry.name, suffixes) or _points_to_dir(path):
                        report.note(f"{printable(path)} skipped: it is a symbolic link (links are not followed)")
                    continue
                if is_dir:
                    if os.path.lexists(os.path.join(entry.path, OUTPUT_MARKER)):
                        outputs += 1
                        continue
                    if _forbidden(path) or _on_forbidden_device(entry):
                        report.note(f"{printable(path)} skipped: /proc, /sys and /dev are never read")
                    elif depth + 1 > limits.max_depth:
                        report.note(f"folder {printable(path)} skipped: nested deeper than {limits.max_depth} "
                                    "folders")
                    else:
                        subfolders.append(path)
                    continue
                if not is_document_name(entry.name, suffixes):
                    continue
                if not is_file:
                    report.note(f"{printable(path)} skipped: not a regular file (device, FIFO or socket)")
                    continue
                if taken >= limits.max_files:
                    report.note(f"file cap reached: only the first {limits.max_files} files were read; "
                                f"{printable(path)} and every later file were not", cap=True)
                    return
                taken += 1
                yield path
            stack.extend((sub, depth + 1) for sub in reversed(subfolders))
        if outputs:
            report.note(f"{outputs} research task folder(s) under {printable(root)} skipped: ditto's own output "
                        "(a brief quotes what its task read)")


def _on_forbidden_device(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.stat(follow_symlinks=False).st_dev in _forbidden_devices()
    except OSError:
        return False


def _points_to_dir(path: Path) -> bool:
    """Whether a link leads to a folder (so skipping it may hide documents and deserves a note)."""
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except OSError:
        return False


def read_document(path: Path, *, limits: WalkLimits = DEFAULT_LIMITS, report: WalkReport) -> bytes | None:
    """The exact bytes of the regular file ``path``, or ``None`` (with a note) when it must be skipped.

    Opened without following a link and without blocking (a FIFO would wait
    for a writer forever), then ``fstat``-ed: only a regular file is read,
    at most ``max_file_bytes`` of it, and never past ``max_total_bytes`` in all.
    """
    if _forbidden(path):
        report.note(f"{printable(path)} skipped: /proc, /sys and /dev are never read")
        return None
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as error:
        report.note(f"{printable(path)} skipped: {_reason(error)}")
        return None
    try:
        info = os.fstat(fd)
        if info.st_dev in _forbidden_devices():
            report.note(f"{printable(path)} skipped: it is on /proc, /sys or /dev, which are never read")
            return None
        if not stat.S_ISREG(info.st_mode):
            report.note(f"{printable(path)} skipped: not a regular file (device, FIFO or socket)")
            return None
        if info.st_size > limits.max_file_bytes:
            report.note(f"{printable(path)} skipped: larger than {limits.max_file_bytes} bytes")
            return None
        chunks: list[bytes] = []
        size = 0
        while size <= limits.max_file_bytes:
            chunk = os.read(fd, min(_READ_CHUNK, limits.max_file_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as error:
        report.note(f"{printable(path)} skipped: {_reason(error)}")
        return None
    finally:
        os.close(fd)
    if size > limits.max_file_bytes:  # it grew while being read
        report.note(f"{printable(path)} skipped: larger than {limits.max_file_bytes} bytes")
        return None
    raw = b"".join(chunks)
    if without_compression(path.name) != path.name:
        return _decompressed(path, raw, limits=limits, report=report)
    return raw


#: The first bytes of every gzip member.
_GZIP_MAGIC: Final = b"\x1f\x8b"


def _decompressed(path: Path, raw: bytes, *, limits: WalkLimits, report: WalkReport) -> bytes | None:
    """The text a gzip file ``path`` holds (``raw``), at most ``max_file_bytes`` of it: a small file that
    inflates to gigabytes is stopped at the bound, not read into memory; several members (``cat a.gz b.gz``)
    are read one after the other, as ``zcat`` does."""
    if not raw.startswith(_GZIP_MAGIC):
        report.note(f"{printable(path)} skipped: its name ends in {COMPRESSED_SUFFIX} but it is not gzip data")
        return None
    pieces: list[bytes] = []
    size = 0
    data = raw
    try:
        while data:
            inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
            piece = inflater.decompress(data, limits.max_file_bytes + 1 - size)
            size += len(piece)
            pieces.append(piece)
            if size > limits.max_file_bytes or inflater.unconsumed_tail:
                report.note(f"{printable(path)} skipped: larger than {limits.max_file_bytes} bytes once "
                            "decompressed")
                return None
            if not inflater.eof:
                report.note(f"{printable(path)} skipped: its gzip data is cut short")
                return None
            data = inflater.unused_data.lstrip(b"\x00")  # gzip pads some archives with zeros
            if not data.startswith(_GZIP_MAGIC):
                break  # trailing bytes that are no gzip member: ignored, as zcat does
    except zlib.error:
        report.note(f"{printable(path)} skipped: its gzip data is damaged")
        return None
    return b"".join(pieces)


def read_documents(roots: Sequence[Path], *, ignore: Sequence[str] = (), suffixes: frozenset[str],
                   limits: WalkLimits = DEFAULT_LIMITS, report: WalkReport) -> Iterator[DocumentFile]:
    """Each readable document under ``roots``, in walk order, until a cap is reached (all noted)."""
    for path in walk_documents(roots, ignore=ignore, suffixes=suffixes, limits=limits, report=report):
        raw = read_document(path, limits=limits, report=report)
        if raw is None:
            continue
        if report.bytes_read + len(raw) > limits.max_total_bytes:
            report.note(f"byte cap reached: stopped after reading {report.bytes_read} bytes (at most "
                        f"{limits.max_total_bytes}); {printable(path)} and every later file were not read", cap=True)
            return
        report.bytes_read += len(raw)
        report.files_read += 1
        yield DocumentFile(path, raw)
