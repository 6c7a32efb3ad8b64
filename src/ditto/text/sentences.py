"""Sentences of a text as offsets: where a reader would say one sentence ends (no model, no network).

Shared by the passage cutter (:mod:`ditto.text.passages`, which cuts a long block at
sentence ends) and the built-in model, which quotes whole sentences: both must agree
on what a sentence is, so a quote never straddles a passage boundary. Hard-wrapped
text (man pages, plain-text READMEs) keeps a sentence whole across its line breaks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from .analysis import CJK_CLASS

__all__ = ["MAX_SENTENCE_CHARS", "Sentence", "ends_a_sentence", "is_lead_in", "opens_in_lower_case",
           "opens_with_option", "option_tag", "runs_over_blank", "split_sentences", "starts_item", "tag_over_body"]

#: Words a full stop follows without ending the sentence (compared lower-case, without the final stop).
_ABBREVIATIONS: Final = frozenset({
    "e.g", "i.e", "al", "etc", "vs", "cf", "fig", "figs", "eq", "eqs", "ref", "refs", "vol", "pp",
    "approx", "ca", "dr", "mr", "mrs", "ms", "prof", "st", "jr", "sr", "inc", "ltd", "co", "corp", "dept",
    "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "u.s", "u.k",
})

#: "e.g" and "i.e" written with a space after their first stop ("e. g."), up to their last letter.
_SPACED_ABBREVIATION = re.compile(r"(?:^|[\s(\[])(?:[eE]\.\s?g|[iI]\.\s?e)$")
#: Characters after which a sentence may end, and the closers that stay with it.
_BOUNDARY = re.compile(r"[.!?]+[\"'”’)\]]*(?=\s|$)|[。！？；]+[”’」』）]*|\n")
_NEXT_WORD = re.compile(r"\s+(\w)")
_LAST_WORD = re.compile(r"(?:^|[\s(\[])([^\W\d_]+(?:\.[^\W\d_]+)*)$")
#: A line that starts a list item: a bullet or a number with ``.``/``)``, then a space.
_ITEM = re.compile(r"[ \t]*(?:[-*+•·‣◦]|\d{1,3}[.)])[ \t]+\S")
#: A Markdown heading or a rule line: it never runs on into the next line.
_MARKUP_LINE = re.compile(r"[ \t]{0,3}(?:#{1,6}(?:[ \t]|$)|(?:=+|-+|\*+|_+|`{3,}.*|~{3,}.*)[ \t]*$)")
#: An option's tag at the start of a line: one or two dashes (or a plus) and a letter, digit or ``#``.
_OPTION_TAG = re.compile(r"(?:--?|\+)[A-Za-z0-9#?@]")
#: The longest line taken for an option's tag.
_MAX_TAG_CHARS: Final = 80
#: Words a line needs before a blank line for the sentence to run on over it (see :func:`runs_over_blank`).
_MIN_RUN_ON_WORDS: Final = 5
#: A sentence that runs longer than this over line breaks is cut at line ends (a table or a synopsis
#: has no full stops; a quote of forty lines is not a sentence).
MAX_SENTENCE_CHARS: Final = 400


@dataclass(frozen=True, slots=True)
class Sentence:
    """A sentence of a text as offsets: ``text[start:end]`` is the sentence, trimmed."""

    start: int
    end: int


def split_sentences(text: str) -> list[Sentence]:
    """Sentence spans of ``text``, trimmed, in order.

    A sentence ends after ``. ! ?`` (and closing quotes/brackets) before white space or the
    end, after ``。！？；``, at a blank line, and at a line break that the layout makes a
    boundary (the next line is a list item or less indented, or either line is a heading or
    a rule). Any other line break is hard wrapping: the sentence runs on, so
    "…1 if no lines were selected, and 2 if\\n       an error occurred." is one sentence.
    A sentence longer than :data:`MAX_SENTENCE_CHARS` that spans lines is cut at line ends.
    """
    spans: list[Sentence] = []
    begin = 0
    for match in _BOUNDARY.finditer(text):
        if match.group().startswith(".."):
            continue  # an ellipsis: a synopsis's "[FILE...]", "package-file..." repeats, it does not end
        if match.group() == "\n":
            if not _line_break_ends(text, match.start()):
                continue
        elif _abbreviation(text, match):
            continue
        _append_sentence(text, begin, match.end(), spans)
        begin = match.end()
    _append_sentence(text, begin, len(text), spans)
    return spans


def _line_bounds(text: str, newline: int) -> tuple[str, str]:
    """The line that ends at ``newline`` and the line after it (without their line breaks)."""
    head = text.rfind("\n", 0, newline) + 1
    tail = text.find("\n", newline + 1)
    return text[head:newline], text[newline + 1:tail if tail >= 0 else len(text)]


def _indent(line: str) -> int:
    return len(line.expandtabs(8)) - len(line.expandtabs(8).lstrip())


#: An ordered list's mark ("12.", "3)"), its number captured.
_NUMBER_MARK = re.compile(r"[ \t]*(\d{1,3})[.)][ \t]+\S")


def is_lead_in(text: str) -> bool:
    """Whether ``text`` ends in a colon: a lead-in ("To build it, run:"), which says nothing without what it
    introduces."""
    return text.rstrip().endswith((":", "："))


def ends_a_sentence(text: str) -> bool:
    """Whether ``text`` ends as a sentence does (a full stop, a question mark, 。…)."""
    return text.rstrip().endswith((".", "!", "?", ";", "。", "！", "？", "；"))


def opens_in_lower_case(text: str) -> bool:
    """Whether ``text`` opens with a lower-case letter: after a block, it may finish a sentence begun before it
    ("You may run" / "gpgconf --list-dirs" / "to view the default directories …")."""
    return text[:1].isalpha() and text[:1].islower()


def starts_item(line: str, following: str) -> bool:
    """Whether ``following``, the line after ``line``, opens a list item. A number other than 1 does not open one
    inside running text (lz4's "Values above 12 are considered the same as" over "12.  Recommended values are 1
    …"): as in CommonMark, only "1." interrupts a paragraph; a later number opens an item after another item's
    first line, a blank line, a line that ends in a stop, or a change of indentation."""
    if not _ITEM.match(following):
        return False
    number = _NUMBER_MARK.match(following)
    if number is None or number.group(1) == "1":
        return True
    before = line.rstrip()
    return not before or bool(_ITEM.match(line)) or before[-1] in ".:;!?" or _indent(line) != _indent(following)


#: A CJK character (its punctuation, which may end a sentence, aside).
_CJK_RUN_ON: Final = re.compile(f"[{CJK_CLASS}]")


def _line_break_ends(text: str, newline: int) -> bool:
    """Whether the line break at ``newline`` ends a sentence (layout), not just wraps it."""
    line, following = _line_bounds(text, newline)
    if not line.strip() or not following.strip():
        # A blank line ends a paragraph, except between an option tag and the more indented description
        # under it (sed's page sets "-n, --quiet, --silent", a blank line, then what -n does) and inside a
        # sentence that a page sets with a blank line after every line (timeout's).
        return not (tag_over_body(text, newline) or runs_over_blank(text, newline))
    if _MARKUP_LINE.match(line) or _MARKUP_LINE.match(following):
        return True
    if starts_item(line, following):
        return True
    here, there = _indent(line), _indent(following)
    if there < here and not (there == here - 1 and _CJK_RUN_ON.match(line.rstrip()[-1])):
        # One column less under a line that ends in the middle of a CJK sentence is how a CJK page is set
        # ("…第二个可能先写了记录)。缺省的值被设置" over " 为60。"): the sentence runs on. Elsewhere one column
        # less is layout too (a right-aligned table's rows).
        return True
    # A short title at the margin over an indented body (a man page's "OPTIONS", a plain-text
    # README's "Installation") is a heading; an option tag such as "-c, --count" runs on into its body.
    # The first line of a text has lost its indentation to trimming (a passage starts at its first
    # character), so it is never taken for a title.
    title = line.strip()
    return (text.rfind("\n", 0, newline) >= 0 and here <= 3 and there > here and len(title) <= 60 and title[0].isalpha()
            and title[-1] not in ".,;:!?")


def option_tag(line: str) -> bool:
    """Whether ``line`` is a command-line option's tag (``-n, --quiet, --silent``, ``--debug``,
    ``-e script, --expression=script``): a short line that starts with an option and ends in no stop."""
    title = line.strip()
    return opens_with_option(title) and len(title) <= _MAX_TAG_CHARS and title[-1] not in ".;:!?"


def opens_with_option(text: str) -> bool:
    """Whether ``text`` opens with a command-line option (``-R, -r, --recursive  copy …``, ``+N``)."""
    return bool(_OPTION_TAG.match(text.lstrip()))


def _text_lines_around(text: str, newline: int) -> tuple[int, str, str, int] | None:
    """``(start of the last line with text, that line, the next line with text, blank lines between)``
    around the line break at ``newline``; ``None`` when either side has no text."""
    end = newline
    line = text[text.rfind("\n", 0, end) + 1:end]
    blanks = 0
    while not line.strip():  # back over blank lines to the last line with text
        end = text.rfind("\n", 0, end)
        if end < 0:
            return None
        line = text[text.rfind("\n", 0, end) + 1:end]
        blanks += 1
    start = newline + 1
    while True:  # on over blank lines to the next line with text
        stop = text.find("\n", start)
        following = text[start:stop if stop >= 0 else len(text)]
        if following.strip():
            break
        if stop < 0:
            return None
        start = stop + 1
        blanks += 1
    return text.rfind("\n", 0, end) + 1, line, following, blanks


def runs_over_blank(text: str, newline: int) -> bool:
    """Whether the line break at ``newline`` lies inside a sentence that runs on over one blank line:
    the line before ends in a comma or semicolon, or is prose (five words or more) ending in no stop and the
    line after starts in lower case; both at the same indentation. Some man pages set a blank line
    after every line of an option's description (timeout's "also send a KILL signal if COMMAND is still
    running", a blank line, "this long after the initial signal was sent")."""
    around = _text_lines_around(text, newline)
    if around is None:
        return False
    head, line, following, blanks = around
    before, after = line.rstrip(), following.lstrip()
    if blanks > 1 or not before or not after or _MARKUP_LINE.match(line) or starts_item(line, following) \
            or option_tag(line) or option_tag(following):
        return False
    # The first line of a trimmed text has lost its indentation; the line after it keeps its own.
    same_indent = _indent(following) == _indent(line) or (head == 0 and _indent(following) >= _indent(line))
    last = before[-1]
    if last in ",;":
        return same_indent
    # A short line is a list entry ("make", a blank line, "make install"), not a sentence cut in two.
    return same_indent and (last.isalnum() or last == ")") and after[0].islower() \
        and len(before.split()) >= _MIN_RUN_ON_WORDS


