"""Passages that follow the text, not its line breaks (issue 17, item 1; WF-6, WF-10, WF-12)."""

from __future__ import annotations

import bisect
import itertools

from hypothesis import example, given, settings
from hypothesis import strategies as st

from ditto.text.passages import MAX_PASSAGE_CHARS, PassageSpan, cut_passages
from tests.research.pages import FROB_HEAD

#: A page laid out the way `man` renders one at 100 columns (our own wording).
MAN_PAGE = FROB_HEAD + """\
   Ordering Control
       -r, --reverse
              Write the lines last to first.  This is the default when the
              output is a terminal.

       -k, --keep
              Keep (do not delete) the input file after rearranging it.

FROB 2.1                              2026-01-01                              FROB(1)
"""

MARKDOWN = """\
Widget
======

The widget stores its cache in
`~/.cache/widget` and clears it weekly.

## Install

- Run `make install` as root;
  it copies the binary.
- Run `make check` first.

```sh
make install
```
"""


def texts(text: str, spans: list[PassageSpan]) -> list[str]:
    return [text[span.start:span.end] for span in spans]


def test_man_page_blocks_headings_and_sentences_across_line_breaks() -> None:
    """Issue 17.1: the page header and section titles are headings, never passages; a sentence that runs
    over a hard line break stays in one passage; an option tag and its indented body are one passage;
    the footer is dropped."""
    spans = cut_passages(MAN_PAGE)
    found = texts(MAN_PAGE, spans)
    assert found[0] == "frob - rearrange the lines of a file" and spans[0].heading == "FROB(1) › NAME"
    assert found[1].endswith("1 if no lines were selected, and 2 if\n       an error occurred.")
    assert (spans[1].line_start, spans[1].line_end) == (7, 9)
    assert found[2].startswith("-r, --reverse\n              Write the lines last to first.")
    assert spans[2].heading == "FROB(1) › OPTIONS › Ordering Control" and spans[2].kind == "indented"
    assert found[3] == "-k, --keep\n              Keep (do not delete) the input file after rearranging it."
    assert len(spans) == 4
    assert not any(text.startswith(("NAME", "OPTIONS", "FROB")) for text in found)


def test_markdown_headings_lists_and_fenced_code() -> None:
    """Issue 17.1: setext and ATX headings give context, list items are passages of their own with their
    continuation lines, a fenced block is one code passage without its fences."""
    spans = cut_passages(MARKDOWN)
    found = texts(MARKDOWN, spans)
    assert found == ["The widget stores its cache in\n`~/.cache/widget` and clears it weekly.",
                     "- Run `make install` as root;\n  it copies the binary.", "- Run `make check` first.",
                     "make install"]
    assert [span.kind for span in spans] == ["paragraph", "list-item", "list-item", "code"]
    assert [span.heading for span in spans] == ["Widget", "Widget › Install", "Widget › Install",
                                                "Widget › Install"]


def test_long_paragraphs_are_cut_at_sentence_ends() -> None:
    """Issue 17.1, WF-6: a paragraph over 1000 characters becomes passages of whole sentences, each at most
    1000 characters; Chinese text is cut after 。 without spaces."""
    sentence = "The retention of each nightly backup is reviewed by the operations team every quarter."
    text = "\n".join([sentence] * 40)
    spans = cut_passages(text)
    assert len(spans) > 1 and all(span.end - span.start <= MAX_PASSAGE_CHARS for span in spans)
    assert all(text[span.start:span.end].endswith("quarter.") for span in spans)
    chinese = "数据备份保留三十天，然后自动删除。" * 120
    pieces = texts(chinese, cut_passages(chinese))
    assert len(pieces) > 1 and all(piece.endswith("。") and len(piece) <= MAX_PASSAGE_CHARS for piece in pieces)
    assert "".join(pieces) == chinese


