"""Text analysis for the embedded BM25 engine: the same pipeline for documents and queries.

English text follows the Lucene "english" analyzer closely enough to reproduce its
rankings: lower-casing, word tokens of two or more word characters (the pattern bm25s
uses), Lucene's 33 English stop words and the Snowball English stemmer (PyStemmer).
Runs of CJK characters are segmented with jieba's search mode, so a Chinese query
matches Chinese documents word by word instead of needing the whole run verbatim.
Single CJK characters are kept (they are words in Chinese), CJK stop words dropped.

The analyzer is a plain object with cached stemmer and segmenter instances so the
per-query cost is a regular expression, a set lookup and one batched stem call.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Sequence
from typing import Any

import bm25s.stopwords
import Stemmer

__all__ = ["CJK_STOPWORDS", "ENGLISH_STOPWORDS", "TextAnalyzer"]

#: Lucene's default English stop words (the list bm25s ships as ``STOPWORDS_EN``).
ENGLISH_STOPWORDS: frozenset[str] = frozenset(bm25s.stopwords.STOPWORDS_EN)

#: Very common Chinese function words; dropping them keeps BM25 from rewarding them.
CJK_STOPWORDS: frozenset[str] = frozenset({
    "的", "了", "和", "与", "及", "或", "是", "在", "就", "都", "而", "也", "被",
    "把", "让", "对", "从", "向", "于", "为", "之", "其", "这", "那", "个", "一个",
    "我们", "你们", "他们", "它们", "吗", "呢", "吧", "啊", "着", "过", "等", "并", "且",
})

_WORD = re.compile(r"(?u)\b\w\w+\b")
# CJK Unified Ideographs (+ extension A, compatibility), Hiragana/Katakana, Hangul syllables.
_CJK_CLASS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"
_CJK_RUN = re.compile(f"([{_CJK_CLASS}]+)")
_HAS_CJK = re.compile(f"[{_CJK_CLASS}]")


class TextAnalyzer:
    """Turns text into index terms; identical for documents and queries.

    ``stopwords`` is ``"english"`` (Lucene's list), ``None`` (keep every word) or an
    explicit word collection. ``stemmer`` is a Snowball language name or ``None``.
    ``cjk`` enables jieba segmentation of CJK runs (otherwise a run is one token).
    """

    __slots__ = ("_cjk", "_stem", "_stemmer_name", "_stopwords", "_stopwords_spec")

    def __init__(self, *, stopwords: str | Iterable[str] | None = "english", stemmer: str | None = "english",
                 cjk: bool = True) -> None:
        if stopwords == "english":
            words: frozenset[str] = ENGLISH_STOPWORDS
            spec: str | list[str] | None = "english"
        elif stopwords is None:
            words, spec = frozenset(), None
        elif isinstance(stopwords, str):
            raise ValueError("stopwords must be 'english', None or a collection of words")
        else:
            words = frozenset(word.lower() for word in stopwords)
            spec = sorted(words)
        self._stopwords = words
        self._stopwords_spec = spec
        self._stemmer_name = stemmer
        self._stem = Stemmer.Stemmer(stemmer).stemWords if stemmer is not None else None
        self._cjk = cjk

    # -- configuration round trip (saved with an index) ---------------------
    def config(self) -> dict[str, Any]:
        """A JSON description from which :meth:`from_config` rebuilds the same analyzer."""
        return {"stopwords": self._stopwords_spec, "stemmer": self._stemmer_name, "cjk": self._cjk}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> TextAnalyzer:
        return cls(stopwords=config.get("stopwords"), stemmer=config.get("stemmer"), cjk=bool(config.get("cjk")))

    # -- analysis -----------------------------------------------------------
    def analyze(self, text: str) -> list[str]:
        """Index terms of ``text`` in order (duplicates kept: term frequency matters)."""
        lowered = text.lower()
        if self._cjk and _HAS_CJK.search(lowered) is not None:
            return self._analyze_mixed(lowered)
        return self._english(_WORD.findall(lowered))

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
        segmenter = _segmenter()
        for index, part in enumerate(_CJK_RUN.split(lowered)):
            if not part:
                continue
            if index % 2 == 0:  # text between CJK runs
                terms.extend(self._english(_WORD.findall(part)))
            else:
                terms.extend(word for word in segmenter.lcut_for_search(part)
                             if word.strip() and word not in CJK_STOPWORDS)
        return terms


_JIEBA: Any = None
_JIEBA_LOCK = threading.Lock()


def _segmenter() -> Any:
    """One shared jieba tokenizer; its dictionary loads once per process, on the first CJK text."""
    global _JIEBA
    if _JIEBA is None:
        with _JIEBA_LOCK:
            if _JIEBA is None:
                import jieba

                tokenizer = jieba.Tokenizer()
                tokenizer.initialize()
                _JIEBA = tokenizer
    return _JIEBA
