"""LOAD and UPDATE refusals with their public messages (CX-4, CX-5, CX-9).

Each case pins the code and the exact message a caller reads, so a refusal that names the wrong field
(``sources[1]`` instead of ``sources[1].role``), or is raised from the wrong branch, is caught.
"""

from __future__ import annotations

from typing import Any

import pytest

from ditto.contracts import ContextItem, Message
from ditto.worker.context import (
    ContextError,
    create_context,
    create_context_execution,
    create_in_memory_context_store,
    run_load,
    run_update,
)


async def _refusal(awaitable: Any) -> tuple[str, str]:
    with pytest.raises(ContextError) as caught:
        await awaitable
    return caught.value.code, caught.value.message


class _Repeat:
    """A resolver answering every reference with ``"x" * length``."""

    def __init__(self, length: int) -> None:
        self.length = length

    async def resolve(self, reference: Any) -> str:
        return "x" * self.length


async def test_load_source_refusals_name_the_source_and_field() -> None:
    """CX-4: each bad LOAD source is refused as INVALID_INPUT naming ``sources[i]`` and the field."""
    client = create_context()
    ok = {"id": "ok", "content": 1}
    cases: list[tuple[Any, str]] = [
        (5, "sources[1] must be a message, a reference or a context item"),
        ({"text": "x"}, "sources[1] must be a message, a reference or a context item"),
        ({"id": "", "content": 1}, "sources[1].id must be a non-empty string"),
        ({"id": "x"}, "sources[1].content is required"),
        ({"id": "x", "content": 1, "metadata": [1]}, "sources[1].metadata must be an object"),
        ({"id": "x", "content": {"k": [1, float("inf")]}}, "sources[1].content.k[1] is not valid JSON: "
                                                           "numbers must be finite"),
        ({"id": "x", "content": 1, "source": {"mediaType": "t"}}, "sources[1].source.uri is required"),
        ({"role": "user"}, "sources[1].content is required"),
        ({"role": "", "content": "x"}, "sources[1].role must be a non-empty string"),
        ({"role": "user", "content": "x", "name": 3}, "sources[1].name must be a non-empty string"),
        ({"role": "user", "content": float("nan")}, "sources[1].content is not valid JSON: numbers must be finite"),
        ({"role": "user", "content": "x", "extra": 1}, "sources[1] has an unknown field 'extra'"),
        ({"uri": ""}, "sources[1].uri must be a non-empty string"),
        ({"uri": "urn:a", "mediaType": 7}, "sources[1].mediaType must be a non-empty string"),
        ({"uri": "urn:a", "digest": ""}, "sources[1].digest must be a non-empty string"),
        ({"uri": "urn:a", "size": 1}, "sources[1] has an unknown field 'size'"),
        (Message(role="user", content=float("nan")), "sources[1].content is not valid JSON: numbers must be finite"),
        (ContextItem(id="x", content=[float("inf")]),
         "sources[1].content[0] is not valid JSON: numbers must be finite"),
    ]
    for source, message in cases:
        assert await _refusal(client.load({"sources": [ok, source]})) == ("INVALID_INPUT", message), source


async def test_load_request_refusals() -> None:
    """CX-4: sources must be an array, resolveReferences a boolean, and resolving needs a resolver."""
    client = create_context()
    assert await _refusal(client.load({})) == ("INVALID_INPUT", "sources must be an array")
    assert await _refusal(client.load({"sources": [], "resolveReferences": "yes"})) == (
        "INVALID_INPUT", "resolveReferences must be a boolean")
    assert await _refusal(client.load({"sources": [{"uri": "urn:a"}], "resolveReferences": True})) == (
        "RESOLVER_UNAVAILABLE", "resolveReferences needs services.referenceResolver")
    # No resolver is needed when the switch is off, even with references among the sources.
    plain = await client.load({"sources": [{"uri": "urn:a"}], "resolveReferences": False})
    assert plain.items[0].content == {"uri": "urn:a"}