def test_crlf_tabs_and_a_huge_line() -> None:
    """Issue 17.1: CRLF keeps its \\r inside the text but never ends a passage with it; a line without a
    space is cut anywhere, within the limit."""
    text = "First line of a\r\nparagraph.\r\n\r\n\tTabbed block\r\n"
    spans = cut_passages(text)
    assert texts(text, spans) == ["First line of a\r\nparagraph.", "Tabbed block"]
    assert [(s.line_start, s.line_end) for s in spans] == [(1, 2), (4, 4)]
    huge = "x" * 2500
    assert [(s.start, s.end) for s in cut_passages(huge)] == [(0, 1000), (1000, 2000), (2000, 2500)]


_alphabet = st.sampled_from(["a", "word", " ", "  ", "\t", "\n", "\n\n", "\r\n", ".", ". ", "。", "#", "# ",
                             "- ", "1. ", "```", "~~~", "===", "---", "•", "中文", "FROB(1)", "   ", "é", "😀",
                             "-p, --parents", ":", "x" * 300])
_texts = st.one_of(st.lists(_alphabet, max_size=120).map("".join),
                   st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=600))


def _check(text: str, max_chars: int) -> list[PassageSpan]:
    spans = cut_passages(text, max_chars=max_chars)
    line_starts = [0] + [i + 1 for i, char in enumerate(text) if char == "\n"]
    previous_end = 0
    for span in spans:
        piece = text[span.start:span.end]
        assert previous_end <= span.start < span.end <= len(text)
        assert piece.strip() and piece == piece.strip() and len(piece) <= max_chars
        assert span.line_start == bisect.bisect_right(line_starts, span.start)
        assert span.line_end == bisect.bisect_right(line_starts, span.end - 1)
        assert span.heading is None or 0 < len(span.heading) <= 300
        previous_end = span.end
    return spans


@settings(max_examples=300, deadline=None)
@given(text=_texts, max_chars=st.sampled_from([1, 7, 80, MAX_PASSAGE_CHARS]))
@example(text="\r\n\r\n", max_chars=MAX_PASSAGE_CHARS)
@example(text="```\nunclosed fence\n\n\nstill code", max_chars=MAX_PASSAGE_CHARS)
@example(text="a.\n" * 2000, max_chars=MAX_PASSAGE_CHARS)
@example(text="。" * 3000, max_chars=MAX_PASSAGE_CHARS)
@example(text="\t\t#\n===\n---\n", max_chars=MAX_PASSAGE_CHARS)
@example(text="x" * 5000 + "\n" + " y" * 3000, max_chars=MAX_PASSAGE_CHARS)
@example(text="Title\n   indented\n      deeper\nback", max_chars=7)
def test_passage_invariants(text: str, max_chars: int) -> None:
    """Issue 17.1: for any text (NUL and lone surrogates excluded by the caller): spans in order, never
    overlapping, never empty, trimmed, within the size limit, with the right line numbers."""
    _check(text, max_chars)


@settings(max_examples=200, deadline=None)
@given(words=st.lists(st.sampled_from(["alpha", "beta.", "gamma", "\n", "\n\n", "  ", "delta!", "中文。"]),
                      max_size=200))
def test_plain_text_loses_nothing(words: list[str]) -> None:
    """Issue 17.1: text without markup loses nothing: every non-blank character is inside some passage,
    or on a line taken for a title, which then heads the passages after it."""
    text = " ".join(words)
    spans = _check(text, MAX_PASSAGE_CHARS)
    covered = set()
    for span in spans:
        covered.update(range(span.start, span.end))
    offset = 0
    for line in text.split("\n"):
        lost = [i for i in range(offset, offset + len(line)) if i not in covered and not text[i].isspace()]
        if lost:
            assert any(span.heading and " ".join(line.split()) in span.heading for span in spans if span.start > offset)
        offset += len(line) + 1


