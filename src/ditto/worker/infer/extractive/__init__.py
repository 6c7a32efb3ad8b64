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
  question without length normalisation (an entry is a label; ties: vocabulary order);
  ``minQueries`` are always returned, more (up to ``maxQueries``) only while an entry scores
  at least :data:`FOLLOW_UP_SHARE` of the best. Without a vocabulary, the question's content words (surface forms,
  stop words dropped) are the query; a second one, when allowed, is the Latin-script words of
  a Chinese question or the first half of a long question's words (its subject), and a third the
  second half.
* **a plain chat** — the sentences of earlier messages that best match the last
  user message (at most three, each at least :data:`FOLLOW_UP_SHARE` of the best),
  in their original order.

"Meaningful term" means an analysed term (Snowball-stemmed, CJK characters one
by one) that is not a stop word: Lucene's English list plus the question and
function words of :data:`QUESTION_STOPWORDS`, so "How long are backups kept?"
is about ``long``, ``backup`` and ``kept``, not ``how``.

The package, one concept a module (each builds on those above it):

* :mod:`.terms` — what the model counts as a word: analysis, stop words, question words;
* :mod:`.kinds` — what a question asks for (an amount, a default, an option, a reason, a way) and which
  sentences give it; which sections of a manual page can answer;
* :mod:`.gate` — whether a passage is about the question at all (the relevance gate, names, page titles);
* :mod:`.excerpts` — the quotes: sentence scores, runs of sentences, the per-source limits;
* :mod:`.answers` — the brief's short answer, drawn from the quotes;
* :mod:`.queries` — search queries for a question;
* :mod:`.chat` — a plain chat answered from earlier messages.
"""

from __future__ import annotations

from ....text.sentences import MAX_SENTENCE_CHARS, Sentence, split_sentences
from .answers import (
    ANSWER_EMBEDDING_WEIGHT,
    ANSWER_FOLLOW_UP_SHARE,
    ANSWER_QUOTE_CHARS,
    ANSWER_RANK_WEIGHT,
    answer_question,
    answer_sentences,
)
from .chat import answer_chat
from .excerpts import (
    FOLLOW_UP_SHARE,
    LEAD_IN_SHARE,
    MAX_RUN_SENTENCES,
    MIN_QUOTE_CHARS,
    PASSAGE_WEIGHT,
    RANK_WEIGHT,
    SCRIPT_WEIGHT,
    SEMANTIC_FOLLOW_UP,
    ScoredSentence,
    choose_excerpts,
    excerpt_candidates,
    reading_order,
    semantic_sentences,
    sentence_texts,
)
from .gate import (
    CJK_NAMED_PAGE_SHARE,
    MIN_MATCHED_TERMS,
    RELEVANCE_THRESHOLD,
    SEMANTIC_THRESHOLD,
    STRONG_MATCH_SHARE,
    STRONG_MATCH_TERMS,
    SUBJECT_QUESTION_TERMS,
    Relevance,
    gate_terms,
    passage_relevance,
    subject_terms,
    unknown_names,
)
from .queries import SUBJECT_QUERY_WORDS, choose_queries, keyword_query, latin_words
from .terms import (
    CJK_GATE_STOPWORDS,
    CJK_QUESTION_WORDS,
    CJK_SYNONYMS,
    GATE_STOPWORDS,
    QUESTION_STOPWORDS,
    analyze,
    asks_a_question,
)

__all__ = [
    "ANSWER_EMBEDDING_WEIGHT", "ANSWER_FOLLOW_UP_SHARE", "ANSWER_QUOTE_CHARS", "ANSWER_RANK_WEIGHT",
    "CJK_GATE_STOPWORDS", "CJK_NAMED_PAGE_SHARE", "CJK_QUESTION_WORDS", "CJK_SYNONYMS", "FOLLOW_UP_SHARE",
    "GATE_STOPWORDS",
    "LEAD_IN_SHARE", "MAX_RUN_SENTENCES", "MAX_SENTENCE_CHARS", "MIN_MATCHED_TERMS", "MIN_QUOTE_CHARS",
    "PASSAGE_WEIGHT", "QUESTION_STOPWORDS", "RANK_WEIGHT", "RELEVANCE_THRESHOLD", "SCRIPT_WEIGHT",
    "SEMANTIC_FOLLOW_UP", "SEMANTIC_THRESHOLD", "STRONG_MATCH_SHARE", "STRONG_MATCH_TERMS", "SUBJECT_QUERY_WORDS",
    "SUBJECT_QUESTION_TERMS", "Relevance", "ScoredSentence", "Sentence", "analyze", "answer_chat", "answer_question",
    "answer_sentences", "asks_a_question", "choose_excerpts", "choose_queries", "excerpt_candidates", "gate_terms",
    "keyword_query", "latin_words", "passage_relevance", "reading_order", "semantic_sentences", "sentence_texts",
    "split_sentences", "subject_terms", "unknown_names"
]
