"""CONTEXT's query-term overlap counts ``ditto.text.word_terms`` terms (CX-6; one definition of a term, issue 9)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ditto.text import word_terms
from ditto.worker.context.items import QueryTerms, content_text, text_terms

_TEXT = st.text(alphabet=st.sampled_from(list("abcXYZ019 _-.,é检索日本語한국어\tß")), max_size=30)
_CONTENT = st.recursive(_TEXT | st.integers(-50, 50) | st.none(),
                        lambda children: st.lists(children, max_size=3)
                        | st.dictionaries(st.text(max_size=3), children, max_size=3), max_leaves=6)


@settings(max_examples=300, deadline=None)
@given(content=_CONTENT)
def test_item_terms_are_word_terms(content: Any) -> None:
    """CX-6: an item's term set is exactly the set of ``word_terms`` of its text (ASCII fast path included)."""
    assert text_terms(content) == frozenset(word_terms(content_text(content)))


@settings(max_examples=300, deadline=None)
@given(query=_TEXT, content=_CONTENT)
def test_query_scan_counts_word_terms(query: str, content: Any) -> None:
    """CX-6: the scanning counter finds the same overlap as intersecting ``word_terms`` sets."""
    terms = frozenset(word_terms(query))
    assert QueryTerms(terms).count(content) == len(terms & frozenset(word_terms(content_text(content))))