async def test_load_resolution_and_merge_refusals() -> None:
    """CX-4: a resolver's non-JSON answer, an oversized resolved item and a duplicate id are refused with
    messages that name the reference, the item and the limit."""
    bad = create_context(services={"referenceResolver": lambda reference: {"v": float("inf")}})
    assert await _refusal(bad.load({"sources": [{"uri": "urn:x"}], "resolveReferences": True})) == (
        "INVALID_PROVIDER_OUTPUT", "the resolved content of 'urn:x'.v is not valid JSON: numbers must be finite")
    for length, fits in ((8, True), (9, False)):  # JSON bytes: the string plus its two quotes
        resolving = create_context(policy={"maxInlineBytes": 10},
                                   services={"referenceResolver": _Repeat(length)})
        load = resolving.load({"sources": [{"uri": "urn:x"}], "resolveReferences": True})
        if fits:
            assert (await load).items[0].content == "x" * 8
        else:
            code, message = await _refusal(load)
            assert code == "INLINE_LIMIT_EXCEEDED"
            assert message.startswith("item 'reference:")
            assert message.endswith("has more than 10 bytes of inline content")
    strict = create_context(policy={"maxInlineBytes": 4, "duplicate": "reject"})
    assert await _refusal(strict.load({"sources": [{"id": "big", "content": "abcd"}]})) == (
        "INLINE_LIMIT_EXCEEDED", "item 'big' has more than 4 bytes of inline content")
    assert [i.id for i in (await strict.load({"sources": [{"id": "fit", "content": "ab"}]})).items] == ["fit"]
    assert await _refusal(strict.load({"sources": [{"id": "a", "content": 1}, {"id": "a", "content": 2}]})) == (
        "DUPLICATE_ITEM", "an item with id 'a' already exists")


async def test_update_refusals_name_the_list_entry_and_field() -> None:
    """CX-5: each bad UPDATE part is refused as INVALID_INPUT naming the list, the index and the field."""
    client = create_context()
    context = await client.load({"sources": [{"id": "a", "content": 1}, {"id": "b", "content": 2}]})
    ingress = {"id": "obs", "sourceNode": "TOOL.OBSERVE", "content": 1}
    cases: list[tuple[dict[str, Any], str]] = [
        ({"add": []}, "context is required"),
        ({"context": "x"}, "context must be an object"),
        ({"context": {"items": "ab"}}, "context.items must be an array"),
        ({"context": {"items": [{"id": "a", "content": 1}, {"id": "", "content": 1}]}},
         "context.items[1].id must be a non-empty string"),
        ({"context": {"items": [{"id": "a", "content": 1}, {"id": "a", "content": 2}]}},
         "context contains the id 'a' twice"),
        ({"context": context, "removeIds": ["a", 3]}, "removeIds[1] must be a non-empty string"),
        ({"context": context, "removeIds": [""]}, "removeIds[0] must be a non-empty string"),
        ({"context": context, "add": [{"id": "c", "content": 1}, {"id": "d"}]}, "add[1].content is required"),
        ({"context": context, "add": [{"id": 4, "content": 1}]}, "add[0].id must be a non-empty string"),
        ({"context": context, "add": [{"id": "c", "content": 1, "metadata": "m"}]},
         "add[0].metadata must be an object"),
        ({"context": context, "add": [{"id": "c", "content": [float("nan")]}]},
         "add[0].content[0] is not valid JSON: numbers must be finite"),
        ({"context": context, "add": [{"id": "c", "content": 1, "source": {"uri": ""}}]},
         "add[0].source.uri must be a non-empty string"),
        ({"context": context, "add": [5]}, "add[0] must be an object"),
        ({"context": context, "ingress": [ingress, 5]}, "ingress[1] must be an object"),
        ({"context": context, "ingress": [{**ingress, "tag": 1}]}, "ingress[0] has an unknown field 'tag'"),
        ({"context": context, "ingress": [{"sourceNode": "X.Y", "content": 1}]}, "ingress[0] needs id and sourceNode"),
        ({"context": context, "ingress": [{"id": "i", "content": 1}]}, "ingress[0] needs id and sourceNode"),
        ({"context": context, "ingress": [{**ingress, "id": 7}]}, "ingress[0].id must be a non-empty string"),
        ({"context": context, "ingress": [{**ingress, "sourceNode": ""}]},
         "ingress[0].sourceNode must be a non-empty string"),
        ({"context": context, "ingress": [{**ingress, "content": float("inf")}]},
         "ingress[0].content is not valid JSON: numbers must be finite"),
        ({"context": context, "ingress": [{**ingress, "metadata": [1]}]}, "ingress[0].metadata must be an object"),
        ({"context": context, "ingress": [{**ingress, "metadata": {"k": float("nan")}}]},
         "ingress[0].metadata.k is not valid JSON: numbers must be finite"),
        ({"context": context, "ingress": [{**ingress, "reference": {"mediaType": "t"}}]},
         "ingress[0].reference.uri is required"),
        ({"context": context, "ingress": [{**ingress, "reference": {"uri": "u", "digest": 1}}]},
         "ingress[0].reference.digest must be a non-empty string"),
    ]
    for request, message in cases:
        assert await _refusal(client.update(request)) == ("INVALID_INPUT", message), request


