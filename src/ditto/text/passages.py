"""Passages that follow the text's structure, not its line breaks (seed 004, issue 17).

Documents, knowledge records and web text are cut into the passages the
retriever scores and the model reads. A passage is a unit a reader would
quote from: a paragraph (whose sentences may run across hard line breaks), a
list item with its continuation lines, a code block, or a man page's indented
block (an option tag and its indented description, also when blank lines
separate them, as on sed's page). Headings are never
passages of their own: each passage carries the path of headings above it
(``heading``, e.g. ``"GREP(1) › OPTIONS › General Output Control"``), so a
passage that never repeats its subject can still be found by it. A block
indented under a shorter, less indented line — the second paragraph of an
option's description under ``-p, --parents``, a function's description under
its signature in a pydoc page — has that line as the last step of its path.

A block longer than :data:`MAX_PASSAGE_CHARS` is cut at sentence ends (code:
at line ends; a single sentence longer than that at its line ends, then at a
space, then anywhere), so no passage exceeds the seed's 1000-character limit.

Everything is offsets: ``text[span.start:span.end]`` is the passage, trimmed
of surrounding white space, and ``line_start``/``line_end`` are the 1-based
lines (counted at ``\\n``, so CRLF text keeps its ``\\r`` inside) of its first
and last character. The caller excludes NUL and lone surrogates.

Recognised layout:

* Markdown: ATX (``# Title``) and setext (``Title`` over ``===``/``---``)
  headings, fenced code (```````` ``` ```````` / ``~~~``), list items (``-``,
  ``*``, ``+``, ``•``, ``1.``, ``1)``), rules (skipped);
* man pages rendered as text: the page header and footer (``GREP(1) … GREP(1)``,
  the header becomes the top heading, the footer is skipped), section
  headings at the margin and sub-section headings indented by at most three
  columns over an indented body;
* anything else: runs of non-blank lines.

Text extracted from a web page (``layout="lines"``) writes one paragraph a line, with no blank lines
between them, and its titles as lines of their own: a short line that reads as a title — at most
:data:`MAX_LEAD_CHARS`, a letter first, no closing punctuation, over a longer line — is the heading of
the paragraphs under it (a page's "Maximum Number Of Columns" is not the last line of the paragraph
before it), and the paragraphs of one section are packed into passages as a long paragraph is.

Example::

    spans = cut_passages(text)
    [(text[s.start:s.end], s.heading) for s in spans]
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from .sentences import (
    ends_a_sentence,
    is_lead_in,
    opens_in_lower_case,
    runs_over_blank,
    split_sentences,
    starts_item,
    tag_over_body,
)

__all__ = ["HEADING_SEPARATOR", "MAX_HEADING_CHARS", "MAX_LEAD_CHARS", "MAX_PASSAGE_CHARS", "PASSAGES_VERSION",
           "Layout", "PassageKind", "PassageSpan", "cut_passages", "heading_over"]

#: The longest passage (seed 004: at most 1000 characters per passage).
MAX_PASSAGE_CHARS: Final = 1000
#: The longest heading path kept with a passage (its last headings win).
MAX_HEADING_CHARS: Final = 300
#: The longest first line that stands as the lead of the more indented blocks under it (an option
#: tag, a function's signature); a longer one is prose, not a label.
MAX_LEAD_CHARS: Final = 80
#: The longest paragraph that ends in a colon and stands whole as the lead of the more indented blocks under it: a
#: README's "To build with TLS support, you'll need OpenSSL development libraries (e.g. libssl-dev on
#: Debian/Ubuntu) and run:" over "% make BUILD_TLS=yes", whose first line alone would lose what the command is for.
MAX_LEAD_IN_CHARS: Final = 300
#: The most characters of blocks that are one passage with the lead-in that introduces them ("To force compiling
#: against libc malloc, use:" over "% make MALLOC=libc", "… have been disabled:" over a short list): a lead-in says
#: nothing alone and a command alone does not say what it is for, so neither is found, shown or quoted without the
#: other. Blocks longer together stay passages of their own, the lead-in their heading.
MAX_LED_BLOCK_CHARS: Final = 300
#: Bumped whenever the same text is cut differently, or a file is read as other text (13: HTML as its main text;
#: 14: with the lists trafilatura's default balance drops; 15: "e. g." ends no sentence), or left out by another rule
#: (an index remembers the HTML pages it left out as lists of links): caches of passages keyed by it are rebuilt.
PASSAGES_VERSION: Final = 15

PassageKind = Literal["paragraph", "list-item", "code", "indented"]
#: How lines make paragraphs: ``"wrapped"`` (documents: a paragraph runs over line breaks to a blank line) or
#: ``"lines"`` (text extracted from a web page: one paragraph a line).
Layout = Literal["wrapped", "lines"]

_FENCE = re.compile(r"[ \t]{0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"[ \t]{0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t#]*$")
_SETEXT = re.compile(r"[ \t]{0,3}(=+|-+)[ \t]*$")
_RULE = re.compile(r"[ \t]{0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$")
_ITEM = re.compile(r"[ \t]*(?:[-*+•·‣◦]|\d{1,3}[.)])[ \t]+\S")
#: A man page's header or footer: "GREP(1)   User Commands   GREP(1)" / "GNU grep 3.8   2019-12-29   GREP(1)".
_MAN_EDGE = re.compile(r"\S.*?\s{3,}.*\S\(\d[^)\s]{0,8}\)[ \t\r]*$")
_MAN_HEADER = re.compile(r"\S+\(\d[^)\s]{0,8}\)\s{3,}")
#: Between the steps of a passage's heading path ("GREP(1) › OPTIONS").
HEADING_SEPARATOR: Final = " › "


@dataclass(frozen=True, slots=True)
class PassageSpan:
    """One passage: ``text[start:end]``, lines ``line_start``–``line_end``, its kind and heading path."""

    start: int
    end: int
    line_start: int
    line_end: int
    kind: PassageKind
    heading: str | None = None


@dataclass(slots=True)
class _Line:
    start: int
    end: int  # without "\r\n"
    number: int
    indent: int
    text: str


def _lines(text: str) -> list[_Line]:
    lines = []
    offset = 0
    for number, raw in enumerate(text.split("\n"), start=1):
        body = raw[:-1] if raw.endswith("\r") else raw
        expanded = body.expandtabs(8)
        lines.append(_Line(offset, offset + len(body), number, len(expanded) - len(expanded.lstrip()), body))
        offset += len(raw) + 1
    return lines


class _Cutter:
    """One pass over the lines; the state of the open block and the heading path."""

    def __init__(self, text: str, max_chars: int) -> None:
        self.text = text
        self.max_chars = max_chars
        self.lines = _lines(text)
        self.line_starts = [line.start for line in self.lines]
        self.headings: list[tuple[int, str]] = []  # (level, title)
        self.block: list[_Line] = []
        self.block_kind: PassageKind = "paragraph"
        self.spans: list[PassageSpan] = []
        self.leads: list[tuple[int, str]] = []  # (indent, first line) of the blocks a deeper one sits under
        self.lead: str | None = None

    # -- headings -----------------------------------------------------------------
    def heading(self) -> str | None:
        titles = [title for _, title in self.headings]
        if self.lead is not None:
            titles.append(self.lead)
        if not titles:
            return None
        path = HEADING_SEPARATOR.join(titles)
        return path if len(path) <= MAX_HEADING_CHARS else path[-MAX_HEADING_CHARS:]

    def push_heading(self, level: int, title: str) -> None:
        title = " ".join(title.split())
        if not title:
            return
        while self.headings and self.headings[-1][0] >= level:
            self.headings.pop()
        self.headings.append((level, title[:MAX_HEADING_CHARS]))
        self.leads = []

    # -- blocks -------------------------------------------------------------------
    def open(self, line: _Line, kind: PassageKind) -> None:
        self.close()
        self.block = [line]
        self.block_kind = kind

    def close(self) -> None:
        block, self.block = self.block, []
        if not block:
            return
        kind = self.block_kind
        if kind == "paragraph" and all(line.indent >= 4 for line in block if line.text.strip()):
            kind = "indented"
        start = block[0].start + (len(block[0].text) - len(block[0].text.lstrip()))
        end = block[-1].end
        while end > start and self.text[end - 1].isspace():
            end -= 1
        indent = block[0].indent
        while self.leads and self.leads[-1][0] >= indent:
            self.leads.pop()
        self.lead = self.leads[-1][1] if self.leads else None
        if end > start:
            self.emit(start, end, kind)
        self.lead = None
        if kind == "code":
            return
        whole = " ".join(self.text[start:end].split())
        first = " ".join(block[0].text.split())
        if whole.endswith((":", "：")) and len(whole) <= MAX_LEAD_IN_CHARS:
            self.leads.append((indent, whole))  # "To build with TLS support, you'll need … and run:" over its command
        elif first and len(first) <= MAX_LEAD_CHARS:
            self.leads.append((indent, first))

    def emit(self, start: int, end: int, kind: PassageKind) -> None:
        """Add ``text[start:end]`` as passages, cut at sentence (code: line) ends when too long."""
        if end - start <= self.max_chars:
            self.add(start, end, kind)
            return
        pieces = _line_pieces(self.text, start, end) if kind == "code" else _sentence_pieces(self.text, start, end)
        parts = [part for piece_start, piece_end in pieces
                 for part in _bounded(self.text, piece_start, piece_end, self.max_chars)]
        for chunk_start, chunk_end in _balanced_chunks(parts, self.max_chars):
            self.add(chunk_start, chunk_end, kind)

    def add(self, start: int, end: int, kind: PassageKind) -> None:
        while start < end and self.text[start].isspace():
            start += 1
        while end > start and self.text[end - 1].isspace():
            end -= 1
        if end <= start:
            return
        first = bisect.bisect_right(self.line_starts, start)
        last = bisect.bisect_right(self.line_starts, end - 1)
        self.spans.append(PassageSpan(start, end, first, last, kind, self.heading()))

    # -- the pass -----------------------------------------------------------------
    def run(self) -> list[PassageSpan]:
        lines = self.lines
        fence: str | None = None
        closers = _Closers(lines)
        seen_header = False
        index = 0
        while index < len(lines):
            line = lines[index]
            stripped = line.text.strip()
            following = lines[index + 1] if index + 1 < len(lines) else None
            index += 1
            if fence is not None:  # inside a fenced code block: everything is code until the closing fence
                marker = _FENCE.match(line.text)
                if marker is not None and marker.group(1)[0] == fence[0] and len(marker.group(1)) >= len(fence) \
                        and not line.text[marker.end():].strip():
                    fence = None
                    self.close()
                elif self.block:
                    self.block.append(line)
                elif stripped:
                    self.open(line, "code")
                continue
            if not stripped:
                if self._tag_awaits_body(line) or self._sentence_runs_on(line):
                    # An option tag, blank lines, then its description; a sentence set with a blank line
                    # after each of its lines: one passage.
                    self.block.append(line)
                else:
                    self.close()
                continue
            marker = _FENCE.match(line.text) if line.indent < 4 else None
            if marker is not None and self.block and _underlines(self.block[-1].text, stripped):
                # "util-linux regression tests" over "~~~~~~~~~~~~~~~~~~~~~~~~~~~": a title's underline, not a fence.
                title = self.block.pop().text
                self.close()
                self.push_heading(2, title)
                continue
            if marker is not None and closers.closed_after(line.number - 1, marker.group(1)):
                self.close()
                fence = marker.group(1)
                continue
            # Four columns in (a tab is one), "# rm -rf output diff" is a root prompt in a block, not a heading.
            atx = _ATX.match(line.text) if line.indent < 4 else None
            if atx is not None:
                self.close()
                self.push_heading(len(atx.group(1)), atx.group(2) or "")
                continue
            if _SETEXT.match(line.text) and len(self.block) == 1 and self.block_kind == "paragraph":
                title = self.block[0].text
                self.block = []
                self.push_heading(1 if stripped[0] == "=" else 2, title)
                continue
            if _RULE.match(line.text):
                self.close()
                continue
            if not self.block and _LINK_DEFINITION.match(line.text):
                continue  # "[DBus]: https://…": Markdown shows nothing for it, and a brief must not quote it
            if _MAN_EDGE.match(line.text) and len(stripped) <= 200:
                self.close()
                if not seen_header and _MAN_HEADER.match(stripped):
                    seen_header = True
                    self.headings = []
                    self.push_heading(0, stripped.split()[0])
                continue
            if not self.block and _man_heading(line, following):
                self.push_heading(1 if line.indent == 0 else 2, stripped)
                continue
            if starts_item(self.block[-1].text if self.block else "", line.text):
                self.open(line, "list-item")
                continue
            if not self.block:
                self.open(line, "paragraph")
            else:
                self.block.append(line)
        self.close()
        return self.spans


    def run_lines(self) -> list[PassageSpan]:
        """The pass for ``layout="lines"``: a section's lines are one block, title lines its heading."""
        lines = self.lines
        for index, line in enumerate(lines):
            stripped = line.text.strip()
            if not stripped:
                self.close()
                continue
            following = next((later for later in lines[index + 1:] if later.text.strip()), None)
            # A title follows a finished sentence (or another title, or nothing): a page whose paragraphs keep their
            # source's line breaks (texinfo's HTML, Node.js's) has short lines inside its sentences.
            after_a_sentence = not self.block or ends_a_sentence(self.block[-1].text) \
                or is_lead_in(self.block[-1].text)
            if after_a_sentence and _title_line(stripped, following.text.strip() if following is not None else None):
                self.close()
                self.push_heading(1, stripped)
            elif self.block:
                self.block.append(line)
            else:
                self.open(line, "paragraph")
        self.close()
        return self.spans

    def _tag_awaits_body(self, blank: _Line) -> bool:
        """Whether the open block is an option tag alone and the next line with text after the ``blank``
        line is its description (:func:`~.sentences.tag_over_body`): sed's page puts a blank line under each tag."""
        written = [line for line in self.block if line.text.strip()]
        return self.block_kind == "paragraph" and len(written) == 1 and tag_over_body(self.text, blank.end)

    def _sentence_runs_on(self, blank: _Line) -> bool:
        """Whether the open block's last sentence runs on over the ``blank`` line
        (:func:`~.sentences.runs_over_blank`)."""
        newline = self.text.find("\n", blank.end)  # "\r\n" lines end before their "\r"
        return bool(self.block) and newline >= 0 and runs_over_blank(self.text, newline)