def tag_over_body(text: str, newline: int) -> bool:
    """Whether the line break at ``newline`` lies between an option tag and the more indented line
    under it, with only blank lines between them."""
    around = _text_lines_around(text, newline)
    if around is None:
        return False
    _, line, following, _ = around
    # The first line of a trimmed text (a passage starting at its tag) has lost its indentation; the
    # description under it is still indented.
    return option_tag(line) and _indent(following) > _indent(line)


def _append_sentence(text: str, start: int, end: int, spans: list[Sentence]) -> None:
    """Append ``text[start:end]`` trimmed; a long one spanning lines is cut at its line ends."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if end <= start:
        return
    if end - start <= MAX_SENTENCE_CHARS or text.find("\n", start, end) < 0:
        spans.append(Sentence(start, end))
        return
    piece = start
    while piece < end:
        limit = piece + MAX_SENTENCE_CHARS
        cut = text.rfind("\n", piece, min(limit, end)) if limit < end else end
        if cut <= piece:
            cut = text.find("\n", limit, end)
            cut = end if cut < 0 else cut
        _append_trimmed(text, piece, cut, spans)
        piece = cut


def _abbreviation(text: str, match: re.Match[str]) -> bool:
    """Whether a full stop ends an abbreviation ("e.g.", "et al.", "Fig. 2") or is followed by a
    lower-case word, also inside quotes or brackets (the special "excluded." table qualifier): then it does not
    end the sentence. Single capitals are not taken for initials ("vitamin D." ends sentences far more often
    than "J. Smith" appears)."""
    if match.group().rstrip("\"'”’)]") != ".":
        return False
    following = _NEXT_WORD.match(text, match.end())
    if following is not None and following.group(1).islower():
        return True
    if _SPACED_ABBREVIATION.search(text, max(0, match.start() - 8), match.start()) is not None:
        return True  # "file locations (e. g. /etc/postgresql)", as some READMEs write it
    previous = _LAST_WORD.search(text, max(0, match.start() - 16), match.start())
    if previous is None:
        return False
    word = previous.group(1)
    return word.lower() in _ABBREVIATIONS


def _append_trimmed(text: str, start: int, end: int, spans: list[Sentence]) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if end > start:
        spans.append(Sentence(start, end))