def test_an_indented_block_has_its_lead_line_in_its_path() -> None:
    """Issue 17.1: the second paragraph of an option's description, or a function's description under its
    signature (pydoc), is found by that label: the lead line is the last step of its heading path; a
    block back at the lead's indentation, or a new heading, ends it."""
    text = ("FUNCTIONS\n"
            "    rmtree(path, ignore_errors=False)\n"
            "        Recursively delete a directory tree.\n"
            "\n"
            "        If ignore_errors is set, errors are ignored.\n"
            "\n"
            "    unpack_archive(filename)\n"
            "        Unpack an archive.\n"
            "\n"
            "OPTIONS\n"
            "       Plain prose at the body's margin.\n")
    spans = {text[s.start:s.end].split("\n")[0].strip(): s.heading for s in cut_passages(text)}
    assert spans["If ignore_errors is set, errors are ignored."] == "FUNCTIONS › rmtree(path, ignore_errors=False)"
    assert spans["rmtree(path, ignore_errors=False)"] == "FUNCTIONS"
    assert spans["unpack_archive(filename)"] == "FUNCTIONS"
    assert spans["Plain prose at the body's margin."] == "OPTIONS"


SED_OPTIONS = ("SED(1)                       General Commands Manual                       SED(1)\n"
               "\n"
               "OPTIONS\n"
               "       -n, --quiet, --silent\n"
               "\n"
               "              suppress automatic printing of pattern space\n"
               "\n"
               "              A second paragraph about -n.\n"
               "\n"
               "       --debug\n"
               "\n"
               "              annotate program execution\n"
               "\n"
               "       -x\n"
               "\n"
               "       not indented deeper: prose of its own.\n")


def test_an_option_tag_over_a_blank_line_stays_with_its_description() -> None:
    """Issue 17.1 (passages follow the text): sed's page puts a blank line between each option's tag and
    its description. The tag and the description are one passage and one sentence, so a quote of what
    ``-n`` does names ``-n``; a later paragraph still has the tag in its path; a line that is not indented
    deeper than the tag is not its description."""
    from ditto.text.sentences import split_sentences

    spans = cut_passages(SED_OPTIONS)
    found = texts(SED_OPTIONS, spans)
    assert found[0] == "-n, --quiet, --silent\n\n              suppress automatic printing of pattern space"
    assert spans[0].kind == "indented" and (spans[0].line_start, spans[0].line_end) == (4, 6)
    assert [found[0][s.start:s.end] for s in split_sentences(found[0])] == [found[0]]
    assert found[1] == "A second paragraph about -n." and spans[1].heading == "SED(1) › OPTIONS › -n, --quiet, --silent"
    assert found[2] == "--debug\n\n              annotate program execution"
    assert found[3:] == ["-x", "not indented deeper: prose of its own."]
    # Sentences alone: a tag, then a blank line, then prose at the same depth are two sentences.
    plain = "-x\n\nnot indented.\n\nTitle\n\n   body."
    assert [plain[s.start:s.end] for s in split_sentences(plain)] == ["-x", "not indented.", "Title", "body."]


#: A page set the way timeout's is: a blank line after every line of an option's description (our wording).
SPACED_OPTIONS = ("FROB(1)                       General Commands Manual                       FROB(1)\n"
                  "\n"
                  "OPTIONS\n"
                  "       -w, --wait=DURATION\n"
                  "\n"
                  "              also ring the bell if the job is still queued\n"
                  "\n"
                  "              this long after it was first scheduled\n"
                  "\n"
                  "       -q, --queue=NAME\n"
                  "\n"
                  "              pick the queue to use;\n"
                  "\n"
                  "              NAME may be any queue listed by frob -l\n"
                  "\n"
                  "              A second paragraph about -q.\n"
                  "\n"
                  "       --help show the usage and exit\n")


def test_a_sentence_set_with_blank_lines_between_its_lines_stays_whole() -> None:
    """Issue 17.1 (passages follow the text, a quote never stops mid-sentence): timeout's page sets a
    blank line after each line of a description. A line that ends in no stop, followed over one blank
    line by a line at the same depth that starts in lower case (or after a comma or semicolon), is the
    same sentence, in the passage and in the sentence splitter, when the line before is prose (five words)
    or ends in a comma or semicolon; a capitalised new sentence, a second blank line, a short list entry or
    an option tag still part."""
    from ditto.text.sentences import Sentence, runs_over_blank, split_sentences

    found = texts(SPACED_OPTIONS, cut_passages(SPACED_OPTIONS))
    assert found[0] == ("-w, --wait=DURATION\n\n              also ring the bell if the job is still queued\n\n"
                        "              this long after it was first scheduled")
    assert [found[0][s.start:s.end] for s in split_sentences(found[0])] == [found[0]]
    assert found[1] == ("-q, --queue=NAME\n\n              pick the queue to use;\n\n"
                        "              NAME may be any queue listed by frob -l")
    assert found[2:] == ["A second paragraph about -q.", "--help show the usage and exit"]
    assert not runs_over_blank("a line\n\n\nstill going", 6)  # two blank lines end it
    assert not runs_over_blank("a full stop.\n\nthen more", 12)
    assert not runs_over_blank("   deeper line\n\nshallower line", 14)
    assert split_sentences("one two three four five\n\nsix") == [Sentence(0, 28)]
    assert len(split_sentences("make\n\nmake install")) == 2  # short lines are entries of a list


