"""The embedded BM25 engine (RET-6): Lucene scoring, analysis, filters, changes, persistence."""

from __future__ import annotations

import logging
import math
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ditto.retrieval import RetrievalError
from ditto.retrieval.engines import BM25Index, TextAnalyzer, parse_filter

from .conftest import DOCS


def _index(**kwargs: float) -> BM25Index:
    index = BM25Index(**kwargs)
    index.add(DOCS)
    return index


def _ids(hits: list[tuple[object, float]]) -> list[str]:
    return [document.id for document, _ in hits]  # type: ignore[attr-defined]


def _lucene_score(query_terms: list[str], doc_terms: list[list[str]], which: int, k1: float, b: float) -> float:
    """Lucene BM25 written out from the formula, as an independent oracle."""
    n = len(doc_terms)
    avgdl = sum(len(d) for d in doc_terms) / n
    tf = Counter(doc_terms[which])
    score = 0.0
    for term in query_terms:
        df = sum(1 for d in doc_terms if term in d)
        if not df or not tf[term]:
            continue
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        freq = tf[term]
        score += idf * freq / (freq + k1 * (1 - b + b * len(doc_terms[which]) / avgdl))
    return score


@pytest.mark.parametrize(("k1", "b"), [(1.2, 0.75), (0.9, 0.4), (2.0, 1.0)])
def test_ret6_scores_follow_lucene_bm25_with_configurable_k1_b(k1: float, b: float) -> None:
    """RET-6: scores equal Lucene's BM25 formula for the configured k1 and b."""
    index = _index(k1=k1, b=b)
    analyzer = TextAnalyzer()
    doc_terms = [analyzer.analyze(d["content"]) for d in DOCS]
    query = "agent memory migration"
    hits = index.search(query, limit=10)
    assert hits
    for document, score in hits:
        which = next(i for i, d in enumerate(DOCS) if d["id"] == document.id)
        assert score == pytest.approx(_lucene_score(analyzer.analyze(query), doc_terms, which, k1, b), rel=1e-5)


def test_ret6_english_stemming_and_stop_words() -> None:
    """RET-6: "migrating"/"migration" share a stem; stop words never match."""
    analyzer = TextAnalyzer()
    assert analyzer.analyze("The migrations of the agents") == ["migrat", "agent"]
    index = _index()
    assert set(_ids(index.search("migrations", limit=10))) == {"d1", "d3"}
    assert index.search("the and of", limit=10) == []


def test_ret6_chinese_query_is_segmented() -> None:
    """RET-6: CJK text is segmented with jieba, so a Chinese word finds Chinese documents."""
    index = _index()
    assert _ids(index.search("记忆迁移", limit=5))[0] == "d4"
    assert _ids(index.search("全文检索", limit=5)) == ["d5"]
    # mixed-language query
    assert set(_ids(index.search("memory 记忆", limit=10))) >= {"d1", "d4"}


def test_ret6_loading_the_chinese_dictionary_prints_nothing() -> None:
    """RET-6: the first Chinese text of a process loads jieba's dictionary without its "Building prefix dict"
    lines on stderr (they broke into `ditto index` output), and jieba's own log level is left as it was."""
    import subprocess
    import sys

    script = ("import jieba, logging; from ditto.text import TextAnalyzer; "
              "print(TextAnalyzer(cjk='jieba').analyze('全文检索')); print(jieba.default_logger.level)")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    terms, level = done.stdout.strip().splitlines()
    assert "检索" in terms and int(level) == logging.DEBUG
    assert "prefix dict" not in done.stderr and "Loading model" not in done.stderr


def test_ret6_keyword_mode_requires_every_term() -> None:
    """RET-6: mode "all" keeps only documents containing every query term."""
    index = _index()
    assert set(_ids(index.search("agent memory", limit=10, mode="any"))) == {"d1", "d2", "d3"}
    assert set(_ids(index.search("agent memory", limit=10, mode="all"))) == {"d1", "d3"}
    assert index.search("agent unicorn", limit=10, mode="all") == []


