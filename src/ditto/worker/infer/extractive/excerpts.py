"""The quotes (``choose_excerpts``, INF-3, WF-11).

Every passage is split into sentences (offsets kept, so a quote is an exact substring); each sentence is scored
against the question with BM25 over all sentences, plus the BM25 score of its passage among the passages (both
normalised to the best one), plus a small bonus for the passage's place in the given order (the retriever's
ranking, which knew the whole collection), plus, when sentence vectors are given, the cosine of sentence and
question. Passages past the gate (:mod:`.gate`) are quoted best first, a whole run of sentences
(:data:`MAX_RUN_SENTENCES`) where one sentence does not carry the answer, at most ``maxPerSource`` per source
and ``maxExcerpts`` in all; after the first, a sentence must reach :data:`FOLLOW_UP_SHARE` of the best."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from ....text import score_documents
from ....text.analysis import has_cjk, lone_digits
from ....text.passages import HEADING_SEPARATOR, heading_over
from ....text.sentences import (
    Sentence,
    ends_a_sentence,
    is_lead_in,
    opens_in_lower_case,
    split_sentences,
    starts_item,
)
from ..tasks import (
    Excerpt,
    ExcerptPassage,
    ExcerptTask,
)
from .gate import (
    MIN_MATCHED_TERMS,
    RELEVANCE_THRESHOLD,
    SEMANTIC_THRESHOLD,
    Origin,
    Relevance,
    _english_only,
    _origins,
    _semantically_close,
    gate_terms,
    page_titles,
    passage_relevance,
    subject_terms,
)
from .kinds import (
    _ASKS_FOR_A_LIMIT,
    _ASKS_FOR_AN_INSTRUCTION,
    _ASKS_FOR_OPTION,
    _ASKS_HOW_TO,
    _CONTINUES,
    _GIVES_WAY,
    _STATES_A_DURATION,
    _STATES_A_LIMIT,
    _amount_asked,
    _answering_sections,
    _asks_for_a_duration,
    _asks_for_a_status,
    _asks_for_amount,
    _completing_kind,
    _describes_an_option,
    _entry_tag,
    _in_status_section,
    _kinds_asked,
    _measured,
    _measured_cjk,
    _named_options,
    _named_status,
    _opens_option_entry,
    _opens_value_entry,
    _opens_with_tag_line,
    _statements_asked,
    _states_a_status,
    _states_amount,
    _without_answer_kind_words,
)
from .terms import _FIELD_LINES, _OPTION, _analyze_with_digits, _cut, _normalised, analyze, asks_a_question

__all__ = [
    "FOLLOW_UP_SHARE", "LEAD_IN_SHARE", "MAX_RUN_SENTENCES", "MIN_QUOTE_CHARS", "PASSAGE_WEIGHT", "RANK_WEIGHT",
    "SCRIPT_WEIGHT", "SEMANTIC_FOLLOW_UP", "ScoredSentence", "choose_excerpts", "excerpt_candidates",
    "reading_order", "semantic_sentences", "sentence_texts"
]

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
#: With embeddings, a further sentence this close to the question (cosine) is quoted even when it matches
#: too few of the question's words to pass :data:`FOLLOW_UP_SHARE`: a second abstract that says the same in
#: other words is evidence too. SciFact train (809 claims, hybrid): cites 0.742 without, 0.755 at 0.7,
#: 0.780 at 0.6, 0.786 at 0.5 (quotes per brief 4.0, 4.2, 4.7, 5.2); no real-documents train question
#: changed from 0.7 down to 0.5.
SEMANTIC_FOLLOW_UP: Final = 0.6
#: A quote is a run of at most this many whole sentences.
MAX_RUN_SENTENCES: Final = 3
#: A sentence after a run that holds at least this many of the question's terms joins it even when they are
#: terms the run already holds: the answer goes on there. The studied real-documents sets, replayed: 1 quoted the
#: answer for 16 more questions (mean quote 171 → 187 characters) but adds parallel facts about other things;
#: 2 for 10 more (→ 179 characters); 3 for 3 more. No unanswerable question changed.
CONTINUING_TERMS: Final = 2
#: ... unless it repeats the run's last sentence: sharing this share of their terms (Jaccard), it is a parallel fact
#: ("Backups are kept alpha. Backups are kept bravo.") or a caveat to quote on its own, not a continuation. Replayed,
#: 0.4 to 0.6 change nothing on the real-documents sets.
PARALLEL_SHARE: Final = 0.4
#: A run shorter than this takes the next sentence along (a tag or a lead-in says nothing alone).
MIN_QUOTE_CHARS: Final = 20


@dataclass(frozen=True, slots=True)
class ScoredSentence:
    """A sentence of passage ``passage``: its BM25 share of the best sentence's, and its combined score."""

    passage: int
    sentence: Sentence
    lexical: float
    score: float
    #: Its cosine with the question (0 without embeddings).
    similarity: float = 0.0
    #: The question asks for a kind of answer (a default, a reason, …) and the sentence is of it (see
    #: :func:`~.kinds._kinds_asked`): it answers with few of the question's words.
    of_kind: bool = False


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
    # A block under a lead-in ("To build with TLS support, … run:" over "% make BUILD_TLS=yes") says what the
    # lead-in says it is for: for a question that asks how to do something, it is read with it, as its own words.
    # (For any question, every item of a list under "The exit status values are:" would answer every question
    # about exit statuses, of whichever program.)
    instruction = _ASKS_FOR_AN_INSTRUCTION.search(task.question) is not None
    how_to = instruction or _ASKS_HOW_TO.search(task.question) is not None
    led = [_led_by(texts, owners, position) if how_to else "" for position in range(len(owners))]
    leads = [(_introduced_by(task.passages[index].context) if how_to else "") or led[position]
             for position, (index, _) in enumerate(owners)]
    own = [terms[position] + analyze(lead) if lead else terms[position] for position, lead in enumerate(leads)]
    # An option's entry is about its option throughout: "The default is set to cslip." is said of "[-p proto]",
    # the tag its entry opens with, and answers "which protocol without -p?" as the tag's own line does.
    tags = [_entry_tag(passage.text) for passage in task.passages]
    own = [found + analyze(tags[index]) if tags[index] and span.start > 0 else found
           for found, (index, span) in zip(own, owners, strict=True)]
    plain = score_documents(question, own if read is analyze
                            else [found + lone_digits(text) for found, text in zip(own, texts, strict=True)])
    # Ranked with where it sits (an option's line rarely names its command: "rm" is in "RM(1) › 选项"), but
    # a sentence sharing nothing with the question but its heading is never evidence.
    contexts = [heading_over(lead, task.passages[index].context) if lead else task.passages[index].context
                for (index, _), lead in zip(owners, led, strict=True)]
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
    # Of the kind asked, a sentence answers with few of the question's words (see :func:`choose_excerpts`); any
    # number is not enough for that ("Nightly backups are kept for 30 days." for how long audit logs are kept).
    kinds = list(_kinds_asked(task.question, judged, terms, options=False, amounts=False))
    of_kind = [all(kind[position] for kind in kinds) for position in range(len(texts))] if kinds else None
    shares = [1.0] * len(texts)
    for kind in (*_amount_asked(task.question, judged), *kinds):
        shares = [share if fits else share * LEAD_IN_SHARE for share, fits in zip(shares, kind, strict=True)]
    if instruction:
        shares = [share if lead or _GIVES_WAY.search(text) else share * LEAD_IN_SHARE
                  for share, lead, text in zip(shares, leads, texts, strict=True)]
    # "It returned 101. What went wrong?" is answered by the entry of status 101 ("101  Action not allowed. The
    # requested action will not be performed because …"), every sentence of it, and by what else says 101.
    status = _named_status(task.question)
    if status:
        shares = [share if status in found or status in lone_digits(text) else share * LEAD_IN_SHARE
                  for share, found, text in zip(shares, own, texts, strict=True)]
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
        candidates.append(ScoredSentence(index, span, sentence_norm[position], score * shares[position], similarity,
                                         of_kind is not None and of_kind[position]))
    # Best first; ties keep passage then sentence order (deterministic, and the order a reader met them).
    candidates.sort(key=lambda c: (-c.score, c.passage, c.sentence.start))
    return candidates


