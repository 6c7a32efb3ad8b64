"""The built-in model's semantic reading (INF-3, WF-11; issues 17 and 18): with each sentence's cosine to the
question, a passage that says the question in other words passes the relevance gate and is quoted, a
close further sentence joins the quotes, and Chinese text is left to the lexical rules."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ditto.worker.infer import (
    ExcerptPassage,
    ExcerptTask,
    QueryTask,
    create_extractive_provider,
    create_infer_client,
    response_format,
    task_messages,
)
from ditto.worker.infer.extractive import (
    ANSWER_EMBEDDING_WEIGHT,
    SEMANTIC_FOLLOW_UP,
    SEMANTIC_THRESHOLD,
    analyze,
    answer_question,
    answer_sentences,
    choose_excerpts,
    choose_queries,
    keyword_query,
    sentence_texts,
    split_sentences,
)
from ditto.worker.infer.tasks import AnswerEvidence, AnswerTask
from ditto.workflows.research.entries import ENTRY_SPECS

P = ExcerptPassage
QUESTION = "Does smoking raise the risk of lung cancer?"
PARAPHRASE = "Tobacco use markedly increases the likelihood of developing lung carcinoma."


def _one_per_sentence(task: ExcerptTask, values: dict[str, float]) -> list[float]:
    """Cosines in sentence order: ``values`` by sentence text, 0 for the rest."""
    return [values.get(text, 0.0) for text in sentence_texts(task)]


def test_a_paraphrase_passes_the_gate_only_when_its_meaning_is_close() -> None:
    """WF-11: one shared word ("lung") is never enough for the lexical gate; a sentence whose cosine reaches
    the semantic threshold makes its passage evidence, one just below it does not."""
    task = ExcerptTask(question=QUESTION, passages=(P(source_id="a", text=PARAPHRASE),
                                                    P(source_id="b", text="The lung is an organ of the chest.")))
    assert choose_excerpts(task) == []
    close = _one_per_sentence(task, {PARAPHRASE: SEMANTIC_THRESHOLD, "The lung is an organ of the chest.": 0.3})
    assert [(e.source_id, e.quote) for e in choose_excerpts(task, similarities=close)] == [("a", PARAPHRASE)]
    below = _one_per_sentence(task, {PARAPHRASE: SEMANTIC_THRESHOLD - 0.01})
    assert choose_excerpts(task, similarities=below) == []


def test_a_close_lead_in_does_not_open_the_gate() -> None:
    """Issue 17 (WF-11): a lead-in ("Note that further rsync updates should be done with:") is close to any
    question about its subject and says nothing of it: its cosine does not make its passage evidence, while the
    same cosine on a sentence that says something does."""
    question = "How do I make rsync delete files on the receiving side that no longer exist on the sender?"
    lead_in = "Note that further rsync updates should be done with:"
    task = ExcerptTask(question=question, passages=(P(source_id="a", text=lead_in),))
    assert choose_excerpts(task, similarities=[SEMANTIC_THRESHOLD + 0.01]) == []
    stated = "Later rsync runs prune stale copies on the far end."
    task = ExcerptTask(question=question, passages=(P(source_id="a", text=stated),))
    assert choose_excerpts(task) == []
    assert [e.quote for e in choose_excerpts(task, similarities=[SEMANTIC_THRESHOLD + 0.01])] == [stated]


def test_a_close_sentence_sharing_no_word_is_still_never_quoted() -> None:
    """WF-11: however close its meaning, a sentence that shares no meaningful term is not evidence."""
    text = "Tobacco markedly increases the likelihood of carcinoma."
    task = ExcerptTask(question=QUESTION, passages=(P(source_id="a", text=text),))
    assert choose_excerpts(task, similarities=[0.99]) == []


def test_chinese_text_is_left_to_the_lexical_rules() -> None:
    """Issue 17: the local model reads English only (to it Chinese sentences look alike), so cosines of a Chinese
    question or of a Chinese passage never open the gate."""
    chinese = ExcerptTask(question="世界杯足球赛冠军是哪个国家？",
                          passages=(P(source_id="a", text="显示国家的日期和时间。"),))
    assert choose_excerpts(chinese, similarities=[0.99]) == []
    mixed = ExcerptTask(question=QUESTION, passages=(P(source_id="a", text="吸烟 lung 的风险。"),
                                                     P(source_id="b", text=PARAPHRASE)))
    sims = _one_per_sentence(mixed, {"吸烟 lung 的风险。": 0.99, PARAPHRASE: 0.2})
    assert choose_excerpts(mixed, similarities=sims) == []


def test_a_close_further_sentence_joins_the_quotes() -> None:
    """Issue 17: after the best quote, a sentence that matches few of the question's words joins only when its
    meaning is close (SciFact: a second abstract saying the same in other words is evidence too): a source's
    first quote as close as the semantic gate asks, a source's second one at the follow-up cosine."""
    best = "Smoking raises the risk of lung cancer in adults."
    other = "Tobacco use markedly increases lung carcinoma incidence."
    task = ExcerptTask(question=QUESTION, passages=(P(source_id="a", text=best), P(source_id="b", text=other)),
                       max_excerpts=4)
    lexical = choose_excerpts(task)
    assert [e.source_id for e in lexical] == ["a"]
    # Below the semantic gate, b is not about the question at all.
    far = _one_per_sentence(task, {best: 0.9, other: SEMANTIC_THRESHOLD - 0.05})
    assert [e.source_id for e in choose_excerpts(task, similarities=far)] == ["a"]
    # At the gate, b's best sentence is its first quote.
    close = _one_per_sentence(task, {best: 0.9, other: SEMANTIC_THRESHOLD})
    assert [e.source_id for e in choose_excerpts(task, similarities=close)] == ["a", "b"]
    # The follow-up rule never opens the gate: with the semantic gate shut, b stays out however close.
    assert [e.source_id for e in choose_excerpts(task, similarities=close, semantic_threshold=1.01)] == ["a"]


