"""Markdown escaping for untrusted text in ``brief.md`` (quotes, questions, queries, URIs, messages).

Everything shown in ``brief.md`` except its fixed wording comes from somewhere
else: a snapshot, the model, the request. None of it may change the document's
structure. A quote containing ``\\r`` once rendered as an extra evidence
section with a fake source; these pure functions make that impossible:

* characters a Markdown renderer reacts to anywhere in a line (``\\``, `````,
  ``*``, ``_``, ``[``, ``]``, ``<``, ``>``, ``&``, ``|``, ``~``, ``#``) are
  backslash-escaped, so no emphasis, code span, link, autolink, raw HTML,
  entity, table cell, strikethrough or heading closer can form;
* control characters (``\\r``, ``\\t``, NEL ``U+0085``), the Unicode line and
  paragraph separators ``U+2028``/``U+2029`` and format characters (bidi
  overrides, zero-width characters, BOM) are shown as visible escapes such as
  ``\\r`` or ``\\u2028``, never passed through;
* a line break is shown as ``\\n`` in single-line text (:func:`inline`), and
  becomes a continuation line of the same quote block in :func:`quote_block`,
  where each line's start is neutralised too (leading spaces, list markers,
  ``=``/``-`` underlines, ordered-list numbers).

A literal backslash is shown as one backslash, so ``\\r`` in the rendered text
means either the character or the two characters; the JSON is the exact record.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

__all__ = ["inline", "quote_block"]

_SPECIAL: Final = frozenset("\\`*_[]<>&|~#")
_NAMED: Final = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_LINE_MARKER: Final = frozenset("-+=:")
_ORDERED: Final = re.compile(r"([0-9]{1,9})([.)])")


def _visible(char: str) -> str:
    """A visible escape for a character that must not reach the renderer as itself."""
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _hidden(char: str) -> bool:
    """Control, line/paragraph separator and format characters (``Cc``, ``Zl``, ``Zp``, ``Cf``)."""
    return unicodedata.category(char) in ("Cc", "Zl", "Zp", "Cf")


def _escape(text: str) -> str:
    out = []
    for char in text:
        if char in _SPECIAL:
            out.append("\\" + char)
        elif _hidden(char):
            out.append(_visible(char))
        else:
            out.append(char)
    return "".join(out)


def inline(text: str) -> str:
    """``text`` as Markdown that renders as itself on one line, whatever it contains.

    Meant for a position inside a line the caller wrote (after ``- Query: ``,
    inside a heading): line breaks are shown as ``\\n``, so the text can never
    start a line of its own. Its start is neutralised like a line's, because
    the start of a list item's text is a block start too (``- 1. x`` would
    open a nested list).
    """
    return _line_start(_escape(text))


def _line_start(line: str) -> str:
    """Neutralise what a line's start could open: indentation, list items, setext underlines."""
    stripped = line.lstrip(" ")
    # A no-break space shows as a space in plain text and in a viewer, but is not indentation: it can never
    # open a code block (an "&#32;" entity would do the same, unreadably, in the file a person opens).
    indent = "\u00a0" * (len(line) - len(stripped))
    if stripped[:1] in _LINE_MARKER:
        return indent + "\\" + stripped
    ordered = _ORDERED.match(stripped)
    if ordered:
        return indent + ordered.group(1) + "\\" + stripped[ordered.end(1):]
    return indent + stripped


def quote_block(text: str) -> list[str]:
    """``text`` as the lines of one Markdown quote block (``> …``); its line breaks stay line breaks.

    The block is one block whatever ``text`` holds: the caller puts a blank
    line after it so nothing lazily continues it.
    """
    lines = []
    for line in text.split("\n"):
        escaped = _line_start(_escape(line))
        lines.append("> " + escaped if escaped else ">")
    return lines
