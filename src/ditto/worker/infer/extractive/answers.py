"""The brief's short answer (WF-11): sentences taken from the quotes, each marked with its evidence ids,
the one that says what was asked first (:mod:`.kinds`), at most three."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from ....text import score_documents
from ....text.analysis import has_cjk
from ....text.sentences import Sentence, ends_a_sentence, is_lead_in, opens_in_lower_case, split_sentences
from ..tasks import (
    MAX_ANSWER_SENTENCES,
    MAX_QUOTE_CHARS,
    AnswerSentence,
    AnswerTask,
)
from .excerpts import LEAD_IN_SHARE, MAX_RUN_SENTENCES
from .gate import MIN_MATCHED_TERMS
from .kinds import _CONTINUES, _answer_kinds, _completing_kind, _opens_option_entry, _opens_with_tag_line
from .terms import _CLAUSE, _FIELD_LINES, _cut, _normalised, analyze, asks_a_question

__all__ = ["ANSWER_EMBEDDING_WEIGHT", "ANSWER_FOLLOW_UP_SHARE", "ANSWER_QUOTE_CHARS", "ANSWER_RANK_WEIGHT",
           "LABEL_CHARS", "answer_question", "answer_sentences"]
#: A further sentence of the answer must score at least this share of the first: at 0.5 one answer
#: sentence in five came from a file that does not answer the question, at 0.7 one in eight, with the
#: first sentence unchanged (chosen on the real-documents train questions: bench/research_realdocs.py
#: --tune-answer).
ANSWER_FOLLOW_UP_SHARE: Final = 0.7
#: With embeddings, how much a sentence's cosine with the question adds to its lexical score (normalised to
#: the best) when the answer is chosen from the evidence. Chosen on train: SciFact (631 claims with a
#: relevant abstract quoted; the answer's first sentence from one) 0.602 without, 0.648 at 1, 0.700 at 2,
#: 0.740 at 4, 0.761 at 8; the real-documents questions (first sentence holds the answer) 24/29 without,
#: 26 at 2, 27 at 4, 25 at 8.
ANSWER_EMBEDDING_WEIGHT: Final = 4.0
#: For a question in Chinese (Japanese, Korean), which the local embedding model does not read, how much the
#: order the quotes were chosen in adds to a sentence's score (1 for the first evidence item, falling to 0 for
#: the last): character pairs match paraphrase poorly, and the choice of quotes weighed more than the words (the
#: passage, the retriever's rank, the kind asked). On every studied real-documents set (220 Chinese answerable
#: questions) the answer's first sentence held the answer for 163 without, 167 at 0.3, 170 at 0.6, 171 at 1 and
#: 172 at 2, any of its sentences for 173, 179, 181, 181 and 179; for English questions, whose cosines already
#: weigh 4, it moved nothing, so English keeps its order by words and cosines.
ANSWER_RANK_WEIGHT: Final = 1.0
#: A quote's run of at most this many characters is one answer entry (see :func:`_quote_run`). On the
#: real-documents questions of bench/research_realdocs.py (the third to sixth and the eighth set, 200 answerable
#: questions) the answer's first entry held the answer for 91 with the sentences apart, 99 at 200 characters, 107
#: at 300 and 450, 106 at 1000; the first quote held it for 104.
ANSWER_QUOTE_CHARS: Final = 300
#: A line of its own shorter than this, over more text, is a label in an answer ("The fifth field (fs_freq).").
LABEL_CHARS: Final = 40


def answer_sentences(task: AnswerTask) -> list[tuple[int, str]]:
    """Every sentence of every evidence quote as ``(evidence index, text)``: what :func:`answer_question`
    chooses from, in the order its ``similarities`` must follow. A quote of an option's description or a
    definition's entry (it opens with the option's tag or the term, at most :data:`MAX_RUN_SENTENCES`
    sentences) is one entry, whole; so is a short quote's run (:func:`_quote_run`); a record's labelled fields
    and the sentence after them are one entry."""
    units: list[tuple[int, str]] = []
    for number, item in enumerate(task.evidence):
        spans = split_sentences(item.quote)
        if spans and len(spans) <= MAX_RUN_SENTENCES and (_opens_option_entry(item.quote)
                                                          or _opens_with_tag_line(item.quote)):
            # An option's description is one answer: "-Z cipher  Specifies the cipher … The default is
            # “aes256-ctr”." says what -Z is for and what it defaults to only as a whole.
            whole = _without_bullet(item.quote, Sentence(spans[0].start, spans[-1].end))
            units.append((number, _cut(item.quote, whole, MAX_QUOTE_CHARS)))
            continue
        run = _quote_run(task.question, item.quote, spans)
        entries = _joined_units(item.quote, spans) if run is None else [
            *_joined_units(item.quote, [span for span in spans if span.end <= run.start]), run,
            *_joined_units(item.quote, [span for span in spans if span.start >= run.end])]
        units.extend((number, _cut(item.quote, _without_bullet(item.quote, span), MAX_QUOTE_CHARS))
                     for span in entries)
    return units


def _quote_run(question: str, quote: str, spans: Sequence[Sentence]) -> Sentence | None:
    """The sentences of a short quote (at most :data:`MAX_RUN_SENTENCES`, :data:`ANSWER_QUOTE_CHARS`) that say
    something of the question, as one span, when they are two or more: from the first to the last sentence that
    shares a term with the question or is the first of the kind it asks for (a default, an amount, a way). The
    quote is the run chosen to carry what was asked ("dmesg can fail reporting permission denied error." with
    "This is usually caused by dmesg_restrict kernel setting"), and one of its sentences alone loses it; a
    sentence at its ends about something else ("The office opens at nine.") stays apart. ``None`` otherwise."""
    if not 2 <= len(spans) <= MAX_RUN_SENTENCES or spans[-1].end - spans[0].start > ANSWER_QUOTE_CHARS:
        return None
    wanted = set(analyze(question))
    kind = _completing_kind(question)
    says, held = [], False
    for span in spans:
        of_kind = kind is not None and kind.search(quote, span.start, span.end) is not None
        shares = bool(wanted.intersection(analyze(quote[span.start:span.end])))
        says.append(shares or (of_kind and not held))  # the first of the kind asked completes the run
        held = held or of_kind
    if says.count(True) < 2:
        return None
    first, last = says.index(True), len(says) - 1 - says[::-1].index(True)
    return Sentence(spans[first].start, spans[last].end)


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
    sentence that only finishes the one before (:data:`_CONTINUES`: "Defaults to /bin/bash.") or goes on from it
    (:func:`_finishes`: a lead-in's command, a sentence set around a command) joined to it: alone it says nothing
    of what."""
    joined: list[Sentence] = []
    index = 0
    while index < len(spans):
        span = spans[index]
        if index + 1 < len(spans) and (_FIELD_LINES.fullmatch(text, span.start, span.end) is not None
                                       or _label_line(text, span)):
            span = Sentence(span.start, spans[index + 1].end)
            index += 1
        if joined and (_CONTINUES.match(text, span.start) is not None or _finishes(text, joined[-1], span)):
            joined[-1] = Sentence(joined[-1].start, span.end)
        else:
            joined.append(span)
        index += 1
    return joined


