"""The real SQLite documentation (Debian package ``sqlite3-doc``) for the web tests.

:data:`SQLITE_DOCS` is where the package puts the HTML; :func:`sqlite_docs_dir`
fails with a clear message when it is missing (``scripts/services`` installs it).
:func:`page_text` turns a page into plain text with the standard library's HTML
parser only (not the extractor under test), for fixtures that need the words of
a page, such as the MediaWiki that holds copies of them.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

__all__ = ["SQLITE_DOCS", "page_text", "page_title", "sqlite_docs_dir"]

SQLITE_DOCS = Path("/usr/share/doc/sqlite3")


def sqlite_docs_dir() -> Path:
    if not (SQLITE_DOCS / "wal.html").is_file():
        raise RuntimeError(f"the SQLite documentation is missing from {SQLITE_DOCS}: run scripts/services "
                           "(Debian package sqlite3-doc)")
    return SQLITE_DOCS


class _Text(HTMLParser):
    _SKIP = frozenset({"script", "style", "head", "title"})
    _BLOCK = frozenset({"p", "div", "h1", "h2", "h3", "h4", "li", "tr", "pre", "blockquote", "table", "dd", "dt"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skipping = 0
        #: Open <div>s inside the site's header (``class=nosearch``: the menu its own search leaves out).
        self._header_divs = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "div" and (self._header_divs or "nosearch" in (dict(attrs).get("class") or "").split()):
            self._header_divs += 1
            self._skipping += 1
        elif tag in self._SKIP:
            self._skipping += 1
        elif tag in self._BLOCK:
            self.parts.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "div" and self._header_divs:
            self._header_divs -= 1
            self._skipping -= 1
        elif tag in self._SKIP and self._skipping:
            self._skipping -= 1

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self.parts.append(data)


def page_text(path: Path) -> str:
    """The page's words without the site's header menu, paragraphs separated by blank lines, runs of spaces
    folded (what someone copying the page into a wiki would paste)."""
    parser = _Text()
    parser.feed(path.read_text("utf-8", errors="replace"))
    paragraphs = (re.sub(r"\s+", " ", chunk).strip() for chunk in "".join(parser.parts).split("\n\n"))
    return "\n\n".join(paragraph for paragraph in paragraphs if paragraph)


def page_title(path: Path) -> str:
    match = re.search(r"<title>([^<]*)</title>", path.read_text("utf-8", errors="replace"))
    return match.group(1).strip() if match else path.stem
