"""Main-text extraction for web pages: trafilatura on the raw bytes, lines numbered from 1.

Pure functions. The reader never calls :func:`extract_main_text` in its own process: the
extraction child (:mod:`.extract_worker`, driven by :mod:`.extractor`) does, one page at a
time, because trafilatura's shared lxml parser is not safe on two threads at once. No
JavaScript runs: trafilatura parses the HTML as it arrived.
"""

from __future__ import annotations

from typing import Any

from ..._extras import require_extra

__all__ = ["EXTRACT_OPTIONS", "extract_main_text", "text_lines"]

#: The trafilatura options the reader uses (the benchmark calls trafilatura with the same ones). ``favor_recall``:
#: with trafilatura's default balance, a list after its lead-in is dropped from pages such as SQLite's ("… with the
#: following restrictions:" and no restriction after it; "The column may not have a PRIMARY KEY or UNIQUE
#: constraint." is in no extracted text), and a list is often the answer (docs/design/research.md).
EXTRACT_OPTIONS: dict[str, Any] = {
    "output_format": "txt",
    "include_comments": False,
    "include_tables": True,
    "with_metadata": False,
    "favor_recall": True,
}


def extract_main_text(raw: bytes) -> str:
    """The page's main text, ``""`` when trafilatura finds none. Line ends are ``"\\n"``."""
    trafilatura = require_extra("trafilatura", "web", "reading web pages")
    text = trafilatura.extract(raw, **EXTRACT_OPTIONS)
    if not text:
        return ""
    return str(text).replace("\r\n", "\n").replace("\r", "\n")


def text_lines(text: str) -> tuple[str, ...]:
    """``text`` split on ``"\\n"``: line *n* is ``lines[n - 1]`` and ``"\\n".join(lines) == text``."""
    return tuple(text.split("\n")) if text else ()
