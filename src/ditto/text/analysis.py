"""Text analysis: what a "term" is, for every worker that scores text lexically.

One pipeline for documents and queries, used by RETRIEVAL's BM25 engine, the
built-in INFER model's lexical scoring, and (through :func:`word_terms`) the
term overlap CONTEXT's default strategy counts. It lives below the workers so
the core ones never import the optional ``ditto.retrieval``.

English text follows the Lucene "english" analyzer closely enough to reproduce its
rankings: lower-casing, word tokens of two or more word characters (the pattern bm25s
uses), Lucene's 33 English stop words and the Snowball English stemmer (PyStemmer).
Runs of CJK characters are segmented with jieba's search mode (``cjk="jieba"``, needs
the ``retrieval`` extra), so a Chinese query matches Chinese documents word by word
instead of needing the whole run verbatim, or split into one term per character
(``cjk="unigram"``, no dependency: what Lucene's StandardTokenizer does). Single CJK
characters are kept (they are words in Chinese), CJK stop words dropped.

The analyzer is a plain object with cached stemmer and segmenter instances so the
per-query cost is a regular expression, a set lookup and one batched stem call.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable, Sequence
from typing import Any, Final, Literal

import Stemmer

from .._extras import require_extra
from ..errors import InvalidArgumentError

__all__ = ["CJK_CLASS", "CJK_STOPWORDS", "ENGLISH_STOPWORDS", "OPTION_TERMS_VERSION", "CjkMode", "TextAnalyzer",
           "has_cjk", "lone_digits", "option_terms", "word_terms"]

#: Lucene's default English stop words (the same 33 words bm25s ships as ``STOPWORDS_EN``).
ENGLISH_STOPWORDS: frozenset[str] = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it", "no",
    "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these", "they", "this",
    "to", "was", "will", "with",
})

#: How CJK runs become terms: dictionary words (jieba), one term per character, or one term per run.
CjkMode = Literal["jieba", "unigram", "none"]

#: Very common Chinese function words; dropping them keeps BM25 from rewarding them.
CJK_STOPWORDS: frozenset[str] = frozenset({
    "的", "了", "和", "与", "及", "或", "是", "在", "就", "都", "而", "也", "被",
    "把", "让", "对", "从", "向", "于", "为", "之", "其", "这", "那", "个", "一个",
    "我们", "你们", "他们", "它们", "吗", "呢", "吧", "啊", "着", "过", "等", "并", "且", "不",
})

_WORD = re.compile(r"(?u)\b\w\w+\b")
#: A digit standing alone ("exit code 9", "level 6"); not one of a number or a decimal ("0.5", "1,5").
_LONE_DIGIT = r"(?<![\w.,])\d(?!\w|[.,]\d)"
#: The words, and lone digits.
_WORD_OR_DIGIT = re.compile(r"(?u)\b\w\w+\b|" + _LONE_DIGIT)
_LONE_DIGITS = re.compile(_LONE_DIGIT)
#: CJK Unified Ideographs (+ extensions A–G, compatibility), Hiragana/Katakana, Hangul syllables.
CJK_CLASS: Final = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af\U00020000-\U0003134f"
_CJK_RUN = re.compile(f"([{CJK_CLASS}]+)")
_HAS_CJK = re.compile(f"[{CJK_CLASS}]")
#: A plain term: one CJK character, or a run of other letters/digits (``str.isalnum``) without ``_``.
_PLAIN_TERM = re.compile(f"[{CJK_CLASS}]|[^\\W_{CJK_CLASS}]+")


def has_cjk(text: str) -> bool:
    """Whether ``text`` holds a Chinese, Japanese or Korean character (what the analysers segment apart)."""
    return _HAS_CJK.search(text) is not None


#: A command-line option as written in man pages and questions: a dash or two, then a letter or a digit
#: (``-p``, ``--parents``, ``-mtime``, ``xargs -0``, ``kill -9``); a range ("3-5") is none.
_OPTION = re.compile(r"(?<![\w-])--?[A-Za-z0-9][A-Za-z0-9-]*")
#: What :func:`option_terms` finds; caches of analysed text keep it in their key (2: options may start with a digit).
OPTION_TERMS_VERSION: Final = 2


def option_terms(text: str) -> list[str]:
    """The command-line options in ``text`` as terms, case kept (``-p`` is not ``-P``).

    The word pattern drops one-letter tokens and the dash, so without these a question about
    ``mkdir -p`` could not tell the passage documenting ``-p`` from any other of the page.
    """
    return _OPTION.findall(text)


def lone_digits(text: str) -> list[str]:
    """The digits of ``text`` that stand alone ("9" of "exit code 9"), in order: the terms ``digits=True`` adds."""
    return _LONE_DIGITS.findall(text)


def word_terms(text: str) -> list[str]:
    """Lower-case terms of ``text`` in order: runs of letters/digits, CJK characters one by one.

    No stop words, no stemming, no dictionary: the cheap, dependency-free notion
    of a term for overlap counts (CONTEXT's default strategy) and small stores.
    """
    return _PLAIN_TERM.findall(text.lower())


class TextAnalyzer:
    """Turns text into index terms; identical for documents and queries.

    ``stopwords`` is ``"english"`` (Lucene's list), ``None`` (keep every word) or an
    explicit word collection. ``stemmer`` is a Snowball language name or ``None``.
    ``cjk`` says how CJK runs become terms: ``"jieba"`` (or ``True``) segments them with
    jieba, ``"unigram"`` makes each character a term, ``"none"`` (or ``False``) keeps a
    run as one term. ``options=True`` adds command-line options (``-p``, ``--parents``) as
    terms, case kept (:func:`option_terms`): what documentation search needs. ``digits=True``
    keeps a digit standing alone as a term: the word pattern needs two characters, so without it
    "what does exit code 9 mean?" could not find the line "9 username already in use".
    """

    __slots__ = ("_cjk", "_digits", "_options", "_stem", "_stemmer_name", "_stopwords", "_stopwords_spec", "_words")

    def __init__(self, *, stopwords: str | Iterable[str] | None = "english", stemmer: str | None = "english",
                 cjk: bool | CjkMode = True, options: bool = False, digits: bool = False) -> None:
        if stopwords == "english":
            words: frozenset[str] = ENGLISH_STOPWORDS
            spec: str | list[str] | None = "english"
        elif stopwords is None:
            words, spec = frozenset(), None
        elif isinstance(stopwords, str):
            raise InvalidArgumentError("stopwords must be 'english', None or a collection of words")
        else:
            words = frozenset(word.lower() for word in stopwords)
            spec = sorted(words)
        self._stopwords = words
        self._stopwords_spec = spec
        self._stemmer_name = stemmer
        self._stem = Stemmer.Stemmer(stemmer).stemWords if stemmer is not None else None
        if cjk is True or cjk == "jieba":
            self._cjk: CjkMode = "jieba"
        elif cjk is False or cjk == "none":
            self._cjk = "none"
        elif cjk == "unigram":
            self._cjk = "unigram"
        else:
            raise InvalidArgumentError("cjk must be 'jieba', 'unigram', 'none' or a bool")
        self._options = bool(options)
        self._digits = bool(digits)
        self._words = _WORD_OR_DIGIT if digits else _WORD

    # -- configuration round trip (saved with an index) ---------------------
    def config(self) -> dict[str, Any]:
        """A JSON description from which :meth:`from_config` rebuilds the same analyzer."""
        cjk: bool | str = {"jieba": True, "none": False}.get(self._cjk, self._cjk)  # saved indexes keep bools
        config: dict[str, Any] = {"stopwords": self._stopwords_spec, "stemmer": self._stemmer_name, "cjk": cjk}
        if self._options:  # only when set: indexes saved before the option existed read back unchanged
            config["options"] = True
        if self._digits:
            config["digits"] = True
        return config

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> TextAnalyzer:
        cjk = config.get("cjk")
        return cls(stopwords=config.get("stopwords"), stemmer=config.get("stemmer"),
                   cjk=cjk if cjk in ("jieba", "unigram", "none") else bool(cjk), options=config.get("options") is True,
                   digits=config.get("digits") is True)

    # -- analysis -----------------------------------------------------------
    def analyze(self, text: str) -> list[str]:
        """Index terms of ``text`` in order (duplicates kept: term frequency matters)."""
        lowered = text.lower()
        if self._cjk != "none" and _HAS_CJK.search(lowered) is not None:
            terms = self._analyze_mixed(lowered)
        else:
            terms = self._english(self._words.findall(lowered))
        if self._options and "-" in text:
            terms.extend(option_terms(text))
        return terms

    def analyze_many(self, texts: Sequence[str]) -> list[list[str]]:
        return [self.analyze(text) for text in texts]

    def _english(self, words: list[str]) -> list[str]:
        stop = self._stopwords
        if stop:
            words = [word for word in words if word not in stop]
        if self._stem is not None and words:
            stemmed: list[str] = self._stem(words)
            return stemmed
        return words

    def _analyze_mixed(self, lowered: str) -> list[str]:
        terms: list[str] = []
        jieba = self._cjk == "jieba"
        for index, part in enumerate(_CJK_RUN.split(lowered)):
            if not part:
                continue
            if index % 2 == 0:  # text between CJK runs
                terms.extend(self._english(self._words.findall(part)))
            else:
                words = _segmenter().lcut_for_search(part) if jieba else part
                terms.extend(word for word in words if word.strip() and word not in CJK_STOPWORDS)
        return terms


_JIEBA: Any = None
_JIEBA_LOCK = threading.Lock()


def _segmenter() -> Any:
    """One shared jieba tokenizer; its dictionary loads once per process, on the first CJK text."""
    global _JIEBA
    if _JIEBA is None:
        with _JIEBA_LOCK:
            if _JIEBA is None:
                jieba = require_extra("jieba", "retrieval", "Chinese word segmentation")
                tokenizer = jieba.Tokenizer()
                # jieba logs "Building prefix dict…", "Loading model cost…" at DEBUG to its own stderr handler:
                # chatter in the middle of `ditto index` output. Only this load is quietened; its level is restored.
                chatter = jieba.default_logger
                level = chatter.level
                chatter.setLevel(max(level, logging.WARNING))
                try:
                    tokenizer.initialize()
                finally:
                    chatter.setLevel(level)
                _JIEBA = tokenizer
    return _JIEBA
