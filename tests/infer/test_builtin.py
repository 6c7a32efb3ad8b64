"""The built-in ``builtin:extractive`` model: choices a person would accept, offline and deterministic."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from hypothesis import example, given, settings
from hypothesis import strategies as st

from ditto.worker.infer import (
    EXCERPT_CHOICE_SCHEMA,
    ExcerptPassage,
    ExcerptTask,
    ModelConfig,
    QueryTask,
    create_extractive_provider,
    create_infer_client,
    response_format,
    task_messages,
)
from ditto.worker.infer.extractive import choose_excerpts, choose_queries, keyword_query, split_sentences
from ditto.worker.infer.tasks import MAX_QUERY_CHARS, QUERY_CHOICE_SCHEMA

P = ExcerptPassage

#: Three hand-made sets where the first passage mentions the question's words but does not answer it.
POLICY = (
    P(source_id="intro", text="This handbook describes backups, logs and other records. Read it before your first "
                             "day. Questions about backups go to the operations team."),
    P(source_id="retention", text="Storage is reviewed every quarter. Nightly backups are kept for 30 days, "
                                 "then deleted automatically. Audit logs are kept for a year."),
    P(source_id="hours", text="The office opens at nine. Badges are required at the door."),
)
SCIENCE = (
    P(source_id="s1", text="Vitamin D has many roles in the body. It is studied widely."),
    P(source_id="s2", text="Calcium absorption in the gut is increased by vitamin D, which raises serum calcium. "
                          "Deficiency leads to rickets in children."),
    P(source_id="s3", text="Iron deficiency is the most common nutritional disorder."),
)


async def sample_task(task: ExcerptTask | QueryTask) -> dict[str, object]:
    client = create_infer_client()
    result = await client.reasoning.sample(model=ModelConfig(), messages=task_messages(task),
                                           response_format=response_format(task))
    assert result.model == "extractive" and result.finish_reason == "stop"
    assert isinstance(result.parsed, dict)
    return result.parsed


async def test_the_passage_that_answers_is_chosen_not_the_first() -> None:
    """INF-3, WF-11: the quote comes from the passage that holds the answer, verbatim, best first."""
    answer = await sample_task(ExcerptTask(question="How long are nightly backups kept?", passages=POLICY,
                                           max_excerpts=2, max_per_source=1))
    excerpts = answer["excerpts"]
    assert isinstance(excerpts, list)
    assert excerpts[0] == {"sourceId": "retention",
                           "quote": "Nightly backups are kept for 30 days, then deleted automatically."}
    science = await sample_task(ExcerptTask(question="Does vitamin D increase calcium absorption?",
                                            passages=SCIENCE, max_excerpts=1))
    assert science == {"excerpts": [{"sourceId": "s2", "quote": "Calcium absorption in the gut is increased by "
                                                                 "vitamin D, which raises serum calcium."}]}


async def test_no_passage_shares_a_meaningful_term_gives_no_excerpts() -> None:
    """INF-3, WF-11: no shared meaningful term → [] (question words such as "how" do not count)."""
    assert await sample_task(ExcerptTask(question="How do penguins swim?", passages=POLICY)) == {"excerpts": []}
    assert await sample_task(ExcerptTask(question="what is it?", passages=POLICY)) == {"excerpts": []}


async def test_cjk_question_matches_cjk_passages() -> None:
    """INF-3: a Chinese question is scored character by character (CJK unigrams) and quoted verbatim."""
    passages = (P(source_id="a", text="办公室九点开门。访客需要登记。"),
                P(source_id="b", text="系统每天夜间运行。数据备份保留三十天，然后自动删除。"))
    answer = await sample_task(ExcerptTask(question="数据备份保留多久？", passages=passages, max_excerpts=1))
    assert answer == {"excerpts": [{"sourceId": "b", "quote": "数据备份保留三十天，然后自动删除。"}]}


async def test_limits_per_source_total_and_quote_length() -> None:
    """INF-3: at most maxPerSource per source, maxExcerpts in all, quotes ≤ maxQuoteChars cut at a word."""
    long_text = ("Backups are kept for thirty days in the primary region and " * 10).strip() + "."
    passages = (P(source_id="a", text="Backups are kept. Backups are copied. Backups are checked."),
                P(source_id="b", text=long_text))
    task = ExcerptTask(question="backups kept", passages=passages, max_excerpts=2, max_per_source=1,
                       max_quote_chars=80)
    excerpts = choose_excerpts(task)
    assert len(excerpts) <= 2 and len({e.source_id for e in excerpts}) == len(excerpts)
    for excerpt in excerpts:
        source = next(p.text for p in passages if p.source_id == excerpt.source_id)
        assert excerpt.quote in source and len(excerpt.quote) <= 80
        assert not excerpt.quote.endswith(" ")
    cut = next(e.quote for e in excerpts if e.source_id == "b")
    assert long_text.startswith(cut) and long_text[len(cut)] == " "  # cut between words


async def test_same_chat_same_answer() -> None:
    """WF-11: deterministic: the same task twice gives the same JSON text."""
    client = create_infer_client()
    task = ExcerptTask(question="How long are audit logs kept?", passages=POLICY)
    first = await client.reasoning.sample(messages=task_messages(task), response_format=response_format(task))
    second = await client.reasoning.sample(messages=task_messages(task), response_format=response_format(task))
    assert first.message.content == second.message.content
    assert first.parsed == {"excerpts": [{"sourceId": "retention", "quote": "Audit logs are kept for a year."}]}


async def test_vocabulary_rewrite_and_expand() -> None:
    """INF-3: rewrite = exactly 1 entry, the best; expand = 2, and a third only when it is relevant."""
    vocabulary = ("office hours", "backup retention period", "audit log retention", "badge policy")
    rewrite = await sample_task(QueryTask(question="How long do we keep backups?", vocabulary=vocabulary))
    assert rewrite == {"queries": ["backup retention period"]}
    expand = await sample_task(QueryTask(question="How long do we keep backups?", vocabulary=vocabulary,
                                         min_queries=2, max_queries=3))
    assert expand["queries"] == ["backup retention period", "office hours"]  # second by vocabulary order only
    both = await sample_task(QueryTask(question="retention of backups and audit logs", vocabulary=vocabulary,
                                       min_queries=2, max_queries=3))
    assert both["queries"] == ["audit log retention", "backup retention period"]
    three = choose_queries(QueryTask(question="backup retention, audit log retention and office hours",
                                     vocabulary=vocabulary, min_queries=2, max_queries=3))
    assert len(three) == 3 and len(set(three)) == 3 and set(three) <= set(vocabulary)


async def test_without_vocabulary_the_content_words_are_the_query() -> None:
    """INF-3: no vocabulary → the question's content words, surface forms, stop and question words dropped."""
    assert await sample_task(QueryTask(question="How long are the nightly Backups kept?")) == {
        "queries": ["long nightly Backups kept"]}
    assert keyword_query("数据备份保留多久？") == "数据备份保留"  # 多久 "how long" is a question word
    assert keyword_query("rm 的 -f 选项做什么？") == "rm -f 选项"  # an option keeps its dash: -f is the question
    assert keyword_query("What does grep --count print?") == "grep --count print"
    two = choose_queries(QueryTask(question="vitamin D calcium absorption", min_queries=2, max_queries=2))
    assert two == ["vitamin D calcium absorption", "vitamin D"]