def _introduced_by(context: str | None) -> str:
    """The lead-in a passage sits under, when its heading path ends in one (a paragraph that ends in a colon,
    kept whole by the passage cutter); ``""`` otherwise."""
    last = (context or "").rsplit(HEADING_SEPARATOR, 1)[-1].strip()
    return last if is_lead_in(last) else ""


def _led_by(texts: Sequence[str], owners: Sequence[tuple[int, Sentence]], position: int) -> str:
    """The lead-in paragraph sentence ``position`` sits under in its own passage (the passage cutter keeps a lead-in
    and the one block it introduces together): its sentences before this one, when the last of them ends in a colon
    ("Depending upon … Run this command, as yourself:" over "chmod g-w ~/"); ``""`` otherwise."""
    if position == 0 or owners[position - 1][0] != owners[position][0] \
            or not is_lead_in(texts[position - 1]) or is_lead_in(texts[position]):
        return ""
    first = position - 1
    while first > 0 and owners[first - 1][0] == owners[position][0]:
        first -= 1
    return " ".join(texts[first:position])


def _with_context(passage: ExcerptPassage) -> str:
    """The passage as a whole is judged together with where it sits (its headings); only its own
    sentences are ever quoted."""
    return heading_over(passage.text, passage.context)


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


def _sentence_run(text: str, spans: Sequence[Sentence], index: int, wanted: set[str], limit: int,
                  question: str = "") -> tuple[int, int]:
    """The smallest run of whole sentences around ``spans[index]`` that carries what it can of the
    question: a neighbour joins when it holds question terms the run lacks, or is the first of the kind
    ``question`` asks for (:func:`_completing_kind`: "Why…?" and "This prevents problems, because…"), or when the run is
    too short to say anything (an option tag, "Exit status:") or only a record's labelled fields; at most
    :data:`MAX_RUN_SENTENCES`, within ``limit`` characters, and a sentence that only finishes the run's last
    (:data:`_CONTINUES`: "Defaults to /home.") joins it. An option's description (a passage that opens
    with its tag) or a value's entry ("101    Action not allowed. …") of at most that many sentences is quoted
    whole: "the default is “aes256-ctr”" ends what ``-Z cipher`` says, sharing no word with a question about it.
    A sentence that points back (:data:`_REFERS_BACK`: "It exits with zero status if …") is quoted with the one
    it points to, as far as the run may grow, and the sentence after the run joins it while it still speaks of the
    question (:data:`CONTINUING_TERMS`) without repeating the run's last sentence (:data:`PARALLEL_SHARE`). Returns
    the run's offsets."""
    if spans and _opens_entry(text) and len(spans) <= MAX_RUN_SENTENCES and spans[-1].end - spans[0].start <= limit:
        return spans[0].start, spans[-1].end
    low = high = index
    covered = set(analyze(text[spans[index].start:spans[index].end])) & wanted

    kind = _completing_kind(question)

    def of_kind(position: int) -> bool:
        return kind is not None and kind.search(text, spans[position].start, spans[position].end) is not None

    kind_held = kind is None or of_kind(index)
    while low > 0 and high - low + 1 < MAX_RUN_SENTENCES and spans[high].end - spans[low - 1].start <= limit and (
            (_leads_in(text, spans[low - 1]) and not _leads_in(text, spans[low]))
            or (opens_in_lower_case(text[spans[low].start:spans[low].end])
                and not ends_a_sentence(text[spans[low - 1].start:spans[low - 1].end]))):
        # "% make MALLOC=libc" is quoted with what it is for ("To force compiling against libc malloc, use:"), and
        # "to view the default directories used by GnuPG." with the start of its sentence ("You may run" /
        # "gpgconf --list-dirs").
        low -= 1
        covered |= set(analyze(text[spans[low].start:spans[low].end])) & wanted
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
        # An entry's first sentence is its tag and what it is for ("-S, --split list  Specify which columns use to
        # split …"); its details (the values it takes, its default) follow in the next, which the run takes along.
        short = spans[high].end - spans[low].start < MIN_QUOTE_CHARS or _leads_in(text, spans[high]) \
            or _FIELD_LINES.fullmatch(text, spans[low].start, spans[high].end) is not None \
            or (low == high == 0 and _opens_entry(text))
        if gain == 0 and not (short and neighbour == high + 1):
            # The sentence after the run, still about the question (it holds :data:`CONTINUING_TERMS` of its terms),
            # is where an answer usually goes on ("The third field, the users field, is a logic list of users, or a
            # UNIX group, or a netgroup …" and then "Group names are preceded by a '%' symbol, while netgroup names
            # …"); one shared word is often a parallel fact about something else ("Audit logs are kept for a year.").
            following = high + 1
            if following >= len(spans) or spans[following].end - spans[low].start > limit:
                break
            if has_cjk(text[spans[following].start:spans[following].end]):
                break  # one Chinese character is a term: two shared ones say nothing
            said = set(analyze(text[spans[following].start:spans[following].end]))
            before = set(analyze(text[spans[high].start:spans[high].end]))
            if len(wanted & said) < CONTINUING_TERMS or len(said & before) >= PARALLEL_SHARE * len(said | before):
                break
            neighbour = following
        covered |= set(analyze(text[spans[neighbour].start:spans[neighbour].end])) & wanted
        kind_held = kind_held or of_kind(neighbour)
        low, high = min(low, neighbour), max(high, neighbour)
    if high + 1 < len(spans) and _CONTINUES.match(text, spans[high + 1].start) is not None \
            and spans[high + 1].end - spans[low].start <= limit:
        high += 1  # "Defaults to 1000 - 59999." finishes what the run says
    # A sentence that opens by pointing back ("It exits with zero status if the reflog exists …", "Thus you cannot
    # change any NIS or LDAP group.", "One reason for this is …") is read with the one it points to: the run takes
    # the run's first sentence's antecedent, and the next sentence when it points back at the run.
    if high - low + 1 < MAX_RUN_SENTENCES and low > 0 and _REFERS_BACK.match(text, spans[low].start) \
            and spans[high].end - spans[low - 1].start <= limit:
        low -= 1
    if high - low + 1 < MAX_RUN_SENTENCES and high + 1 < len(spans) \
            and _REFERS_BACK.match(text, spans[high + 1].start) is not None \
            and spans[high + 1].end - spans[low].start <= limit:
        high += 1
    if any(_leads_in(text, spans[position]) for position in range(low, high + 1)):
        # A lead-in's list is what it says: "… the following algorithms in libcrypto have been disabled:" with every
        # item ("- RC5", "- MDC2", "- IDEA"), as far as the quote may run.
        while high + 1 < len(spans) and starts_item("", text[spans[high + 1].start:spans[high + 1].end]) \
                and spans[high + 1].end - spans[low].start <= limit:
            high += 1
    return spans[low].start, spans[high].end