def _finishes(text: str, before: Sentence, span: Sentence) -> bool:
    """Whether ``span`` goes on from ``before``: after a lead-in ("… use:" over "% make MALLOC=libc"), or opening in
    lower case after a sentence that does not end ("You may run" / "gpgconf --list-dirs" / "to view …")."""
    said = text[before.start:before.end]
    return is_lead_in(said) or (opens_in_lower_case(text[span.start:span.end]) and not ends_a_sentence(said))


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
    thing is; a sentence that is itself a question (a FAQ's question line) is picked only when nothing else is;
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
    if has_cjk(task.question):
        count = len(task.evidence)
        scores = [score + ANSWER_RANK_WEIGHT * (1 - number / count) if score > 0 else score
                  for score, (number, _) in zip(scores, sentences, strict=True)]
    texts = [text for _, text in sentences]
    for kind in _answer_kinds(task.question, texts, contexts, documents):
        scores = [score if fits else score * LEAD_IN_SHARE for score, fits in zip(scores, kind, strict=True)]
    # A question in the evidence (a FAQ's "How to get rid off annoying beeps for ambiguous completions?") is the
    # heading of its answer, not one: it answers only when nothing else can.
    asking = [text.rstrip().endswith(("?", "？")) for text in texts]
    if not all(asking):
        scores = [0.0 if question_line else score for score, question_line in zip(scores, asking, strict=True)]
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