def test_a_chinese_question_naming_commands_also_searches_those_words_alone() -> None:
    """Issue 17 (Chinese material): a Chinese question that names a command and an option in Latin script
    gets a second query of those words alone, when the entry allows two; never for one-query entries,
    all-Chinese or all-English questions."""
    question = "mkdir 的 -p 选项有什么作用？"
    assert choose_queries(QueryTask(question=question, max_queries=2)) == ["mkdir -p 选项 作用", "mkdir -p"]
    assert choose_queries(QueryTask(question=question, max_queries=1)) == ["mkdir -p 选项 作用"]
    cup = "世界杯足球赛冠军是哪个国家？"
    assert choose_queries(QueryTask(question=cup, max_queries=2)) == [keyword_query(cup)]
    assert choose_queries(QueryTask(question="What does mkdir -p do?", max_queries=2)) == ["mkdir -p"]


async def test_plain_chat_answers_from_earlier_messages() -> None:
    """INF-1, INF-3: the seed's "context → INFER" chat: items as user messages, then a question."""
    client = create_infer_client()
    messages = [{"role": "system", "content": "Answer from the evidence."},
                {"role": "user", "content": "The API rate limit is 100 requests per minute. The API has v2."},
                {"role": "user", "content": "Office hours are nine to five."},
                {"role": "user", "content": "What is the API rate limit?"}]
    result = await client.reasoning.sample({"model": {"provider": "builtin:extractive"}, "messages": messages})
    assert result.message.content.startswith("The API rate limit is 100 requests per minute.")
    assert "Office hours" not in result.message.content and result.parsed is None
    explain = await client.reasoning.sample(messages=[*messages[:3], {"role": "user",
                                                                      "content": "Explain the evidence."}])
    assert explain.message.content == "The API rate limit is 100 requests per minute. Office hours are nine to five."
    as_json = await client.reasoning.sample(messages=messages, response_format={"type": "json_object"})
    assert isinstance(as_json.parsed, dict) and "100 requests" in as_json.parsed["answer"]


