"""One writer at a time: an advisory ``flock`` on ``DIR/.lock``, refused at once when taken.

A second ``ditto index`` on the same directory fails with ``INDEX_BUSY`` instead of
waiting: an indexing run can take minutes, and a script that starts two by mistake is
better told so than left hanging. The lock dies with its process (SIGKILL included), so
a killed writer never leaves a directory locked. Readers take no lock: they read the
published manifest (see :mod:`.manifest`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from .errors import INDEX_BUSY, SearchIndexError

__all__ = ["LOCK_FILE", "writer_lock"]

LOCK_FILE: Final = ".lock"


@contextlib.contextmanager
def writer_lock(directory: Path) -> Iterator[None]:
    """Hold the directory's writer lock for the ``with`` body; ``INDEX_BUSY`` when another process holds it."""
    import fcntl

    fd = os.open(directory / LOCK_FILE, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SearchIndexError(INDEX_BUSY, f"another process is writing the index {directory}; "
                                               "wait for it to finish, then run again") from None
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