def test_a_sources_second_quote_needs_the_follow_up_cosine() -> None:
    """Issue 17: a source's further sentence that matches few of the question's words is quoted only at
    SEMANTIC_FOLLOW_UP; each source's best sentence comes before any source's second."""
    best = "Smoking raises the risk of lung cancer in adults."
    aside = "Tobacco use markedly increases lung carcinoma incidence."
    third = "Lung carcinoma incidence follows tobacco sales."
    task = ExcerptTask(question=QUESTION, passages=(P(source_id="a", text=f"{best} {aside}"),
                                                    P(source_id="b", text=third)), max_excerpts=4)
    def quotes(cosine: float) -> list[str]:
        sims = _one_per_sentence(task, {best: 0.9, aside: cosine, third: SEMANTIC_THRESHOLD})
        return [e.quote for e in choose_excerpts(task, similarities=sims, semantic_threshold=SEMANTIC_THRESHOLD)]
    assert aside not in " ".join(quotes(SEMANTIC_FOLLOW_UP - 0.05))
    assert third in quotes(SEMANTIC_FOLLOW_UP - 0.05)
    assert aside in quotes(SEMANTIC_FOLLOW_UP)


_WORDS = st.sampled_from(["smoking", "lung", "cancer", "risk", "tobacco", "the", "of", ".", "!", "肺", "\n", "x" * 30])


@settings(max_examples=150, deadline=None)
@given(texts=st.lists(st.lists(_WORDS, min_size=1, max_size=30).map(" ".join), min_size=1, max_size=6),
       cosines=st.lists(st.floats(min_value=-1.0, max_value=1.0), max_size=200))
