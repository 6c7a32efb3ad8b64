"""The task directory (seed 004): inputs, stores, snapshots and artifacts of one task.

::

    <task>/request.json            the request (with its requestId)
    <task>/.task-id                this task's random id (tells apart tasks with the same request)
    <task>/policy.md               sample document            (only without --documents)
    <task>/internal-knowledge.json sample internal knowledge  (only without --memory)
    <task>/knowledge.sqlite        sample external FTS5 KB    (only without --kb)
    <task>/memory.sqlite           MEMORY: knowledge:<tenant>:<key> and retrieval:<requestId>:<stage>
    <task>/snapshots/<sha256>/raw  the exact bytes read (a file, a record, a page)
    <task>/snapshots/<sha256>/extracted.txt   a web page's extracted text
    <task>/artifacts/brief.json, brief.md
    <task>/trace.jsonl             one line per node call (stage, node, status, pid)
    <task>/.lock                   held (flock) by the one controller running the task

Every file is written whole (a temporary file renamed into place), so a killed
process leaves either the old file or the new one; the temporary files a kill
leaves behind are removed by the next run that holds the lock.

A task is made in a private staging folder next to its final place
(``.ditto-task-<random>.creating``, held with ``flock`` while it is filled,
``request.json`` written last) and renamed into place: a kill during creation
leaves no task folder at all, and the next creation in that folder removes
the dead staging folder.

Nothing in a task folder is a link: every file is opened without following
one (``O_NOFOLLOW``, relative to the folder's own descriptor), and a task
folder holding a symbolic link anywhere (``.lock``, ``trace.jsonl``,
``artifacts/``, a snapshot, ``memory.sqlite`` …) is refused with
``RESEARCH_UNSAFE_TASK_DIRECTORY`` before anything in it is opened.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import hashlib
import json
import logging
import os
import re
import secrets
import shutil
import stat
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from pydantic import ValidationError

from ...errors import describe_validation_error
from ...redaction import printable
from ...text.files import OUTPUT_MARKER
from .errors import ResearchError
from .sample import (
    SampleValues,
    draw_sample_values,
    write_internal_knowledge,
    write_knowledge_base,
    write_policy,
)
from .types import ResearchRequest, is_postgres_dsn, request_id

__all__ = [
    "ResearchTask",
    "TaskLock",
    "atomic_write",
    "check_task_directory",
    "create_task",
    "is_sqlite_file",
    "open_task",
    "snapshot_text",
    "task_path",
]

REQUEST_FILE: Final = "request.json"
POLICY_FILE: Final = "policy.md"
INTERNAL_KNOWLEDGE_FILE: Final = "internal-knowledge.json"
KNOWLEDGE_FILE: Final = "knowledge.sqlite"
MEMORY_FILE: Final = "memory.sqlite"
SNAPSHOTS_DIR: Final = "snapshots"
ARTIFACTS_DIR: Final = "artifacts"
LOCK_FILE: Final = ".lock"
TRACE_FILE: Final = "trace.jsonl"
TASK_ID_FILE: Final = OUTPUT_MARKER  # ".task-id": a walk over documents skips a folder that holds it
_TASK_ID: Final = re.compile(r"[0-9a-f]{16}")
logger = logging.getLogger(__name__)
#: POSIX flags (``0`` where the platform lacks them, so the package still imports there).
_O_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY: Final = getattr(os, "O_DIRECTORY", 0)
_O_NONBLOCK: Final = getattr(os, "O_NONBLOCK", 0)


_TMP_FILE: Final = re.compile(r"\..+\.[0-9a-f]{8}\.tmp")
_STAGING_PREFIX: Final = ".ditto-task-"
_STAGING_SUFFIX: Final = ".creating"
_DIR_FLAGS: Final = os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_READ_FLAGS: Final = os.O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
#: Regular files a task folder may hold at its top level (others are left alone, but never links).
_TASK_FILES: Final = (REQUEST_FILE, TASK_ID_FILE, POLICY_FILE, INTERNAL_KNOWLEDGE_FILE, KNOWLEDGE_FILE,
                      MEMORY_FILE, LOCK_FILE, TRACE_FILE)
#: What a task folder holds besides request.json: with these and no request.json it is half made.
_TASK_MARKS: Final = (TASK_ID_FILE, SNAPSHOTS_DIR, ARTIFACTS_DIR, POLICY_FILE, KNOWLEDGE_FILE,
                      INTERNAL_KNOWLEDGE_FILE)


def _unsafe(what: str) -> ResearchError:
    return ResearchError("RESEARCH_UNSAFE_TASK_DIRECTORY",
                         f"the task folder is unsafe to use: {what}; links are never followed inside a task "
                         "folder (remove the link, or start a new task)")


def _open_dir(path: Path | str, dir_fd: int | None = None) -> int:
    """A descriptor of the folder ``path`` (its last part must not be a link)."""
    try:
        return os.open(path, _DIR_FLAGS, dir_fd=dir_fd)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR):
            raise _unsafe(f"{printable(path)} is a symbolic link or not a folder") from None
        raise


@contextlib.contextmanager
def _folder(root: Path, *parts: str, create: bool = False) -> Iterator[int]:
    """A descriptor of ``root/parts...`` reached one part at a time, none of them a link."""
    fd = _open_dir(root)
    try:
        for part in parts:
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o755, dir_fd=fd)
            inner = _open_dir(part, fd)
            os.close(fd)
            fd = inner
        yield fd
    finally:
        os.close(fd)


def _write_at(fd: int, name: str, data: bytes) -> None:
    """Write ``data`` to ``name`` in the folder ``fd`` whole: a fresh temporary file renamed over it."""
    temporary = f".{name}.{secrets.token_hex(4)}.tmp"
    out = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0),
                  0o644, dir_fd=fd)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(out, view):]
            os.fsync(out)
        finally:
            os.close(out)
        os.replace(temporary, name, src_dir_fd=fd, dst_dir_fd=fd)  # rename replaces a link, never follows it
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=fd)
        raise


def _read_at(fd: int, name: str, limit: int = 1 << 30) -> bytes:
    """The bytes of the regular file ``name`` in the folder ``fd``; a link or a special file is unsafe."""
    try:
        handle = os.open(name, _READ_FLAGS, dir_fd=fd)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise _unsafe(f"{printable(name)} is a symbolic link") from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            raise _unsafe(f"{printable(name)} is not a regular file")
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(handle, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(handle)


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename, following no link.

    The folder of ``path`` is opened without following a link, the temporary
    file is created fresh (``O_EXCL | O_NOFOLLOW``) in it, and the rename
    replaces whatever ``path`` was, a link included, without writing through it.
    """
    with _folder(path.parent) as fd:
        _write_at(fd, path.name, data)


