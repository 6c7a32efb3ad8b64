"""The built-in model's choices as pure functions (INF-3, WF-11): lexical scores, no network.

The ``builtin:extractive`` provider answers the research tasks of
:mod:`ditto.worker.infer.tasks` and plain chats from the material it is given,
the way a careful reader with a highlighter would:

* **choose_excerpts** — every passage is split into sentences (offsets kept, so
  a quote is an exact substring), each sentence is scored against the question
  with BM25 over all sentences, plus the BM25 score of its passage among the
  passages (both normalised to the best one), plus a small bonus for the
  passage's place in the given order (the retriever's ranking, which knew the
  whole collection), plus, when an embedding function is configured, the cosine
  of sentence and question. The best sentences are
  quoted, at most ``maxPerSource`` per source and ``maxExcerpts`` in all; after
  the first, a sentence must reach :data:`FOLLOW_UP_SHARE` of the best, both in
  combined score and in its own BM25 (a weak match is noise, not evidence, even
  inside the best passage). A sentence that shares no meaningful
  term with the question is never quoted, so "no passage answers" is ``[]``.
* **choose_queries** — with a vocabulary, entries are ranked by BM25 against the
  question (ties: vocabulary order); ``minQueries`` are always returned, more
  (up to ``maxQueries``) only while an entry scores at least :data:`FOLLOW_UP_SHARE`
  of the best. Without a vocabulary, the question's content words (surface forms,
  stop words dropped) are the query.
* **a plain chat** — the sentences of earlier messages that best match the last
  user message (at most three, each at least :data:`FOLLOW_UP_SHARE` of the best),
  in their original order.

"Meaningful term" means an analysed term (Snowball-stemmed, CJK characters one
by one) that is not a stop word: Lucene's English list plus the question and
function words of :data:`QUESTION_STOPWORDS`, so "How long are backups kept?"
is about ``long``, ``backup`` and ``kept``, not ``how``.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from ...text import CJK_CLASS, CJK_STOPWORDS, ENGLISH_STOPWORDS, TextAnalyzer, score_documents
from .tasks import Excerpt, ExcerptTask, QueryTask

__all__ = [
    "FOLLOW_UP_SHARE",
    "PASSAGE_WEIGHT",
    "QUESTION_STOPWORDS",
    "RANK_WEIGHT",
    "ScoredSentence",
    "Sentence",
    "analyze",
    "answer_chat",
    "choose_excerpts",
    "choose_queries",
    "excerpt_candidates",
    "keyword_query",
    "sentence_texts",
    "split_sentences",
]

#: Question and function words dropped on top of Lucene's English stop words: they say
#: what kind of answer is wanted, not what it is about.
QUESTION_STOPWORDS: Final = frozenset({
    "what", "which", "who", "whom", "whose", "when", "where", "why", "how", "do", "does", "did", "done",
    "can", "could", "should", "would", "may", "might", "must", "shall", "has", "have", "had", "been", "being",
    "were", "am", "i", "me", "my", "we", "us", "our", "you", "your", "he", "she", "him", "her", "his", "its",
    "them", "than", "so", "too", "very", "about", "from", "any", "all", "some", "many", "much", "here",
    "also", "only", "just", "please", "tell", "explain", "describe", "show", "give", "find", "list",
})

#: Weight of the passage's BM25 (normalised) next to the sentence's own (normalised), tuned on
#: SciFact train (bench/infer_extractive.py): the passage that is about the question holds the answer
#: more often than an isolated sentence that happens to repeat its words.
PASSAGE_WEIGHT: Final = 1.0
#: Weight of the passage's place in the given order: the workflow hands passages in the retriever's
#: ranking, which saw the whole collection (its idf) while the model sees ten passages. The bonus
#: falls by a tenth per place (``RANK_WEIGHT * max(0, 1 - index / 10)``), so a clearly better match
#: further down still wins; tuned on SciFact train together with :data:`PASSAGE_WEIGHT`.
RANK_WEIGHT: Final = 1.5
#: A further excerpt or query must score at least this share of the best one.
FOLLOW_UP_SHARE: Final = 0.5
#: Sentences a plain chat answer quotes at most.
CHAT_SENTENCES: Final = 3

_ANALYZER = TextAnalyzer(stopwords=ENGLISH_STOPWORDS | QUESTION_STOPWORDS, stemmer="english", cjk="unigram")
_STOPWORDS: Final = ENGLISH_STOPWORDS | QUESTION_STOPWORDS

#: A sentence ends after . ! ? (then whitespace), after CJK full stops, or at a line break.
_BOUNDARY = re.compile(r"[.!?]+[\"'”’)\]]*(?=\s)|[。！？；]+[”’」』）]*|\n")
_NEXT_WORD = re.compile(r"\s+(\w)")
_LAST_WORD = re.compile(r"(?:^|[\s(\[])([^\W\d_]+(?:\.[^\W\d_]+)*)$")
#: Words a full stop follows without ending the sentence (compared lower-case, without the final stop).
_ABBREVIATIONS: Final = frozenset({
    "e.g", "i.e", "al", "etc", "vs", "cf", "fig", "figs", "eq", "eqs", "ref", "refs", "vol", "pp",
    "approx", "ca", "dr", "mr", "mrs", "ms", "prof", "st", "jr", "sr", "inc", "ltd", "co", "corp", "dept",
    "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "u.s", "u.k",
})
_SURFACE = re.compile(f"[{CJK_CLASS}]+|[^\\W_{CJK_CLASS}]+(?:['’][^\\W_{CJK_CLASS}]+)*")


def analyze(text: str) -> list[str]:
    """The built-in model's terms of ``text`` (stemmed, stop words and question words dropped)."""
    return _ANALYZER.analyze(text)