def test_quotes_stay_verbatim_and_on_topic_whatever_the_cosines(texts: list[str], cosines: list[float]) -> None:
    """INF-3: whatever the cosines (too few, too many, any value), every quote is an exact substring of its
    passage, shares a meaningful term with the question, and the limits hold."""
    task = ExcerptTask(question=QUESTION, passages=tuple(P(source_id=f"p{i}", text=t) for i, t in enumerate(texts)),
                       max_excerpts=4, max_per_source=2)
    chosen = choose_excerpts(task, similarities=cosines, embedding_weight=0.5)
    wanted = set(analyze(QUESTION))
    assert len(chosen) <= 4
    by_id = {p.source_id: p.text for p in task.passages}
    for excerpt in chosen:
        assert excerpt.quote in by_id[excerpt.source_id]
        assert set(analyze(excerpt.quote)) & wanted
    assert all(sum(e.source_id == p.source_id for e in chosen) <= 2 for p in task.passages)
    assert split_sentences  # the spans the cosines follow


def test_a_long_question_gets_its_two_halves_as_further_queries() -> None:
    """WF-11 (issue 17): without a vocabulary, a long question's keywords, then the first half of them (its
    subject), then the second (what is said of it) when three queries are allowed."""
    claim = "Vitamin D supplementation reduces fracture risk in elderly women"
    words = keyword_query(claim).split(" ")
    half = (len(words) + 1) // 2
    assert choose_queries(QueryTask(question=claim, max_queries=3)) == [
        " ".join(words), " ".join(words[:half]), " ".join(words[half:])]
    assert choose_queries(QueryTask(question=claim, max_queries=2)) == [" ".join(words), " ".join(words[:half])]
    assert choose_queries(QueryTask(question="How long are backups kept?", max_queries=3)) == ["long backups kept"]


def test_local_entries_allow_three_model_queries_and_web_entries_two() -> None:
    """WF-6, WF-9 (issue 17): a query over local sources is one more index search; over the web, a search and
    a page read, so web entries keep two. Vocabulary modes are unchanged."""
    assert ENTRY_SPECS["document-search"].query_counts(None) == (1, 3)
    assert ENTRY_SPECS["knowledge-base"].query_counts(None) == (1, 3)
    assert ENTRY_SPECS["source-location"].query_counts(None) == (1, 3)
    for entry in ("web-search", "web-read", "multi-source"):
        assert ENTRY_SPECS[entry].query_counts(None) == (1, 2)
    assert ENTRY_SPECS["rewrite"].query_counts(5) == (1, 1)
    assert ENTRY_SPECS["expand"].query_counts(5) == (2, 3)


_STATINS = "The use of statins was associated with reduced hip fracture risk in older adults."
_VITAMIN = "Daily vitamin D lowered the number of fractures among elderly participants."
_ANSWER_TASK = AnswerTask(question="Vitamin D supplementation reduces the risk of fractures in older adults.",
                          evidence=(AnswerEvidence(id="e1", quote=_STATINS), AnswerEvidence(id="e2", quote=_VITAMIN)))


def test_the_answer_opens_with_the_sentence_that_means_the_question() -> None:
    """Issue 17: by words alone the statin sentence (risk, fracture, older adults) opens the answer to a vitamin D
    claim; with the cosines the sentence about vitamin D and fractures does, and every sentence still cites
    the evidence that holds it."""
    lexical = answer_question(_ANSWER_TASK)
    assert lexical[0].text == _STATINS
    cosines = {_STATINS: 0.35, _VITAMIN: 0.8}
    semantic = answer_question(_ANSWER_TASK, similarities=[cosines[text] for _, text in answer_sentences(_ANSWER_TASK)])
    assert (semantic[0].text, semantic[0].evidence) == (_VITAMIN, ("e2",))
    assert ANSWER_EMBEDDING_WEIGHT > 0


_NULL = "-0, --null Input items are terminated by a null character instead of by whitespace."
_XARGS = ("xargs reads items from the standard input, delimited by blanks or newlines, and executes the command "
          "with any initial-arguments followed by items read from standard input.")