def snapshot_text(directory: Path, *, check_hash: bool = False) -> str:
    """The text quotes point into: ``extracted.txt`` for web pages, else the raw bytes as UTF-8.

    ``directory`` is ``<task>/snapshots/<sha256>``: it is reached from the task
    folder one part at a time, so neither ``snapshots`` nor the snapshot may be a link.
    ``check_hash``: the raw bytes must hash to the folder's name (``ValueError`` otherwise), as
    ``ditto verify`` checks; a resumed task checks its archived evidence this way.
    """
    parts: tuple[str, ...] = ()
    if directory.parent.name == SNAPSHOTS_DIR:
        directory, parts = directory.parent.parent, (SNAPSHOTS_DIR, directory.name)
    with _folder(directory, *parts) as fd:
        raw = _read_at(fd, "raw") if check_hash else None
        if raw is not None and hashlib.sha256(raw).hexdigest() != directory.joinpath(*parts).name:
            raise ValueError("the snapshot's bytes do not hash to its name")
        try:
            return _read_at(fd, "extracted.txt").decode("utf-8")
        except FileNotFoundError:
            return (raw if raw is not None else _read_at(fd, "raw")).decode("utf-8")


def _lstat_at(fd: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def check_task_directory(directory: Path) -> None:
    """Refuse (``RESEARCH_UNSAFE_TASK_DIRECTORY``) a task folder with a link or a special file in it.

    Looks at every entry of the folder, of ``artifacts/``, of ``snapshots/``
    and of each snapshot: none may be a symbolic link (SQLite's own
    ``memory.sqlite-wal`` and ``-journal`` included, which SQLite would
    follow); the task's own files must be regular files and its two folders
    real folders. The folder itself is the caller's path, resolved.
    """
    with _folder(directory) as fd:
        _check_entries(fd, "")
        for name in _TASK_FILES:
            info = _lstat_at(fd, name)
            if info is not None and not stat.S_ISREG(info.st_mode):
                raise _unsafe(f"{name} is not a regular file")
        for name in (ARTIFACTS_DIR, SNAPSHOTS_DIR):
            if _lstat_at(fd, name) is None:
                continue
            with _folder(directory, name) as inner:
                _check_entries(inner, f"{name}/")
                if name == SNAPSHOTS_DIR:
                    for entry in os.scandir(inner):
                        with _folder(directory, name, entry.name) as snapshot:
                            _check_entries(snapshot, f"{name}/{entry.name}/")


def _check_entries(fd: int, prefix: str) -> None:
    with os.scandir(fd) as listing:
        for entry in listing:
            if entry.is_symlink():
                raise _unsafe(f"{printable(prefix + entry.name)} is a symbolic link")


def _remove_temporary_files(directory: Path) -> None:
    """Remove the temporary files of writes a killed process never finished (only under the task lock)."""
    folders: list[tuple[str, ...]] = [(), (ARTIFACTS_DIR,), *((SNAPSHOTS_DIR, name) for name in
                                                               _snapshot_names(directory))]
    for parts in folders:
        try:
            with _folder(directory, *parts) as fd:
                with os.scandir(fd) as listing:
                    leftovers = [entry.name for entry in listing
                                 if _TMP_FILE.fullmatch(entry.name) and entry.is_file(follow_symlinks=False)]
                for name in leftovers:
                    os.unlink(name, dir_fd=fd)
                    logger.warning("removed %s, left behind by a killed write", printable("/".join((*parts, name))))
        except FileNotFoundError:
            continue
        if len(parts) == 2:  # a snapshot folder a kill left empty would read as a missing snapshot
            with _folder(directory, SNAPSHOTS_DIR) as fd, contextlib.suppress(OSError):
                os.rmdir(parts[1], dir_fd=fd)  # only succeeds when empty


def _snapshot_names(directory: Path) -> list[str]:
    try:
        with _folder(directory, SNAPSHOTS_DIR) as fd, os.scandir(fd) as listing:
            return [entry.name for entry in listing if entry.is_dir(follow_symlinks=False)]
    except FileNotFoundError:
        return []


@dataclass(frozen=True, slots=True)
class ResearchTask:
    """An opened task directory and its request.

    ``task_id`` is random per task: two tasks with the same request share a
    request id, and when they share a MEMORY store (``--memory``) the task id
    keeps each one's checkpoints its own. ``None`` for tasks made before it existed.
    """

    directory: Path
    request: ResearchRequest
    request_id: str
    task_id: str | None = None

    @property
    def checkpoint_id(self) -> str | None:
        """The task id as the last part of its checkpoint keys: only in a store other tasks may share
        (``--memory``); in the task's own ``memory.sqlite`` the keys are the seed's
        ``retrieval:<requestId>:<stage>``."""
        return self.task_id if self.request.memory is not None else None

    @property
    def memory_path(self) -> Path:
        """The MEMORY store of this task: the caller's ``memory`` or ``memory.sqlite``."""
        return Path(self.request.memory) if self.request.memory else self.directory / MEMORY_FILE

    @property
    def memory_dsn(self) -> str | None:
        """The PostgreSQL database of this task's MEMORY, when ``memory`` names one (``postgresql://…``)."""
        return self.request.memory if is_postgres_dsn(self.request.memory) else None

    @property
    def knowledge_path(self) -> Path:
        return self.directory / KNOWLEDGE_FILE

    @property
    def policy_path(self) -> Path:
        return self.directory / POLICY_FILE

    @property
    def internal_knowledge_path(self) -> Path:
        return self.directory / INTERNAL_KNOWLEDGE_FILE

    @property
    def artifacts(self) -> Path:
        return self.directory / ARTIFACTS_DIR

    @property
    def snapshots(self) -> Path:
        return self.directory / SNAPSHOTS_DIR

    def save_snapshot(self, raw: bytes, extracted: str | None = None) -> str:
        """Store ``raw`` (and a page's extracted text) under its SHA-256; returns the digest.

        Reached one folder at a time from the task folder, no part a link.
        """
        digest = hashlib.sha256(raw).hexdigest()
        with _folder(self.directory, SNAPSHOTS_DIR, digest, create=True) as fd:
            have_raw, have_extracted = _lstat_at(fd, "raw"), _lstat_at(fd, "extracted.txt")
            for info in (have_raw, have_extracted):
                if info is not None and not stat.S_ISREG(info.st_mode):
                    raise _unsafe(f"{SNAPSHOTS_DIR}/{digest} holds a link or a special file")
            if have_raw is not None and (extracted is None or have_extracted is not None):
                return digest
            _write_at(fd, "raw", raw)
            if extracted is not None:
                _write_at(fd, "extracted.txt", extracted.encode("utf-8"))
        return digest

    def trace(self, record: dict[str, Any]) -> None:
        """Append one JSON line to ``trace.jsonl`` (the audit of every node call), following no link."""
        line = json.dumps({"pid": os.getpid(), **record}, ensure_ascii=False, separators=(",", ":"))
        with _folder(self.directory) as fd:
            try:
                out = os.open(TRACE_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _O_NOFOLLOW | _O_NONBLOCK
                              | getattr(os, "O_CLOEXEC", 0), 0o644, dir_fd=fd)
            except OSError as error:
                if error.errno == errno.ELOOP:
                    raise _unsafe(f"{TRACE_FILE} is a symbolic link") from None
                raise
            try:
                if not stat.S_ISREG(os.fstat(out).st_mode):
                    raise _unsafe(f"{TRACE_FILE} is not a regular file")
                os.write(out, (line + "\n").encode("utf-8"))
            finally:
                os.close(out)


def task_path(value: Any, what: str = "task directory") -> Path:
    """``value`` as a path, or ``RESEARCH_INVALID_INPUT`` (not a path, empty, NUL, not valid Unicode)."""
    if not isinstance(value, (str, os.PathLike)):
        raise ResearchError("RESEARCH_INVALID_INPUT", f"the {what} must be a path")
    text = os.fspath(value)
    if not isinstance(text, str) or not text or "\x00" in text or len(text) > 4096:
        raise ResearchError("RESEARCH_INVALID_INPUT", f"the {what} is not a usable path")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ResearchError("RESEARCH_INVALID_INPUT", f"the {what} is not valid Unicode") from None
    return Path(text)


def _new_name(base: Path) -> Path:
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")
    for _ in range(100):
        candidate = base / f"task-{stamp}-{secrets.token_hex(3)}"
        if not os.path.lexists(candidate):
            return candidate
    raise ResearchError("RESEARCH_INVALID_INPUT", "could not create a fresh task directory")


def create_task(request: ResearchRequest | Mapping[str, Any], *, base_dir: Path | str | None = None,
                directory: Path | str | None = None, values: SampleValues | None = None,
                create_memory: bool = False) -> ResearchTask:
    """Make a fresh task directory with ``request.json`` and the sample material the request needs.

    ``directory`` (empty or missing) is used as is; otherwise a new
    ``task-<time>-<random>`` folder is made under ``base_dir``
    (default ``./ditto-tasks``). ``values`` fixes the sample values (tests).
    The request's ``memory`` store must exist unless ``create_memory`` is true
    (a mistyped path would otherwise start an empty store and lose nothing
    visibly but every checkpoint)::

        task = create_task(ResearchRequest(entry="web-read", question="How does SQLite handle WAL?"))
        async with open_research_runtime(task) as runtime:
            result = await web_read.run(runtime, {"directory": str(task.directory)})

    The task appears whole or not at all: it is filled in a private staging
    folder beside its place and renamed into it.
    """
    if not isinstance(request, ResearchRequest):
        if not isinstance(request, Mapping):
            raise ResearchError("RESEARCH_INVALID_INPUT", "the request must be a ResearchRequest or a mapping")
        try:
            request = ResearchRequest.model_validate(request)
        except ValidationError as error:
            raise ResearchError("RESEARCH_INVALID_INPUT", describe_validation_error(error, root="request")) from None
    _check_memory(request, create_memory)
    try:
        return _create_task(request, base_dir, directory, values)
    except OSError:
        logger.exception("creating a task directory failed")
        raise ResearchError("RESEARCH_INVALID_INPUT", "the task directory cannot be created or written (is the "
                                                      "path a file, read-only or full?)") from None


def _check_memory(request: ResearchRequest, create: bool) -> None:
    """A caller's MEMORY store must be an existing file, or be made now when asked (an empty file is an empty store).

    A PostgreSQL DSN names a server the store connects to on first use (its tables are made there).
    """
    if request.memory is None or is_postgres_dsn(request.memory):
        return
    path = Path(request.memory)
    if create and not os.path.lexists(path):
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW, 0o600))
        except OSError:
            logger.exception("creating the MEMORY store %s failed", printable(path))
            raise ResearchError("RESEARCH_INVALID_INPUT",
                                f"the MEMORY store {printable(path)} cannot be created") from None
    if not path.is_file():
        raise ResearchError("RESEARCH_INVALID_INPUT",
                            f"the MEMORY store {printable(path)} does not exist (or is not a file); give an "
                            "existing store, or ask for a new one (--create-memory)")
    if not is_sqlite_file(path):
        raise ResearchError("RESEARCH_INVALID_INPUT",
                            f"the MEMORY store {printable(path)} is not a SQLite database (a MEMORY store is a "
                            "SQLite file, empty for a new store, or a postgresql:// DSN)")