def test_ret6_filters_equality_in_and_ranges() -> None:
    """RET-6: equality, in, gte/lte/gt/lt, list-valued fields, ne/nin — AND-ed."""
    index = _index()

    def search(filter: dict[str, object]) -> set[str]:
        return set(_ids(index.search("memory 记忆", limit=10, conditions=parse_filter(filter))))

    assert search({"year": {"gte": 2024}}) == {"d1", "d3", "d4"}
    assert search({"year": {"gt": 2024}}) == {"d3"}
    assert search({"year": {"lt": 2024}}) == {"d2"}
    assert search({"year": {"lte": 2024, "gte": 2022}}) == {"d1", "d4"}
    assert search({"lang": "zh"}) == {"d4"}
    assert search({"lang": {"in": ["zh", "fr"]}}) == {"d4"}
    assert search({"tags": "guide"}) == {"d1"}
    assert search({"lang": "en", "year": {"gte": 2024}}) == {"d1", "d3"}
    assert search({"lang": {"ne": "en"}}) == {"d4"}
    assert search({"tags": {"nin": ["runtime"]}}) == {"d1", "d3", "d4"}
    assert search({"year": 2024.0}) == {"d1", "d4"}
    assert search({"missing": {"gte": 0}}) == set()


def test_ret6_filtered_search_returns_top_k_among_matching_documents() -> None:
    """RET-6: a filter selects the top-k among matching documents (not a post-filtered top-k)."""
    index = BM25Index()
    docs = [{"id": f"strong{i}", "content": "memory " * 10, "metadata": {"keep": False}} for i in range(20)]
    docs += [{"id": f"weak{i}", "content": "memory and many other unrelated words here", "metadata": {"keep": True}}
             for i in range(3)]
    index.add(docs)
    hits = index.search("memory", limit=2, conditions=parse_filter({"keep": True}))
    assert _ids(hits) == ["weak0", "weak1"]
    # without a filter the strong ones win
    assert all(i.startswith("strong") for i in _ids(index.search("memory", limit=2)))


@pytest.mark.parametrize("bad", [
    {"year": {"ne2": 1}}, {"year": {"$gte": 1}}, {"year": [2024]}, {"year": {}}, {"year": {"gte": "2024"}},
    {"year": {"gte": True}}, {"year": {"in": "abc"}}, {"year": {"in": [[1]]}}, {"year": {"gte": math.nan}},
    {"": 1}, {"year": {"eq": {"a": 1}}}, {"$or": [{"a": 1}]},
])
def test_ret5_unsupported_filters_are_rejected(bad: dict[str, object]) -> None:
    """RET-5/RET-6: an unsupported filter operator or shape → RETRIEVAL_INVALID_INPUT, never ignored."""
    with pytest.raises(RetrievalError) as caught:
        parse_filter(bad)
    assert caught.value.code == "RETRIEVAL_INVALID_INPUT"


def test_ret6_add_replace_and_remove_documents() -> None:
    """RET-6: documents can be added, replaced by id and removed; results follow at once."""
    index = _index()
    assert "d6" in _ids(index.search("pasta", limit=5))
    assert index.remove(["d6", "nope"]) == 1
    assert index.search("pasta", limit=5) == []
    index.add([{"id": "d7", "content": "Fresh pasta recipe"}])
    assert _ids(index.search("pasta", limit=5)) == ["d7"]
    index.add([{"id": "d7", "content": "Sourdough bread recipe"}])
    assert index.search("pasta", limit=5) == []
    assert _ids(index.search("bread", limit=5)) == ["d7"]
    assert len(index) == 6
    # changes after removal rebuild the statistics: same scores as a fresh index of the same documents
    fresh = BM25Index()
    fresh.add([d for d in DOCS if d["id"] != "d6"] + [{"id": "d7", "content": "Sourdough bread recipe"}])
    assert index.search("memory agent", limit=10) == fresh.search("memory agent", limit=10)


def test_ret6_invalid_documents_are_refused() -> None:
    """RET-5: documents without an id or with non-string content → RETRIEVAL_INVALID_INPUT."""
    index = BM25Index()
    for bad in ({"id": "", "content": "x"}, {"id": "a", "content": 3}, {"content": "x"},
                {"id": "a", "content": "x", "metadata": {"v": math.inf}}):
        with pytest.raises(RetrievalError) as caught:
            index.add([bad])
        assert caught.value.code == "RETRIEVAL_INVALID_INPUT"
    with pytest.raises(RetrievalError):
        index.add([{"id": "a", "content": "x"}, {"id": "a", "content": "y"}])
    assert len(index) == 0


