"""Reading a task directory that may have been tampered with: no links, no devices, bounded sizes and depth.

``ditto verify`` reads files somebody else may have prepared. Opening them by
path would follow a symlink out of the directory (to ``/dev/zero``, to a file
with the right bytes elsewhere), block forever on a FIFO and load a file of any
size. These helpers open every path component relative to the task
directory's descriptor with ``O_NOFOLLOW`` (a link is refused, not followed),
``O_NONBLOCK`` (a FIFO opens at once and is then refused by ``fstat``), accept
only regular files and directories, and read at most a fixed number of bytes.
:func:`parse_json` refuses documents nested deeper than a cap before Python's
parser could recurse, duplicate keys (two readers could disagree on the value)
and the non-JSON constants ``NaN``/``Infinity``.

POSIX only (``dir_fd``, ``O_NOFOLLOW``), like the task lock.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final

from ...contracts.json import json_text_depth

__all__ = ["MAX_JSON_DEPTH", "UntrustedFileError", "list_dir", "open_dir", "parse_json", "read_file"]

#: The deepest nesting a brief or request may have (the real ones reach 4).
MAX_JSON_DEPTH: Final = 32
_DIR_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_FILE_FLAGS: Final = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
                      | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))


class UntrustedFileError(Exception):
    """A file or folder that may not be read as it is; ``reason`` says why in words (missing, a link, ...)."""

    def __init__(self, reason: str, *, missing: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.missing = missing


def _refusal(error: OSError, name: str | None = None, parent: int | None = None) -> UntrustedFileError:
    import errno

    if error.errno == errno.ENOTDIR and name is not None and parent is not None:
        try:  # O_DIRECTORY refuses a link before O_NOFOLLOW does: say which it was
            if stat.S_ISLNK(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode):
                return UntrustedFileError("is a symbolic link (links are not followed)")
        except OSError:
            pass
        return UntrustedFileError("is not a folder")
    if error.errno == errno.ENOENT:
        return UntrustedFileError("is missing", missing=True)
    if error.errno in (errno.ELOOP, errno.EMLINK):
        return UntrustedFileError("is a symbolic link (links are not followed)")
    if error.errno == errno.ENOTDIR:
        return UntrustedFileError("is not a folder (or is a link to one)")
    return UntrustedFileError(f"cannot be opened ({os.strerror(error.errno or 0) or 'error'})")


@contextmanager
def open_dir(name: str, *, parent: int | None = None) -> Iterator[int]:
    """A descriptor of folder ``name`` (relative to ``parent``), never through a link; closed on exit.

    ``parent`` ``None`` opens ``name`` as given: the folder the caller named may
    itself be reached through a link, everything inside it may not.
    """
    try:
        if parent is None:
            fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
        else:
            fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
    except OSError as error:
        raise _refusal(error, name, parent) from None
    try:
        yield fd
    finally:
        os.close(fd)


def read_file(parent: int, name: str, limit: int) -> bytes:
    """The bytes of regular file ``name`` in folder ``parent``: no link, FIFO or device, at most ``limit`` bytes."""
    try:
        fd = os.open(name, _FILE_FLAGS, dir_fd=parent)
    except OSError as error:
        raise _refusal(error) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = ("a FIFO" if stat.S_ISFIFO(info.st_mode) else "a device" if stat.S_ISCHR(info.st_mode)
                    or stat.S_ISBLK(info.st_mode) else "a socket" if stat.S_ISSOCK(info.st_mode)
                    else "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file")
            raise UntrustedFileError(f"is {kind}, not a regular file")
        if info.st_size > limit:
            raise UntrustedFileError(f"is larger than {limit} bytes")
        chunks = []
        left = limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:
            raise UntrustedFileError(f"is larger than {limit} bytes")
        return data
    except OSError as error:
        raise _refusal(error) from None
    finally:
        os.close(fd)


def list_dir(fd: int) -> list[tuple[str, str]]:
    """``(name, kind)`` of each entry of an open folder, sorted; ``kind`` is ``dir``, ``file``, ``link`` or ``other``.

    Nothing is followed: a link is reported as ``link`` whatever it points to.
    """
    entries = []
    try:
        with os.scandir(fd) as scan:
            for entry in scan:
                if entry.is_symlink():
                    kind = "link"
                elif entry.is_dir(follow_symlinks=False):
                    kind = "dir"
                elif entry.is_file(follow_symlinks=False):
                    kind = "file"
                else:
                    kind = "other"
                entries.append((entry.name, kind))
    except OSError as error:
        raise _refusal(error) from None
    return sorted(entries)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"the key {json.dumps(key, ensure_ascii=False)[:80]} appears twice")
        result[key] = value
    return result


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_json(data: bytes, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``data`` as strict JSON (UTF-8, depth at most ``max_depth``, unique keys), or ``ValueError`` saying why."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("it is not UTF-8") from None
    if json_text_depth(text) > max_depth:
        raise ValueError(f"it is nested deeper than {max_depth} levels")
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except json.JSONDecodeError as error:
        raise ValueError(f"it is not JSON ({error.msg} at line {error.lineno})") from None
    except RecursionError:  # cannot happen under the depth cap; kept so no input ever raises
        raise ValueError(f"it is nested deeper than {max_depth} levels") from None