#: A Markdown link reference definition ("[DBus]: https://www.freedesktop.org/wiki/Software/dbus/", with an optional
#: title): CommonMark renders nothing for it, so it is no text of the document; it cannot interrupt a paragraph.
#: Not a footnote ("[^1]: …"), which is text.
_LINK_DEFINITION = re.compile(r" {0,3}\[(?!\^)[^\]\n]{1,999}\]:[ \t]*<?\S+>?(?:[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'"
                              r"|\([^)\n]*\)))?[ \t]*$")


def _underlines(title: str, line: str) -> bool:
    """Whether ``line`` (stripped) is a row of tildes as long as ``title`` (within a quarter): its underline."""
    words = title.strip()
    return bool(words) and set(line) == {"~"} and abs(len(line) - len(words)) <= max(3, len(words) // 4)


class _Closers:
    """Where fences that can close a code block are: a fence opens one only when a closing fence follows
    (a line of tildes that closes nothing is text, as a README's "~~~~" under a title is)."""

    def __init__(self, lines: Sequence[_Line]) -> None:
        self._at: dict[str, list[int]] = {"`": [], "~": []}
        self._longest: dict[str, list[int]] = {"`": [], "~": []}  # the longest fence from each one on
        for index, line in enumerate(lines):
            marker = _FENCE.match(line.text)
            if marker is not None and not line.text[marker.end():].strip():
                self._at[marker.group(1)[0]].append(index)
                self._longest[marker.group(1)[0]].append(len(marker.group(1)))
        for longest in self._longest.values():
            for position in range(len(longest) - 2, -1, -1):
                longest[position] = max(longest[position], longest[position + 1])

    def closed_after(self, index: int, fence: str) -> bool:
        """Whether a fence of ``fence``'s character, at least as long, follows line ``index`` (0-based)."""
        at, longest = self._at[fence[0]], self._longest[fence[0]]
        position = bisect.bisect_right(at, index)
        return position < len(at) and longest[position] >= len(fence)


def _man_heading(line: _Line, following: _Line | None) -> bool:
    """A short title at (or near) the margin directly over a more indented body."""
    title = line.text.strip()
    return (following is not None and bool(following.text.strip()) and line.indent <= 3
            and following.indent >= line.indent + 2 and len(title) <= 60 and title[0].isalpha()
            and title[-1] not in ".,;:!?" and not _ITEM.match(line.text))


#: What may open a line before its first word (SQLite's "The schema-names 'main' and" / "'temp' refer to …").
_OPENERS: Final = "'\"‘“([«`"
#: What a title line of extracted web text never holds: code and settings ("-DSQLITE_MAX_LENGTH=123", "f(x)").
_NOT_TITLE = re.compile(r"[=(){}<>;|`\\]")


def _title_line(line: str, following: str | None) -> bool:
    """Whether a line of extracted web text is a title over the paragraph that follows it. Not a line whose sentence
    runs on into the next one: "This initializes cif according to the given parameters for" over "a call to a
    variadic function." (libffi's manual keeps its source's line breaks inside paragraphs)."""
    return (following is not None and len(line) <= MAX_LEAD_CHARS and len(following) > len(line)
            and line[0].isalpha() and line[-1] not in ".,;:!?" and _NOT_TITLE.search(line) is None
            and not _ITEM.match(line) and not opens_in_lower_case(following.lstrip(_OPENERS)))


def _chunks(parts: Sequence[tuple[int, int]], limit: int) -> list[tuple[int, int]]:
    """``parts`` (in order, each at most the passage limit) joined greedily into spans of at most ``limit``
    characters (a part longer than ``limit`` stands alone)."""
    chunks: list[tuple[int, int]] = []
    for part_start, part_end in parts:
        if chunks and part_end - chunks[-1][0] <= limit:
            chunks[-1] = (chunks[-1][0], part_end)
        else:
            chunks.append((part_start, part_end))
    return chunks


def _balanced_chunks(parts: Sequence[tuple[int, int]], limit: int) -> list[tuple[int, int]]:
    """As few spans of at most ``limit`` characters as greedy filling makes, but of even length: the smallest
    limit that needs no more spans. Greedy filling alone left a block's last sentences as a scrap of their own
    ("Defaults to 6. When set to 0, automatic spawning … is disabled.", cut from the setting it is the default
    of); even halves keep each part with the sentences around it."""
    greedy = _chunks(parts, limit)
    if len(greedy) < 2:
        return greedy
    low, high = min((parts[-1][1] - parts[0][0]) // len(greedy), limit), limit
    while low < high:
        middle = (low + high) // 2
        if len(_chunks(parts, middle)) <= len(greedy):
            high = middle
        else:
            low = middle + 1
    return _chunks(parts, low)


def _sentence_pieces(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The sentences of ``text[start:end]`` as absolute offsets, a lead-in ("For example:") one piece with the
    sentence before it and the one it introduces: a long block is never cut between them (SQLite's "… using the
    PRAGMA foreign_keys command. For example:" / "sqlite> PRAGMA foreign_keys = ON;")."""
    pieces = [(start + s.start, start + s.end) for s in split_sentences(text[start:end])]
    joined: list[tuple[int, int]] = []
    leads = False  # the last piece joined ends in a lead-in: the next one joins it
    for piece_start, piece_end in pieces:
        lead_in = is_lead_in(text[piece_start:piece_end])
        if joined and (leads or lead_in):
            joined[-1] = (joined[-1][0], piece_end)
        else:
            joined.append((piece_start, piece_end))
        leads = lead_in
    return joined


def _line_pieces(text: str, start: int, end: int) -> list[tuple[int, int]]:
    pieces = []
    offset = start
    while offset < end:
        newline = text.find("\n", offset, end)
        stop = end if newline < 0 else newline
        if text[offset:stop].strip():
            pieces.append((offset, stop))
        offset = stop + 1
    return pieces


def _bounded(text: str, start: int, end: int, limit: int) -> list[tuple[int, int]]:
    """``text[start:end]`` in parts of at most ``limit`` characters: at line ends, then spaces, then anywhere."""
    parts: list[tuple[int, int]] = []
    while end - start > limit:
        window_end = start + limit
        cut = text.rfind("\n", start + 1, window_end + 1)
        if cut <= start:
            cut = max(text.rfind(" ", start + 1, window_end + 1), text.rfind("\t", start + 1, window_end + 1))
        if cut <= start:
            cut = window_end
        parts.append((start, cut))
        start = cut
        while start < end and text[start].isspace():
            start += 1
    if end > start:
        parts.append((start, end))
    return parts


def heading_over(text: str, heading: str | None) -> str:
    """A passage as a retriever reads it: its heading path over its text (searched and judged, never quoted)."""
    return f"{heading}\n{text}" if heading else text


def cut_passages(text: str, *, max_chars: int = MAX_PASSAGE_CHARS, layout: Layout = "wrapped") -> list[PassageSpan]:
    """The passages of ``text`` in order: non-empty, non-overlapping, at most ``max_chars`` each; ``layout``
    says how its lines make paragraphs (:data:`Layout`)."""
    if max_chars < 1:
        raise ValueError("max_chars must be at least 1")
    cutter = _Cutter(text, max_chars)
    return cutter.run_lines() if layout == "lines" else _with_their_blocks(text, cutter.run(), max_chars)


def _with_their_blocks(text: str, spans: list[PassageSpan], max_chars: int) -> list[PassageSpan]:
    """``spans`` with each lead-in joined to the blocks it introduces when they are short together
    (:func:`_led_blocks`)."""
    joined: list[PassageSpan] = []
    index = 0
    while index < len(spans):
        span = spans[index]
        count = _led_blocks(text, spans, index)
        last = spans[index + count]
        if count and last.end - span.start <= max_chars:
            joined.append(PassageSpan(span.start, last.end, span.line_start, last.line_end, span.kind, span.heading))
            index += count + 1
        else:
            joined.append(span)
            index += 1
    return joined


def _led_blocks(text: str, spans: Sequence[PassageSpan], index: int) -> int:
    """How many of the spans after ``spans[index]`` go with it as one passage: when it is a lead-in (a paragraph
    that ends in a colon), the blocks it introduces — the more indented ones under it, the list items right after
    it, or the code fenced right after it — when they are at most :data:`MAX_LED_BLOCK_CHARS` together ("… the
    following algorithms in libcrypto have been disabled:" with "- RC5", "- MDC2", "- IDEA"); and the paragraph
    after them that finishes its sentence ("You may run" / "gpgconf --list-dirs" / "to view the default directories
    …"), which makes a paragraph that ends in no sentence end a lead-in too. ``0`` when none."""
    lead = spans[index]
    words = text[lead.start:lead.end].rstrip()
    if lead.kind == "code" or index + 1 >= len(spans):
        return 0
    indent = _indent(text, lead.start)
    first = spans[index + 1]
    end = index + 1
    if first.kind == "code" and _FENCE.match(text[lead.end:first.start].strip()) is not None:
        end += 1
    else:
        while end < len(spans) and ((_indent(text, spans[end].start) > indent and spans[end].heading == first.heading)
                                    or (spans[end].kind == "list-item" and spans[end].heading == lead.heading)):
            if spans[end].end - first.start > MAX_LED_BLOCK_CHARS:
                return 0  # long together: each block stays a passage under the lead-in (and the scan stays short)
            end += 1
    if end == index + 1 or spans[end - 1].end - first.start > MAX_LED_BLOCK_CHARS:
        return 0
    colon = is_lead_in(words)
    if end < len(spans) and _finishes_sentence(text, spans[end]) and (colon or not _ends_its_sentence(words)):
        return end - index
    return end - index - 1 if colon else 0


def _indent(text: str, offset: int) -> int:
    """The indent (tabs to 8) of the line ``offset`` is on, up to ``offset``."""
    line_start = text.rfind("\n", 0, offset) + 1
    return len(text[line_start:offset].expandtabs(8))


def _ends_its_sentence(paragraph: str) -> bool:
    """Whether ``paragraph`` ends a sentence (or a bracket or a quotation closes it): it is no lead-in then."""
    return ends_a_sentence(paragraph) or paragraph.endswith((")", '"', "'"))


def _finishes_sentence(text: str, span: PassageSpan) -> bool:
    """Whether the paragraph ``span`` opens in lower case: it finishes a sentence begun before the block above it."""
    return span.kind == "paragraph" and opens_in_lower_case(text[span.start:span.end])