def test_an_answer_about_an_option_opens_with_what_is_said_of_it() -> None:
    """Issue 17 (real documents): "What does xargs -0 do?" opened with the page's description of xargs, which
    holds more of the question's words and is closer in meaning; a question naming an option is answered by
    the sentence that names it, with or without the cosines."""
    task = AnswerTask(question="What does xargs -0 do with input items?",
                      evidence=(AnswerEvidence(id="e1", quote=_XARGS), AnswerEvidence(id="e2", quote=_NULL)))
    cosines = {_XARGS: 0.62, _NULL: 0.5}
    semantic = answer_question(task, similarities=[cosines[text] for _, text in answer_sentences(task)])
    assert (semantic[0].text, semantic[0].evidence) == (_NULL, ("e2",))
    assert answer_question(task)[0].text == _NULL
    # A question naming no option is untouched by the rule: the closer description opens.
    plain = task.model_copy(update={"question": "What does xargs do with input items?"})
    assert answer_question(plain, similarities=[cosines[text] for _, text in answer_sentences(plain)])[0].text \
        == _XARGS


#: Our own wording, laid out as a man page: a NAME line, an option's line, and a sentence that shares frame words.
_NAME_LINE = "frob - copy widgets between folders"
_OPTION_ITEM = "-R, --recursive  copy widget folders recursively"
_FRAME = "frob makes folders recursively when backup options are given."


def test_an_answer_to_which_option_opens_with_an_options_line() -> None:
    """Issue 17 (real documents, held-out questions): "Which option makes cp copy directories recursively?"
    opened with "As a special case, cp makes a backup… options are given", and find's NAME line opened the
    answer about ``-maxdepth``. A question asking which option does something is answered by a line that
    opens with an option; a NAME or SYNOPSIS line answers only a question asking what the thing is."""
    evidence = (AnswerEvidence(id="e1", quote=_FRAME, context="FROB(1) › DESCRIPTION"),
                AnswerEvidence(id="e2", quote=_OPTION_ITEM, context="FROB(1) › OPTIONS"),
                AnswerEvidence(id="e3", quote=_NAME_LINE, context="FROB(1) › NAME"))
    which = AnswerTask(question="Which option makes frob copy folders recursively?", evidence=evidence)
    assert answer_question(which)[0].text == _OPTION_ITEM
    # Asked without "which option", the sentence with more of the question's words leads.
    how = which.model_copy(update={"question": "How does frob make folders recursively?"})
    assert answer_question(how)[0].text == _FRAME
    # NAME lines: demoted for a question about the command's behaviour, first for "What is frob?".
    names = (AnswerEvidence(id="e3", quote=_NAME_LINE, context="FROB(1) › NAME"),
             AnswerEvidence(id="e2", quote=_OPTION_ITEM, context="FROB(1) › OPTIONS"))
    about = AnswerTask(question="How does frob copy widget folders?", evidence=names)
    assert answer_question(about)[0].text == _OPTION_ITEM
    what = AnswerTask(question="What is frob?", evidence=names)
    assert answer_question(what)[0].text == _NAME_LINE


def test_chinese_answers_keep_the_word_rules() -> None:
    """Issue 17: cosines of the English-only model never reorder a Chinese answer."""
    task = AnswerTask(question="rm 的 -f 选项做什么？", evidence=(
        AnswerEvidence(id="e1", quote="-f, --force 忽略不存在的文件，从不给出提示。"),
        AnswerEvidence(id="e2", quote="rm 删除每个指定的文件。")))
    plain = answer_question(task)
    assert answer_question(task, similarities=[0.0, 0.99]) == plain


