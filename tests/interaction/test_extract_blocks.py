"""A web page's main text as blocks: paragraphs, titles, code, lists and tables apart (INT-5, WF-12).

trafilatura's plain text ran a paragraph, the code under it and the next title together, one element a line;
its XML keeps the elements, and :func:`render_blocks` writes them as a Markdown file is written, so the text is
cut into passages the way a document is. The last test reads a real page of the SQLite documentation.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from lxml import etree

from ditto.text.passages import cut_passages
from ditto.worker.interaction.extract import extract_main_text, render_blocks
from tests.support.sqlite_docs import sqlite_docs_dir


def _doc(body: str) -> str:
    """``body`` rendered as trafilatura's tree of it (``bare_extraction(...).body``)."""
    return render_blocks(etree.fromstring(f"<body>{body}</body>"))


def test_paragraphs_are_blocks_that_keep_their_lines() -> None:
    """INT-5: a paragraph keeps its source's lines, white space inside a line collapsed and no blank line inside;
    ``<br>`` (``lb``) is a line end; a blank line between two blocks."""
    text = _doc("<p>If an  EventEmitter does not\nhave a listener,\n\n  it <code>throws</code>.</p>"
                "<p>First line<lb/>second line</p>")
    assert text == "If an EventEmitter does not\nhave a listener,\nit throws.\n\nFirst line\nsecond line"


def test_titles_code_lists_and_tables() -> None:
    """INT-5: a title is an ATX line of its level, code keeps its lines inside a fence, a list an item a line
    (nested items indented), a table a row a line."""
    text = _doc('<head rend="h3">Error events#</head>'
               "<code>const a = 1;\n  if (a) {\n    go();\n  }</code>"
               "<list><item>one</item><item>two<list><item>inner</item></list></item></list>"
               "<table><row><cell>Name</cell><cell>Default</cell></row><row><cell>width</cell><cell>75</cell></row>"
               "</table>")
    assert text == ("### Error events#\n\n"
                                  "```\nconst a = 1;\n  if (a) {\n    go();\n  }\n```\n\n"
                                  "- one\n- two\n  - inner\n\n"
                                  "Name | Default\nwidth | 75")


def test_a_fence_is_longer_than_any_backtick_run_in_the_code() -> None:
    """INT-5: code that shows a Markdown fence cannot close its own block."""
    text = _doc("<code>```js\nx\n```</code><p>After.</p>")
    assert text.startswith("````\n```js\nx\n```\n````")
    spans = cut_passages(text)
    assert [(span.kind, text[span.start:span.end]) for span in spans][-1] == ("paragraph", "After.")


def test_a_quotation_around_code_is_its_blocks_and_text_around_blocks_is_kept() -> None:
    """INT-5: SQLite wraps its examples in ``<blockquote><pre>``; words between blocks are not lost."""
    text = _doc("<quote><code>SELECT 1;</code></quote>tail words<p>Last.</p>")
    assert text == "```\nSELECT 1;\n```\n\ntail words\n\nLast."


@given(st.lists(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1,
                        max_size=40), min_size=1, max_size=8))
def test_every_word_of_every_paragraph_is_kept_in_order(paragraphs: list[str]) -> None:
    """INT-5: rendering drops no word and reorders nothing, whatever the text (markup characters escaped)."""
    from xml.sax.saxutils import escape

    text = _doc("".join(f"<p>{escape(paragraph)}</p>" for paragraph in paragraphs))
    assert text.split() == [word for paragraph in paragraphs for word in paragraph.split()]


def test_a_real_page_is_cut_into_its_paragraphs_and_examples() -> None:
    """WF-12: SQLite's UPSERT page: the paragraph that explains the first example is a passage of its own, whole;
    the example is one passage with the sentence that introduces it, and the explanation is not run into it."""
    text = extract_main_text((sqlite_docs_dir() / "lang_upsert.html").read_bytes())
    passages = [text[span.start:span.end] for span in cut_passages(text)]
    assert ("The upsert above inserts the new vocabulary word \"jovial\" if that word is not already in the dictionary,"
            " or if it is already in the dictionary, it increments the counter. The \"count+1\" expression could also"
            " be written as \"vocabulary.count\". PostgreSQL requires the second form, but SQLite accepts either.") \
        in passages
    example = next(passage for passage in passages if "INSERT INTO vocabulary(word)" in passage)
    assert example.startswith("Some examples will help illustrate how UPSERT works:\n\n```\nCREATE TABLE vocabulary")
    assert "The upsert above" not in example
