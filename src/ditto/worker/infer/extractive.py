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
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final
from urllib.parse import unquote, urlsplit

from ...text import CJK_CLASS, CJK_STOPWORDS, ENGLISH_STOPWORDS, TextAnalyzer, score_documents
from ...text.analysis import has_cjk, lone_digits
from ...text.lexicon import is_english_word, reads_as_english
from ...text.passages import HEADING_SEPARATOR
from ...text.sentences import MAX_SENTENCE_CHARS, Sentence, opens_with_option, option_tag, split_sentences
from ...text.unwrap import join_hyphenated
from .tasks import (
    MAX_ANSWER_SENTENCES,
    MAX_QUERY_CHARS,
    MAX_QUOTE_CHARS,
    AnswerSentence,
    AnswerTask,
    Excerpt,
    ExcerptPassage,
    ExcerptTask,
    QueryTask,
)

__all__ = [
    "ANSWER_EMBEDDING_WEIGHT",
    "ANSWER_FOLLOW_UP_SHARE",
    "CJK_GATE_STOPWORDS",
    "CJK_QUESTION_WORDS",
    "FOLLOW_UP_SHARE",
    "GATE_STOPWORDS",
    "LEAD_IN_SHARE",
    "MAX_RUN_SENTENCES",
    "MAX_SENTENCE_CHARS",
    "MIN_MATCHED_TERMS",
    "MIN_QUOTE_CHARS",
    "PASSAGE_WEIGHT",
    "QUESTION_STOPWORDS",
    "RANK_WEIGHT",
    "RELEVANCE_THRESHOLD",
    "SCRIPT_WEIGHT",
    "SEMANTIC_FOLLOW_UP",
    "SEMANTIC_THRESHOLD",
    "STRONG_MATCH_SHARE",
    "STRONG_MATCH_TERMS",
    "SUBJECT_QUERY_WORDS",
    "SUBJECT_QUESTION_TERMS",
    "Relevance",
    "ScoredSentence",
    "Sentence",
    "analyze",
    "answer_chat",
    "answer_question",
    "answer_sentences",
    "choose_excerpts",
    "choose_queries",
    "excerpt_candidates",
    "gate_terms",
    "keyword_query",
    "latin_words",
    "passage_relevance",
    "reading_order",
    "semantic_sentences",
    "sentence_texts",
    "split_sentences",
    "subject_terms",
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
#: Bonus for a passage written in the question's script (CJK or not): a Chinese question about
#: ``ls -a`` is answered from the Chinese page when the English one says the same. One unit of the
#: normalised sentence score: a Chinese sentence analyses into more terms (one per character) and
#: so scores lower than its English twin by BM25's length norm alone (0.5 and 1.0 were equal on the
#: training questions of bench/research_realdocs.py; 1.0 also holds for twins two places apart).
SCRIPT_WEIGHT: Final = 1.0
#: An answer sentence that ends in a colon (a lead-in to a command or a list) keeps this share of its score.
LEAD_IN_SHARE: Final = 0.5
#: A further excerpt or query must score at least this share of the best one.
FOLLOW_UP_SHARE: Final = 0.5
#: A further sentence of the answer must score at least this share of the first: at 0.5 one answer
#: sentence in five came from a file that does not answer the question, at 0.7 one in eight, with the
#: first sentence unchanged (chosen on the real-documents train questions: bench/research_realdocs.py
#: --tune-answer).
ANSWER_FOLLOW_UP_SHARE: Final = 0.7
#: Content words a question needs for a second keyword query of its first half's words (shorter
#: questions are one subject already; chosen on SciFact train and the real-documents train questions).
SUBJECT_QUERY_WORDS: Final = 4
#: Sentences a plain chat answer quotes at most.
CHAT_SENTENCES: Final = 3
#: The relevance gate: a passage is evidence only when it holds at least this IDF-weighted share of
#: the question's content terms (chosen on the training questions of bench/research_realdocs.py).
RELEVANCE_THRESHOLD: Final = 0.5
#: ... and at least this many distinct ones (or all of them, when the question has fewer).
MIN_MATCHED_TERMS: Final = 2
#: ... or at least this many distinct ones and :data:`STRONG_MATCH_SHARE` of the threshold (chosen on the
#: same training questions and on SciFact train, whose long claims share their core with the abstract).
STRONG_MATCH_TERMS: Final = 3
STRONG_MATCH_SHARE: Final = 0.4
#: A question of at most this many content terms is *about* the names it writes (see :func:`subject_terms`); in
#: a longer one — a scientific claim — a name is one detail among many, often written otherwise in the
#: passage that answers it ("IL-6" for "interleukin 6"). SciFact train (809 claims, BM25) cites a relevant
#: abstract for 0.670 without the rule, 0.670 at 4, 0.667 at 5, 0.665 at 6, and 0.550-odd applied to every
#: question (no-evidence 0.17); 5 is the smallest that holds "the maximum file size on a FAT32 file system".
SUBJECT_QUESTION_TERMS: Final = 5
#: With embeddings (see :mod:`ditto.worker.infer.providers.builtin`), a passage whose best sentence reaches
#: this cosine with the question is about it even when it shares too few of its words for the lexical
#: gate: dense retrieval finds abstracts that say "IL-6" for "interleukin 6". Chosen on SciFact train
#: (809 claims, hybrid: cites 0.700 without, 0.723 at 0.6, 0.742 at 0.45, 0.743 at 0.4) and the
#: real-documents train questions (every English unanswerable one stays no-evidence down to 0.4; two
#: leak at 0.35). Only for English text: the local model is English-only, and to it any two Chinese
#: sentences look alike (at 0.6 two of three Chinese unanswerable questions leaked).
SEMANTIC_THRESHOLD: Final = 0.45
#: With embeddings, a further sentence this close to the question (cosine) is quoted even when it matches
#: too few of the question's words to pass :data:`FOLLOW_UP_SHARE`: a second abstract that says the same in
#: other words is evidence too. SciFact train (809 claims, hybrid): cites 0.742 without, 0.755 at 0.7,
#: 0.780 at 0.6, 0.786 at 0.5 (quotes per brief 4.0, 4.2, 4.7, 5.2); no real-documents train question
#: changed from 0.7 down to 0.5.
SEMANTIC_FOLLOW_UP: Final = 0.6
#: With embeddings, how much a sentence's cosine with the question adds to its lexical score (normalised to
#: the best) when the answer is chosen from the evidence. Chosen on train: SciFact (631 claims with a
#: relevant abstract quoted; the answer's first sentence from one) 0.602 without, 0.648 at 1, 0.700 at 2,
#: 0.740 at 4, 0.761 at 8; the real-documents questions (first sentence holds the answer) 24/29 without,
#: 26 at 2, 27 at 4, 25 at 8.
ANSWER_EMBEDDING_WEIGHT: Final = 4.0
#: A line of its own shorter than this, over more text, is a label in an answer ("The fifth field (fs_freq).").
LABEL_CHARS: Final = 40
#: A quote is a run of at most this many whole sentences.
MAX_RUN_SENTENCES: Final = 3
#: A run shorter than this takes the next sentence along (a tag or a lead-in says nothing alone).
MIN_QUOTE_CHARS: Final = 20
#: Two or more labelled lines and nothing else ("What: --control-path\nStatus: deprecated\nWhen: 1.18.x"): a
#: record's fields, whose meaning is in the sentence after them, so the run takes that sentence along.
_FIELD_LINES = re.compile(r"[ \t]*[A-Z][\w-]{0,30}:[ \t]*[^\n]*(?:\r?\n[ \t]*[A-Z][\w-]{0,30}:[ \t]*[^\n]*)+")
#: Words of a question that say what kind of answer is wanted; the relevance gate does not count them.
GATE_STOPWORDS: Final = frozenset({"often", "long", "frequently", "exactly", "usually", "typically", "generally",
                                   "actually", "really", "kind", "way", "option", "options", "flag", "flags"})
#: The same for Chinese ("选项有什么作用": what the option does): an option's line never says 选项.
CJK_GATE_STOPWORDS: Final = ("选项", "参数", "作用", "用途", "功能", "意思", "含义")
#: Chinese question words: what kind of answer is wanted, not what it is about.
CJK_QUESTION_WORDS: Final = ("做什么", "干什么", "有什么", "是什么", "为什么", "什么", "哪个", "哪些", "哪里",
                             "哪儿", "哪", "多少", "多久", "多长", "怎么样", "怎么", "怎样", "如何", "是否", "是不是",
                             "谁", "吗", "呢")

_ANALYZER = TextAnalyzer(stopwords=ENGLISH_STOPWORDS | QUESTION_STOPWORDS, stemmer="english", cjk="unigram")
_STOPWORDS: Final = ENGLISH_STOPWORDS | QUESTION_STOPWORDS

_GATE_STOPWORDS: Final = frozenset(_ANALYZER.analyze(" ".join(GATE_STOPWORDS))) | GATE_STOPWORDS
#: Where a question's clauses part: commas, semicolons, "and"/"or", Chinese enumeration commas.
_CLAUSE = re.compile(r"[,;:，；：、]|\b(?:and|or)\b|以及|还有|并且|和")
_NAME_WORD = re.compile(r"(?<![\w-])\w+(?:[.+#]\w+)*")
#: A manual page's title in its header: ``WGET(1)``, ``SSH-KEYGEN(1)``, ``XARGS(1L)``.
_PAGE_TITLE = re.compile(r"(?<![\w-])([A-Za-z][\w.+-]*)\(\d[a-z]*\)")
#: A phrase that opens a question and sets its scene: "On Debian,", "In a Docker container,".
_FRONTED = re.compile(r"\s*(?:on|in|under|for|with|from|at|inside|within)\s+[^,?，？]{1,80}[,，]", re.IGNORECASE)
#: A number with its unit ("900k", "10MB", "2.5s"): a quantity, not a name.
_QUANTITY = re.compile(r"\d+(?:\.\d+)?[^\W\d_]{1,3}")
_CJK_SPLIT = re.compile(f"([{CJK_CLASS}]+)")
_CJK_STOP_SPLIT = re.compile("[" + "".join(sorted(word for word in CJK_STOPWORDS if len(word) == 1)) + r"\s]+")
#: A query's words as written: a command-line option keeps its dashes (``-p``, ``--parents``), so a search
#: that indexes options can tell ``mkdir -p`` from the rest of the page.
_SURFACE = re.compile(r"(?<![\w-])--?[A-Za-z0-9][A-Za-z0-9-]*|"
                      f"[{CJK_CLASS}]+|[^\\W_{CJK_CLASS}]+(?:['’][^\\W_{CJK_CLASS}]+)*")


#: A heading of a man page's NAME or SYNOPSIS section (English, or as manpages-zh titles them).
_SYNOPSIS_SECTION = re.compile(r"^(?:NAME|SYNOPSIS)\b|^(?:名称|名字|总览|概述|语法|摘要)|\((?:NAME|SYNOPSIS)\)$")
#: A heading of a man page's one-line description of itself (NAME, 名称, "NAME(名称)").
_NAME_SECTION = re.compile(r"(?:NAME|名称|名字)(?:\W|$)|.*\((?:NAME|名称)\)$")
#: A heading of a man page's list of other pages to read (SEE ALSO, 参见).
_REFERENCE_SECTION = re.compile(r"(?:SEE\s+ALSO|参见|另见|参阅)(?:\W|$)")
#: A question that asks what a thing is ("What is jq?", "What does tee do?", "git 是什么？").
_ASKS_WHAT_IT_IS = re.compile(r"\s*(?:what\s+(?:is|are)\s+(?:an?\s+|the\s+)?[\w.+-]+|what\s+does\s+[\w.+-]+\s+do)"
                              r"\s*\??\s*$|\s*[\w.+-]+\s*是什么[？?]?\s*$", re.IGNORECASE)
#: A question that asks which option does something ("Which tar option…", "Which sqlite3 command-line option…",
#: "Which login.defs option…", "哪个选项…").
_ASKS_FOR_OPTION = re.compile(r"\b(?:which|what)\s+(?:[\w.+-]+\s+){0,2}?(?:option|flag|switch)s?\b"
                              r"|(?:哪个|哪一个|什么)(?:选项|参数)", re.IGNORECASE)
#: A question that asks for an amount: how many, how often, the smallest or default size, which port, which exit
#: status (a number), 多少, 几.
_ASKS_FOR_AMOUNT = re.compile(
    r"\bhow\s+(?:many|much|often|long|large|big|old|fast|high|low|small)\b(?!-)"
    r"|\b(?:smallest|largest|lowest|highest|biggest|minimum|maximum|min|max|default)\s+(?:[\w-]+\s+){0,2}?"
    r"(?:size|number|value|length|level|limit|count|port|timeout|interval|amount|range)s?\b"
    r"|\b(?:what|which)\s+(?:tcp\s+|udp\s+)?port\b"
    r"|\b(?:what|which)\s+(?:[\w-]+\s+){0,2}?(?:exit|return|error)\s+(?:status|code|value)(?:es|s)?\b"
    r"|多少|多久|多长|多大|几[个次天秒分钟小时]|什么(?:退出|返回)(?:状态|码|值)|(?:退出|返回)(?:状态码?|码|值)(?:是|为)(?:什么|多少)",
    re.IGNORECASE)
#: An amount in a sentence: a number ("20 times", "-20", "1024 bits", "0.5"), not a manual section ("ssh(1)")
#: or a bug number ("#584837"); a number or a frequency in English words ("twice", "thirty", "nightly",
#: "unlimited"; not "one", mostly a pronoun, nor "one-shot": see :data:`_ONE_OR_NONE_OF`); a Chinese
#: numeral with its unit or a power of ten ("三十天", "两次", "一百"), or 每天/每周.
_STATES_AMOUNT = re.compile(
    r"(?<![#\w.])(?<!\w\()\d+(?!\w)"
    r"|(?<![\w-])(?:zero|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|(?:thir|four|fif|six|seven|eigh|nine)teen"
    r"|(?:twen|thir|for|fif|six|seven|eigh|nine)ty|hundreds?|thousands?|millions?|billions?|dozens?|half|double"
    r"|once|twice|thrice|hourly|daily|nightly|weekly|monthly|yearly|annually|unlimited|infinite(?:ly)?"
    r"|indefinitely|forever)(?![\w-])|(?<![\w-])an?\s+(?:second|minute|hour|day|week|fortnight|month|year|decade)\b"
    r"|[零〇一二两三四五六七八九]*[十百千万亿]|[零〇一二两三四五六七八九半]+[天日周月年次个秒分时字节位行倍遍项条种份级岁号点]"
    r"|每(?:天|日|周|月|年|小时|分钟|秒)", re.IGNORECASE)
#: "no retries", "one day", "a single file": none or one of a thing, an amount when the question names it.
_ONE_OR_NONE_OF = re.compile(r"(?<![\w-])(?:no|zero|one|a\s+single|without)\s+(?:[a-z-]+\s+)?([a-z][a-z-]*)",
                             re.IGNORECASE)


def _states_amount(text: str, wanted: set[str]) -> bool:
    """Whether ``text`` states an amount (:data:`_STATES_AMOUNT`), or none or one of a thing the question
    names ("by default curl makes no retries" answers "How many retries…")."""
    return bool(_STATES_AMOUNT.search(text)) or any(
        wanted.intersection(analyze(found.group(1))) for found in _ONE_OR_NONE_OF.finditer(text))


#: A question that asks for a default: in so many words ("What is the default login shell…", "…print by default?",
#: 默认) or by what the user leaves out ("when I don't change it", "unless I tell it otherwise", "with no options at
#: all", "if I don't give cmp any skip values", 不指定, 只给一个尾数的时候).
_ASKS_FOR_DEFAULT = re.compile(
    r"\bdefault(?:s|ed)?\b|\bout\s+of\s+the\s+box\b|\bunless\s+I\b|\botherwise\b"
    r"|\b(?:(?:when|if|unless|and)\s+(?:I|you|we)|and|but)\s+(?:\w+n['’]t|dont|do\s+not|did\s+not|have\s+not|never)\s+"
    r"(?:change|give|specify|set|pass|say|tell|provide|supply|add|configure|name|choose|pick|use)\b"
    r"|\b(?:without|with\s+no)\s+(?:any\s+)?(?:options?|arguments?|flags?|settings?|values?|switch(?:es)?|parameters?)\b"
    r"|\b(?:left|leave\s+it)\s+(?:unset|out|empty|blank|alone)\b|\bomit(?:ted|ting)?\b"
    r"|默认|缺省|不指定|未指定|没有指定|没指定|不给|没给|只给|不加|不带|省略", re.IGNORECASE)
#: A sentence that states a default: "Defaults to /bin/bash.", "Default 16", "(zero by default)", 默认为, or what
#: happens when something is left out ("With no OPTION, same as -s.", "If no file is given…", 如果没有指定).
_STATES_DEFAULT = re.compile(
    r"\bdefault(?:s|ed)?\b|\b(?:with|if|when)\s+no\b|\bwithout\s+(?:an?\s+|any\s+)?[A-Z]{2,}\b|\bunless\b"
    r"|\bomitted\b|\bnot\s+(?:given|specified|set)\b|\bnormally\b"
    r"|默认|缺省|如果没有|若没有|未指定|没有指定|不指定|省略", re.IGNORECASE)
#: A sentence that only finishes the one before: a manual's "Defaults to /home." or "Default 16 (-i: 12)."
#: after the description of what it is the default of.
_CONTINUES = re.compile(r"\s*Defaults?\b(?!\s*:)")

#: A question that asks what to use instead ("what am I supposed to use instead?", 手册建议改用什么命令).
_ASKS_FOR_REPLACEMENT = re.compile(
    r"\binstead\b|\brather\s+than\b|\breplace(?:ment|d)?\b|改用|代替|替代|取代|换成|而非", re.IGNORECASE)
#: What names a replacement: "use sort -u rather than uniq", "superseded by", "in favour of", 而非, 改用.
_GIVES_REPLACEMENT = re.compile(
    r"\binstead\b|\brather\s+than\b|\breplac(?:e|es|ed|ing|ement)\b|\bsupersed(?:e|es|ed|ing)\b"
    r"|\bin\s+favou?r\s+of\b|\bprefer(?:red|ably)?\b|改用|代替|替代|取代|换成|而非|而不是|请使用|应使用", re.IGNORECASE)
#: A question that asks why.
_ASKS_WHY = re.compile(r"^\s*why\b|\bwhy\s+(?:do|does|did|is|are|was|were|can|can't|cannot|would|should|had|has)\b"
                       r"|为什么|为何|何故", re.IGNORECASE)
#: What gives a reason: "because", "since", "as this causes", "to ease upgrades", 因为, 为了.
_GIVES_REASON = re.compile(
    r"\b(?:because|since|due\s+to|owing\s+to|so\s+that|in\s+order\s+to|reasons?"
    r"|as\s+(?:this|it|they|that|these|those|the|there|we|you)"
    r"|to\s+(?:avoid|ease|allow|prevent|make|ensure|keep|support|fix|work\s+around))\b"
    r"|因为|由于|为了|所以|因此|否则|以免|以便", re.IGNORECASE)
#: A question that asks for a way to do something: "How do I stop losetup from …?", "how can I …", 怎样, 如何.
_ASKS_HOW_TO = re.compile(r"\bhow\s+(?:do|can|could|should|would)\s+(?:I|you|we|one)\b|\bhow\s+to\b"
                          r"|怎样|怎么|如何|有什么办法|什么方法", re.IGNORECASE)
#: What gives a way: an instruction ("Use --nooverlap with --find …", "Set … to …"), what you can or should do,
#: what avoids a problem; 可以, 使用, 设置.
_GIVES_WAY = re.compile(
    r"(?:^|[.!?]\s+|\n\s*)(?:use|set|run|add|pass|give|specify|put|edit|create|call|type|enable|disable|install"
    r"|remove|delete|change|select|invoke|append|prefix|press|try)\b"
    r"|\b(?:you|one|users?)\s+(?:can|may|should|must|need\s+to|have\s+to)\b|\bto\s+(?:avoid|prevent|stop|disable)\b"
    r"|\bby\s+(?:using|setting|passing|adding|giving|running|specifying)\b"
    r"|可以|使用|设置|设立|指定|应该|需要", re.IGNORECASE)
#: An option the question says is *not* given ("when I don't pass -n", "without -k", "不加 -n").
_NEGATED_OPTION = re.compile(r"(?:\b(?:\w+n['’]t|dont|do\s+not|not|without|no|never|omit|leave\s+off|unless)\s+"
                             r"(?:\w+\s+){0,2}?|(?:不加|不用|不带|没有加?|不指定)\s*)--?[A-Za-z0-9][A-Za-z0-9-]*",
                             re.IGNORECASE)
#: A command-line option: "-p", "-0", "--parents" (after white space, an opening bracket or the start).
_OPTION = re.compile(r"(?<![^\s(\[,])--?[A-Za-z0-9][A-Za-z0-9-]{0,30}(?![\w-])")


def analyze(text: str) -> list[str]:
    """The built-in model's terms of ``text`` (stemmed, stop words and question words dropped).

    A word hyphenated at a line end ("ex‐\\nclude") is one word again before analysis, and
    command-line options ("-p", "--parents", "-0") are terms as written (case kept: ``-S`` is
    not ``-s``), because "what does -p do?" is about ``-p``.
    """
    text = join_hyphenated(text)
    terms = _ANALYZER.analyze(text)
    if "-" in text:
        terms.extend(_OPTION.findall(text))
    return terms


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


@dataclass(frozen=True, slots=True)
class ScoredSentence:
    """A sentence of passage ``passage``: its BM25 share of the best sentence's, and its combined score."""

    passage: int
    sentence: Sentence
    lexical: float
    score: float
    #: Its cosine with the question (0 without embeddings).
    similarity: float = 0.0


def excerpt_candidates(task: ExcerptTask, *, passage_weight: float = PASSAGE_WEIGHT,
                       rank_weight: float = RANK_WEIGHT, similarities: Sequence[float] | None = None,
                       embedding_weight: float = 0.0) -> list[ScoredSentence]:
    """Every sentence that shares a meaningful term with the question, best first.

    ``similarities`` (optional) are cosine similarities of each sentence to the
    question, in passage then sentence order, weighted by ``embedding_weight``.
    """
    asked = _without_answer_kind_words(task.question)
    # A digit standing alone is a term only when the question writes one ("what does exit code 9 mean?" is
    # answered by the line "9 username already in use"): elsewhere a list of values would outscore its prose.
    read = _analyze_with_digits if lone_digits(asked) else analyze
    question = read(asked)
    if not question or not task.passages:
        return []
    spans = [split_sentences(passage.text) for passage in task.passages]
    owners = [(index, span) for index, passage_spans in enumerate(spans) for span in passage_spans]
    texts = [task.passages[index].text[span.start:span.end] for index, span in owners]
    terms = [analyze(text) for text in texts]
    plain = score_documents(question, terms if read is analyze
                            else [found + lone_digits(text) for found, text in zip(terms, texts, strict=True)])
    # Ranked with where it sits (an option's line rarely names its command: "rm" is in "RM(1) › 选项"), but
    # a sentence sharing nothing with the question but its heading is never evidence.
    contexts = [task.passages[index].context for index, _ in owners]
    sentence_scores = score_documents(question, [read(f"{context}\n{text}" if context else text)
                                                 for context, text in zip(contexts, texts, strict=True)])
    sentence_scores = [score if alone > 0 else 0.0 for score, alone in zip(sentence_scores, plain, strict=True)]
    passage_scores = _normalised(score_documents(question, [read(_with_context(p)) for p in task.passages]))
    sentence_norm = _normalised(sentence_scores)
    chinese = has_cjk(task.question)
    same_script = [has_cjk(passage.text) == chinese for passage in task.passages]
    # A sentence of the kind the question asks for ("…unless I tell it otherwise?": one that states a default)
    # outranks one that only shares its words, in its passage and against other passages.
    # A sentence is judged with the one that only finishes it ("The login shell for new users." with "Defaults to
    # /bin/bash."), which a quote of it takes along (see :func:`_sentence_run`).
    judged = [f"{text} {texts[position + 1]}" if position + 1 < len(owners) and owners[position + 1][0] == index
              and _CONTINUES.match(texts[position + 1]) else text
              for position, ((index, _), text) in enumerate(zip(owners, texts, strict=True))]
    shares = [1.0] * len(texts)
    for kind in _kinds_asked(task.question, judged, terms, options=False):
        shares = [share if fits else share * LEAD_IN_SHARE for share, fits in zip(shares, kind, strict=True)]
    candidates = []
    for position, ((index, span), raw) in enumerate(zip(owners, sentence_scores, strict=True)):
        if raw <= 0:
            continue  # shares no meaningful term: never evidence
        score = (sentence_norm[position] + passage_weight * passage_scores[index]
                 + rank_weight * max(0.0, 1.0 - index / 10) + (SCRIPT_WEIGHT if same_script[index] else 0.0))
        similarity = 0.0
        if similarities is not None and position < len(similarities):
            similarity = similarities[position]
            score += embedding_weight * similarity
        candidates.append(ScoredSentence(index, span, sentence_norm[position], score * shares[position], similarity))
    # Best first; ties keep passage then sentence order (deterministic, and the order a reader met them).
    candidates.sort(key=lambda c: (-c.score, c.passage, c.sentence.start))
    return candidates


def _with_context(passage: ExcerptPassage) -> str:
    """The passage as a whole is judged together with where it sits (its headings); only its own
    sentences are ever quoted."""
    return f"{passage.context}\n{passage.text}" if passage.context else passage.text


def sentence_texts(task: ExcerptTask) -> list[str]:
    """Every sentence of every passage, in the order ``similarities`` must follow."""
    return [passage.text[span.start:span.end] for passage in task.passages for span in split_sentences(passage.text)]


def semantic_sentences(task: ExcerptTask) -> list[str | None]:
    """:func:`sentence_texts` with ``None`` for each sentence whose cosine :func:`choose_excerpts` never reads:
    one that shares no meaningful term with the question (never quoted), one of a CJK passage, and every one
    of a CJK question (see :data:`SEMANTIC_THRESHOLD`). An embedding hook embeds only the others."""
    if has_cjk(task.question):
        return [None] * len(sentence_texts(task))
    question = set(analyze(_without_answer_kind_words(task.question)))
    texts: list[str | None] = []
    for passage in task.passages:
        cjk = has_cjk(passage.text)
        for span in split_sentences(passage.text):
            text = passage.text[span.start:span.end]
            texts.append(None if cjk or not question & set(analyze(text)) else text)
    return texts


@dataclass(frozen=True, slots=True)
class Relevance:
    """How much of the question a passage is about: the IDF-weighted share of the question's
    content terms it contains (``coverage``, 0–1) and how many distinct ones (``matched``)."""

    coverage: float
    matched: int
    terms: int
    #: A name the question is about (see :func:`subject_terms`) that no passage shown holds: nothing shown
    #: is about that subject, whatever else it shares with the question.
    subject_missing: bool = False
    #: The question is written in a CJK script and names a command-line option, and the passage holds every
    #: word the question writes in Latin letters (the command and its options): that is what it asks about.
    names_held: bool = False

    def passes(self, threshold: float = RELEVANCE_THRESHOLD, min_terms: int = MIN_MATCHED_TERMS) -> bool:
        """Whether the passage is about the question: ``threshold`` of its weight with at least
        ``min_terms`` distinct terms (one shared word is never enough when the question has two or
        more), or :data:`STRONG_MATCH_TERMS` distinct terms and :data:`STRONG_MATCH_SHARE` of the
        threshold (a long question — a scientific claim — is answered by a passage that shares its
        core, not every incidental word; three distinct shared words are rarely chance)."""
        if self.terms == 0 or self.subject_missing:
            return False
        if self.names_held:
            return True
        if self.coverage >= threshold and self.matched >= min(min_terms, self.terms):
            return True
        return self.matched >= STRONG_MATCH_TERMS and self.coverage >= STRONG_MATCH_SHARE * threshold


def gate_terms(text: str, *, question: bool = False) -> list[str]:
    """The terms the relevance gate counts: the model's analysed terms for non-CJK text, and for
    CJK text character bigrams (runs split at function characters and question words, a lone
    character kept), because single characters say too little in Chinese ("杯" is in "杯子")."""
    terms: list[str] = []
    for index, part in enumerate(_CJK_SPLIT.split(text)):
        if not part:
            continue
        if index % 2 == 0:
            # A digit standing alone is what "exit code 9" asks about (see :func:`excerpt_candidates`).
            found = _analyze_with_digits(part)
            terms.extend(found)
            if not question:
                # A name joined by an underscore or a dot holds its parts: a passage about "pam_unix" is about the
                # "Unix PAM module" a question names.
                terms.extend(piece for term in found if "_" in term or "." in term
                             for piece in analyze(term.replace("_", " ").replace(".", " ")) if piece not in found)
            continue
        for word in CJK_QUESTION_WORDS:
            part = part.replace(word, " ")
        if question:
            for word in CJK_GATE_STOPWORDS:
                part = part.replace(word, " ")
        for chunk in _CJK_STOP_SPLIT.split(part):
            chunk = chunk.strip()
            if len(chunk) == 1:
                terms.append(chunk)
            terms.extend(chunk[i:i + 2] for i in range(len(chunk) - 1))
    return terms


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a passage shown comes from, as far as the names a question is about go."""

    #: The document (file, web page, record) it belongs to: passages with the same one are read together.
    document: str
    #: The document's own name (a file's name, a page's last URL segment): ``cp.txt`` is about ``cp``.
    label: str = ""
    #: A web page's or record's passage: it comes without headings and with at most one other of its page, so
    #: a name anywhere in its document's passages shown counts.
    wide: bool = False
    #: What the document says it is about, when shown: a man page's NAME line ("rotatelogs - Piped logging program
    #: to rotate Apache logs"), which holds the names the whole page is about.
    about: str = ""


def passage_relevance(question: str, passages: Sequence[str], origins: Sequence[Origin] | None = None,
                      titles: Collection[str] = ()) -> list[Relevance]:
    """The :class:`Relevance` of each passage to ``question``.

    A term's weight is its smoothed IDF among ``passages``, ``ln(1 + (N + 1) / (max(df, 1) + 1))``: a
    term one passage (or none) contains weighs most, one every passage contains least (it is what
    the retriever matched on); a term no passage contains weighs like a rare one, not more, so one
    generic word ("the *rules* for backups") cannot veto passages that are about the rest. Words
    that only say what kind of answer is wanted (:data:`GATE_STOPWORDS`: "how *often*", "how
    *long*") are not counted. A question of several
    parts ("When does the export run, how long is it kept and who owns it?") is as well answered by
    a passage about one part: the coverage is the best of the whole question and of each clause
    with at least :data:`MIN_MATCHED_TERMS` terms; ``matched`` counts the whole question's terms.

    A question (see :func:`asks_a_question`) is about its names (:func:`subject_terms`, the words of
    ``titles``, the manual pages shown, and :func:`unknown_names`, words in no English word list): a passage
    lacking one in its text, its document's name or — for a scene-setting name, or a passage of a web page or
    record — its document's passages shown (``origins``, one per passage; each passage is a document of its
    own without them) is ``subject_missing``.
    """
    wanted = _gate_question_terms(question)
    clauses = [terms for terms in map(_gate_question_terms, _CLAUSE.split(question))
               if len(terms) >= MIN_MATCHED_TERMS and len(terms) < len(wanted)]
    present = [set(gate_terms(text)) for text in passages]
    total = len(passages)
    weights = {}
    for term in wanted:
        frequency = sum(1 for terms in present if term in terms)
        weights[term] = math.log(1 + (total + 1) / (max(frequency, 1) + 1))
    # A question is about its names: a passage counts only when it holds them (with its headings and its
    # document's name). A name in a fronted phrase ("On Debian, how is …") only sets the scene: the passage's
    # document (all its passages shown) holding it is enough. So it is for a passage of a web page or a record
    # (``Origin.wide``), which comes without headings and with at most one other passage of its page.
    where = list(origins) if origins is not None else [Origin(str(index)) for index in range(len(passages))]
    named = [terms | set(gate_terms(origin.label)) | set(gate_terms(origin.about))
             for terms, origin in zip(present, where, strict=True)]
    everywhere = set().union(*named) if named else set()
    asks = asks_a_question(question)
    names = subject_terms(question) + [term for term in wanted if term in titles]
    if asks:
        names += [term for term in unknown_names(question) if term not in names]
    missing = (len(wanted) <= SUBJECT_QUESTION_TERMS or asks) and any(term not in everywhere for term in names)
    latin = _latin_names(question)
    fronted = _FRONTED.match(question)
    scene = set(subject_terms(fronted.group())) if fronted else set()
    held: dict[str, set[str]] = {}
    for origin, terms in zip(where, named, strict=True):
        held.setdefault(origin.document, set()).update(terms)
    result = []
    for origin, terms, own in zip(where, present, named, strict=True):
        hits = [term for term in wanted if term in terms]
        coverage = max((_covered(part, terms, weights) for part in (wanted, *clauses)), default=0.0)
        lacks = missing or (asks and any(term not in (held[origin.document] if origin.wide or term in scene else own)
                                         for term in names))
        result.append(Relevance(coverage, len(hits), len(wanted), lacks, bool(latin) and latin <= own))
    return result


def _latin_names(question: str) -> set[str]:
    """The gate terms a CJK question writes in Latin letters (numbers aside) when they include a command-line
    option: "xargs 的 -P 参数如果设成 0 是什么效果？" asks about ``xargs`` and ``-P``, whatever words the page uses
    for the rest (设成 0 against 为 0). Empty for any other question."""
    if not has_cjk(question):
        return set()
    terms = {term for part in _CJK_SPLIT.split(question) if part and not has_cjk(part)
             for term in analyze(part) if not term.isdigit()}
    return terms if any(term.startswith("-") for term in terms) and len(terms) >= 2 else set()


def subject_terms(question: str) -> list[str]:
    """The gate terms of the names a question is about: words written with a capital inside them
    (``PostgreSQL``, ``TCP``), with letters and digits (``FAT32``, ``ext4``), joined by a dot, plus, hash or
    underscore (``vm.swappiness``, ``C++``, ``sshd_config``, ``MAIL_DIR``), or capitalised after the question's
    first word (``Jupiter``); and in a question written in Chinese (or another CJK script), every word in Latin
    letters (``crontab``, ``systemd``): such a question writes only names that way. A number with a unit
    (``900k``) is no name. When a passage about such a name is not among those shown, the rest of the
    question's words match by chance: "the maximum file size on FAT32" is not answered by curl's "Maximum file
    size exceeded." One letter (``I``, vitamin ``C``) is no name."""
    names: list[str] = []
    cjk = has_cjk(question)
    for position, match in enumerate(_NAME_WORD.finditer(question)):
        word = match.group()
        if len(word) < 2 or word.isdigit() or has_cjk(word) or _QUANTITY.fullmatch(word):
            continue
        mixed = any(char.isdigit() for char in word) and any(char.isalpha() for char in word)
        joined = any(char in ".+#_" for char in word)
        if cjk or mixed or joined or any(char.isupper() for char in word[1:]) \
                or (position > 0 and word[0].isupper()):
            names.extend(term for term in analyze(word) if term not in _GATE_STOPWORDS)
    return list(dict.fromkeys(names))


#: A word in lower case, with its hyphenated parts and an apostrophe's ending ("rsync", "ssh-keygen", "sshd's");
#: not a piece of a path, a dotted name or an option ("/etc/shells", "policy-rc.d", "--printf").
_LOWER_WORD = re.compile(r"(?<![\w'./+#-])[a-z][a-z0-9]*(?:['-][a-z0-9]+)*(?![\w'./+#-])")


def unknown_names(question: str) -> list[str]:
    """The gate terms of the words of an English question, in lower case, that no English word list holds
    (:func:`~ditto.text.lexicon.is_english_word`): a program's name such as ``rsync`` or ``zstd`` — the
    names :func:`subject_terms` cannot tell by their letters. A word made of English
    (:func:`~ditto.text.lexicon.reads_as_english`: "workaround", "multibyte", "filesystem") is no name; a
    hyphenated word is one unless all its parts are English ("ssh-keygen" is, "read-only" is not); a two-letter
    word is one when the list lacks it ("xz", "dd"), a single letter never."""
    if has_cjk(question):
        return []  # a CJK question's words in Latin letters are all names already
    names: list[str] = []
    for match in _LOWER_WORD.finditer(question):
        word = match.group()
        if len(word) < 2 or is_english_word(word):
            continue
        if "-" in word:
            if all(is_english_word(part) for part in word.split("-")):
                continue
        elif reads_as_english(word.split("'")[0]):
            continue
        names.extend(term for term in analyze(word) if term not in _GATE_STOPWORDS)
    return list(dict.fromkeys(names))


def asks_a_question(text: str) -> bool:
    """Whether ``text`` is put as a question (a question mark, or a Chinese question word) rather than
    stated (a claim to check): a question is *about* the names it writes, whatever its length, while in a
    long claim a name is one detail among many."""
    stripped = text.rstrip()
    return stripped.endswith(("?", "？")) or (has_cjk(text) and any(word in text for word in CJK_QUESTION_WORDS))


def _origins(passages: Sequence[ExcerptPassage]) -> list[Origin]:
    """The :class:`Origin` of each passage shown, with what its document says it is about (the text of a NAME
    section shown of the same document): "the Apache log rotation program's offset argument" is answered by
    rotatelogs' "offset" entry, which only its NAME line ties to Apache."""
    origins = [_origin(passage) for passage in passages]
    about: dict[str, str] = {}
    for passage, origin in zip(passages, origins, strict=True):
        if _NAME_SECTION.match(_section(passage.context)):
            about[origin.document] = f"{about.get(origin.document, '')} {passage.text}".strip()
    return [replace(origin, about=about[origin.document]) if origin.document in about else origin
            for origin in origins]


def _origin(passage: ExcerptPassage) -> Origin:
    """The :class:`Origin` of a passage shown: its document (else its page, else itself) and that one's name, the
    last segment of its path or URL without the extension ("file:///docs/cp.txt" → "cp"; a web page's with its
    underscores as spaces, as wikis write titles in URLs)."""
    document = passage.document or passage.page
    if document is None:
        return Origin(passage.source_id)
    try:
        path = urlsplit(document).path
    except ValueError:  # not a URL ("http://[x"): the document's id as given
        path = document
    segment = unquote(path.rstrip("/").rsplit("/", 1)[-1])
    label = segment.rsplit(".", 1)[0] if "." in segment else segment
    if passage.page is not None:
        return Origin(document, label.replace("_", " "), wide=True)  # a wiki's title: "Isolation_In_SQLite"
    return Origin(document, label)


#: What separates the words of a manual page's title that the analyser splits too (``MACHINE-ID``); a dotted or
#: underscored title (``SSH_CONFIG``, ``SYSTEMD.TIMER``) stays one name, as the analyser keeps it.
_TITLE_PARTS = re.compile(r"-+")


def page_titles(passages: Sequence[ExcerptPassage]) -> set[str]:
    """The terms of the manual pages' titles among ``passages``' heading paths (``WGET(1)`` → ``wget``): a
    question that writes such a title in lower case ("How many retries does wget make?") names that command
    as surely as one that writes ``PostgreSQL`` names a program, and curl's page does not answer it.

    A title that is an English word (``DATE(1)``, ``SORT(1)``) counts only from the first passage, the
    retriever's best: "how is the list kept up to *date*?" does not name date(1) because a passage of its page
    came last, while "how do I sort numerically?" ranks sort's page first."""
    titles: set[str] = set()
    for position, passage in enumerate(passages):
        if passage.context:
            top = passage.context.split(HEADING_SEPARATOR, 1)[0]
            for match in _PAGE_TITLE.finditer(top):
                # Each word of the title as written is judged, not its stem: MACHINE-ID(5)'s "machine" is English
                # ("machin" is not, and every question about a machine was held to name machine-id).
                titles.update(term for word in _TITLE_PARTS.split(match.group(1).lower()) for term in analyze(word)
                              if position == 0 or not is_english_word(word))
    return titles


def _gate_question_terms(text: str) -> list[str]:
    return [term for term in dict.fromkeys(gate_terms(text, question=True)) if term not in _GATE_STOPWORDS]


def _covered(wanted: Sequence[str], present: set[str], weights: Mapping[str, float]) -> float:
    whole = sum(weights.get(term, 0.0) for term in wanted)
    return sum(weights.get(term, 0.0) for term in wanted if term in present) / whole if whole > 0 else 0.0


def _sentence_run(text: str, spans: Sequence[Sentence], index: int, wanted: set[str], limit: int,
                  question: str = "") -> tuple[int, int]:
    """The smallest run of whole sentences around ``spans[index]`` that carries what it can of the
    question: a neighbour joins when it holds question terms the run lacks, or is the first of the kind
    ``question`` asks for (:func:`_completing_kind`: "Why…?" and "This prevents problems, because…"), or when the run is
    too short to say anything (an option tag, "Exit status:") or only a record's labelled fields; at most
    :data:`MAX_RUN_SENTENCES`, within ``limit`` characters, and a sentence that only finishes the run's last
    (:data:`_CONTINUES`: "Defaults to /home.") joins it. An option's description (a passage that opens
    with its tag) of at most that many sentences is quoted whole: "the default is “aes256-ctr”" ends what
    ``-Z cipher`` says, sharing no word with a question about it. Returns the run's offsets."""
    if spans and (option_tag(text.split("\n", 1)[0]) or _opens_with_tag_line(text)) \
            and len(spans) <= MAX_RUN_SENTENCES and spans[-1].end - spans[0].start <= limit:
        return spans[0].start, spans[-1].end
    low = high = index
    covered = set(analyze(text[spans[index].start:spans[index].end])) & wanted

    kind = _completing_kind(question)

    def of_kind(position: int) -> bool:
        return kind is not None and kind.search(text, spans[position].start, spans[position].end) is not None

    kind_held = kind is None or of_kind(index)
    bridge = high + 2
    if not kind_held and bridge - low < MAX_RUN_SENTENCES and bridge < len(spans) and of_kind(bridge) \
            and not of_kind(high + 1) and spans[bridge].end - spans[low].start <= limit:
        # The kind asked is one sentence further on ("It's possible to create more loop devices for one file. This
        # setup may be dangerous … Use --nooverlap … to avoid this problem."): the run bridges to it.
        for position in (high + 1, bridge):
            covered |= set(analyze(text[spans[position].start:spans[position].end])) & wanted
        high, kind_held = bridge, True
    while high - low + 1 < MAX_RUN_SENTENCES:
        best: tuple[int, int] | None = None  # (gain, neighbour)
        for neighbour in (high + 1, low - 1):  # the next sentence first: answers follow their subject
            if not 0 <= neighbour < len(spans):
                continue
            first, last = min(low, neighbour), max(high, neighbour)
            if spans[last].end - spans[first].start > limit:
                continue
            gain = len(set(analyze(text[spans[neighbour].start:spans[neighbour].end])) & wanted - covered)
            if not kind_held and of_kind(neighbour):
                gain += 1
            if best is None or gain > best[0]:
                best = (gain, neighbour)
        if best is None:
            break
        gain, neighbour = best
        short = spans[high].end - spans[low].start < MIN_QUOTE_CHARS \
            or _FIELD_LINES.fullmatch(text, spans[low].start, spans[high].end) is not None
        if gain == 0 and not (short and neighbour == high + 1):
            break
        covered |= set(analyze(text[spans[neighbour].start:spans[neighbour].end])) & wanted
        kind_held = kind_held or of_kind(neighbour)
        low, high = min(low, neighbour), max(high, neighbour)
    if high + 1 < len(spans) and _CONTINUES.match(text, spans[high + 1].start) is not None \
            and spans[high + 1].end - spans[low].start <= limit:
        high += 1  # "Defaults to 1000 - 59999." finishes what the run says
    return spans[low].start, spans[high].end


def reading_order(question: str, passages: Sequence[ExcerptPassage]) -> list[int]:
    """The indices of ``passages`` (given best first by a retriever) in the order this model would quote from
    them: by each passage's best sentence (:func:`excerpt_candidates`, lexical only), then the passages with no
    sentence sharing a term with the question, as given.

    A retriever scores a passage as a whole; a reader looks for the sentence that answers. Inside one
    document the reader's order puts the answering passage first more often, so the documents source's close
    reading shows a document's passages in this order (see ``ditto.workflows.research.sources.focus``).

    Example::

        reading_order("how many times does shred overwrite?", passages)   # e.g. [3, 0, 1, 2]
    """
    if not passages:
        return []
    best: dict[int, float] = {}
    for candidate in excerpt_candidates(ExcerptTask(question=question, passages=tuple(passages))):
        best.setdefault(candidate.passage, candidate.score)
    return sorted(range(len(passages)), key=lambda index: (index not in best, -best.get(index, 0.0), index))


def choose_excerpts(task: ExcerptTask, *, passage_weight: float = PASSAGE_WEIGHT,
                    rank_weight: float = RANK_WEIGHT, similarities: Sequence[float] | None = None,
                    embedding_weight: float = 0.0, relevance_threshold: float = RELEVANCE_THRESHOLD,
                    semantic_threshold: float = SEMANTIC_THRESHOLD, semantic_follow_up: float = SEMANTIC_FOLLOW_UP
                    ) -> list[Excerpt]:
    """The verbatim quotes that best answer ``task.question``: runs of whole sentences, at most
    ``maxPerSource`` per source and per page, ``maxExcerpts`` in all; ``[]`` when no passage is
    about the question (see :class:`Relevance`).

    ``similarities`` (each sentence's cosine with the question, in :func:`sentence_texts` order) add
    ``embedding_weight`` times the cosine to a sentence's score, let a passage whose best sentence
    reaches ``semantic_threshold`` past the relevance gate, a source's first quote that close past the
    follow-up share, and a further quote of a source past it at ``semantic_follow_up``; English text only
    (:data:`SEMANTIC_THRESHOLD`). Each source's best sentence is considered before any source's second,
    and the quotes come back best first."""
    if task.max_excerpts == 0 or task.max_per_source == 0:
        return []
    sentence_spans = [split_sentences(passage.text) for passage in task.passages]
    counts = [len(spans) for spans in sentence_spans]
    lead_ins = [passage.text[span.start:span.end].rstrip().endswith((":", "："))
                for passage, spans in zip(task.passages, sentence_spans, strict=True) for span in spans]
    similarities = _english_only(task, similarities, counts)
    candidates = excerpt_candidates(task, passage_weight=passage_weight, rank_weight=rank_weight,
                                    similarities=similarities, embedding_weight=embedding_weight)
    if not candidates:
        return []
    judged = [_with_context(passage) for passage in task.passages]
    origins = _origins(task.passages)
    titles = page_titles(task.passages)
    relevance = passage_relevance(task.question, judged, origins, titles)
    # A vocabulary query chosen for the question says it in the index's words: what answers it answers the question.
    restated = [passage_relevance(text, judged, origins, titles) for text in task.restatements or ()]
    close = _semantically_close(similarities, counts, semantic_threshold, lead_ins)
    candidates = [c for c in candidates if relevance[c.passage].passes(relevance_threshold)
                  or any(other[c.passage].passes(relevance_threshold) for other in restated)
                  or (c.passage in close and not relevance[c.passage].subject_missing)]
    if not candidates:
        return []  # nothing shown is about the question: no evidence, not the nearest words
    answering = _answering_sections(task.question, task.passages)
    candidates = [c for c in candidates if answering[c.passage]]
    if not candidates:
        return []  # only a page's name, synopsis or references match
    wanted = set(analyze(task.question))
    if not _states_kind_asked(task, candidates, sentence_spans, wanted, semantic_follow_up):
        return []  # an amount or an option was asked for and nothing quotable about the question gives one
    chosen: list[tuple[int, Excerpt]] = []  # (rank among the candidates, excerpt)
    taken: dict[int, list[tuple[int, int]]] = {}
    per_source: dict[str, int] = {}
    per_page: dict[str, int] = {}
    seen: set[tuple[str, str]] = set()
    best = candidates[0].score
    for rank, candidate, first in _sources_first(candidates, task.passages):
        if len(chosen) >= task.max_excerpts:
            break
        close_enough = semantic_threshold if first else semantic_follow_up
        if chosen and (candidate.score < FOLLOW_UP_SHARE * best or candidate.lexical < FOLLOW_UP_SHARE) \
                and candidate.similarity < close_enough:
            continue  # a weak match is noise, not evidence, even inside the best passage
        passage = task.passages[candidate.passage]
        if per_source.get(passage.source_id, 0) >= task.max_per_source or (
                passage.page is not None and per_page.get(passage.page, 0) >= task.max_per_source):
            continue
        if any(start < candidate.sentence.end and candidate.sentence.start < end
               for start, end in taken.get(candidate.passage, ())):
            continue  # already quoted as part of a run
        passage_spans = sentence_spans[candidate.passage]
        position = passage_spans.index(candidate.sentence)
        start, end = _sentence_run(passage.text, passage_spans, position, wanted, task.max_quote_chars,
                                   task.question)
        if end - start > task.max_quote_chars or any(first < end and start < last
                                                     for first, last in taken.get(candidate.passage, ())):
            start, end = candidate.sentence.start, candidate.sentence.end  # the sentence alone, never a repeat
        quote = _cut(passage.text, Sentence(start, end), task.max_quote_chars)
        if (passage.source_id, quote) in seen:
            continue
        seen.add((passage.source_id, quote))
        taken.setdefault(candidate.passage, []).append((start, start + len(quote)))
        per_source[passage.source_id] = per_source.get(passage.source_id, 0) + 1
        if passage.page is not None:
            per_page[passage.page] = per_page.get(passage.page, 0) + 1
        chosen.append((rank, Excerpt(source_id=passage.source_id, quote=quote)))
    return [excerpt for _, excerpt in sorted(chosen, key=lambda item: item[0])]  # best first, as ranked


def _section(context: str | None) -> str:
    """The last heading of a passage's heading path: the section it is in ("NAME", "SEE ALSO", "-r, --remove")."""
    return (context or "").rsplit(HEADING_SEPARATOR, 1)[-1].strip()


def _answering_sections(question: str, passages: Sequence[ExcerptPassage]) -> list[bool]:
    """Whether each passage's section can answer ``question``. A man page's NAME and SYNOPSIS lines share the
    command's name with every question about it and answer only "What is split?"; its SEE ALSO list (参见) names
    other pages and answers nothing: quoted, they read as an answer that says nothing."""
    what_is = _ASKS_WHAT_IT_IS.match(question) is not None
    return [not _REFERENCE_SECTION.match(section) and (what_is or not _SYNOPSIS_SECTION.search(section))
            for section in (_section(passage.context) for passage in passages)]


def _named_options(question: str) -> set[str]:
    """The options ``question`` names as given (``-G`` of "usermod -G kicked me out"), not those it says are left
    out ("when I don't pass -n")."""
    return set(_OPTION.findall(_NEGATED_OPTION.sub(" ", question)))


def _states_kind_asked(task: ExcerptTask, candidates: Sequence[ScoredSentence], spans: Sequence[Sequence[Sentence]],
                       wanted: set[str], semantic_follow_up: float) -> bool:
    """Whether the ``candidates`` (best first, past the relevance gate) can give the kind of answer the question
    asks for: an amount (:data:`_ASKS_FOR_AMOUNT`) stated by a quotable sentence or the one after it, an option
    (:data:`_ASKS_FOR_OPTION`, none named) by a passage that describes one (:func:`_describes_an_option`) or a
    sentence that names one. A page about the question's subject that holds no such thing does not answer it
    ("What is the maximum number of lines an fstab file may have?", "Which userdel option deletes the mail spool?"
    over pages that only mention userdel). Any other question: ``True``."""
    if not asks_a_question(task.question):
        return True
    if _ASKS_FOR_AMOUNT.search(task.question):
        best = candidates[0].score
        quotable = [c for c in candidates if c.score >= FOLLOW_UP_SHARE * best or c.similarity >= semantic_follow_up]
        measured = _measured(task.question)

        def states_it(candidate: ScoredSentence) -> bool:
            passage = task.passages[candidate.passage]
            text = _with_next(passage.text, spans[candidate.passage], candidate.sentence)
            # The amount of the thing asked: "What exit status does mkswap return …?" is not answered by "Linux
            # allows 32 swap areas", which states an amount of something else.
            return _states_amount(text, wanted) and (
                not measured or bool(measured & set(analyze(f"{passage.context or ''}\n{passage.text}"))))

        if not any(states_it(c) for c in quotable):
            return False
    if _ASKS_FOR_OPTION.search(task.question) and not _named_options(task.question):
        # The option's own entry, or a sentence that names one ("如果在命令行上指定了 -m 选项, Uuencode 就改用 base64").
        return any(_describes_an_option(task.passages[c.passage])
                   or _OPTION.search(_with_next(task.passages[c.passage].text, spans[c.passage], c.sentence))
                   for c in candidates)
    return True


#: What an amount question measures: "how many *days*", "the maximum number of *OnCalendar= expressions*", "the
#: smallest RSA *key length*", "what *exit status*". Not a port: "It listens on 22." says which without the word.
_MEASURE = re.compile(
    r"\bhow\s+many\s+(?P<many>[\w=.-]+(?:\s+[\w=.-]+)?)"
    r"|\b(?:number|count)\s+of\s+(?P<of>[\w=.-]+(?:\s+[\w=.-]+)?)"
    r"|\b(?:smallest|largest|lowest|highest|biggest|minimum|maximum|min|max|default)\s+(?P<noun>(?:[\w-]+\s+){0,2}?"
    r"(?:size|length|level|limit|timeout|interval|amount|range))s?\b"
    r"|\b(?P<status>exit|return|error)\s+(?:status|code|value)", re.IGNORECASE)
#: The words a sentence giving an exit status uses.
_STATUS_WORDS: Final = frozenset(analyze("exit exits status return returns code error"))
#: What counts occurrences, not a thing: an amount of them is stated in any words.
_OCCURRENCES: Final = frozenset(analyze("times time"))


def _measured(question: str) -> set[str]:
    """The terms of what ``question``'s amounts measure (:data:`_MEASURE`), or an empty set when it does not say
    ("how long", "how often", 多少) or counts only occurrences ("how many times")."""
    measured: set[str] = set()
    for match in _MEASURE.finditer(question):
        if match.group("status"):
            measured |= _STATUS_WORDS
            continue
        terms = set(analyze(next(group for group in match.groups() if group))) - QUESTION_STOPWORDS
        if terms & _OCCURRENCES:
            return set()  # "how many times" is answered by "only one instance …" as well as by "3 times"
        measured |= terms
    return measured


#: A setting's name as a heading or a tag line: ``NAutoVTs=``, ``PermitRootLogin``, ``LOGIN_RETRIES (number)``.
_SETTING_TAG = re.compile(r"[A-Za-z_][\w.-]*=?(?:\s*\([^()]{1,30}\))?")
#: The longest first line read as a tag over an indented body.
_MAX_TAG_LINE: Final = 60
#: The most words a tag line has (``HandleLidSwitch=, HandleLidSwitchExternalPower=`` is two).
_MAX_TAG_WORDS: Final = 6
#: A sentence's end inside a line (". ", "; ") or Chinese punctuation: a line holding one is no tag.
_SENTENCE_MARK = re.compile(r"[.;:!?]\s|[。；：！？，、]")


def _describes_an_option(passage: ExcerptPassage) -> bool:
    """Whether ``passage`` is what a manual says of one option or setting: it opens with a command-line option
    (``-r, --remove``), or with a short tag line over an indented body (``PermitRootLogin``, ``NAutoVTs=``), or
    its heading is such a tag (a setting's name over its description)."""
    if opens_with_option(passage.text.lstrip().partition("\n")[0].strip()) or _opens_with_tag_line(passage.text):
        return True
    heading = _section(passage.context)
    # A section's name (DESCRIPTION, OPTIONS) is no setting's: a setting is written in mixed case, or with "_",
    # "=" or its type.
    return opens_with_option(heading) or (bool(_SETTING_TAG.fullmatch(heading)) and (
        heading != heading.upper() or any(mark in heading for mark in "_=(")))


def _opens_with_tag_line(text: str) -> bool:
    """Whether ``text`` opens with a short tag line over an indented body: a definition list's term
    (``PermitRootLogin``, ``NAutoVTs=``, rtcwake's mode ``off``) over what it means. A term is a few words and
    no sentence: the first line of a hard-wrapped paragraph ("frob 读取每个文件…。默认情况下，…；如果指定") is
    followed by indented lines too."""
    first, _, rest = text.lstrip().partition("\n")
    first = first.strip()
    return bool(first) and len(first) <= _MAX_TAG_LINE and first[-1] not in ".;:!?," and rest[:1] in (" ", "\t") \
        and len(first.split()) <= _MAX_TAG_WORDS and _SENTENCE_MARK.search(first) is None


def _with_next(text: str, spans: Sequence[Sentence], sentence: Sentence) -> str:
    """``sentence`` of ``text`` and the one after it (an amount often ends the description: "… Defaults to 6.")."""
    position = spans.index(sentence)
    return text[sentence.start:spans[min(position + 1, len(spans) - 1)].end]


def _sources_first(candidates: Sequence[ScoredSentence], passages: Sequence[ExcerptPassage]
                   ) -> list[tuple[int, ScoredSentence, bool]]:
    """``(rank, candidate, first)`` for ``candidates`` (best first), each source's best sentence ahead of every
    source's second; ``first`` marks a source's best. The quotes go to as many sources as pass before any
    source gets a second (SciFact train, hybrid: six quotes from two abstracts had crowded out a third,
    relevant one in 10 of 809 claims). Within one source the order stays the ranking's."""
    firsts: list[tuple[int, ScoredSentence, bool]] = []
    rest: list[tuple[int, ScoredSentence, bool]] = []
    seen: set[str] = set()
    for rank, candidate in enumerate(candidates):
        source = passages[candidate.passage].source_id
        first = source not in seen
        (firsts if first else rest).append((rank, candidate, first))
        seen.add(source)
    return firsts + rest


def _semantically_close(similarities: Sequence[float] | None, counts: Sequence[int], threshold: float,
                        lead_ins: Sequence[bool]) -> set[int]:
    """The passages (``counts[i]`` sentences each) one of whose sentences reaches ``threshold`` cosine, a lead-in
    (``lead_ins``, in sentence order) aside: "Note that further rsync updates should be done with:" is close to any
    question about rsync and says nothing of it."""
    if similarities is None:
        return set()
    close: set[int] = set()
    position = 0
    for index, count in enumerate(counts):
        if any(value >= threshold and not lead_ins[at]
               for at, value in enumerate(similarities[position:position + count], start=position)):
            close.add(index)
        position += count
    return close


def _english_only(task: ExcerptTask, similarities: Sequence[float] | None, counts: Sequence[int]
                  ) -> list[float] | None:
    """``similarities`` with every sentence of a CJK passage at 0, or ``None`` for a CJK question: the local
    embedding model reads English only, and to it any two Chinese sentences look alike."""
    if similarities is None or has_cjk(task.question):
        return None
    kept: list[float] = []
    for passage, count in zip(task.passages, counts, strict=True):
        values = similarities[len(kept):len(kept) + count]
        kept.extend([0.0] * len(values) if has_cjk(passage.text) else values)
    return kept


def answer_sentences(task: AnswerTask) -> list[tuple[int, str]]:
    """Every sentence of every evidence quote as ``(evidence index, text)``: what :func:`answer_question`
    chooses from, in the order its ``similarities`` must follow. A quote of an option's description (it opens
    with the option's tag, at most :data:`MAX_RUN_SENTENCES` sentences) is one entry, whole; a record's
    labelled fields and the sentence after them are one entry."""
    units: list[tuple[int, str]] = []
    for number, item in enumerate(task.evidence):
        spans = split_sentences(item.quote)
        if spans and option_tag(item.quote.split("\n", 1)[0]) and len(spans) <= MAX_RUN_SENTENCES:
            # An option's description is one answer: "-Z cipher  Specifies the cipher … The default is
            # “aes256-ctr”." says what -Z is for and what it defaults to only as a whole.
            units.append((number, _cut(item.quote, Sentence(spans[0].start, spans[-1].end), MAX_QUOTE_CHARS)))
        else:
            units.extend((number, _cut(item.quote, _without_bullet(item.quote, span), MAX_QUOTE_CHARS))
                         for span in _joined_units(item.quote, spans))
    return units


#: A list item's mark ("•   Trailing spaces are ignored…", "- item", "* item"): layout, not part of what it says.
_BULLET = re.compile(r"[ \t]*(?:[•·▪◦‣∙]|[-*+](?=\s))\s+")


def _without_bullet(text: str, span: Sentence) -> Sentence:
    """``span`` without a list item's mark at its start (an answer reads as sentences; the quote keeps it)."""
    mark = _BULLET.match(text, span.start, span.end)
    return Sentence(mark.end(), span.end) if mark is not None and mark.end() < span.end else span


def _label_line(text: str, span: Sentence) -> bool:
    """Whether ``span`` is a short line of its own (under :data:`LABEL_CHARS`): a label over what follows."""
    if span.end - span.start >= LABEL_CHARS:
        return False
    start, end = span.start, span.end
    while start > 0 and text[start - 1] in " \t":
        start -= 1
    while end < len(text) and text[end] in " \t\r":
        end += 1
    return (start == 0 or text[start - 1] == "\n") and end < len(text) and text[end] == "\n"


def _joined_units(text: str, spans: Sequence[Sentence]) -> list[Sentence]:
    """``spans`` with a run of labelled fields (:data:`_FIELD_LINES`) joined to the sentence after it (the
    fields say what the record is about, the sentence what it says), a short line of its own over the sentence
    after it ("The fifth field (fs_freq)." over what that field is for: a label, like an option's tag), and a
    sentence that only finishes the one before (:data:`_CONTINUES`: "Defaults to /bin/bash.") joined to it:
    alone it says nothing of what."""
    joined: list[Sentence] = []
    index = 0
    while index < len(spans):
        span = spans[index]
        if index + 1 < len(spans) and (_FIELD_LINES.fullmatch(text, span.start, span.end) is not None
                                       or _label_line(text, span)):
            span = Sentence(span.start, spans[index + 1].end)
            index += 1
        if joined and _CONTINUES.match(text, span.start) is not None:
            joined[-1] = Sentence(joined[-1].start, span.end)
        else:
            joined.append(span)
        index += 1
    return joined


def answer_question(task: AnswerTask, *, similarities: Sequence[float] | None = None,
                    embedding_weight: float = ANSWER_EMBEDDING_WEIGHT) -> list[AnswerSentence]:
    """1–:data:`~ditto.worker.infer.tasks.MAX_ANSWER_SENTENCES` sentences copied verbatim from the
    evidence quotes, most relevant first, each citing every evidence item whose quote holds it.

    Sentences are scored with BM25 against the question, each with its evidence's ``context``
    (normalised to the best), plus ``embedding_weight`` times its cosine with the question when
    ``similarities`` are given (one per :func:`answer_sentences` entry; English only, as for excerpts);
    a question that names command-line options (``xargs -0``) keeps the full score only for sentences that
    name one of them (in the sentence or its context), the others :data:`LEAD_IN_SHARE` of theirs, and
    one that asks which option does something keeps it only for sentences that open with an option;
    a sentence of a man page's NAME or SYNOPSIS section keeps that share unless the question asks what the
    thing is;
    after the first, a sentence must reach :data:`ANSWER_FOLLOW_UP_SHARE` of the best. When no sentence
    shares a term with the question (the evidence was chosen for it all the same), the first sentence
    of the first evidence stands.
    """
    if not task.evidence:
        return []
    sentences = answer_sentences(task)
    if not sentences:
        return []
    question = analyze(task.question)
    # A sentence is scored together with where its quote sits: "1 if no lines were selected" is about grep
    # because it sits under GREP(1), and a sentence of find's page on exit statuses is not.
    contexts = [task.evidence[number].context or "" for number, _ in sentences]
    # Coordinated: in a handful of sentences one rare frame word ("does grep *return*") would outweigh the rest.
    documents = [analyze(f"{context}\n{text}") for context, (_, text) in zip(contexts, sentences, strict=True)]
    lexical = score_documents(question, documents, coordinate=True) if question else [0.0] * len(sentences)
    scores = _normalised(lexical)
    if similarities is not None and not has_cjk(task.question):
        # A short list of cosines leaves the rest of the sentences to their words.
        scores = [score + embedding_weight * cosine if score > 0 and not has_cjk(text) else score
                  for score, cosine, (_, text) in zip(scores, similarities, sentences, strict=False)] \
            + scores[len(similarities):]
    texts = [text for _, text in sentences]
    for kind in _answer_kinds(task.question, texts, contexts, documents):
        scores = [score if fits else score * LEAD_IN_SHARE for score, fits in zip(scores, kind, strict=True)]
    order = sorted(range(len(sentences)), key=lambda i: (-scores[i], sentences[i][0], i))
    best = scores[order[0]]
    picked: list[str] = []
    for index in order:
        text = sentences[index][1]
        if len(picked) >= MAX_ANSWER_SENTENCES:
            break
        if picked and (scores[index] <= 0 or scores[index] < ANSWER_FOLLOW_UP_SHARE * best):
            break
        if text not in picked:
            picked.append(text)
    for index in _parts_answered(task.question, documents, scores):
        if len(picked) < MAX_ANSWER_SENTENCES and sentences[index][1] not in picked:
            picked.append(sentences[index][1])
    return [AnswerSentence(text=text, evidence=tuple(item.id for item in task.evidence if text in item.quote))
            for text in picked]


def _parts_answered(question: str, documents: Sequence[Sequence[str]], scores: Sequence[float]) -> list[int]:
    """For a question of several parts ("How long are backups retained, and how often do they run?"), the best
    sentence for each part after the first, by its words (``documents``: each sentence's terms) among the
    sentences that score at all: the answer's follow-ups are chosen by the whole question, and the part the best
    sentence does not answer would go unanswered. A statement (a claim) is one part."""
    if not asks_a_question(question):
        return []
    parts = [terms for terms in (analyze(part) for part in _CLAUSE.split(question)) if len(terms) >= MIN_MATCHED_TERMS]
    if len(parts) < 2:
        return []
    chosen = []
    for part in parts[1:]:
        lexical = score_documents(part, documents, coordinate=True)
        best = max(range(len(documents)), key=lambda i: (lexical[i] > 0 and scores[i] > 0, lexical[i], -i))
        if lexical[best] > 0 and scores[best] > 0:
            chosen.append(best)
    return chosen


def _answer_kinds(question: str, texts: Sequence[str], contexts: Sequence[str], terms: Sequence[Sequence[str]]
                  ) -> Iterator[list[bool]]:
    """For each kind of sentence an answer to ``question`` should be, whether each answer sentence is of that kind
    (``texts``, with their heading paths and analysed terms); one that is not keeps :data:`LEAD_IN_SHARE` of its
    score. The kinds of :func:`_kinds_asked`, and three that only an answer needs (a quote may be any of them)."""
    # A lead-in ("To build a statically linked version of jq, run:") introduces what follows; it answers nothing.
    yield [not text.rstrip().endswith((":", "：")) for text in texts]
    # A man page's NAME and SYNOPSIS lines ("split - split a file into pieces") share the command's name with
    # every question about it; they answer "What is split?", not what one of its options does.
    if not _ASKS_WHAT_IT_IS.match(question):
        yield [not _SYNOPSIS_SECTION.search(_section(context)) for context in contexts]
    # A question written in Chinese is answered in Chinese where the evidence says it in both languages (a man
    # page and its translation): "touch 的 --time 参数写成 mtime…" by the translated line, not the English one.
    if has_cjk(question) and any(has_cjk(text) for text in texts):
        yield [has_cjk(text) for text in texts]
    yield from _kinds_asked(question, texts, terms)


def _completing_kind(question: str) -> re.Pattern[str] | None:
    """What a quote's run of sentences should hold for ``question`` when its best sentence does not: a reason for
    "why…?", a default for a question that asks for one; ``None`` for other questions and for claims."""
    if not asks_a_question(question):
        return None
    if _ASKS_WHY.search(question):
        return _GIVES_REASON
    if _ASKS_FOR_DEFAULT.search(question):
        return _STATES_DEFAULT
    if _ASKS_FOR_AMOUNT.search(question):
        return _STATES_AMOUNT
    return _GIVES_WAY if _ASKS_HOW_TO.search(question) else None


def _kinds_asked(question: str, texts: Sequence[str], terms: Sequence[Sequence[str]], *, options: bool = True
                 ) -> Iterator[list[bool]]:
    """For each kind of sentence ``question`` asks for (an amount, a default, a reason, a replacement, and with
    ``options`` what an option does), whether each sentence (``texts``, with their analysed ``terms``) is of that
    kind: the quotes and the answer both prefer the sentence that says what was asked to one that only shares its
    words. The quotes leave the options to the answer: "usermod -G kicked my user out of their other groups; how
    do I add a group without removing the others?" names -G and is answered by -a, which only a quote can show."""
    asked = asks_a_question(question)  # a claim ("… raises the maximum number of …") asks for no amount
    # A number is what "how many", "how often" or "the smallest … length" asks for: a sentence without one states
    # no amount ("Normally Wget gives up on a URL…" against "The default is to retry 20 times").
    if asked and _ASKS_FOR_AMOUNT.search(question):
        yield [bool(_STATES_AMOUNT.search(text)) for text in texts]
    # "What is the default login shell?" and "…print by default?" are answered by the sentence that states a
    # default ("Default 16"), not by an example that happens to say "20 octets per line".
    # "Why did coreutils bring back the symlinks?" is answered by the sentence that gives a reason ("as this causes
    # problems with date display"), not by the one that only says they were removed; "why does file normally
    # refuse … unless I pass -s?" asks for the reason, not for the default it names.
    why = asked and _ASKS_WHY.search(question) is not None
    if asked and not why and _ASKS_FOR_DEFAULT.search(question):
        yield [bool(_STATES_DEFAULT.search(text)) for text in texts]
    if why:
        yield [bool(_GIVES_REASON.search(text)) for text in texts]
    # "What am I supposed to use instead?" is answered by the sentence that names the replacement ("superseded by
    # --control-list", "或使用 sort -u 而非 uniq"), not by the one that says the old way is deprecated.
    replacement = asked and _ASKS_FOR_REPLACEMENT.search(question) is not None
    if replacement:
        yield [bool(_GIVES_REPLACEMENT.search(text)) for text in texts]
    # A question about an option ("What does xargs -0 do?") is answered by what is said of that option (the line
    # of "-0, --null"), not by the page's description of xargs, which holds more of its words; "when I don't pass
    # -n" asks what happens without the option, so its line is not the answer; nor is the line of the option a
    # question wants a replacement for.
    if not options:
        return
    named = set() if replacement else _named_options(question)
    if named:
        yield [bool(named.intersection(sentence)) for sentence in terms]
    elif _ASKS_FOR_OPTION.search(question):
        # "Which option makes cp copy directories recursively?" is answered by an option's own line
        # ("-R, -r, --recursive  copy directories recursively"), not by the page's NAME line or a sentence
        # that happens to say "makes" and "options".
        yield [opens_with_option(text) for text in texts]


def _distinct(entries: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(entries))


def _without_answer_kind_words(text: str) -> str:
    """A Chinese question without its question words and the words that say what kind of answer is wanted
    (什么, 选项, 作用, …): "rm 的 -f 选项做什么" is answered by the option's line, not by a sentence that
    happens to say 选项 twice."""
    if _CJK_SPLIT.search(text) is None:
        return text
    for word in (*CJK_QUESTION_WORDS, *CJK_GATE_STOPWORDS):
        text = text.replace(word, " ")
    return text


def _without_cjk_question_words(text: str) -> str:
    if _CJK_SPLIT.search(text) is None:
        return text
    for word in CJK_QUESTION_WORDS:
        text = text.replace(word, " ")
    return text


def keyword_query(question: str) -> str:
    """The question's content words as they were written, stop and question words dropped, once each.

    In CJK text the question words (:data:`CJK_QUESTION_WORDS`: 什么, 哪个, 多久 …) are dropped too:
    a retriever that matches characters one by one would otherwise rank passages by "什" and "么".
    """
    words: dict[str, str] = {}
    for word in _SURFACE.findall(_without_cjk_question_words(question)):
        if word[0] in CJK_STOPWORDS and len(word) == 1:
            continue
        key = word.lower()
        if key in _STOPWORDS or key in words or _contracted_stopword(key):
            continue
        words[key] = word
    return " ".join(words.values()) or question.strip()


def _contracted_stopword(word: str) -> bool:
    """A contraction of stop words: "what's", "it's", "don't", "isn't" (a retriever would search "what",
    "don", "isn"); a possessive of a content word ("user's") is kept."""
    base, apostrophe, _ = word.replace("’", "'").partition("'")
    return bool(apostrophe) and (base in _STOPWORDS or word.endswith(("n't", "n’t")))


def latin_words(query: str) -> str:
    """The words of a mixed-script query that are not CJK, in order (``"mkdir -p"`` of
    ``"mkdir -p 选项 作用"``); empty when the query has no CJK or nothing else."""
    if _CJK_SPLIT.search(query) is None:
        return ""
    return " ".join(word for word in query.split() if _CJK_SPLIT.search(word) is None)


def choose_queries(task: QueryTask) -> list[str]:
    """``minQueries``–``maxQueries`` distinct queries: vocabulary entries ranked by BM25, or keywords."""
    if task.vocabulary:
        entries = _distinct(task.vocabulary)
        # An entry is a label, not a document: its length says nothing (b=0), or "backup interval" would beat
        # "backup retention period" for "how long do we keep the backups?" on "backup" alone; equal scores
        # keep the caller's vocabulary order.
        scores = score_documents(analyze(task.question), [analyze(entry) for entry in entries], b=0.0)
        order = sorted(range(len(entries)), key=lambda i: (-scores[i], i))
        chosen = order[:task.min_queries]
        best = scores[order[0]] if order else 0.0
        for index in order[task.min_queries:task.max_queries]:
            if scores[index] <= 0 or scores[index] < FOLLOW_UP_SHARE * best:
                break
            chosen.append(index)
        return [entries[index] for index in chosen]
    first = _bounded_query(keyword_query(task.question))
    queries = [first]
    words = first.split(" ")
    latin = latin_words(first)
    if task.max_queries > 1 and latin and latin != first:
        # A Chinese question names commands, options and products in Latin script ("mkdir 的 -p"):
        # those words alone find the passage that a character-by-character match of the rest drowns.
        queries.append(latin)
    elif task.max_queries > 1 and len(words) >= SUBJECT_QUERY_WORDS:
        # A long question (a claim) is ranked by its rarest words wherever they occur; the words of its
        # first half, usually its subject, alone find the documents about that subject which the matches
        # of the rest outrank (SciFact train: a relevant abstract among those shown 0.69 -> 0.74), and
        # when a third query is allowed, the second half (what is said of the subject) finds those
        # that the first half's matches outrank in turn (hybrid, the first 300 train claims: 0.76 -> 0.80).
        half = (len(words) + 1) // 2
        queries.append(" ".join(words[:half]))
        rest = " ".join(words[half:])
        if task.max_queries > 2 and rest not in queries:
            queries.append(rest)
    # More queries than one are asked for: adjacent pairs of content words, in question order.
    for left, right in itertools.pairwise(words):
        if len(queries) >= task.min_queries:
            break
        pair = f"{left} {right}"
        if pair not in queries:
            queries.append(pair)
    return queries


def _bounded_query(query: str) -> str:
    """``query`` within :data:`MAX_QUERY_CHARS`: cut after its last whole word that fits (a long question's
    keywords), or at the limit when one word is longer. Its halves, cut from it, fit too."""
    if len(query) <= MAX_QUERY_CHARS:
        return query
    cut = query[:MAX_QUERY_CHARS + 1].rsplit(" ", 1)[0] if " " in query[:MAX_QUERY_CHARS + 1] else ""
    return (cut or query[:MAX_QUERY_CHARS]).rstrip()


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