def _opens_entry(text: str) -> bool:
    """Whether ``text`` is the entry of an option, a tagged line or a value (its first line names what it is about)."""
    return _opens_option_entry(text) or _opens_with_tag_line(text) or _opens_value_entry(text)


#: A sentence that opens by pointing back at the one before it: "It exits with zero status if …", "This is to keep
#: the output compatible …", "Otherwise, it executes …", "Thus you cannot …", "For example, this would also match …".
_REFERS_BACK: Final = re.compile(
    r"\s*(?:It|This|That|These|Those|They|Otherwise|Thus|Hence|Therefore|Such|In\s+(?:this|that|such\s+a)\s+case"
    r"|(?:One|The|A|Another)\s+reason\s+for\s+(?:this|that)|For\s+(?:this|that)\s+reason|Because\s+of\s+(?:this|that)"
    r"|As\s+a\s+(?:result|consequence)|To\s+do\s+(?:this|so)|For\s+(?:example|instance))\b"
    r"(?!\s+(?:is|are)\s+(?:also\s+)?(?:possible|recommended|important|useful)\b)"
    # "This page last modified on …", "This document describes …": about the page itself, not the sentence before.
    r"(?!\s+(?:page|document|manual|article|web\s*site|wiki)\b)")


def _leads_in(text: str, sentence: Sentence) -> bool:
    """Whether ``sentence`` of ``text`` is a lead-in (:func:`~ditto.text.sentences.is_lead_in`)."""
    return is_lead_in(text[sentence.start:sentence.end])


