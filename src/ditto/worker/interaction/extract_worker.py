"""The extraction child process: reads pages on stdin, writes their main text on stdout.

Why a process: trafilatura parses with one module-level lxml ``HTMLParser`` that
every thread shares, and lxml parsers are not safe to use from two threads at
once. Two pages extracted together through ``asyncio.to_thread`` crashed the
whole interpreter (SIGSEGV, "double free") and once grew it to 24 GB
(trafilatura issues #840 and #925 report the same). In a child of its own the
parser only ever runs on one thread, a runaway page can be killed at the
deadline, and the address-space limit set here bounds its memory; the parent
(:mod:`.extractor`) restarts the child after any of that.

The wire is deliberately dumb, so the parent never unpickles anything a page could
have influenced. Request: ``!QQ`` (text character limit, body length) then the
body. Answer: ``!BQ`` (status, length) then the UTF-8 text (status ``OK``) or
nothing. The parent runs :func:`main` with the memory budget as the only argument.
"""

from __future__ import annotations

import os
import struct
import sys
from typing import BinaryIO, Final

__all__ = ["ANSWER", "FAILED", "MEMORY", "OK", "REQUEST", "main", "trim_text"]

REQUEST: Final = struct.Struct("!QQ")
ANSWER: Final = struct.Struct("!BQ")
OK: Final = 0
FAILED: Final = 1
MEMORY: Final = 2


def trim_text(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, at the last line end inside the limit when there is one."""
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit + 1)
    return text[:cut] if cut > 0 else text[:limit]


def _read_exactly(stream: BinaryIO, size: int) -> bytes | None:
    parts: list[bytes] = []
    while size:
        chunk = stream.read(size)
        if not chunk:
            return None
        parts.append(chunk)
        size -= len(chunk)
    return b"".join(parts)


def _limit_memory(memory_bytes: int) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))


def serve(requests: BinaryIO, answers: BinaryIO) -> None:
    """Answer requests until ``requests`` ends (the parent closed the pipe or died)."""
    from .extract import extract_main_text

    while True:
        header = _read_exactly(requests, REQUEST.size)
        if header is None:
            return
        limit, size = REQUEST.unpack(header)
        raw = _read_exactly(requests, size)
        if raw is None:
            return
        try:
            payload = trim_text(extract_main_text(raw), limit).encode("utf-8", "surrogatepass")
            status = OK
        except MemoryError:
            payload, status = b"", MEMORY
        except Exception:
            import traceback

            traceback.print_exc(file=sys.stderr)
            payload, status = b"", FAILED
        del raw
        answers.write(ANSWER.pack(status, len(payload)))
        answers.write(payload)
        answers.flush()
        if status == MEMORY:
            return  # memory ran out somewhere inside lxml: start clean rather than trust this interpreter


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args:
        _limit_memory(int(args[0]))
    # The protocol owns the real stdout; anything a library prints goes to stderr instead.
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    requests = os.fdopen(os.dup(0), "rb")
    serve(requests, answers)


if __name__ == "__main__":
    main()