async def test_update_inline_limit_applies_to_context_add_and_ingress() -> None:
    """CX-2/CX-5: the inline limit is checked for the given context, the added items and ingress items, and
    the message names the item and the limit."""
    client = create_context(policy={"maxInlineBytes": 5})
    small = await client.load({"sources": [{"id": "a", "content": "abc"}]})  # 5 bytes: at the limit
    big = "abcd"  # 6 JSON bytes
    cases: list[tuple[dict[str, Any], str]] = [
        ({"context": {"items": [{"id": "huge", "content": big}]}}, "huge"),
        ({"context": small, "add": [{"id": "added", "content": big}]}, "added"),
        ({"context": small, "ingress": [{"id": "in", "sourceNode": "X.Y", "content": big}]}, "in"),
    ]
    for request, item_id in cases:
        assert await _refusal(client.update(request)) == (
            "INLINE_LIMIT_EXCEEDED", f"item {item_id!r} has more than 5 bytes of inline content")
    fine = await client.update({"context": small, "add": [{"id": "b", "content": "xyz"}],
                                "ingress": [{"id": "c", "sourceNode": "X.Y", "content": "xyz"}]})
    assert [item.id for item in fine.items] == ["a", "b", "c"]


async def test_resolve_references_without_sources_is_invalid_input_with_or_without_a_store() -> None:
    """CX-4/CX-9: a scoped LOAD asking to resolve references but giving no sources is INVALID_INPUT whether
    or not a state store is configured (the request itself is malformed, whatever the deployment)."""
    expected = ("INVALID_INPUT", "resolveReferences needs sources")
    request = {"scope": {"sessionId": "s"}, "resolveReferences": True}
    assert await _refusal(create_context().load(request)) == expected
    stored = create_context(services={"stateStore": create_in_memory_context_store()})
    assert await _refusal(stored.load(request)) == expected
    # Without the switch, a sourceless scoped LOAD is a read: no store is still STATE_STORE_UNAVAILABLE.
    assert await _refusal(create_context().load({"scope": {"sessionId": "s"}, "resolveReferences": False})) == (
        "STATE_STORE_UNAVAILABLE", "scope requests need redis or services.stateStore")
    assert await _refusal(stored.load({"scope": {"sessionId": "s"}, "resolveReferences": False})) == (
        "CONTEXT_NOT_FOUND", "no cached context for this scope (missing or expired)")


async def test_run_load_and_run_update_check_their_input_directly() -> None:
    """CX-4/CX-5: the public run_load / run_update (for custom workers, without the SDK) refuse a non-object
    input and unknown fields with messages naming ``input``, and work on a plain dict."""
    execution = create_context_execution()
    for run in (run_load, run_update):
        with pytest.raises(ContextError) as caught:
            await run("x", execution)
        assert (caught.value.code, caught.value.message) == ("INVALID_INPUT", "input must be an object")
        with pytest.raises(ContextError) as caught:
            await run({"scope": {"sessionId": "s"}}, execution)
        assert (caught.value.code, caught.value.message) == ("INVALID_INPUT", "input has an unknown field 'scope'")
    loaded = await run_load({"sources": [{"id": "a", "content": 1}]}, execution)
    updated = await run_update({"context": loaded, "add": [{"id": "b", "content": 2}]}, execution)
    assert [item.id for item in updated.items] == ["a", "b"]