def test_a_long_block_is_cut_into_even_passages() -> None:
    """Issue 17 (real documents, WF-6): logind.conf's NAutoVTs= description is a little over the limit; filled
    greedily, its last two sentences ("Defaults to 6. When set to 0, …") were a passage of their own, away from
    what they are the default of. A block is cut into as few passages as before, of even length."""
    body = " ".join(f"Sentence {n} of the description says one more thing about virtual terminals." for n in range(13))
    text = "NAutoVTs=\n           " + body + " Defaults to 6. When set to 0, automatic spawning is disabled."
    pieces = texts(text, cut_passages(text))
    assert len(pieces) == 2 and all(len(piece) <= MAX_PASSAGE_CHARS for piece in pieces)
    assert abs(len(pieces[0]) - len(pieces[1])) < 150  # not 990 and a scrap
    assert "Defaults to 6." in pieces[1] and pieces[1].startswith("Sentence")


@given(lengths=st.lists(st.tuples(st.integers(1, 400), st.integers(0, 3)), min_size=1, max_size=40),
       limit=st.sampled_from([1, 80, 400, 1000]))
def test_even_passages_are_no_more_than_greedy_ones(lengths: list[tuple[int, int]], limit: int) -> None:
    """WF-6, invariant: cutting into even passages makes exactly as many as filling each to the limit, keeps the
    parts in order and whole, and joins parts only within the limit (a part over it stands alone)."""
    from ditto.text.passages import _balanced_chunks, _chunks

    parts, offset = [], 0
    for length, gap in lengths:
        parts.append((offset, offset + length))
        offset += length + gap
    chunks = _balanced_chunks(parts, limit)
    assert len(chunks) == len(_chunks(parts, limit))
    assert chunks[0][0] == parts[0][0] and chunks[-1][1] == parts[-1][1]
    assert {end for _, end in chunks} <= {end for _, end in parts}
    for start, end in chunks:
        assert end - start <= limit or (start, end) in parts


def test_a_number_inside_a_wrapped_sentence_opens_no_list_item() -> None:
    """Issue 17 (real documents, WF-6): lz4's "Values above 12 are considered the same as" is wrapped before "12.
    Recommended values are 1 …"; read as an item of a numbered list, the sentence lost its end and the rest of
    the option its passage. A later number opens an item only after a stop, another item or a blank line, or at
    another indentation; "1." always does (as in CommonMark)."""
    text = ("-#     Compression level, with # being any value from 1 to 12. Higher values trade com-\n"
            "              pression speed for compression ratio. Values above 12 are considered the same as\n"
            "              12.  Recommended values are 1 for fast compression (default).\n")
    [piece] = texts(text, cut_passages(text))
    assert "Values above 12 are considered the same as\n              12." in piece
    steps = "Do this.\n1. unpack the archive.\n2. run make.\n3. run make install.\n"
    assert texts(steps, cut_passages(steps))[1:] == ["1. unpack the archive.", "2. run make.", "3. run make install."]


#: A web page's main text as the extractor writes it (our wording): one paragraph a line, titles on lines of their
#: own, a compile-time option on a line of its own.
WEB_TEXT = """\
Limits in this article are sizes or quantities that cannot be exceeded.
Maximum length of a string
The maximum number of bytes in a string is set by WIDGET_MAX_LENGTH. Its default value is one billion.
-DWIDGET_MAX_LENGTH=123456789
The maximum string length can be lowered at run time.
Maximum Number Of Columns
The default setting for WIDGET_MAX_COLUMN is 2000. You can change it at compile time.
Conclusion"""