async def test_usage_is_the_context_estimate() -> None:
    """INF-6: the built-in model reports ceil(UTF-8 JSON bytes / 4) for input and output."""
    import json

    client = create_infer_client()
    messages = [{"role": "user", "content": "héllo wörld"}]
    result = await client.reasoning.sample(messages=messages)
    compact = json.dumps(messages, ensure_ascii=False, separators=(",", ":")).encode()
    assert result.usage.input_tokens == math.ceil(len(compact) / 4)
    answer = json.dumps(result.message.content, ensure_ascii=False).encode()
    assert result.usage.output_tokens == math.ceil(len(answer) / 4)


async def test_max_tokens_drops_trailing_excerpts() -> None:
    """INF-1: a maxTokens budget keeps the answer valid JSON by choosing fewer excerpts."""
    client = create_infer_client()
    task = ExcerptTask(question="backups kept logs", passages=POLICY, max_excerpts=4)
    full = await client.reasoning.sample(messages=task_messages(task), response_format=response_format(task))
    short = await client.reasoning.sample(messages=task_messages(task), response_format=response_format(task),
                                          max_tokens=full.usage.output_tokens - 1)
    assert len(short.parsed["excerpts"]) < len(full.parsed["excerpts"])
    assert short.parsed["excerpts"] == full.parsed["excerpts"][:len(short.parsed["excerpts"])]


async def test_max_tokens_too_small_for_any_answer_is_cut_with_length() -> None:
    """INF-1: when even the shortest answer does not fit maxTokens, the text is cut and finishReason is
    "length", as a real model's would be; a JSON format then fails validation instead of being patched."""
    client = create_infer_client()
    messages = [{"role": "user", "content": "The API rate limit is 100 requests per minute."},
                {"role": "user", "content": "What is the API rate limit?"}]
    result = await client.reasoning.sample(messages=messages, max_tokens=2)
    assert result.finish_reason == "length" and len(result.message.content.encode()) <= 8
    assert "The API rate limit".startswith(result.message.content)


async def test_embedding_scores_break_lexical_ties() -> None:
    """INF-3: with an embedding function, a sentence that means the question wins among equal lexical matches."""
    concepts = {"retention": 0, "kept": 0, "deleted": 0, "coffee": 1, "lunch": 1}

    async def embed(texts: list[str]) -> Sequence[Sequence[float]]:
        vectors = []
        for text in texts:
            vector = [0.0, 0.0, 0.01]
            for word in re.findall(r"\w+", text.lower()):
                if word in concepts:
                    vector[concepts[word]] += 1.0
            vectors.append(vector)
        return vectors

    passages = (P(source_id="a", text="Backups policy: coffee and lunch are kept."),
                P(source_id="b", text="Backups policy: retention, then kept, then deleted."))
    task = ExcerptTask(question="backups policy kept", passages=passages, max_excerpts=1)
    lexical = choose_excerpts(task)
    assert lexical[0].source_id == "a"  # a tie on the same words: the first passage wins without meaning
    client = create_infer_client({"builtin:extractive": create_extractive_provider(embed=embed)})
    result = await client.reasoning.sample(messages=task_messages(task), response_format=response_format(task))
    assert result.parsed["excerpts"][0]["sourceId"] == "b"


