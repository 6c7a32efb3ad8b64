"""Main-text extraction for web pages: trafilatura on the raw bytes, rendered as blocks, lines numbered from 1.

Pure functions. The reader never calls :func:`extract_main_text` in its own process: the
extraction child (:mod:`.extract_worker`, driven by :mod:`.extractor`) does, one page at a
time, because trafilatura's shared lxml parser is not safe on two threads at once. No
JavaScript runs: trafilatura parses the HTML as it arrived.

Why blocks: trafilatura's plain-text output puts one element a line with no blank line between
them, so a paragraph, the code example under it and the next section's title run together, and a
page whose paragraphs keep its source's line breaks (Node.js's, libffi's) cannot be told from a
list of short lines. Its XML output keeps the elements; :func:`render_blocks` writes them the way
a Markdown file is written — a blank line between blocks, ``#`` titles, fenced code, ``-`` list
items, a table row a line — so the page's text is cut into passages exactly as a Markdown document is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from ..._extras import require_extra

if TYPE_CHECKING:
    from lxml.etree import _Element

__all__ = ["EXTRACT_OPTIONS", "extract_main_text", "render_blocks", "text_lines"]

#: The trafilatura options the reader uses (the benchmark calls trafilatura with the same ones).
EXTRACT_OPTIONS: dict[str, Any] = {
    "include_comments": False,
    "include_tables": True,
    "with_metadata": False,
    "include_formatting": True,
}

#: trafilatura's elements that hold blocks of their own rather than text (a ``<blockquote>`` around a ``<pre>``).
_CONTAINERS: Final = frozenset({"quote", "div"})
#: The longest bold paragraph read as a title; a longer one is a sentence set in bold.
_MAX_TITLE_CHARS: Final = 80
_BLOCKS: Final = frozenset({"p", "head", "code", "list", "table", "quote", "div"})


def extract_main_text(raw: bytes) -> str:
    """The page's main text as blocks (:func:`render_blocks`), ``""`` when trafilatura finds none."""
    trafilatura = require_extra("trafilatura", "web", "reading web pages")
    document = trafilatura.bare_extraction(raw, **EXTRACT_OPTIONS)
    body = getattr(document, "body", None)
    return render_blocks(body) if body is not None else ""


def render_blocks(body: _Element) -> str:
    """trafilatura's main-text tree ``body`` (``bare_extraction(...).body``, whose elements its XML output writes;
    the tree keeps the page's line breaks, which the XML output drops) as text: its blocks in order, a blank line
    between two.

    * a title (``<head rend="h2">``, or a short paragraph that is all bold, one level under the title before):
      ``## Title`` on one line;
    * a paragraph, a quotation, anything else with text: its lines as the source wraps them, white space inside
      a line collapsed, no blank line inside;
    * code (``<code>`` outside a paragraph): its lines as they are, fenced by a row of backticks longer than
      any inside it;
    * a list: an item a line, ``- item`` (continuation lines, and a list inside an item, indented two spaces);
    * a table: a row a line, its cells joined by `` | ``.
    """
    blocks: list[str] = []
    text = " ".join((body.text or "").split())
    if text:  # a page of one sentence ("Redirect to ./cli.html") has no element
        blocks.append(text)
    levels = [2]  # the last title's level: a bold paragraph is a title one deeper
    for element in body:
        _render(element, blocks, levels)
    return "\n\n".join(blocks)


def _render(element: _Element, blocks: list[str], levels: list[int]) -> None:
    tag = element.tag
    if tag == "head" or _bold_alone(element):
        rend = str(element.get("rend") or "")[1:]
        level = int(rend) if tag == "head" and rend in {"1", "2", "3", "4", "5", "6"} else min(levels[-1] + 1, 6)
        title = " ".join(_inline(element).split())
        if title:
            blocks.append("#" * level + " " + title)
            if tag == "head":
                levels[-1] = level
    elif tag == "code":
        code = _verbatim(element).strip("\n")
        if code.strip():
            fence = "`" * max(3, _longest_backtick_run(code) + 1)
            blocks.append(f"{fence}\n{code}\n{fence}")
    elif tag == "list":
        items = _items(element, "")
        if items:
            blocks.append("\n".join(items))
    elif tag == "table":
        rows = [" | ".join(cell for cell in (" ".join(_inline(c).split()) for c in row) if cell)
                for row in element.iter("row")]
        if any(rows):
            blocks.append("\n".join(row for row in rows if row))
    elif tag in _CONTAINERS and any(child.tag in _BLOCKS for child in element) and not (element.text or "").strip():
        for child in element:
            _render(child, blocks, levels)
    else:
        text = _prose(element)
        if text:
            blocks.append(text)
    tail = " ".join((element.tail or "").split())
    if tail:
        blocks.append(tail)


def _bold_alone(element: _Element) -> bool:
    """Whether ``element`` is a paragraph that is one bold run and nothing else: a title the page did not mark as
    one (SQLite's limits page sets "Maximum Number Of Columns" in ``<p><b>…</b></p>``)."""
    children = list(element)
    return (element.tag == "p" and len(children) == 1 and children[0].tag == "hi"
            and str(children[0].get("rend")) in {"#b", "#strong"} and not (element.text or "").strip()
            and not (children[0].tail or "").strip() and len(" ".join(_inline(element).split())) <= _MAX_TITLE_CHARS)


def _items(element: _Element, indent: str) -> list[str]:
    """A list's items, ``- item`` each, its nested lists under their item, two spaces deeper."""
    lines: list[str] = []
    for item in element:
        if item.tag != "item":
            continue
        nested = [child for child in item if child.tag == "list"]
        text = _prose(item, skip=frozenset({"list"}))
        if text:
            lines.append(indent + "- " + text.replace("\n", "\n" + indent + "  "))
        for sublist in nested:
            lines.extend(_items(sublist, indent + "  "))
    return lines


def _prose(element: _Element, skip: frozenset[str] = frozenset()) -> str:
    """An element's words, its lines as the page's source breaks them (``<lb/>`` breaks one too), each line's runs
    of white space one space, no blank line inside: a paragraph wrapped in the source reads as a document's wrapped
    paragraph, and a list the page sets as lines of one element (a keyword index) stays a line an entry."""
    lines = [" ".join(line.split()) for line in _inline(element, skip).split("\n")]
    return "\n".join(line for line in lines if line)


def _inline(element: _Element, skip: frozenset[str] = frozenset()) -> str:
    """An element's text and its children's, in order; ``<lb/>`` as ``"\\n"``, white space as it came."""
    parts = [element.text or ""]
    for child in element:
        if child.tag == "lb":
            parts.append("\n")
        elif child.tag not in skip:
            parts.append(_inline(child, skip))
        parts.append(child.tail or "")
    return "".join(parts)


def _verbatim(element: _Element) -> str:
    """A code block's characters as they are (``<lb/>`` a line end)."""
    parts = [element.text or ""]
    for child in element:
        parts.append("\n" if child.tag == "lb" else _verbatim(child))
        parts.append(child.tail or "")
    return "".join(parts)


def _longest_backtick_run(text: str) -> int:
    longest = run = 0
    for character in text:
        run = run + 1 if character == "`" else 0
        longest = max(longest, run)
    return longest


def text_lines(text: str) -> tuple[str, ...]:
    """``text`` split on ``"\\n"``: line *n* is ``lines[n - 1]`` and ``"\\n".join(lines) == text``."""
    return tuple(text.split("\n")) if text else ()
