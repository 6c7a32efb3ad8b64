"""The built-in model's limits are exact (INF-3, WF-11): ``maxPerSource`` quotes per source, no fewer when
more qualify and never more; a weak vocabulary entry is not added by ``expand``.

Issue 15, "Tests that catch the bug" (INFER): the planted bugs were an off-by-one in the per-source
counter (``>`` for ``>=``, or one fewer) and a follow-up query admitted below the share of the best.
The per-source limit is what keeps one source from filling a brief, so its property runs under the
``security`` profile of tests/conftest.py (at least 150 examples, also in CI), with the flooding attacks
as explicit examples.
"""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from ditto.text import score_documents
from ditto.worker.infer import ExcerptPassage, ExcerptTask, ModelConfig, QueryTask, create_infer_client, task_messages
from ditto.worker.infer import response_format as answer_format
from ditto.worker.infer.extractive import FOLLOW_UP_SHARE, analyze, choose_excerpts, choose_queries

P = ExcerptPassage
#: Three sentences per source, each as good an answer as the others (same terms, same length).
FLOOD_A = P(source_id="a", text="Backups are kept alpha. Backups are kept bravo. Backups are kept delta.")
FLOOD_B = P(source_id="b", text="Backups are kept echoes. Backups are kept foxes. Backups are kept golfs.")


def per_source(task: ExcerptTask) -> dict[str, int]:
    counts: dict[str, int] = {}
    for excerpt in choose_excerpts(task):
        counts[excerpt.source_id] = counts.get(excerpt.source_id, 0) + 1
    return counts


def test_max_per_source_is_exact() -> None:
    """INF-3 (issue 15, per-source limit exact): with three equally good sentences in each of two sources,
    maxPerSource=k gives exactly k quotes from each (k = 0…3), and a fourth is never invented."""
    for k in range(4):
        task = ExcerptTask(question="Where are backups kept?", passages=(FLOOD_A, FLOOD_B), max_excerpts=10,
                           max_per_source=k)
        assert per_source(task) == ({"a": k, "b": k} if k else {}), k
    one = ExcerptTask(question="Where are backups kept?", passages=(FLOOD_A, FLOOD_B), max_excerpts=10,
                      max_per_source=1)
    assert [(e.source_id, e.quote) for e in choose_excerpts(one)] == [("a", "Backups are kept alpha."),
                                                                      ("b", "Backups are kept echoes.")]


def test_every_source_is_quoted_before_any_source_twice() -> None:
    """INF-3, WF-11 (issue 17): when the brief has fewer quotes than the sources could fill, each source's best
    sentence comes before any source's second: two quotes from two equally good sources, not both from the
    first; the answer stays best first."""
    task = ExcerptTask(question="Where are backups kept?", passages=(FLOOD_A, FLOOD_B), max_excerpts=2,
                       max_per_source=2)
    assert [(e.source_id, e.quote) for e in choose_excerpts(task)] == [("a", "Backups are kept alpha."),
                                                                       ("b", "Backups are kept echoes.")]
    both = ExcerptTask(question="Where are backups kept?", passages=(FLOOD_A, FLOOD_B), max_excerpts=4,
                       max_per_source=2)
    assert [e.quote for e in choose_excerpts(both)] == ["Backups are kept alpha.", "Backups are kept bravo.",
                                                        "Backups are kept echoes.", "Backups are kept foxes."]


async def test_max_per_source_through_the_sdk() -> None:
    """INF-3 (issue 15): the same limit holds for the built-in provider called through INFER, with the
    excerpt schema enforced on its answer."""
    task = ExcerptTask(question="Where are backups kept?", passages=(FLOOD_A, FLOOD_B), max_excerpts=3,
                       max_per_source=2)
    result = await create_infer_client().reasoning.sample(model=ModelConfig(), messages=task_messages(task),
                                                          response_format=answer_format(task))
    assert result.parsed == {"excerpts": [{"sourceId": "a", "quote": "Backups are kept alpha."},
                                          {"sourceId": "a", "quote": "Backups are kept bravo."},
                                          {"sourceId": "b", "quote": "Backups are kept echoes."}]}


_words = st.sampled_from(["backups", "kept", "days", "thirty", "logs", "the", "are", "for", "。", "备份", "保留",
                          "!", "?", "Mr.", "x"])
_sentence = st.lists(_words, min_size=1, max_size=8).map(" ".join).map(lambda text: text + ".")
_passage_text = st.lists(_sentence, min_size=1, max_size=6).map(" ".join)