async def test_the_provider_embeds_the_answer_sentences_too() -> None:
    """INF-3: the ``embed`` hook is asked for the question and every answer sentence, in order, and its cosines
    choose the answer's first sentence."""
    asked: list[list[str]] = []

    async def embed(texts: list[str]) -> Sequence[Sequence[float]]:
        asked.append(list(texts))
        return [[1.0, 0.0] if "vitamin" in text.lower() else [0.3, 1.0] for text in texts]

    client = create_infer_client({"builtin:extractive": create_extractive_provider(embed=embed)})
    result = await client.reasoning.sample(messages=task_messages(_ANSWER_TASK),
                                           response_format=response_format(_ANSWER_TASK))
    assert asked == [[_ANSWER_TASK.question, _STATINS, _VITAMIN]]
    assert result.parsed["sentences"][0] == {"text": _VITAMIN, "evidence": ["e2"]}


def test_a_vocabulary_restatement_answers_for_a_colloquial_question() -> None:
    """WF-9: "how long do we keep the backups around?" shares one word with the record that answers it; the
    vocabulary entry chosen for it ("backup retention period") is the question in the index's words, so a
    passage about that entry is evidence; without the restatement the one shared word is not enough."""
    record = "Backup retention period: each database backup is kept for 61 days, then deleted."
    other = "Backup interval: the database backup job runs every 6 hours."
    task = ExcerptTask(question="how long do we keep the backups around?",
                       passages=(P(source_id="k1", text=record), P(source_id="k2", text=other)))
    assert choose_excerpts(task) == []
    restated = task.model_copy(update={"restatements": ("backup retention period",)})
    assert [(e.source_id, e.quote) for e in choose_excerpts(restated)] == [("k1", record)]


def test_vocabulary_entries_are_ranked_as_labels_not_documents() -> None:
    """WF-9: an entry's length says nothing about how well it names the question: of two entries sharing one
    word with it, the caller's order decides, not the shorter one."""
    from ditto.workflows.research.sample import SAMPLE_VOCABULARY

    task = QueryTask(question="how long do we keep the backups around?", vocabulary=SAMPLE_VOCABULARY)
    assert choose_queries(task) == ["backup retention period"]
    flipped = QueryTask(question=task.question, vocabulary=("backup interval", "backup retention period"))
    assert choose_queries(flipped) == ["backup interval"]


async def test_a_failing_embedding_hook_leaves_the_words(caplog: pytest.LogCaptureFixture) -> None:
    """INF-3: an ``embed`` hook that raises (or answers the wrong number of vectors) does not fail the task: the
    built-in model answers by words alone, exactly as without the hook, and the failure is logged once."""
    task = ExcerptTask(question="How long are backups kept?",
                       passages=(P(source_id="a", text="Backups are kept for 30 days."),))
    calls = 0

    async def broken(texts: list[str]) -> Sequence[Sequence[float]]:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("the model file is damaged")
        return [[1.0]]  # one vector for several texts

    client = create_infer_client({"builtin:extractive": create_extractive_provider(embed=broken)})
    words = create_infer_client()
    with caplog.at_level("ERROR", logger="ditto.worker.infer"):
        for _ in range(2):
            result = await client.reasoning.sample(messages=task_messages(task), response_format=response_format(task))
            plain = await words.reasoning.sample(messages=task_messages(task), response_format=response_format(task))
            assert result.parsed == plain.parsed == {"excerpts": [{"sourceId": "a",
                                                                   "quote": "Backups are kept for 30 days."}]}
    assert calls == 2
    failures = [r for r in caplog.records if "embedding hook failed" in r.getMessage()]
    assert len(failures) == 1 and failures[0].exc_info is not None


def test_contracted_stop_words_are_no_query_words() -> None:
    """Issue 17 (real questions): "What's", "it's", "don't", "isn't" are stop words contracted: searched, they
    would be "what", "don", "isn"; a possessive of a content word ("user's") stays."""
    assert keyword_query("What's the field layout of a line in /etc/group?") == "field layout line etc group"
    assert keyword_query("Why isn't the user's shell changed? It's still bash, and I don't know why.") \
        == "user's shell changed still bash know"