@dataclass(frozen=True, slots=True)
class Sentence:
    """A sentence of a text as offsets: ``text[start:end]`` is the sentence, trimmed."""

    start: int
    end: int


def split_sentences(text: str) -> list[Sentence]:
    """Sentence spans of ``text``: cut after . ! ? + space, CJK full stops and line breaks, trimmed."""
    spans: list[Sentence] = []
    begin = 0
    for match in _BOUNDARY.finditer(text):
        if _abbreviation(text, match):
            continue
        _append_trimmed(text, begin, match.end(), spans)
        begin = match.end()
    _append_trimmed(text, begin, len(text), spans)
    return spans


def _abbreviation(text: str, match: re.Match[str]) -> bool:
    """Whether a full stop ends an abbreviation ("e.g.", "et al.", "Fig. 2") or is followed by a
    lower-case word: then it does not end the sentence. Single capitals are not taken for initials
    ("vitamin D." ends sentences far more often than "J. Smith" appears)."""
    if match.group() != ".":
        return False
    following = _NEXT_WORD.match(text, match.end())
    if following is not None and following.group(1).islower():
        return True
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


@dataclass(frozen=True, slots=True)
class ScoredSentence:
    """A sentence of passage ``passage``: its BM25 share of the best sentence's, and its combined score."""

    passage: int
    sentence: Sentence
    lexical: float
    score: float


def excerpt_candidates(task: ExcerptTask, *, passage_weight: float = PASSAGE_WEIGHT,
                       rank_weight: float = RANK_WEIGHT, similarities: Sequence[float] | None = None,
                       embedding_weight: float = 0.0) -> list[ScoredSentence]:
    """Every sentence that shares a meaningful term with the question, best first.

    ``similarities`` (optional) are cosine similarities of each sentence to the
    question, in passage then sentence order, weighted by ``embedding_weight``.
    """
    question = analyze(task.question)
    if not question or not task.passages:
        return []
    spans = [split_sentences(passage.text) for passage in task.passages]
    owners = [(index, span) for index, passage_spans in enumerate(spans) for span in passage_spans]
    texts = [task.passages[index].text[span.start:span.end] for index, span in owners]
    sentence_scores = score_documents(question, [analyze(text) for text in texts])
    passage_scores = _normalised(score_documents(question, [analyze(p.text) for p in task.passages]))
    sentence_norm = _normalised(sentence_scores)
    candidates = []
    for position, ((index, span), raw) in enumerate(zip(owners, sentence_scores, strict=True)):
        if raw <= 0:
            continue  # shares no meaningful term: never evidence
        score = (sentence_norm[position] + passage_weight * passage_scores[index]
                 + rank_weight * max(0.0, 1.0 - index / 10))
        if similarities is not None and position < len(similarities):
            score += embedding_weight * similarities[position]
        candidates.append(ScoredSentence(index, span, sentence_norm[position], score))
    # Best first; ties keep passage then sentence order (deterministic, and the order a reader met them).
    candidates.sort(key=lambda c: (-c.score, c.passage, c.sentence.start))
    return candidates


def sentence_texts(task: ExcerptTask) -> list[str]:
    """Every sentence of every passage, in the order ``similarities`` must follow."""
    return [passage.text[span.start:span.end] for passage in task.passages for span in split_sentences(passage.text)]


