"""Issue 20: retrieval in one line — ``RetrievalTargetRegistry.single``, a plain-string search when the
target is unambiguous, errors that name the bad document, and a signpost for ``providers={"docs": p}``
(RET-2 factories, RET-3 registry, RET-1 input validation)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ditto import InvalidArgumentError, create_ditto
from ditto.retrieval import (
    RetrievalError,
    RetrievalTargetRegistry,
    create_retrieval,
    create_retrieval_worker,
    create_text_search_provider,
)

DOCS = [{"id": "backup", "content": "Backups run nightly and the backup policy keeps them 30 days."},
        {"id": "cats", "content": "Cats sleep most of the day."}]


async def test_single_target_registry_and_a_plain_string_search() -> None:
    """RET-3: ``single`` is a one-target registry with one strategy; the SDK and the worker take a string."""
    provider = create_text_search_provider(DOCS)
    registry = RetrievalTargetRegistry.single(provider)
    assert registry.targets() == {"default": ("bm25", ("bm25",))}
    retrieval = create_retrieval(registry)
    result = await retrieval.search("backup policy")
    assert result.status == "success" and result.output is not None
    assert [candidate.id for candidate in result.output.candidates] == ["backup"]
    assert result.output.strategy == "bm25"
    named = RetrievalTargetRegistry.single(provider, target="docs", strategy="keyword")
    assert named.targets() == {"docs": ("keyword", ("keyword",))}
    runtime = create_ditto(workers=[create_retrieval_worker(named)])
    try:
        invoked = await runtime.invoke("RETRIEVAL.SEARCH", "sleep")
        assert invoked.status == "success" and [c.id for c in invoked.output.candidates] == ["cats"]
    finally:
        await runtime.close()


async def test_a_plain_string_needs_an_unambiguous_target() -> None:
    """With two targets a string is RETRIEVAL_INVALID_INPUT that shows the request shape to send."""
    provider = create_text_search_provider(DOCS)
    two = RetrievalTargetRegistry({name: {"default_strategy": "bm25", "providers": {"bm25": provider}}
                                   for name in ("a", "b")})
    result = await create_retrieval(two).search("backup")
    assert result.status == "error" and result.error is not None
    assert result.error.code == "RETRIEVAL_INVALID_INPUT" and "'target': {'name'" in result.error.message


@settings(max_examples=40, deadline=None)
@given(text=st.one_of(st.text(max_size=50), st.just("\x00"), st.just("\ud800"), st.just("x" * 100_000)))
async def test_plain_string_queries_are_validated_like_requests(text: str) -> None:
    """RET-1: any string (NUL, lone surrogate, 100 kB) ends as success or a documented code, never raises."""
    retrieval = create_retrieval(RetrievalTargetRegistry.single(create_text_search_provider(DOCS)))
    result = await retrieval.search(text)
    assert result.status == "success" or (result.error is not None and result.error.code.startswith("RETRIEVAL_"))


@pytest.mark.parametrize("factory", [create_retrieval, create_retrieval_worker])
def test_a_mapping_of_bare_providers_says_which_shape_is_expected(factory: Any) -> None:
    """``providers={"docs": p}`` names the target and shows both registry forms, instead of "unknown options"."""
    provider = create_text_search_provider(DOCS)
    with pytest.raises(InvalidArgumentError) as caught:
        factory({"docs": provider})
    message = str(caught.value)
    assert "'docs'" in message and "RetrievalTargetRegistry.single(provider" in message
    assert '"providers": {"bm25": provider}' in message
    with pytest.raises(InvalidArgumentError, match=r"unknown retrieval options: .typo.; .* options mapping of conc"):
        factory({"typo": 3})


@pytest.mark.parametrize(("documents", "expected"), [
    ([DOCS[0], {"content": "no id"}], "document 1 is invalid: id: Field required"),
    ([DOCS[0], {"id": "b", "content": None}], "document 1 (id 'b') is invalid: content"),
    ([DOCS[0], "just text"], "document 1 is invalid"),
    ([{"id": "", "content": "x"}], "document 0 is invalid: id"),
    ([{"id": "m", "content": "x", "metadata": {"k": float("nan")}}], "document 0 (id 'm') is invalid: metadata"),
    ([DOCS[0], DOCS[1], {"id": "backup", "content": "again"}], "document 2 repeats the id 'backup' of document 0"),
    ([{"id": "x" * 10_000, "content": 1}], "(id 'xxxxxxxx"),
])
def test_a_bad_document_is_named_by_position_and_id(documents: list[Any], expected: str) -> None:
    """RET-1: the message says which document is wrong and what is wrong with it, with long ids cut."""
    with pytest.raises(RetrievalError) as caught:
        create_text_search_provider(documents)
    assert caught.value.code == "RETRIEVAL_INVALID_INPUT"
    assert expected in caught.value.message and len(caught.value.message) < 400
