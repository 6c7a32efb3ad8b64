"""Issue 18: the shared fast builders of provider results give the very models pydantic would build."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ditto.retrieval import (
    RetrievalCandidate,
    RetrievalCandidateSource,
    RetrievalSearchInput,
    RetrievalSearchOutput,
    RetrievalTarget,
)
from ditto.retrieval._results import trusted_candidate, trusted_output, trusted_source, with_score
from ditto.retrieval.validation import parse_search_output, validate_search_output

_text = st.text(min_size=1, max_size=20).filter(lambda s: s.strip() != "")
_scores = st.floats(allow_nan=False, allow_infinity=False) | st.none()
_metadata = st.none() | st.dictionaries(st.text(max_size=8), st.integers() | st.text(max_size=8), max_size=4)


def _same(made: Any, built: Any) -> None:
    assert made.__class__ is built.__class__
    assert made == built
    assert made.model_fields_set == built.model_fields_set
    assert made.model_dump() == built.model_dump()
    assert made.to_json_dict() == built.to_json_dict()
    assert made.__pydantic_extra__ == built.__pydantic_extra__
    assert made.__pydantic_private__ == built.__pydantic_private__


@given(_text, _text | st.none(), _text | st.none(), _scores, _metadata)
def test_trusted_candidate_equals_model_construct(cid: str, target: str | None, ref: str | None,
                                                  score: float | None, metadata: dict[str, Any] | None) -> None:
    """Issue 18: ``trusted_candidate``/``trusted_source`` build what ``model_construct`` with every field builds."""
    source = trusted_source(target, ref)
    _same(source, RetrievalCandidateSource.model_construct(target=target, ref=ref))
    made = trusted_candidate(cid, "passage", score, source, metadata)
    _same(made, RetrievalCandidate.model_construct(id=cid, content="passage", score=score, source=source,
                                                   metadata=metadata))
    if score is not None and source.target is not None and source.ref is not None:
        validated = RetrievalCandidate.model_validate({"id": cid, "content": "passage", "score": score,
                                                       "source": {"target": target, "ref": ref},
                                                       "metadata": metadata})
        assert made == validated


@given(st.lists(st.tuples(_text, _scores), max_size=5), _text | st.none(), _scores.filter(lambda s: s is not None))
def test_trusted_output_and_with_score(hits: list[tuple[str, float | None]], strategy: str | None,
                                       new_score: float) -> None:
    """Issue 18: ``trusted_output`` equals ``model_construct``; ``with_score`` equals ``model_copy`` (set fields
    included), and both pass the output checks a worker applies."""
    target = RetrievalTarget(name="kb")
    candidates = tuple(trusted_candidate(cid, cid, score, None, None) for cid, score in hits)
    made = trusted_output(candidates, target, strategy)
    _same(made, RetrievalSearchOutput.model_construct(candidates=candidates, strategy=strategy, target=target,
                                                      metadata=None))
    assert parse_search_output(made) is made
    request = RetrievalSearchInput(query={"content": "q"}, target=target)
    assert validate_search_output(made, request, limit=10, strategy=strategy).candidates == candidates
    partial = RetrievalCandidate(content="only content")  # few fields set, as a hand-written provider gives
    for candidate in (*candidates, partial):
        _same(with_score(candidate, new_score), candidate.model_copy(update={"score": new_score}))
    assert partial.score is None  # the original is left as it was


def test_with_score_keeps_subclasses() -> None:
    """Issue 18: a candidate subclass is re-scored through ``model_copy`` and stays that class."""

    class Tagged(RetrievalCandidate):
        pass

    tagged = Tagged(id="a", content="x", score=1.0)
    again = with_score(tagged, 2.5)
    assert type(again) is Tagged and again.score == 2.5 and tagged.score == 1.0
