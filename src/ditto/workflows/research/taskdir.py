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
process leaves either the old file or the new one.
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
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from pydantic import ValidationError

from ...errors import describe_validation_error
from .errors import ResearchError
from .sample import (
    SampleValues,
    draw_sample_values,
    write_internal_knowledge,
    write_knowledge_base,
    write_policy,
)
from .types import ResearchRequest, request_id

__all__ = [
    "ResearchTask",
    "TaskLock",
    "atomic_write",
    "create_task",
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
TASK_ID_FILE: Final = ".task-id"
_TASK_ID: Final = re.compile(r"[0-9a-f]{16}")
logger = logging.getLogger(__name__)


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename."""
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        with open(temporary, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


def snapshot_text(directory: Path) -> str:
    """The text quotes point into: ``extracted.txt`` for web pages, else the raw bytes as UTF-8."""
    extracted = directory / "extracted.txt"
    if extracted.exists():
        return extracted.read_text(encoding="utf-8")
    return (directory / "raw").read_bytes().decode("utf-8")


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
    def memory_path(self) -> Path:
        """The MEMORY store of this task: the caller's ``memory`` or ``memory.sqlite``."""
        return Path(self.request.memory) if self.request.memory else self.directory / MEMORY_FILE

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
        """Store ``raw`` (and a page's extracted text) under its SHA-256; returns the digest."""
        digest = hashlib.sha256(raw).hexdigest()
        target = self.snapshots / digest
        if (target / "raw").exists() and (extracted is None or (target / "extracted.txt").exists()):
            return digest
        target.mkdir(parents=True, exist_ok=True)
        atomic_write(target / "raw", raw)
        if extracted is not None:
            atomic_write(target / "extracted.txt", extracted.encode("utf-8"))
        return digest

    def trace(self, record: dict[str, Any]) -> None:
        """Append one JSON line to ``trace.jsonl`` (the audit of every node call)."""
        line = json.dumps({"pid": os.getpid(), **record}, ensure_ascii=False, separators=(",", ":"))
        with open(self.directory / TRACE_FILE, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")


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


def _new_directory(base: Path) -> Path:
    base.mkdir(parents=True, exist_ok=True)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")
    for _ in range(100):
        candidate = base / f"task-{stamp}-{secrets.token_hex(3)}"
        try:
            candidate.mkdir()
        except FileExistsError:
            continue
        return candidate
    raise ResearchError("RESEARCH_INVALID_INPUT", "could not create a fresh task directory")


def create_task(request: ResearchRequest | Mapping[str, Any], *, base_dir: Path | str | None = None,
                directory: Path | str | None = None, values: SampleValues | None = None) -> ResearchTask:
    """Make a fresh task directory with ``request.json`` and the sample material the request needs.

    ``directory`` (empty or missing) is used as is; otherwise a new
    ``task-<time>-<random>`` folder is made under ``base_dir``
    (default ``./ditto-tasks``). ``values`` fixes the sample values (tests)::

        task = create_task(ResearchRequest(entry="web-read", question="How does SQLite handle WAL?"))
        async with open_research_runtime(task) as runtime:
            result = await web_read.run(runtime, {"directory": str(task.directory)})
    """
    if not isinstance(request, ResearchRequest):
        if not isinstance(request, Mapping):
            raise ResearchError("RESEARCH_INVALID_INPUT", "the request must be a ResearchRequest or a mapping")
        try:
            request = ResearchRequest.model_validate(request)
        except ValidationError as error:
            raise ResearchError("RESEARCH_INVALID_INPUT", describe_validation_error(error, root="request")) from None
    try:
        return _create_task(request, base_dir, directory, values)
    except OSError:
        logger.exception("creating a task directory failed")
        raise ResearchError("RESEARCH_INVALID_INPUT", "the task directory cannot be created or written (is the "
                                                      "path a file, read-only or full?)") from None


def _create_task(request: ResearchRequest, base_dir: Path | str | None, directory: Path | str | None,
                 values: SampleValues | None) -> ResearchTask:
    from .config import default_base_dir

    if directory is not None:
        path = task_path(directory)
        path.mkdir(parents=True, exist_ok=True)
        if any(path.iterdir()):
            raise ResearchError("RESEARCH_INVALID_INPUT", "a new task needs an empty directory")
    else:
        path = _new_directory(task_path(base_dir, "base folder") if base_dir is not None else default_base_dir())
    path = path.resolve()
    identifier = request_id(request)
    task_id = secrets.token_hex(8)
    document = {"requestId": identifier, **request.model_dump(mode="json", by_alias=True)}
    drawn = values or draw_sample_values()
    if request.documents is None:
        write_policy(path / POLICY_FILE, drawn)
    if request.memory is None:
        write_internal_knowledge(path / INTERNAL_KNOWLEDGE_FILE, drawn, request.tenant)
    if request.kb is None:
        write_knowledge_base(path / KNOWLEDGE_FILE, drawn)
    (path / SNAPSHOTS_DIR).mkdir(exist_ok=True)
    (path / ARTIFACTS_DIR).mkdir(exist_ok=True)
    atomic_write(path / TASK_ID_FILE, f"{task_id}\n".encode())
    atomic_write(path / REQUEST_FILE, (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    return ResearchTask(path, request, identifier, task_id)


def open_task(directory: Path | str) -> ResearchTask:
    """Open an existing task directory; its ``request.json`` must match its request id."""
    path = task_path(directory).resolve()
    try:
        document = json.loads((path / REQUEST_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
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
        text = (path / TASK_ID_FILE).read_text(encoding="ascii").strip()
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
        import fcntl  # POSIX only; imported here so the package itself imports everywhere

        fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            os.close(fd)
            if error.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise ResearchError("RESEARCH_TASK_LOCKED",
                                    "another process is running this task; wait for it to finish") from None
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