def test_web_text_lines_are_paragraphs_under_their_titles() -> None:
    """Issue 17 (passages for web text, WF-6): in text extracted from a web page a short title line heads the
    paragraphs under it and no passage runs across it; a setting on a line of its own and a last short line with
    nothing under it are no titles. Documents (the default layout) are cut as before."""
    spans = cut_passages(WEB_TEXT, layout="lines")
    texts = [(span.heading, WEB_TEXT[span.start:span.end]) for span in spans]
    assert [heading for heading, _ in texts] == [None, "Maximum length of a string", "Maximum Number Of Columns"]
    assert texts[1][1].startswith("The maximum number of bytes") and "-DWIDGET_MAX_LENGTH" in texts[1][1]
    assert texts[1][1].endswith("lowered at run time."), "the section ends at the next title"
    assert texts[2][1].endswith("Conclusion")
    assert all(WEB_TEXT[span.start:span.end].strip() == WEB_TEXT[span.start:span.end] for span in spans)
    wrapped = cut_passages(WEB_TEXT)
    assert len(wrapped) == 1 and wrapped[0].heading is None


@given(st.lists(st.sampled_from(["Short Title", "A sentence that ends here.", "x = f(1)", "", "- an item",
                                 "| a | b |", "Another paragraph, long enough to follow a title line."]),
                max_size=30))
def test_web_text_passages_cover_the_text_in_order(lines: list[str]) -> None:
    """Issue 17 (WF-6), invariant: the passages of web text are in order, do not overlap, stay within the limit,
    and every non-blank line that is not a title is inside one."""
    text = "\n".join(lines)
    spans = cut_passages(text, layout="lines")
    assert all(a.end <= b.start for a, b in itertools.pairwise(spans))
    assert all(0 < span.end - span.start <= MAX_PASSAGE_CHARS for span in spans)
    covered = "".join(text[span.start:span.end] for span in spans)
    assert all(line.strip() in covered for line in lines if line.strip() and line != "Short Title")


README_BUILD = """Building Redis
--------------

It is as simple as:

    % make

To build with TLS support, you'll need OpenSSL development libraries (e.g.
libssl-dev on Debian/Ubuntu) and run:

    % make BUILD_TLS=yes

Fixing build problems
---------------------

Options are listed with
    --verbose
"""


def test_a_lead_in_and_the_one_block_it_introduces_are_one_passage() -> None:
    """WF-6 (issue 17, real READMEs): a paragraph that ends in a colon and the one short block it introduces are one
    passage, over their line breaks ("… (e.g. libssl-dev on Debian/Ubuntu) and run:" with "% make BUILD_TLS=yes"),
    so neither is found, shown or quoted without the other; a first line that ends in no colon still leads only as
    the heading of what is under it (an option tag, a label)."""
    texts = [README_BUILD[span.start:span.end] for span in cut_passages(README_BUILD)]
    assert "It is as simple as:\n\n    % make" in texts
    assert ("To build with TLS support, you'll need OpenSSL development libraries (e.g.\nlibssl-dev on "
            "Debian/Ubuntu) and run:\n\n    % make BUILD_TLS=yes") in texts
    headings = {README_BUILD[span.start:span.end]: span.heading for span in cut_passages(README_BUILD)}
    assert headings["--verbose"].endswith("Options are listed with")
    fenced = "To build, run:\n\n```sh\nmake\n```\n\nThen install it.\n"
    assert [fenced[span.start:span.end] for span in cut_passages(fenced)] == ["To build, run:\n\n```sh\nmake",
                                                                              "Then install it."]


