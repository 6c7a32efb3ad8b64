"""What the built-in model counts as a word (INF-3): the analysis of questions and passages, and the
stop words of each purpose.

"Meaningful term" means an analysed term (Snowball-stemmed, CJK characters one by one) that is not a stop
word: Lucene's English list plus the question and function words of :data:`QUESTION_STOPWORDS`, so "How long
are backups kept?" is about ``long``, ``backup`` and ``kept``, not ``how``. Command-line options are terms as
written. Whether a text asks at all (:func:`asks_a_question`) is decided here too: a question is about the
names it writes, a claim to check is not."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from ....text import CJK_CLASS, CJK_STOPWORDS, ENGLISH_STOPWORDS, TextAnalyzer
from ....text.analysis import has_cjk, lone_digits
from ....text.sentences import Sentence
from ....text.unwrap import join_hyphenated

__all__ = [
    "CJK_GATE_STOPWORDS", "CJK_QUESTION_WORDS", "CJK_SYNONYMS", "GATE_STOPWORDS", "QUESTION_STOPWORDS", "analyze",
    "asks_a_question"
]

#: Question and function words dropped on top of Lucene's English stop words: they say
#: what kind of answer is wanted, not what it is about.
QUESTION_STOPWORDS: Final = frozenset({
    "what", "which", "who", "whom", "whose", "when", "where", "why", "how", "do", "does", "did", "done",
    "can", "could", "should", "would", "may", "might", "must", "shall", "has", "have", "had", "been", "being",
    "were", "am", "i", "me", "my", "we", "us", "our", "you", "your", "he", "she", "him", "her", "his", "its",
    "them", "than", "so", "too", "very", "about", "from", "any", "all", "some", "many", "much", "here",
    "also", "only", "just", "please", "tell", "explain", "describe", "show", "give", "find", "list", "happen",
    "happens", "happened",
})
#: Two or more labelled lines and nothing else ("What: --control-path\nStatus: deprecated\nWhen: 1.18.x"): a
#: record's fields, whose meaning is in the sentence after them, so the run takes that sentence along.
_FIELD_LINES = re.compile(r"[ \t]*[A-Z][\w-]{0,30}:[ \t]*[^\n]*(?:\r?\n[ \t]*[A-Z][\w-]{0,30}:[ \t]*[^\n]*)+")
#: Words of a question that say what kind of answer is wanted, and "up", a particle ("set up", "back up", "up to")
#: that names no topic; the relevance gate does not count them.
GATE_STOPWORDS: Final = frozenset({"often", "long", "frequently", "exactly", "usually", "typically", "generally",
                                   "actually", "really", "kind", "way", "option", "options", "flag", "flags",
                                   "ok", "okay", "up"})
#: The same for Chinese ("选项有什么作用": what the option does): an option's line never says 选项.
CJK_GATE_STOPWORDS: Final = ("选项", "参数", "作用", "用途", "功能", "意思", "含义")
#: Words Chinese manuals write two ways, as the relevance gate counts them (written, counted): "lastb
#: 默认读的是哪个文件？" is answered by "Lastb 缺省上列出 /var/log/btmp 文件中的日志记录".
CJK_SYNONYMS: Final = (("缺省", "默认"), ("预设", "默认"), ("移除", "删除"))
#: Chinese question words: what kind of answer is wanted, not what it is about.
CJK_QUESTION_WORDS: Final = ("做什么", "干什么", "有什么", "是什么", "为什么", "什么", "哪个", "哪些", "哪里",
                             "哪儿", "哪", "多少", "多久", "多长", "怎么样", "怎么", "怎样", "如何", "是否", "是不是",
                             "谁", "吗", "呢")

_ANALYZER = TextAnalyzer(stopwords=ENGLISH_STOPWORDS | QUESTION_STOPWORDS, stemmer="english", cjk="unigram")
_STOPWORDS: Final = ENGLISH_STOPWORDS | QUESTION_STOPWORDS

_GATE_STOPWORDS: Final = frozenset(_ANALYZER.analyze(" ".join(GATE_STOPWORDS))) | GATE_STOPWORDS
#: Where a question's clauses part: commas, semicolons, "and"/"or", Chinese enumeration commas.
_CLAUSE = re.compile(r"[,;:，；：、]|\b(?:and|or)\b|以及|还有|并且|和")
_CJK_SPLIT = re.compile(f"([{CJK_CLASS}]+)")
_CJK_STOP_SPLIT = re.compile("[" + "".join(sorted(word for word in CJK_STOPWORDS if len(word) == 1)) + r"\s]+")
#: A command-line option: "-p", "-0", "--parents" (after white space, an opening bracket or the start).
_OPTION = re.compile(r"(?<![^\s(\[,])--?[A-Za-z0-9][A-Za-z0-9-]{0,30}(?![\w-])")


#: A punctuation character written as itself in quotes or brackets ("prefixed with an '*'", "(~)").
_QUOTED_SYMBOL = re.compile(r"""(?<=['"`‘“(])([*~#|^&%$!\\/+=:;_,.-])(?=['"`’”)])""")
#: What a question calls such a character ("Some lines start with an asterisk").
_SYMBOL_NAMES: Final = {"*": "asterisk star", "~": "tilde", "#": "hash pound", "|": "pipe", "^": "caret",
                        "&": "ampersand", "%": "percent", "$": "dollar", "!": "exclamation bang", "\\": "backslash",
                        "/": "slash", "+": "plus", "=": "equals", ":": "colon", ";": "semicolon", "_": "underscore",
                        ",": "comma", ".": "dot period", "-": "dash hyphen minus"}


def analyze(text: str) -> list[str]:
    """The built-in model's terms of ``text`` (stemmed, stop words and question words dropped).

    A word hyphenated at a line end ("ex‐\\nclude") is one word again before analysis,
    command-line options ("-p", "--parents", "-0") are terms as written (case kept: ``-S`` is
    not ``-s``), because "what does -p do?" is about ``-p``, and a punctuation character quoted
    as itself is also the words that name it ("an '*'" holds ``asterisk``).
    """
    text = join_hyphenated(text)
    terms = _ANALYZER.analyze(text)
    if "-" in text:
        terms.extend(_OPTION.findall(text))
    for symbol in _QUOTED_SYMBOL.findall(text):
        terms.extend(_ANALYZER.analyze(_SYMBOL_NAMES[symbol]))
    return terms


#: A sentence of a question and the white space after it; "i.e.", "e.g.", "etc.", "vs." and "cf." end none ("the
#: default gc_thresh3, i.e. how many entries … ?" is one question).
_QUESTION_SENTENCE = re.compile(r".+?(?:(?<!\bi\.e)(?<!\be\.g)(?<!\betc)(?<!\bvs)(?<!\bcf)[.!?](?=\s|$)|[。！？]|$)\s*",
                                re.DOTALL | re.IGNORECASE)


def asked_sentences(question: str) -> list[str]:
    """The sentences of ``question`` that end in a question mark (all of it when none does): "I tried e2freefrag -c
    3000 to see how many 3 MB chunks are free and it complained. What values are allowed?" asks for values, not
    for how many."""
    sentences = [match.group() for match in _QUESTION_SENTENCE.finditer(question) if match.group().strip()]
    return [sentence for sentence in sentences if sentence.rstrip().endswith(("?", "？"))] or [question]


def _analyze_with_digits(text: str) -> list[str]:
    """:func:`analyze`'s terms and the digits that stand alone (the relevance gate's notion of a term)."""
    return analyze(text) + lone_digits(text)


def _cut(text: str, span: Sentence, limit: int) -> str:
    """The sentence, or its longest prefix of whole words within ``limit`` characters (a substring)."""
    quote = text[span.start:span.end]
    if len(quote) <= limit:
        return quote
    head = quote[:limit]
    for mark in ("; ", ", ", " "):
        cut = head.rfind(mark)
        if cut > limit // 2:
            return head[:cut + (1 if mark != " " else 0)].rstrip()
    return head.rstrip() or head


def _normalised(scores: Sequence[float]) -> list[float]:
    top = max(scores, default=0.0)
    return [score / top for score in scores] if top > 0 else [0.0] * len(scores)


#: How an English question opens when its asker left out the question mark ("what does xwininfo show if I run it
#: with no flags"): a question word or an auxiliary verb, which no claim to check opens with (none of SciFact's).
_QUESTION_OPENING = re.compile(r"\s*(?:what|which|who|whom|whose|where|why|how|is|are|was|were|can|could|does|do|did"
                               r"|should|will|would|has|have)\b", re.IGNORECASE)


def asks_a_question(text: str) -> bool:
    """Whether ``text`` is put as a question (a question mark, a question word or an auxiliary verb to open it, or a
    Chinese question word) rather than stated (a claim to check): a question is *about* the names it writes,
    whatever its length, while in a long claim a name is one detail among many."""
    if text.rstrip().endswith(("?", "？")):
        return True
    if has_cjk(text):
        return any(word in text for word in CJK_QUESTION_WORDS)
    return _QUESTION_OPENING.match(text) is not None


def _distinct(entries: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(entries))