#: The first 16 bytes of every SQLite 3 database file.
_SQLITE_HEADER: Final = b"SQLite format 3\x00"


def is_sqlite_file(path: Path) -> bool:
    """Whether ``path`` is a SQLite database or empty (SQLite makes an empty file a new database)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(len(_SQLITE_HEADER))
    except OSError:
        return False
    return head in (b"", _SQLITE_HEADER)


def _create_task(request: ResearchRequest, base_dir: Path | str | None, directory: Path | str | None,
                 values: SampleValues | None) -> ResearchTask:
    from .config import default_base_dir

    if directory is not None:
        target = task_path(directory)
        _check_target(target)
    else:
        base = task_path(base_dir, "base folder") if base_dir is not None else default_base_dir()
        base.mkdir(parents=True, exist_ok=True)
        target = _new_name(base)
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_dead_staging(target.parent)
    staging, guard = _locked_staging(target.parent)
    try:
        identifier = request_id(request)
        task_id = secrets.token_hex(8)
        _fill(staging, request, identifier, task_id, values or draw_sample_values())
        try:
            os.rename(staging, target)  # replaces an empty folder; refuses a non-empty one or a link
        except OSError as error:
            if error.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR, errno.EISDIR):
                raise ResearchError("RESEARCH_INVALID_INPUT", "a new task needs an empty directory") from None
            raise
        _sync_folder(target.parent)
    except BaseException:
        with contextlib.suppress(OSError):
            shutil.rmtree(staging)
        raise
    finally:
        os.close(guard)
    return ResearchTask(target.resolve(), request, identifier, task_id)


#: Tries at a staging folder that another process's sweep removes before this one locks it.
_STAGING_TRIES: Final = 8


def _locked_staging(parent: Path) -> tuple[Path, int]:
    """A new staging folder in ``parent`` and its descriptor, ``flock``-ed: alive while held, so a later sweep
    (:func:`_remove_dead_staging`) leaves it alone. Between its making and its lock another process's sweep may
    take it for a dead one and remove it (two controllers creating tasks in one base folder at once): then this
    one makes another."""
    import fcntl

    for _ in range(_STAGING_TRIES):
        staging = Path(tempfile.mkdtemp(prefix=_STAGING_PREFIX, suffix=_STAGING_SUFFIX, dir=parent))
        try:
            guard = _open_dir(staging)
        except FileNotFoundError:
            continue  # swept before it was opened
        fcntl.flock(guard, fcntl.LOCK_EX)
        try:
            still = os.stat(staging, follow_symlinks=False).st_ino == os.fstat(guard).st_ino
        except FileNotFoundError:
            still = False
        if still:
            return staging, guard
        os.close(guard)  # swept between its opening and its lock
    raise ResearchError("RESEARCH_INVALID_INPUT", "the task directory cannot be created or written (is the path a "
                        "file, read-only or full?)")


def _fill(path: Path, request: ResearchRequest, identifier: str, task_id: str, drawn: SampleValues) -> None:
    """Write a task's files into the fresh folder ``path``, ``request.json`` last (a task is one with it)."""
    document = {"requestId": identifier, **request.model_dump(mode="json", by_alias=True)}
    if request.documents is None and request.index is None:
        write_policy(path / POLICY_FILE, drawn)
    if request.memory is None:
        write_internal_knowledge(path / INTERNAL_KNOWLEDGE_FILE, drawn, request.tenant)
    if request.kb is None:
        write_knowledge_base(path / KNOWLEDGE_FILE, drawn)
    (path / SNAPSHOTS_DIR).mkdir(mode=0o755)
    (path / ARTIFACTS_DIR).mkdir(mode=0o755)
    atomic_write(path / TASK_ID_FILE, f"{task_id}\n".encode())
    atomic_write(path / REQUEST_FILE, (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    _sync_folder(path)


def _sync_folder(path: Path) -> None:
    fd = _open_dir(path)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _check_target(target: Path) -> None:
    """A given task folder must be missing or an empty real folder; a half-made task is named as such."""
    try:
        info = target.lstat()
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode):
        raise _unsafe(f"{printable(target)} is a symbolic link")
    if not stat.S_ISDIR(info.st_mode):
        raise ResearchError("RESEARCH_INVALID_INPUT", "the task directory path is a file, not a folder")
    with os.scandir(target) as listing:
        entries = list(listing)
    for entry in entries:
        if entry.is_symlink():
            raise _unsafe(f"{printable(entry.name)} is a symbolic link")
    names = {entry.name for entry in entries}
    if names & set(_TASK_MARKS) and REQUEST_FILE not in names:
        raise ResearchError("RESEARCH_INVALID_INPUT",
                            "the directory holds a half-made task (no request.json): it was never started and "
                            "cannot be resumed; remove it or choose another directory")
    if names:
        raise ResearchError("RESEARCH_INVALID_INPUT", "a new task needs an empty directory")


def _remove_dead_staging(parent: Path) -> None:
    """Remove the staging folders of creations whose process died (their ``flock`` is free)."""
    import fcntl

    try:
        names = [name for name in os.listdir(parent)
                 if name.startswith(_STAGING_PREFIX) and name.endswith(_STAGING_SUFFIX)]
    except OSError:
        return
    for name in names:
        path = parent / name
        try:
            fd = _open_dir(path)
        except (OSError, ResearchError):
            continue  # gone meanwhile, or a link: never ours to remove
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # another process is filling it now
            shutil.rmtree(path)
            logger.warning("removed %s: a task creation that was killed before it finished", printable(path))
        except OSError:
            logger.exception("removing the dead staging folder %s failed", printable(path))
        finally:
            os.close(fd)


def open_task(directory: Path | str) -> ResearchTask:
    """Open an existing task directory; its ``request.json`` must match its request id.

    A folder with a link in it is refused (``RESEARCH_UNSAFE_TASK_DIRECTORY``);
    one with task files but no ``request.json`` was never finished
    (``RESEARCH_TASK_NOT_FOUND``, saying so).
    """
    path = task_path(directory).resolve()
    try:
        check_task_directory(path)
        with _folder(path) as fd:
            text = _read_at(fd, REQUEST_FILE, 1 << 24).decode("utf-8")
        document = json.loads(text)
    except FileNotFoundError:
        if any(os.path.lexists(path / name) for name in _TASK_MARKS):
            raise ResearchError("RESEARCH_TASK_NOT_FOUND", "the directory holds a half-made task (no request.json); "
                                                           "it cannot be resumed: start a new task") from None
        raise ResearchError("RESEARCH_TASK_NOT_FOUND", "the directory holds no research task (request.json)") from None
    except (OSError, ValueError):
        raise ResearchError("RESEARCH_CHECKPOINT_INVALID", "request.json cannot be read") from None
    if not isinstance(document, dict):
        raise ResearchError("RESEARCH_CHECKPOINT_INVALID", "request.json is not an object")
    stored_id = document.pop("requestId", None)
    try:
        request = ResearchRequest.model_validate(document)
    except ValidationError as error:
        raise ResearchError("RESEARCH_CHECKPOINT_INVALID",
                            f"request.json is invalid: {describe_validation_error(error)}") from None
    identifier = request_id(request)
    if stored_id != identifier:
        raise ResearchError("RESEARCH_REQUEST_MISMATCH",
                            "request.json was changed after the task started; start a new task instead")
    return ResearchTask(path, request, identifier, _read_task_id(path))


def _read_task_id(path: Path) -> str | None:
    """The task's random id, or ``None`` for a task made before ``.task-id`` existed."""
    try:
        with _folder(path) as fd:
            text = _read_at(fd, TASK_ID_FILE, 64).decode("ascii").strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError):
        raise ResearchError("RESEARCH_CHECKPOINT_INVALID", ".task-id cannot be read") from None
    if not _TASK_ID.fullmatch(text):
        raise ResearchError("RESEARCH_CHECKPOINT_INVALID", ".task-id is not a task id")
    return text