def test_a_long_paragraph_that_ends_in_a_colon_keeps_its_block() -> None:
    """WF-6 (issue 17, Debian's NEWS files): "… For example, the following stanza in ~/.ssh/config will enable RSA/SHA1
    for … a single destination host:" ends a paragraph of 450 characters; the stanza under it is one passage with
    it all the same (the passage bound, not the heading bound, limits it)."""
    text = ("     " + "Incompatibility is more likely with older implementations. " * 6 + "For example, the\n"
            "     following stanza in ~/.ssh/config will enable RSA/SHA1 for a single\n     destination host:\n\n"
            "         Host old-host\n             HostkeyAlgorithms +ssh-rsa\n\n     We recommend it only as a "
            "stopgap.\n")
    spans = [text[span.start:span.end] for span in cut_passages(text)]
    assert len(spans) == 2 and spans[0].endswith("destination host:\n\n         Host old-host\n"
                                                 "             HostkeyAlgorithms +ssh-rsa")


def test_a_line_of_tildes_under_a_title_or_closing_nothing_is_no_fence() -> None:
    """WF-6 (issue 17, util-linux's and Valgrind's docs, glibc's NEWS): "~~~~" under a title underlines it, and a
    fence that nothing closes opens no code block; either made the rest of the file one run of code, cut by lines,
    with no headings. A tab-indented "# rm -rf output diff" is a root prompt in a block, not a heading."""
    text = (" util-linux regression tests\n ~~~~~~~~~~~~~~~~~~~~~~~~~~~\n\n"
            " It's expected that you will include a test.\n\n Remove the output directories:\n\n"
            "\t# rm -rf output diff\n\n~~~\nA line of tildes above closes nothing.\n")
    spans = cut_passages(text)
    assert [(text[span.start:span.end], span.heading, span.kind) for span in spans] == [
        ("It's expected that you will include a test.", "util-linux regression tests", "paragraph"),
        ("Remove the output directories:\n\n\t# rm -rf output diff", "util-linux regression tests", "paragraph"),
        ("~~~\nA line of tildes above closes nothing.", "util-linux regression tests", "paragraph")]
    news = (" * Interface changes relative to the 1.10.0 release:\n   " + "~" * 53 + "\n"
            "   gcry_kdf_open                         NEW function.\n")
    [entry] = cut_passages(news)
    assert (news[entry.start:entry.end], entry.kind) == ("gcry_kdf_open                         NEW function.",
                                                         "paragraph")
    assert entry.heading == "* Interface changes relative to the 1.10.0 release:"
    fenced = "Build it:\n\n~~~\nmake\n~~~\n"
    assert [span.kind for span in cut_passages(fenced)] == ["paragraph"], "a closed fence is still code"


def test_a_sentence_around_its_block_is_one_passage() -> None:
    """WF-6 (issue 17, real READMEs): "You may run" / an indented "gpgconf --list-dirs" / "to view the default
    directories used by GnuPG." is one sentence set around a command: one passage, so the command is found and
    quoted with what it is for. A paragraph that ends its sentence leads nothing this way."""
    text = ("  You may run\n\n    gpgconf --list-dirs\n\n  to view the default directories used by GnuPG.\n\n"
            "  It is built.\n\n    make\n\n  then installed.\n")
    assert [text[span.start:span.end] for span in cut_passages(text)] == [
        "You may run\n\n    gpgconf --list-dirs\n\n  to view the default directories used by GnuPG.",
        "It is built.", "make", "then installed."]


def test_a_lead_in_keeps_its_blocks_when_they_are_short_together() -> None:
    """WF-6 (issue 17, README.Debian files): "… the following algorithms in libcrypto have been disabled:" over "- RC5",
    "- MDC2", "- IDEA" is one passage; so are a lead-in and its short indented items. Items that are long together
    stay passages of their own (each is found by itself), the lead-in the whole heading of each; one past the
    heading bound is prose, not a heading."""
    text = ("PATENT ISSUES\n-------------\n\nAs a result, the following algorithms in libcrypto have been disabled:\n"
            "- RC5\n- MDC2\n- IDEA\n\nAlso see the README file.\n\n"
            "The exit status values are (see the\nlist below):\n\n"
            "    0   success\n\n    1   failure\n\nLong:\n\n" + "    a line of code\n" * 30)
    spans = {text[span.start:span.end]: span.heading for span in cut_passages(text)}
    assert "As a result, the following algorithms in libcrypto have been disabled:\n- RC5\n- MDC2\n- IDEA" in spans
    assert ("The exit status values are (see the\nlist below):\n\n    0   success\n\n    1   failure") in spans
    long_block = next(passage for passage in spans if passage.startswith("a line of code"))
    assert spans[long_block] == "PATENT ISSUES › Long:"
    items = "".join(f"    {value}   {'the run failed for a reason of its own ' * 3}\n\n" for value in range(4))
    values = "Exit status\n-----------\n\nThe exit status values are:\n\n" + items
    headings = [span.heading for span in cut_passages(values)]
    assert headings[1:] == ["Exit status › The exit status values are:"] * 4
    long_lead = "Run this " + "very " * 80 + "carefully:\n\n" + "    % make\n\n" * 40
    code = cut_passages(long_lead)[1]
    assert code.heading is None or len(code.heading) <= 80, "a lead-in past the bound is not a heading"


