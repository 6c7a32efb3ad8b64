"""SELECT refusals with the message a caller reads (CX-6): every request field names itself, and a selector or
RAG strategy answer that is not a list of context items is refused naming the service and the entry."""

from __future__ import annotations

from typing import Any

import pytest

from ditto.contracts import Context
from ditto.worker.context import ContextError, create_context, default_select

LIMIT = "must be an integer from 0 to 1000000"


class Answering:
    """A selector / RAG strategy that answers ``answer`` whatever it is asked."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer

    async def select(self, request: Any) -> Any:
        return self.answer


async def _context() -> Context:
    return await create_context().load({"sources": [{"id": "a", "content": "alpha"}]})


async def _refusal(client: Any, request: dict[str, Any]) -> tuple[str, str]:
    with pytest.raises(ContextError) as caught:
        await client.select(request)
    return caught.value.code, caught.value.message


async def test_each_request_field_names_itself() -> None:
    """CX-6: a bad field of a SELECT request is INVALID_INPUT (or STRATEGY_UNAVAILABLE for an unknown kind) with a
    message naming the field, down to the path inside query and strategy.options."""
    client = create_context()
    base = {"context": await _context(), "purpose": "infer"}
    cases: list[tuple[dict[str, Any], tuple[str, str]]] = [
        ({"zzz": 1}, ("INVALID_INPUT", "input has an unknown field 'zzz'")),
        ({"query": float("nan")}, ("INVALID_INPUT", "query is not valid JSON: numbers must be finite")),
        ({"query": {"a": object()}}, ("INVALID_INPUT", "query.a is not valid JSON: object is not a JSON value")),
        ({"limit": -1}, ("INVALID_INPUT", f"limit {LIMIT}")),
        ({"maxTokens": "3"}, ("INVALID_INPUT", f"maxTokens {LIMIT}")),
        ({"purpose": "chat"}, ("INVALID_INPUT", "purpose must be infer or memory")),
        ({"order": "random"}, ("INVALID_INPUT", "order must be ranking or context")),
        ({"context": None}, ("INVALID_INPUT", "context is required")),
        ({"strategy": 3}, ("INVALID_INPUT", "strategy must be an object")),
        ({"strategy": {"kind": 3}}, ("INVALID_INPUT", "strategy.kind must be a string")),
        ({"strategy": {"kind": "magic"}}, ("STRATEGY_UNAVAILABLE", "the selection strategy 'magic' is not supported")),
        ({"strategy": {"kind": "provider", "zzz": 1}}, ("INVALID_INPUT", "strategy has an unknown field 'zzz'")),
        ({"strategy": {"kind": "default", "name": "x"}}, ("INVALID_INPUT", "strategy default does not take name")),
        ({"strategy": {"kind": "rag", "name": "x", "options": {}}},
         ("INVALID_INPUT", "strategy rag does not take name")),
        ({"strategy": {"kind": "provider", "corpus": {"uri": "u"}, "name": "p"}},
         ("INVALID_INPUT", "strategy provider does not take corpus")),
        ({"strategy": {"kind": "provider", "name": ""}}, ("INVALID_INPUT", "strategy.name must be a non-empty string")),
        ({"strategy": {"kind": "provider"}}, ("INVALID_INPUT", "strategy provider needs a name")),
        ({"strategy": {"kind": "provider", "name": "p", "options": 3}},
         ("INVALID_INPUT", "strategy.options must be an object")),
        ({"strategy": {"kind": "provider", "name": "p", "options": {"x": float("inf")}}},
         ("INVALID_INPUT", "strategy.options.x is not valid JSON: numbers must be finite")),
        ({"strategy": {"kind": "rag", "corpus": 5}}, ("INVALID_INPUT", "strategy.corpus must be an object")),
        ({"strategy": {"kind": "rag", "corpus": {"x": 1}}},
         ("INVALID_INPUT", "strategy.corpus has an unknown field 'x'")),
        ({"strategy": {"kind": "rag", "corpus": {}}}, ("INVALID_INPUT", "strategy.corpus.uri is required")),
    ]
    for extra, expected in cases:
        assert await _refusal(client, {**base, **extra}) == expected, extra
    assert await _refusal(client, {"purpose": "infer"}) == ("INVALID_INPUT", "context is required")
    assert await _refusal(client, ["context"]) == ("INVALID_INPUT", "input must be an object")


@pytest.mark.parametrize(("kind", "service", "who"), [("provider", "selector", "selector"),
                                                       ("rag", "ragStrategy", "RAG strategy")])
async def test_bad_service_answers_name_the_service(kind: str, service: str, who: str) -> None:
    """CX-6: a missing selector / RAG strategy is STRATEGY_UNAVAILABLE naming the service to configure; an answer
    that is not an array, or holds a bad item, is INVALID_PROVIDER_OUTPUT naming the service and the entry."""
    strategy = {"kind": kind, "name": "p"} if kind == "provider" else {"kind": kind}
    request = {"context": await _context(), "purpose": "infer", "strategy": strategy}
    assert await _refusal(create_context(), request) == (
        "STRATEGY_UNAVAILABLE", f"strategy {kind} needs services.{service}")
    not_array = ("INVALID_PROVIDER_OUTPUT", f"the {who} must return an array of context items")
    for answer in ("abc", b"abc", {"a": 1}, 5):
        assert await _refusal(create_context(services={service: Answering(answer)}), request) == not_array, answer
    assert await _refusal(create_context(services={service: Answering([{"id": "b", "content": "x"},
                                                                       {"content": "x"}])}), request) == (
        "INVALID_PROVIDER_OUTPUT", f"{who} output[1].id must be a non-empty string")
    chosen = await create_context(services={service: Answering([{"id": "b", "content": "x"}])}).select(request)
    assert chosen.selected_item_ids == ("b",)


async def test_direct_ranking_names_a_bad_input() -> None:
    """CX-6: the default strategy called directly refuses an unknown field or a non-object input by name."""
    context = await _context()
    for request, message in (({"context": context, "purpose": "infer", "zzz": 1}, "input has an unknown field 'zzz'"),
                             ("context", "input must be an object")):
        with pytest.raises(ContextError) as caught:
            default_select(request)
        assert (caught.value.code, caught.value.message) == ("INVALID_INPUT", message)