def choose_excerpts(task: ExcerptTask, *, passage_weight: float = PASSAGE_WEIGHT,
                    rank_weight: float = RANK_WEIGHT, similarities: Sequence[float] | None = None,
                    embedding_weight: float = 0.0) -> list[Excerpt]:
    """The verbatim quotes that best answer ``task.question``; ``[]`` when no passage shares a term."""
    chosen: list[Excerpt] = []
    per_source: dict[str, int] = {}
    seen: set[tuple[str, str]] = set()
    candidates = excerpt_candidates(task, passage_weight=passage_weight, rank_weight=rank_weight,
                                    similarities=similarities, embedding_weight=embedding_weight)
    if not candidates or task.max_excerpts == 0 or task.max_per_source == 0:
        return []
    best = candidates[0].score
    for candidate in candidates:
        if len(chosen) >= task.max_excerpts:
            break
        if chosen and (candidate.score < FOLLOW_UP_SHARE * best or candidate.lexical < FOLLOW_UP_SHARE):
            continue  # a weak match is noise, not evidence, even inside the best passage
        passage = task.passages[candidate.passage]
        if per_source.get(passage.source_id, 0) >= task.max_per_source:
            continue
        quote = _cut(passage.text, candidate.sentence, task.max_quote_chars)
        if (passage.source_id, quote) in seen:
            continue
        seen.add((passage.source_id, quote))
        per_source[passage.source_id] = per_source.get(passage.source_id, 0) + 1
        chosen.append(Excerpt(source_id=passage.source_id, quote=quote))
    return chosen


def _distinct(entries: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(entries))


def keyword_query(question: str) -> str:
    """The question's content words as they were written, stop and question words dropped, once each."""
    words: dict[str, str] = {}
    for word in _SURFACE.findall(question):
        if word[0] in CJK_STOPWORDS and len(word) == 1:
            continue
        key = word.lower()
        if key in _STOPWORDS or key in words:
            continue
        words[key] = word
    return " ".join(words.values()) or question.strip()


def choose_queries(task: QueryTask) -> list[str]:
    """``minQueries``–``maxQueries`` distinct queries: vocabulary entries ranked by BM25, or keywords."""
    if task.vocabulary:
        entries = _distinct(task.vocabulary)
        scores = score_documents(analyze(task.question), [analyze(entry) for entry in entries])
        order = sorted(range(len(entries)), key=lambda i: (-scores[i], i))
        chosen = order[:task.min_queries]
        best = scores[order[0]] if order else 0.0
        for index in order[task.min_queries:task.max_queries]:
            if scores[index] <= 0 or scores[index] < FOLLOW_UP_SHARE * best:
                break
            chosen.append(index)
        return [entries[index] for index in chosen]
    first = keyword_query(task.question)
    queries = [first]
    words = first.split(" ")
    # More queries than one are asked for: adjacent pairs of content words, in question order.
    for left, right in itertools.pairwise(words):
        if len(queries) >= task.min_queries:
            break
        pair = f"{left} {right}"
        if pair not in queries:
            queries.append(pair)
    return queries


def answer_chat(messages: Sequence[tuple[str, str]]) -> str:
    """A plain chat's answer: the sentences of earlier messages that best match the last user message.

    ``messages`` are ``(role, content)`` pairs; system messages are instructions,
    not material. When nothing matches, the first sentence of each earlier
    message stands in (an extract, never an invention).
    """
    last = max((i for i, (role, _) in enumerate(messages) if role == "user"), default=None)
    if last is None:
        return "There is no question to answer."
    question = analyze(messages[last][1])
    material = [content for i, (role, content) in enumerate(messages) if i != last and role != "system"]
    sentences = [(m, content[s.start:s.end]) for m, content in enumerate(material) for s in split_sentences(content)]
    if not sentences:
        return "There is no material to answer from."
    scores = score_documents(question, [analyze(text) for _, text in sentences]) if question else [0.0] * len(
        sentences)
    ranked = sorted((i for i, score in enumerate(scores) if score > 0), key=lambda i: (-scores[i], i))
    best = scores[ranked[0]] if ranked else 0.0
    picked = sorted(i for i in ranked[:CHAT_SENTENCES] if scores[i] >= FOLLOW_UP_SHARE * best)
    if not picked:
        firsts: dict[int, int] = {}
        for i, (m, _) in enumerate(sentences):
            firsts.setdefault(m, i)
        picked = sorted(firsts.values())[:CHAT_SENTENCES]
    return " ".join(sentences[i][1] for i in picked)