def test_sentences_are_offsets_of_the_text() -> None:
    """INF-3: sentence spans are trimmed substrings; CJK full stops and line breaks end sentences,
    abbreviations do not."""
    text = "  First one. Second one!\nThird line 3.5 units\n\n中文句子。第二句？ end"
    spans = [text[s.start:s.end] for s in split_sentences(text)]
    assert spans == ["First one.", "Second one!", "Third line 3.5 units", "中文句子。", "第二句？", "end"]
    text = "Smith et al. reported it in Fig. 2 of the paper. Doses were approx. 3 mg. Take vitamin D. It helps."
    assert [text[s.start:s.end] for s in split_sentences(text)] == [
        "Smith et al. reported it in Fig. 2 of the paper.", "Doses were approx. 3 mg.", "Take vitamin D.",
        "It helps."]
    # "e. g." with a space, as postgresql-common's README writes it, is the same abbreviation.
    text = "They use other file locations (e. g.\n/etc/frob/ instead of /var/lib). So they differ."
    assert [text[s.start:s.end] for s in split_sentences(text)] == [
        "They use other file locations (e. g.\n/etc/frob/ instead of /var/lib).", "So they differ."]


def test_a_full_stop_inside_quotes_before_a_lower_case_word_does_not_end_the_sentence() -> None:
    """INF-3 (found on SQLite's UPSERT page): 'add the special "excluded." table qualifier to the column name.' was
    cut after "excluded.", and the answer to "how do I refer to the value I tried to insert?" was quoted half."""
    text = ('Column names refer to the original value. To use the value that would have been inserted, add the '
            'special "excluded." table qualifier to the column name. It says "stop." Then (see foo.) it goes on.')
    assert [text[s.start:s.end] for s in split_sentences(text)] == [
        "Column names refer to the original value.",
        'To use the value that would have been inserted, add the special "excluded." table qualifier to the column '
        "name.", 'It says "stop."', "Then (see foo.) it goes on."]


_words = st.sampled_from(["backup", "backups", "kept", "days", "log", "office", "the", "how", "数据", "备份",
                          "a", "Mr.", "30", "\n", "!", "?", "。", "retention", "café", "x" * 50])
_text = st.lists(_words, min_size=1, max_size=40).map(" ".join)


@settings.get_profile("security")  # tests/conftest.py: at least 150 examples, also in CI
@example(question="backup kept", texts=["backup kept . backup kept days . backup kept log ."] * 6, max_excerpts=5,
         per_source=1, quote=120)                          # one source floods every passage
@example(question="backup", texts=["backup " * 40], max_excerpts=5, per_source=3, quote=1)  # one-character quotes
@example(question="备份", texts=["数据 备份 。 备份 保留 。", "备份 。"], max_excerpts=5, per_source=0, quote=5)
@given(question=_text, texts=st.lists(_text, min_size=1, max_size=6),
       max_excerpts=st.integers(0, 5), per_source=st.integers(0, 3), quote=st.integers(1, 120))
def test_excerpt_invariants(question: str, texts: list[str], max_excerpts: int, per_source: int, quote: int) -> None:
    """INF-3, INF-4 (issue 15: security profile, flooding examples): any material → quotes are verbatim
    substrings of their own passage, within every limit, and the answer satisfies the excerpt schema."""
    from jsonschema import Draft202012Validator

    passages = tuple(P(source_id=f"s{i % 3}", text=text) for i, text in enumerate(texts) if text.strip())
    if not passages:
        return
    task = ExcerptTask(question=question, passages=passages, max_excerpts=max_excerpts, max_per_source=per_source,
                       max_quote_chars=quote)
    excerpts = choose_excerpts(task)
    assert len(excerpts) <= max_excerpts
    counts: dict[str, int] = {}
    for excerpt in excerpts:
        counts[excerpt.source_id] = counts.get(excerpt.source_id, 0) + 1
        assert any(excerpt.quote in p.text for p in passages if p.source_id == excerpt.source_id)
        assert 1 <= len(excerpt.quote) <= quote and excerpt.quote == excerpt.quote.strip()
    assert all(count <= per_source for count in counts.values())
    Draft202012Validator(dict(EXCERPT_CHOICE_SCHEMA)).validate(
        {"excerpts": [excerpt.to_json_dict() for excerpt in excerpts]})


@given(question=_text, vocabulary=st.lists(_text, min_size=1, max_size=8), low=st.integers(1, 3),
       extra=st.integers(0, 2))
