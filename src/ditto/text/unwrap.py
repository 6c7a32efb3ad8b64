"""Hard-wrapped text as a person reads it: one line, words hyphenated at a line end joined again.

Man pages, READMEs and plain-text docs are wrapped at a fixed width, and ``groff``
hyphenates words at the line end with U+2010 (``opera‐`` / ``tion``). A quote keeps
those line breaks (it is verbatim); wherever a copied sentence is *shown* on one line
— the answer in ``brief.md``, the closing summary on a terminal — and wherever its
words are *counted*, the reading form is used instead:

* a word broken by U+2010 or a soft hyphen (U+00AD) at a line end is one word again;
* a word broken after an ASCII hyphen at a line end keeps the hyphen (``built-`` /
  ``in`` is ``built-in``: the hyphen may be part of the word, so it is never dropped);
* white space around a line break between two CJK characters disappears (Chinese
  has no spaces between words, so a wrapped line is not a word gap);
* any other run of white space is one space.

Example::

    unwrap("the opera\u2010\\n       tion ends.")   # 'the operation ends.'
"""

from __future__ import annotations

import re
from typing import Final

from .analysis import CJK_CLASS

__all__ = ["join_hyphenated", "unwrap"]

#: Hyphenation at a line end (groff's U+2010 or a soft hyphen): the word continues on the next line.
_HYPHENATED: Final = re.compile(r"(?<=[^\W\d_])[\u2010\u00ad][ \t]*\r?\n[ \t]*(?=[^\W\d_])")
#: An ASCII hyphen at a line end inside a word: kept, the line break goes.
_WRAPPED_HYPHEN: Final = re.compile(r"(?<=[^\W\d_]-)[ \t]*\r?\n[ \t]*(?=[^\W\d_])")
_CJK_BREAK: Final = re.compile(f"(?<=[{CJK_CLASS}，。；：、！？）」』])[ \t]*\r?\n\\s*(?=[{CJK_CLASS}（「『])")
_SPACE: Final = re.compile(r"\s+")


def join_hyphenated(text: str) -> str:
    """``text`` with words hyphenated across a line break joined (U+2010/U+00AD dropped, an ASCII
    hyphen kept); everything else, line breaks included, is left as it is."""
    if "\n" not in text:
        return text
    return _WRAPPED_HYPHEN.sub("", _HYPHENATED.sub("", text))


def unwrap(text: str) -> str:
    """``text`` on one line as a person reads it (see the module docs)."""
    if "\n" in text:
        text = _CJK_BREAK.sub("", join_hyphenated(text))
    return _SPACE.sub(" ", text).strip()