def _holding_the_claims_names(question: str, judged: Sequence[str], relevance: Sequence[Relevance]) -> set[int]:
    """The passages (as judged, with their headings, and their ``relevance``) that hold every name a claim to check
    is about (:func:`~.gate.subject_terms`: "DESMOND", "scFv", "NR5A2") and another of its words; none for a
    question, or a claim that names none.

    Such a passage, sharing another of the claim's words too (:data:`~.gate.MIN_MATCHED_TERMS`), is about the
    claim's subject even when it shares little else with the claim's words: "Tonic signaling from the scFv
    prevents constitutive stimulation." and the abstract of the study of scFv tonic signaling, which reports its
    outcomes in other words (SciFact train: a relevant abstract cited 0.808 → 0.811; test 0.787 → 0.783, one
    claim; no real-documents question changed)."""
    if asks_a_question(question):
        return set()
    names = subject_terms(question)
    if not names:
        return set()
    return {index for index, (text, judged_relevance) in enumerate(zip(judged, relevance, strict=True))
            if judged_relevance.matched >= min(MIN_MATCHED_TERMS, judged_relevance.terms)
            and set(names) <= set(gate_terms(text))}


def reading_order(question: str, passages: Sequence[ExcerptPassage]) -> list[int]:
    """The indices of ``passages`` (given best first by a retriever) in the order this model would quote from
    them: by each passage's best sentence (:func:`excerpt_candidates`, lexical only), then the passages with no
    sentence sharing a term with the question, as given; a passage of a section that cannot answer the question
    (a man page's NAME line but for "what is …?", its SYNOPSIS, its SEE ALSO list: :func:`choose_excerpts`
    quotes none of them) comes after every other.

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
    answering = _answering_sections(question, passages)
    return sorted(range(len(passages)),
                  key=lambda index: (not answering[index], index not in best, -best.get(index, 0.0), index))


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
    lead_ins = [_lead_in(passage.text, span)
                for passage, spans in zip(task.passages, sentence_spans, strict=True) for span in spans]
    similarities = _english_only(task, similarities, counts)
    candidates = excerpt_candidates(task, passage_weight=passage_weight, rank_weight=rank_weight,
                                    similarities=similarities, embedding_weight=embedding_weight)
    if not candidates:
        return []
    judged = [_with_context(passage) for passage in task.passages]
    origins = _origins(task.passages, task.question)
    titles = page_titles(task.passages)
    relevance = passage_relevance(task.question, judged, origins, titles)
    # A vocabulary query chosen for the question says it in the index's words: what answers it answers the question.
    restated = [passage_relevance(text, judged, origins, titles) for text in task.restatements or ()]
    close = _semantically_close(similarities, counts, semantic_threshold, lead_ins)
    # The exit statuses of the page a question names answer its question for an exit status, whatever else the
    # question says of the asker's script ("My provisioning script runs `dpkg-query -W somepkg` … Which exit code
    # should it expect?" and dpkg-query(1)'s EXIT STATUS entries).
    statuses = _statuses_of_the_named_page(task, origins)
    named = _holding_the_claims_names(task.question, judged, relevance)
    candidates = [c for c in candidates if relevance[c.passage].passes(relevance_threshold)
                  or any(other[c.passage].passes(relevance_threshold) for other in restated)
                  or (c.passage in close and not relevance[c.passage].subject_missing)
                  or (c.passage in statuses and not relevance[c.passage].subject_missing)
                  or c.passage in named]
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
    # The entry of the exit status the question says it got is what that status means, however few of the
    # question's words it shares ("101  Action not allowed. …" for "it returned 101. What went wrong?").
    status = _named_status(task.question)
    entries = {index for index, passage in enumerate(task.passages) if status and _entry_tag(passage.text) == status}
    entries |= statuses  # each exit status of the page asked about is one possible answer
    for rank, candidate, first in _sources_first(candidates, task.passages):
        if len(chosen) >= task.max_excerpts:
            break
        close_enough = semantic_threshold if first else semantic_follow_up
        if chosen and candidate.passage not in entries \
                and (candidate.score < FOLLOW_UP_SHARE * best
                     or (candidate.lexical < FOLLOW_UP_SHARE and not candidate.of_kind)) \
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


def _statuses_of_the_named_page(task: ExcerptTask, origins: Sequence[Origin]) -> set[int]:
    """For a question that asks for an exit status, the passages in a section of exit statuses of a manual page whose
    title the question writes (every term of ``dpkg-query(1)``)."""
    if not _asks_for_a_status(task.question):
        return set()
    asked = set(gate_terms(task.question, question=True))
    return {index for index, (passage, origin) in enumerate(zip(task.passages, origins, strict=True))
            if origin.titles and origin.titles <= asked and _in_status_section(passage)}


def _states_kind_asked(task: ExcerptTask, candidates: Sequence[ScoredSentence], spans: Sequence[Sequence[Sentence]],
                       wanted: set[str], semantic_follow_up: float) -> bool:
    """Whether the ``candidates`` (best first, past the relevance gate) can give the kind of answer the question
    asks for: an amount (:func:`_asks_for_amount`; an exit status, a limit or a duration as one) stated by a quotable
    sentence or the one after it; a default, a file, a permission mode, a variable or a signal
    (:data:`~.kinds._STATEMENTS_ASKED`) said by one; an option (:data:`_ASKS_FOR_OPTION`, none named) by a passage
    that describes one (:func:`_describes_an_option`) or a sentence that names one. A page about the question's
    subject that holds no such thing does not answer it ("What is the maximum number of lines an fstab file may
    have?", "Which userdel option deletes the mail spool?" over pages that only mention userdel). Any other
    question: ``True``."""
    if not asks_a_question(task.question):
        return True
    best = candidates[0].score
    # Each quotable sentence with the one after it (an amount often ends the description: "… Defaults to 6.").
    quotable = [(c, _with_next(task.passages[c.passage].text, spans[c.passage], c.sentence)) for c in candidates
                if c.score >= FOLLOW_UP_SHARE * best or c.similarity >= semantic_follow_up]
    if _asks_for_amount(task.question):
        # The amount of the thing asked: "What exit status does mkswap return …?" is not answered by "Linux allows
        # 32 swap areas", which states an amount of something else; the passage must speak of what is measured.
        measured = _measured(task.question)
        units = _measured_cjk(task.question)
        judged = [_with_context(p) for p in task.passages]
        speaks = [(not measured or bool(measured & set(analyze(text))))
                  and (not units or any(unit in text for unit in units)) for text in judged]
        # An exit status is stated as one: in the page's section of exit statuses, or in so many words ("exits with
        # status 2", "The exit status returned by fallocate is 0 on success"), not by "badblocks will exit after the
        # first pass. Default is 0".
        status = _asks_for_a_status(task.question)
        # The entry of a status's number speaks of that status without the word ("2      if the detection is not
        # possible").
        speaks = [speaks[index] or (status and _opens_value_entry(passage.text))
                  for index, passage in enumerate(task.passages)]
        # A limit ("the longest", "at most", 最多, 至少) is stated as one ("up to 255", "must not exceed", "超时"), not
        # by any amount of the thing ("从三个字符串派生三个…" is no longest name), and of what was asked: "The maximum
        # verbosity level is 3" is no maximum number of files.
        limit = _ASKS_FOR_A_LIMIT.search(task.question) is not None
        # How long something waits or keeps is a duration: "5 seconds", not the "1.1/1.2" of old discs' versions.
        duration = _asks_for_a_duration(task.question)
        # A lead-in's number counts what it introduces ("the following three table declarations …:"), not what
        # was asked.
        if not any(speaks[c.passage] and not _lead_in(task.passages[c.passage].text, c.sentence)
                   and _states_amount(text, wanted, task.question)
                   and (not status or _states_a_status(task.passages[c.passage], text))
                   and (not limit or _states_the_limit(text, measured))
                   and (not duration or _STATES_A_DURATION.search(text) is not None) for c, text in quotable):
            return False
    # A default, a file, a permission mode, … is given by a sentence that says one, or the one after it: a page that
    # only describes -F and -T does not say what happens without them.
    if not all(any(statement.search(text) for _, text in quotable) for statement in _statements_asked(task.question)):
        return False
    if _ASKS_FOR_OPTION.search(task.question) and not _named_options(task.question):
        # The option's own entry, or a sentence that names one ("如果在命令行上指定了 -m 选项, Uuencode 就改用 base64").
        return any(_describes_an_option(task.passages[c.passage])
                   or _OPTION.search(_with_next(task.passages[c.passage].text, spans[c.passage], c.sentence))
                   for c in candidates)
    return True


def _states_the_limit(text: str, measured: set[str]) -> bool:
    """Whether ``text`` states a bound (:data:`~.kinds._STATES_A_LIMIT`) and, when the question says what it measures
    (``measured``, :func:`~.kinds._measured`), writes it; a setting's name counts by its words ("The default setting
    for SQLITE_MAX_COLUMN is 2000." states a maximum number of columns)."""
    words = text.replace("_", " ")
    return _STATES_A_LIMIT.search(words) is not None and (not measured or not measured.isdisjoint(analyze(words)))


def _lead_in(text: str, sentence: Sentence) -> bool:
    """Whether ``sentence`` of ``text`` introduces what follows it (it ends in a colon)."""
    return text[sentence.start:sentence.end].rstrip().endswith((":", "："))


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