def _specimens() -> list[str]:
    """Texts of every shape the cutter handles, the same on every run: this file's pages, and pages put together
    by a seeded generator from man-page, Markdown, list, code, CJK, CRLF and overlong pieces."""
    import random

    pieces = [
        MAN_PAGE, MARKDOWN, FROB_HEAD,
        "   Ordering Control\n       -n, --numeric\n              Compare by value.  Defaults to off.\n\n",
        "       -o FILE\n\n              Write to FILE.  The default is\n              standard output.\n\n",
        "1. First step; run it\n   as root.\n2. Second step.\n\n",
        "    indented code\n    more code\n\n",
        "```\nfenced\n```\n\n",
        "  You may run\n\n    frobconf --list-dirs\n\n  to view the default directories used by frob.\n\n",
        " frob regression tests\n ~~~~~~~~~~~~~~~~~~~~~\n\n Run them as root:\n\n\t# cd tests\n\n~~~\nnever closed\n\n",
        "Older servers may need it back. " * 12 + "For example, this stanza in ~/.frob/config does it:\n\n"
        "    Host old-host\n        FrobAlgorithms +frob-rsa\n\n",
        "描述\n       frob 读取每个文件并重新排列其中的行。默认情况下，它不删除输入文件；如果指定\n"
        "       --remove 选项，则删除。\n\n",
        "Title line\r\nA paragraph with CRLF line ends.\r\nAnother line.\r\n\r\n",
        " ".join(["A sentence that runs on and on."] * 60) + "\n\n",
        "word " * 400 + "\n\n",
        "x" * 2500 + "\n\n",
        "NOTES\n       "
        + "\n       ".join(f"Note {n} says a thing that takes a line to say in full." for n in range(40)) + "\n\n",
        "To build with TLS support, you'll need OpenSSL development libraries (e.g.\nlibssl-dev on Debian/Ubuntu) "
        "and run:\n\n    % make BUILD_TLS=yes\n\n",
    ]
    generator = random.Random(5)
    pages = list(pieces)
    for _ in range(40):
        pages.append("".join(generator.choice(pieces) for _ in range(generator.randint(2, 8))))
    return pages


#: The digest of every specimen's passages (both layouts), per :data:`PASSAGES_VERSION`.
# 13 reads HTML files as their main text, leaves Markdown link definitions out, takes a line of extracted text for
# a title only after a finished sentence and over one that does not continue it, and cuts no lead-in from its
# neighbours.
# 14 cuts the same text alike; it reads HTML with the lists trafilatura's default balance dropped.
# 15 ends no sentence at "e. g." (none of the specimens writes it).
_CUT_DIGESTS = {12: "c471795e717ca73bad9aaff1beb820e50a993d2d0fe6bbb24e0413baf82a633d",
                13: "7b6cf9b9bbed52c4b95e8f0bc3f7f1e2c7760d15a5376dd29eade398103638e5",
                14: "7b6cf9b9bbed52c4b95e8f0bc3f7f1e2c7760d15a5376dd29eade398103638e5",
                15: "7b6cf9b9bbed52c4b95e8f0bc3f7f1e2c7760d15a5376dd29eade398103638e5"}


