"""Main-text extraction in a child process, one page at a time, inside a deadline and a memory budget.

trafilatura shares one lxml parser between threads, which is not safe: two pages
extracted at once crashed the interpreter (see :mod:`.extract_worker`). An
:class:`Extractor` owns one child (:func:`.extract_worker.main`)
and hands it one page at a time under a lock, so the parser only ever runs on one
thread, and a crash kills the child, never the caller. What a page can cost is
bounded three ways: the deadline (the child is killed when it passes; the next
call starts a fresh one), the child's address space (``RLIMIT_AS``), and the
length of the text that comes back.

Calls block; the web reader runs them through ``asyncio.to_thread`` and passes a
``threading.Event`` that the thread checks every few milliseconds, so a
cancelled read stops the extraction too.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import select
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Final

from .extract_worker import ANSWER, MEMORY, OK, REQUEST
from .types import InteractionError

__all__ = ["DOCUMENT_EXTRACT_TIMEOUT_S", "Extractor", "extract_document_text", "html_document_reader",
           "shared_extractor"]

_log = logging.getLogger("ditto.interaction.extract")

#: How often a waiting call looks at its cancel event.
_TICK_S: Final = 0.02
_MIB: Final = 1024 * 1024
#: ``-c`` rather than ``-m``: the package imports the worker module, and runpy warns about running it twice.
_CHILD: Final = "from ditto.worker.interaction.extract_worker import main; main()"


class _Stopped(Exception):
    """The child closed its end (crashed or was killed)."""


class Extractor:
    """One extraction child process, used by one call at a time.

    >>> extractor = Extractor(memory_bytes=1 << 30)
    >>> extractor.extract(b"<html><body><article><p>Hello there, reader.</p></article></body></html>",
    ...                   timeout_s=20, max_text_chars=1000)
    'Hello there, reader.'
    >>> extractor.close()
    """

    def __init__(self, memory_bytes: int) -> None:
        self._memory_bytes = memory_bytes
        self._lock = threading.Lock()
        self._child: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        """The running child's process id (``None`` before the first call or after a kill)."""
        child = self._child
        return child.pid if child is not None and child.poll() is None else None

    def extract(self, raw: bytes, *, timeout_s: float, max_text_chars: int,
                cancel: threading.Event | None = None) -> str:
        """The main text of ``raw`` (``""`` when there is none), at most ``max_text_chars`` characters.

        Raises :class:`InteractionError`: ``INTERACTION_TIMEOUT`` past ``timeout_s``
        (waiting for a turn included), ``INTERACTION_CANCELLED`` once ``cancel`` is
        set, ``INTERACTION_RESPONSE_TOO_LARGE`` when the page needs more memory than
        the budget, ``INTERACTION_TOOL_FAILED`` when the extractor fails or dies.
        """
        deadline = time.monotonic() + timeout_s
        while not self._lock.acquire(timeout=_TICK_S):
            self._check(deadline, cancel)
        try:
            self._check(deadline, cancel)
            return self._extract_locked(raw, deadline, max_text_chars, cancel)
        finally:
            self._lock.release()

    def close(self) -> None:
        """Stop the child (idempotent); a later call starts a new one."""
        with self._lock:
            self._stop(kill=False)

    # -- inside the lock ----------------------------------------------------------------------
    def _check(self, deadline: float, cancel: threading.Event | None) -> None:
        if cancel is not None and cancel.is_set():
            raise InteractionError("INTERACTION_CANCELLED", "The read was cancelled while its text was extracted")
        if time.monotonic() >= deadline:
            raise InteractionError("INTERACTION_TIMEOUT", "Extracting the page's text did not finish in time")

    def _extract_locked(self, raw: bytes, deadline: float, limit: int, cancel: threading.Event | None) -> str:
        child = self._start()
        try:
            assert child.stdin is not None and child.stdout is not None
            child.stdin.write(REQUEST.pack(limit, len(raw)))
            child.stdin.write(raw)
            child.stdin.flush()
            fd = child.stdout.fileno()
            status, size = ANSWER.unpack(self._read(fd, ANSWER.size, deadline, cancel))
            payload = self._read(fd, size, deadline, cancel) if size else b""
        except InteractionError:
            self._stop(kill=True)  # a timed-out or cancelled child may still be parsing: never reuse it
            raise
        except (_Stopped, OSError, ValueError):
            code = child.poll()
            _log.warning("the text extractor (pid %d) stopped, exit status %s", child.pid, code, exc_info=True)
            self._stop(kill=True)
            raise InteractionError("INTERACTION_TOOL_FAILED", "The text extractor stopped while reading the page") \
                from None
        if status == MEMORY:
            self._stop(kill=True)
            raise InteractionError("INTERACTION_RESPONSE_TOO_LARGE",
                                   f"Extracting the page's text needs more than {self._memory_bytes // _MIB} MiB")
        if status != OK:
            _log.warning("the text extractor failed on a page (its traceback is on the child's stderr)")
            raise InteractionError("INTERACTION_TOOL_FAILED", "The page's text could not be extracted")
        text = payload.decode("utf-8", "replace")
        return text[:limit]

    def _read(self, fd: int, size: int, deadline: float, cancel: threading.Event | None) -> bytes:
        parts: list[bytes] = []
        while size:
            self._check(deadline, cancel)
            ready, _, _ = select.select([fd], [], [], min(_TICK_S, max(0.0, deadline - time.monotonic())))
            if not ready:
                continue
            chunk = os.read(fd, min(size, 1 << 20))
            if not chunk:
                raise _Stopped
            parts.append(chunk)
            size -= len(chunk)
        return b"".join(parts)

    def _start(self) -> subprocess.Popen[bytes]:
        child = self._child
        if child is not None and child.poll() is None:
            return child
        if not sys.executable:
            raise InteractionError("INTERACTION_TOOL_FAILED", "No Python interpreter to run the text extractor")
        env = dict(os.environ)
        # The child imports exactly what this interpreter imports (a test's or a tool's sys.path included).
        env["PYTHONPATH"] = os.pathsep.join(entry for entry in sys.path if entry and os.path.isdir(entry))
        try:
            child = subprocess.Popen(
                [sys.executable, "-c", _CHILD, str(self._memory_bytes)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, close_fds=True)
        except OSError:
            _log.warning("the text extractor could not be started", exc_info=True)
            raise InteractionError("INTERACTION_TOOL_FAILED", "The text extractor could not be started") from None
        self._child = child
        return child

    def _stop(self, *, kill: bool) -> None:
        child, self._child = self._child, None
        if child is None:
            return
        try:
            if kill:
                child.kill()
            elif child.stdin is not None:
                child.stdin.close()  # the child's loop ends at end of input
            child.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            child.kill()
            child.wait()
        for stream in (child.stdin, child.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


_shared: dict[int, Extractor] = {}
_shared_lock = threading.Lock()


def shared_extractor(memory_bytes: int) -> Extractor:
    """The process-wide extractor for this memory budget (one child per budget, started on first use)."""
    with _shared_lock:
        extractor = _shared.get(memory_bytes)
        if extractor is None:
            extractor = _shared[memory_bytes] = Extractor(memory_bytes)
        return extractor


#: How long the main text of one HTML file of a documents folder may take (a web read has its own deadline).
DOCUMENT_EXTRACT_TIMEOUT_S: Final = 30.0


def extract_document_text(raw: bytes) -> str:
    """The main text of an HTML file read from disk (a documents folder, ``ditto index``), as a web read
    extracts a page: in the shared child, with the default memory budget, within
    :data:`DOCUMENT_EXTRACT_TIMEOUT_S`; raises :class:`InteractionError` as :meth:`Extractor.extract` does.
    The text is never longer than the page (an entity is never shorter than its character)."""
    from .config import DEFAULT_EXTRACT_MEMORY_BYTES

    return shared_extractor(DEFAULT_EXTRACT_MEMORY_BYTES).extract(raw, timeout_s=DOCUMENT_EXTRACT_TIMEOUT_S,
                                                                 max_text_chars=len(raw) + 1)


def html_document_reader() -> Callable[[bytes], str] | None:
    """:func:`extract_document_text` where HTML can be read here (trafilatura, the ``web`` extra, is
    installed), else ``None``: what a documents folder or ``ditto index`` reads HTML files with."""
    import importlib.util

    return extract_document_text if importlib.util.find_spec("trafilatura") is not None else None


@atexit.register
def _close_shared() -> None:
    with _shared_lock:
        extractors = list(_shared.values())
        _shared.clear()
    for extractor in extractors:
        extractor.close()
