"""``RetrievalProviderContract``: what every RETRIEVAL search provider promises, as pytest tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, ClassVar

from ..retrieval import (
    RetrievalCandidate,
    RetrievalDefaults,
    RetrievalError,
    RetrievalExecutionContext,
    RetrievalSearchInput,
    RetrievalSearchOutput,
    RetrievalSearchProvider,
    RetrievalTargetRegistry,
    create_retrieval,
)
from ..retrieval.validation import parse_search_output, validate_search_output
from ..signal import AbortController
from ._support import SECRET, captured_logs, run

__all__ = ["CONTRACT_DOCUMENTS", "RetrievalProviderContract"]

#: The corpus every provider under test serves (ids, text and metadata for filters).
CONTRACT_DOCUMENTS: tuple[Mapping[str, Any], ...] = (
    {"id": "d1", "content": "Agent memory migration guide for long running agents",
     "metadata": {"year": 2024, "lang": "en"}},
    {"id": "d2", "content": "Memory allocators and garbage collection in runtimes",
     "metadata": {"year": 2021, "lang": "en"}},
    {"id": "d3", "content": "Migrating agent state between memory stores safely",
     "metadata": {"year": 2025, "lang": "en"}},
    {"id": "d4", "content": "Agent memory notes for the weekly review",
     "metadata": {"year": 2024, "lang": "en"}},
    {"id": "d5", "content": "Cooking pasta with tomatoes and basil",
     "metadata": {"year": 2019, "lang": "en"}},
    {"id": "d6", "content": "Weekly review of agent memory incidents",
     "metadata": {"year": 2023, "lang": "en"}},
)


class RetrievalProviderContract:
    """Subclass as ``class TestMyProvider(RetrievalProviderContract)`` and implement:

    * ``provider()`` — an async context manager yielding the provider, serving
      :attr:`documents` (ids, contents, metadata) for target ``{"name": "kb"}``;
    * ``failing_provider(secret)`` — the same kind of provider whose backend fails
      with an error whose text contains ``secret`` (a dropped table, an unknown host);
    * ``honoured_filter`` (a ``{field: value}`` equality filter the provider applies to
      document metadata) and/or ``refused_filter`` (a filter it refuses with
      ``RETRIEVAL_INVALID_INPUT``); at least one of them;
    * optionally ``query`` (default ``"agent memory"``; a vector for vector-only
      providers) and ``candidate_document_id(candidate)`` when candidate ids are not
      the document ids.

    The suite checks: plain-dict input, the output contract (shape, count ≤ limit, the
    request's target and strategy), limit precedence, cancellation before any work,
    hidden and logged backend failures, filters honoured or refused, bad input refused.
    """

    documents: ClassVar[tuple[Mapping[str, Any], ...]] = CONTRACT_DOCUMENTS
    query: ClassVar[Any] = "agent memory"
    strategy: ClassVar[str] = "contract"
    honoured_filter: ClassVar[Mapping[str, Any] | None] = None
    refused_filter: ClassVar[Mapping[str, Any] | None] = None

    # -- hooks -------------------------------------------------------------------------
    def provider(self) -> AbstractAsyncContextManager[RetrievalSearchProvider]:
        raise NotImplementedError("implement provider() as an async context manager")

    def failing_provider(self, secret: str) -> AbstractAsyncContextManager[RetrievalSearchProvider]:
        raise NotImplementedError("implement failing_provider(secret) as an async context manager")

    def candidate_document_id(self, candidate: RetrievalCandidate) -> str | None:
        return candidate.id

    # -- helpers -----------------------------------------------------------------------
    def request(self, **extra: Any) -> dict[str, Any]:
        """A plain-dict search request for the contract's query."""
        return {"query": {"content": self.query}, "target": {"name": "kb"}, "strategy": self.strategy, **extra}

    def _ids(self, output: RetrievalSearchOutput) -> list[str | None]:
        return [self.candidate_document_id(candidate) for candidate in output.candidates]

    def _matching(self, filter: Mapping[str, Any]) -> set[str]:
        return {str(document["id"]) for document in self.documents
                if all(document.get("metadata", {}).get(field) == value for field, value in filter.items())}

    async def _search(self, provider: RetrievalSearchProvider, request: Mapping[str, Any],
                      context: RetrievalExecutionContext | None = None) -> RetrievalSearchOutput:
        raw = await provider.search(request, context)  # type: ignore[arg-type]  # dicts are accepted too
        return parse_search_output(raw)

    # -- the contract ------------------------------------------------------------------
    def test_contract_answers_a_plain_dict_request(self) -> None:
        """Dict input works; the output is valid for the request (shape, count, target, strategy)."""

        async def body() -> None:
            async with self.provider() as provider:
                request = self.request(limit=3)
                output = validate_search_output(await provider.search(request, None),  # type: ignore[arg-type]
                                                RetrievalSearchInput.model_validate(request), limit=3,
                                                strategy=self.strategy)
                assert 1 <= len(output.candidates) <= 3, "the contract query must find something"
                assert output.strategy == self.strategy
                known = {str(document["id"]) for document in self.documents}
                assert set(self._ids(output)) <= known, "candidates must be the served documents"

        run(body())

    def test_contract_limit_is_respected(self) -> None:
        """At most ``limit`` candidates; without a limit, ``context.defaults.search_limit`` applies."""

        async def body() -> None:
            async with self.provider() as provider:
                for limit in (1, 2):
                    assert len((await self._search(provider, self.request(limit=limit))).candidates) <= limit
                context = RetrievalExecutionContext(defaults=RetrievalDefaults(search_limit=1))
                assert len((await self._search(provider, self.request(), context)).candidates) <= 1

        run(body())

    def test_contract_through_the_sdk(self) -> None:
        """Registered under a strategy, the provider passes the SDK's output checks: the request's target
        (namespace and metadata included) and the chosen strategy come back, count ≤ limit."""

        async def body() -> None:
            async with self.provider() as provider:
                registry = RetrievalTargetRegistry({"kb": {"default_strategy": self.strategy,
                                                           "providers": {self.strategy: provider}}})
                target = {"name": "kb", "namespace": "tenant-a", "metadata": {"team": "x"}}
                request = {key: value for key, value in self.request(limit=2, target=target).items()
                           if key != "strategy"}
                result = await create_retrieval(registry).search(request)
                assert result.status == "success", result.error
                assert result.output is not None and len(result.output.candidates) <= 2
                assert result.output.strategy == self.strategy
                assert result.output.target.model_dump(exclude_none=True) == target

        run(body())

    def test_contract_cancelled_before_any_work(self) -> None:
        """A fired signal stops the call: RETRIEVAL_CANCELLED (status cancelled), or RETRIEVAL_TIMEOUT for a
        deadline; through the SDK the NodeResult has that status."""

        async def body() -> None:
            async with self.provider() as provider:
                for reason, code in (("CANCELLED", "RETRIEVAL_CANCELLED"), ("TIMEOUT", "RETRIEVAL_TIMEOUT")):
                    controller = AbortController()
                    controller.abort(reason)
                    context = RetrievalExecutionContext(signal=controller.signal)
                    try:
                        await provider.search(self.request(), context)  # type: ignore[arg-type]
                    except RetrievalError as error:
                        assert error.code == code, error
                    else:
                        raise AssertionError(f"a fired signal must stop the search with {code}")
                registry = RetrievalTargetRegistry({"kb": {"default_strategy": self.strategy,
                                                           "providers": {self.strategy: provider}}})
                controller = AbortController()
                controller.abort()
                result = await create_retrieval(registry).search(self.request(), None, {"signal": controller.signal})
                assert (result.status, result.error and result.error.code) == ("cancelled", "RETRIEVAL_CANCELLED")

        run(body())

    def test_contract_backend_failure_is_hidden_and_logged(self) -> None:
        """A backend failure is RETRIEVAL_BACKEND_ERROR; its text (here a secret) never reaches the caller
        and is logged once, with its traceback."""

        async def body() -> None:
            async with self.failing_provider(SECRET) as provider:
                registry = RetrievalTargetRegistry({"kb": {"default_strategy": self.strategy,
                                                           "providers": {self.strategy: provider}}})
                with captured_logs() as logs:
                    result = await create_retrieval(registry).search(self.request())
                assert result.status == "error" and result.error is not None
                assert result.error.code == "RETRIEVAL_BACKEND_ERROR", result.error
                assert SECRET not in result.error.message
                assert len(logs.with_traceback()) == 1, [record.getMessage() for record in logs.records]
                try:
                    await provider.search(self.request(), None)  # type: ignore[arg-type]
                except RetrievalError as error:
                    assert SECRET not in str(error)
                except Exception:
                    pass

        run(body())

    def test_contract_filters_are_honoured_or_refused(self) -> None:
        """A filter is applied (every candidate matches it) or refused with RETRIEVAL_INVALID_INPUT; never
        silently ignored."""
        assert self.honoured_filter is not None or self.refused_filter is not None, \
            "declare honoured_filter and/or refused_filter"

        async def body() -> None:
            async with self.provider() as provider:
                if self.honoured_filter is not None:
                    allowed = self._matching(self.honoured_filter)
                    output = await self._search(provider, self.request(filter=dict(self.honoured_filter)))
                    assert output.candidates, "the honoured filter must leave matches for the contract query"
                    assert set(self._ids(output)) <= allowed, (self._ids(output), allowed)
                if self.refused_filter is not None:
                    try:
                        await provider.search(self.request(filter=dict(self.refused_filter)), None)  # type: ignore[arg-type]
                    except RetrievalError as error:
                        assert error.code == "RETRIEVAL_INVALID_INPUT", error
                    else:
                        raise AssertionError("the refused filter must be refused, not ignored")

        run(body())

    def test_contract_bad_input_is_invalid_input(self) -> None:
        """Called directly with a malformed request, the provider answers RETRIEVAL_INVALID_INPUT."""

        async def body() -> None:
            async with self.provider() as provider:
                bad: Sequence[Mapping[str, Any]] = (
                    {"target": {"name": "kb"}},
                    {"query": {"content": self.query}, "target": {"name": ""}},
                    {"query": {"content": self.query}, "target": {"name": "kb"}, "limit": 0},
                )
                for request in bad:
                    try:
                        await provider.search(request, None)  # type: ignore[arg-type]
                    except RetrievalError as error:
                        assert error.code == "RETRIEVAL_INVALID_INPUT", error
                    else:
                        raise AssertionError(f"{dict(request)!r} must be refused")

        run(body())