def test_query_invariants(question: str, vocabulary: list[str], low: int, extra: int) -> None:
    """INF-3: with a vocabulary, queries are distinct entries, min..max of them (as many as exist)."""
    task = QueryTask(question=question, vocabulary=tuple(vocabulary), min_queries=low, max_queries=low + extra)
    queries = choose_queries(task)
    assert len(set(queries)) == len(queries) and set(queries) <= set(vocabulary)
    assert min(low, len(set(vocabulary))) <= len(queries) <= low + extra


_words = st.text(alphabet=st.sampled_from("abcxyz 记忆迁-"), min_size=1, max_size=1400)


@settings(max_examples=60)
@given(words=st.lists(_words, min_size=1, max_size=4), low=st.integers(1, 3), extra=st.integers(0, 2))
@example(words=["x" * 1024], low=1, extra=2)
@example(words=[" ".join(f"w{n}" for n in range(900))], low=1, extra=2)
def test_queries_of_any_allowed_question_fit_the_query_contract(words: list[str], low: int, extra: int) -> None:
    """INF-3, WF-11: every question the request allows (up to 4000 characters, one 1024-character word or
    hundreds of keywords) gets queries the research contract accepts: at most 1000 characters each, distinct,
    as many as asked; the queries stage used to fail on a question whose keywords passed 1000 characters."""
    from jsonschema import Draft202012Validator

    from ditto.workflows.research.verification import verify_queries

    question = " ".join(words)[:4000]
    if not question.strip():
        return
    task = QueryTask(question=question, min_queries=low, max_queries=low + extra)
    queries = choose_queries(task)
    assert all(1 <= len(query) <= MAX_QUERY_CHARS and query.strip() for query in queries)
    Draft202012Validator(dict(QUERY_CHOICE_SCHEMA)).validate({"queries": queries})
    if len(queries) >= low:
        verify_queries({"queries": queries}, task, "model")


async def test_order_counts_only_as_weak_evidence() -> None:
    """INF-3, WF-11: the given order (the retriever's ranking) is a small bonus; the sentence that answers,
    in the fourth of five passages, still beats first passages that merely repeat the question's words."""
    passages = (
        P(source_id="p1", text="Password rules apply to every account. Passwords are personal."),
        P(source_id="p2", text="Rotating secrets is good practice for accounts."),
        P(source_id="p3", text="The VPN needs a second factor."),
        P(source_id="p4", text="Account passwords must be rotated every 90 days and must not be reused."),
        P(source_id="p5", text="Printers are on the second floor."),
    )
    answer = await sample_task(ExcerptTask(question="How often must account passwords be rotated?",
                                           passages=passages, max_excerpts=1))
    assert answer == {"excerpts": [{"sourceId": "p4", "quote": passages[3].text}]}


def test_the_answer_weighs_where_each_quote_sits() -> None:
    """Issue 17 (an answer people can read): answer sentences are scored with their evidence's context, so
    the sentences under GREP(1) answer a grep question before a sentence of find's page that repeats the
    rarer word "returns"."""
    from ditto.worker.infer.extractive import answer_question
    from ditto.worker.infer.tasks import AnswerEvidence, AnswerTask

    question = "What exit status does grep return when no lines were selected?"
    quotes = [("e1", "Normally the exit status is 0 if a line is selected, 1 if no lines were selected, and 2 if\n"
                     "       an error occurred.", "GREP(1) › EXIT STATUS"),
              ("e2", "However, if the -q or --quiet or  --silent  is  used  and  a  line  is\n"
                     "       selected, the exit status is 0 even if an error occurred.", "GREP(1) › EXIT STATUS"),
              ("e3", "If any invocation with the  `+'  form  returns  a\n              non-zero  value  as exit "
                     "status, then find returns a non-zero exit status.", "FIND(1) › EXPRESSION › ACTIONS")]
    with_context = answer_question(AnswerTask(question=question, evidence=tuple(
        AnswerEvidence(id=i, quote=q, context=c) for i, q, c in quotes)))
    assert [s.evidence for s in with_context][:2] == [("e1",), ("e2",)]
    by_id = {i: q for i, q, _ in quotes}
    assert all(s.text in by_id[e] for s in with_context for e in s.evidence)