class TaskLock:
    """One controller per task: an exclusive ``flock`` on ``<task>/.lock``, released when the process dies."""

    def __init__(self, directory: Path) -> None:
        self._path = directory / LOCK_FILE
        self._fd: int | None = None

    def acquire(self) -> None:
        """Lock the task, then check it again and remove killed writes' temporary files (safe only now)."""
        import fcntl  # POSIX only; imported here so the package itself imports everywhere

        directory = self._path.parent
        with _folder(directory) as folder:
            try:
                fd = os.open(LOCK_FILE, os.O_RDWR | os.O_CREAT | _O_NOFOLLOW | _O_NONBLOCK
                             | getattr(os, "O_CLOEXEC", 0), 0o644, dir_fd=folder)
            except OSError as error:
                if error.errno == errno.ELOOP:
                    raise _unsafe(f"{LOCK_FILE} is a symbolic link") from None
                raise
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise _unsafe(f"{LOCK_FILE} is not a regular file")
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            os.close(fd)
            if error.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise ResearchError("RESEARCH_TASK_LOCKED",
                                    "another process is running this task; wait for it to finish") from None
            raise
        except ResearchError:
            os.close(fd)
            raise
        try:
            check_task_directory(directory)
            _remove_temporary_files(directory)
        except BaseException:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            import fcntl

            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        self.acquire()
        try:
            yield
        finally:
            self.release()