def test_a_change_in_the_passages_bumps_their_version() -> None:
    """WF-6 / issue 18: an index (a folder cache or ``ditto index``) is re-cut only when PASSAGES_VERSION changes,
    so passages cut differently under the same version would leave old passages in every index built before.
    A change to the cutter that changes its output must bump the version and record the new digest here."""
    import hashlib

    from ditto.text.passages import PASSAGES_VERSION

    digest = hashlib.sha256()
    for text in _specimens():
        for layout in ("wrapped", "lines"):
            for span in cut_passages(text, layout=layout):  # type: ignore[arg-type]
                digest.update(f"{span.start}:{span.end}:{span.line_start}:{span.line_end}:{span.heading}\n"
                              .encode())
    assert _CUT_DIGESTS.get(PASSAGES_VERSION) == digest.hexdigest(), (
        "the passages changed: bump PASSAGES_VERSION (ditto.text.passages) and record the new digest")


def test_markdown_link_definitions_are_no_passage() -> None:
    """WF-6 (found by hand on at-spi2-core's README.md): its "[CORBA]: https://…" / "[DBus]: https://…" block
    passed for "What was used before DBus for accessibility in GNOME?" and was the brief's whole answer. Markdown
    shows nothing for a link reference definition; a line like it inside a paragraph is the paragraph's text."""
    text = ("CORBA was phased out in favor of [DBus][DBus], a more modern IPC mechanism.\n\n"
            "[CORBA]: https://en.wikipedia.org/wiki/CORBA\n[DBus]: <https://www.freedesktop.org/wiki/Software/dbus/> "
            '"D-Bus"\n   [GNOME]: https://www.gnome.org\n\nSee the notes.\n[x]: this line continues the paragraph\n\n'
            "[^1]: A footnote is text.\n")
    assert [text[span.start:span.end] for span in cut_passages(text)] == [
        "CORBA was phased out in favor of [DBus][DBus], a more modern IPC mechanism.",
        "See the notes.\n[x]: this line continues the paragraph", "[^1]: A footnote is text."]


def test_extracted_text_that_keeps_its_line_breaks_has_no_titles_inside_sentences() -> None:
    """WF-6 (found by hand on libffi's HTML manual, whose pages keep their source's line breaks, as Node.js's do):
    "This initializes cif according to the given parameters for" over "a call to a variadic function." was taken
    for a title, and the passage under it opened mid-sentence ("a call to a variadic function." was quoted). A line
    is a title only after a finished sentence and over a line that does not continue it."""
    text = ("The Basics\nThe first thing you must do is create an ffi_cif object that matches the signature.\n"
            "If the function being called is variadic (varargs) then\nffi_prep_cif_var must be used instead.\n"
            "This initializes cif according to the given parameters for\na call to a variadic function.  In general "
            "its operation is the\nsame as for ffi_prep_cif.\nThe schema-names 'main' and\n'temp' refer to the main "
            "database and the database used for\ntemporary tables.\n")
    spans = cut_passages(text, layout="lines")
    assert [span.heading for span in spans] == ["The Basics"]
    assert "This initializes cif according to the given parameters for\na call" in text[spans[0].start:spans[0].end]
    assert "The schema-names 'main' and\n'temp' refer" in text[spans[-1].start:spans[-1].end]  # a quote opens it


def test_a_long_block_is_never_cut_between_a_lead_in_and_its_neighbours() -> None:
    """WF-6 (SQLite's foreign key page, read as its main text): a block longer than a passage is cut at sentence
    ends; a lead-in stays with the sentence before it and the item it introduces, so a cut never leaves "The
    following clarifications apply:" alone at a passage's end or its list at the next one's start."""
    filler = "Foreign keys are checked at the end of each statement. " * 14
    text = (filler + "In the above paragraph, the term equal means equal when values are compared using the rules "
            "specified here. The following clarifications apply:\n- When comparing text values, the collating "
            "sequence associated with the parent key column is always used.\n" + filler)
    passages = [text[span.start:span.end] for span in cut_passages(text, layout="lines")]
    assert len(passages) > 1
    assert any("rules specified here. The following clarifications apply:\n- When comparing" in passage
               for passage in passages), passages