def test_ret6_save_load_round_trip_gives_identical_results(tmp_path: Path) -> None:
    """RET-6: an index saved to a directory and loaded again answers identically."""
    index = BM25Index(k1=0.9, b=0.6)
    index.add(DOCS)
    index.save(tmp_path / "idx")
    loaded = BM25Index.load(tmp_path / "idx")
    assert (loaded.k1, loaded.b, len(loaded)) == (0.9, 0.6, len(DOCS))
    for query, filter in [("memory migration", None), ("记忆", None), ("memory", {"year": {"gte": 2024}})]:
        conditions = parse_filter(filter)
        assert loaded.search(query, limit=10, conditions=conditions) == index.search(
            query, limit=10, conditions=conditions)
    # the loaded index keeps working incrementally
    loaded.add([{"id": "x", "content": "memory"}])
    assert "x" in _ids(loaded.search("memory", limit=10))
    with pytest.raises(ValueError):
        BM25Index.load(tmp_path / "missing")


def test_ret6_indexing_reports_progress() -> None:
    """RET-6: long indexing reports progress through a callback."""
    seen: list[tuple[int, int]] = []
    index = BM25Index()
    index.add([{"id": str(i), "content": f"doc {i} text"} for i in range(1200)],
              progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (1200, 1200)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


_WORDS = st.sampled_from(["memory", "agent", "migration", "store", "vector", "记忆", "检索", "pasta", "rust"])


@given(docs=st.lists(st.lists(_WORDS, min_size=0, max_size=8), min_size=1, max_size=25),
       query=st.lists(_WORDS, min_size=1, max_size=4), limit=st.integers(1, 30),
       year=st.integers(2018, 2026))
def test_ret6_ordering_and_limit_invariants(docs: list[list[str]], query: list[str], limit: int, year: int) -> None:
    """RET-6 (hypothesis): at most ``limit`` hits, scores descending and positive, filter respected,
    and the filtered top-k equals the best ``limit`` matching documents of an unlimited search."""
    index = BM25Index()
    index.add([{"id": f"d{i}", "content": " ".join(words), "metadata": {"year": 2018 + i % 9}}
               for i, words in enumerate(docs)])
    conditions = parse_filter({"year": {"gte": year}})
    hits = index.search(" ".join(query), limit=limit, conditions=conditions)
    assert len(hits) <= limit
    scores = [score for _, score in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(score > 0 for score in scores)
    assert all(document.metadata["year"] >= year for document, _ in hits)  # type: ignore[index]
    everything = index.search(" ".join(query), limit=10_000)
    allowed = [(d, s) for d, s in everything if d.metadata["year"] >= year]  # type: ignore[index]
    assert [s for _, s in hits] == pytest.approx([s for _, s in allowed[:limit]])


_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5),
                    st.floats(allow_nan=False, allow_infinity=False))
_OPERATOR = st.one_of(
    _SCALAR,
    st.fixed_dictionaries({"in": st.lists(_SCALAR, max_size=3)}),
    st.dictionaries(st.sampled_from(["gt", "gte", "lt", "lte"]),
                    st.one_of(st.integers(), st.floats(allow_nan=False, allow_infinity=False)), min_size=1),
)
_BAD_OPERATOR = st.one_of(
    st.dictionaries(st.text(min_size=1, max_size=5).filter(
        lambda k: k not in {"eq", "ne", "in", "nin", "gt", "gte", "lt", "lte"}), _SCALAR, min_size=1),
    st.lists(_SCALAR, min_size=1, max_size=3),
    st.fixed_dictionaries({"gte": st.one_of(st.text(), st.booleans(), st.none(), st.just(math.inf))}),
    st.fixed_dictionaries({"in": st.one_of(st.text(), st.integers(), st.lists(st.lists(_SCALAR), min_size=1))}),
)


@given(st.dictionaries(st.text(min_size=1, max_size=6), _OPERATOR, max_size=4))
def test_ret6_valid_filters_parse(filter: dict[str, object]) -> None:
    """RET-6 (hypothesis): every filter in the supported language parses into conditions."""
    assert len(parse_filter(filter)) >= len(filter)


@given(st.text(min_size=1, max_size=6), _BAD_OPERATOR)
def test_ret5_invalid_filters_always_fail_with_invalid_input(field: str, spec: object) -> None:
    """RET-5 (hypothesis): any unsupported filter shape → RETRIEVAL_INVALID_INPUT, nothing else."""
    with pytest.raises(RetrievalError) as caught:
        parse_filter({field: spec})
    assert caught.value.code == "RETRIEVAL_INVALID_INPUT"