@settings.get_profile("security")
@example(texts=[FLOOD_A.text, FLOOD_A.text, FLOOD_B.text], sources=[0, 0, 1], k=1)  # one source, many passages
@example(texts=[FLOOD_A.text * 5], sources=[0], k=2)                                # one passage, many sentences
@example(texts=[FLOOD_A.text, FLOOD_B.text], sources=[0, 1], k=0)                   # k = 0: nothing at all
@example(texts=["Backups are kept. Backups are kept. Backups are kept."], sources=[0], k=2)  # repeats: once
@given(texts=st.lists(_passage_text, min_size=1, max_size=5), sources=st.lists(st.integers(0, 2), min_size=5,
                                                                               max_size=5),
       k=st.integers(0, 4))
def test_per_source_limit_keeps_the_first_k_of_each_source(texts: list[str], sources: list[int], k: int) -> None:
    """INF-3 (issue 15, hypothesis, security profile): with room for every excerpt, maxPerSource=k keeps exactly
    the first k quotes of each source from the unlimited answer, in the same order; no source ever has more
    than k, none fewer than min(k, what qualifies)."""
    passages = tuple(P(source_id=f"s{sources[i]}", text=text) for i, text in enumerate(texts))
    question = "How long are backups kept for thirty days?"
    unlimited = choose_excerpts(ExcerptTask(question=question, passages=passages, max_excerpts=100,
                                            max_per_source=100))
    limited = choose_excerpts(ExcerptTask(question=question, passages=passages, max_excerpts=100,
                                          max_per_source=k))
    taken: dict[str, int] = {}
    expected = []
    for excerpt in unlimited:
        if taken.get(excerpt.source_id, 0) < k:
            taken[excerpt.source_id] = taken.get(excerpt.source_id, 0) + 1
            expected.append(excerpt)
    assert limited == expected


VOCABULARY = ("office hours", "nightly backup retention period", "snapshots", "database snapshots retention",
              "backup")
QUESTION = "How long is the nightly backup retention period for database snapshots?"


def test_a_weak_follow_up_query_is_not_added_by_expand() -> None:
    """INF-3, WF-9 (issue 15, query choice with a vocabulary): expand (2–3 queries) takes the best entry,
    the second as the minimum, and a third only when it scores at least FOLLOW_UP_SHARE of the best:
    "snapshots" matches the question but weakly, so it is left out; unrelated entries never come in."""
    scores = dict(zip(VOCABULARY, score_documents(analyze(QUESTION), [analyze(v) for v in VOCABULARY]), strict=True))
    best = scores["nightly backup retention period"]
    assert 0 < scores["snapshots"] < FOLLOW_UP_SHARE * best <= scores["database snapshots retention"] < best
    assert max(scores["backup"], scores["snapshots"]) < FOLLOW_UP_SHARE * best and scores["office hours"] == 0
    expand = QueryTask(question=QUESTION, vocabulary=VOCABULARY, min_queries=2, max_queries=3)
    assert choose_queries(expand) == ["nightly backup retention period", "database snapshots retention"]
    up_to_three = QueryTask(question=QUESTION, vocabulary=VOCABULARY, min_queries=1, max_queries=3)
    assert choose_queries(up_to_three) == ["nightly backup retention period", "database snapshots retention"]
    rewrite = QueryTask(question=QUESTION, vocabulary=VOCABULARY)
    assert choose_queries(rewrite) == ["nightly backup retention period"]
    # The minimum is always met, however weak the entries: min_queries=4 takes the four best in score order.
    four = QueryTask(question=QUESTION, vocabulary=VOCABULARY, min_queries=4, max_queries=5)
    assert choose_queries(four) == ["nightly backup retention period", "database snapshots retention", "snapshots",
                                    "backup"]


def test_coordination_ranks_the_passage_holding_every_query_word_first() -> None:
    """Issue 17 (documents search): with ``coordinate``, a short passage repeating one query word
    ("mkdir(2)") no longer outranks the passage holding both ("mkdir … -p"); without it, it does; a
    passage with none stays at 0."""
    documents = [["mkdir", "mkdir"], ["mkdir", "-p", "parent", "directori", "need", "exist", "error", "mode"],
                 ["tar", "-p", "permiss"], ["grep", "count"]]
    plain = score_documents(["mkdir", "-p"], documents)
    coordinated = score_documents(["mkdir", "-p"], documents, coordinate=True)
    assert plain[0] > plain[1]
    assert coordinated[1] > coordinated[0] and coordinated[1] > coordinated[2]
    assert coordinated[3] == plain[3] == 0.0
    assert all(c <= p for c, p in zip(coordinated, plain, strict=True))
