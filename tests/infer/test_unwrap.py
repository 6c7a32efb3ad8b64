"""Hard-wrapped text shown on one line as it reads (issue 17.4: "an answer people can read")."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from ditto.text.unwrap import join_hyphenated, unwrap


def test_hyphenation_at_a_line_end_is_undone() -> None:
    """Issue 17.4: groff's U+2010 and a soft hyphen at a line end join the word ("opera‐ tion" was shown);
    an ASCII hyphen stays (it may belong to the word); a wrapped Chinese line joins without a space."""
    assert unwrap("moved to a different loca\u2010\n       tion (indicated with a Location: header)") == \
        "moved to a different location (indicated with a Location: header)"
    assert unwrap("soft\u00ad\n  hyphen") == "softhyphen"
    assert unwrap("a built-\n   in command") == "a built-in command"
    assert unwrap("但即使这些目录已存在也不视为错误，且其文件模式也不受\n              选项影响。") == \
        "但即使这些目录已存在也不视为错误，且其文件模式也不受选项影响。"
    assert unwrap("  two   words \n\n next ") == "two words next"
    assert join_hyphenated("no break\u2010 here") == "no break\u2010 here"
    assert join_hyphenated("ex\u2010\n  clude\nnext line") == "exclude\nnext line"


_pieces = st.sampled_from(["word", "Wort", "x", " ", "  ", "\n", "\n     ", "\t", ".", ",", "-", "1"])


@given(st.lists(_pieces, max_size=40).map("".join))
def test_unwrap_is_whitespace_collapsing_when_nothing_is_hyphenated(text: str) -> None:
    """Issue 17.4: without hyphens or CJK, the reading form is exactly the text with its white space
    collapsed; it is always one line without doubled spaces."""
    shown = unwrap(text)
    assert "\n" not in shown and "  " not in shown and shown == shown.strip()
    if not re.search(r"-[ \t]*\n", text):
        assert shown == " ".join(text.split())
