"""LOAD (CX-4) and UPDATE (CX-5)."""

from __future__ import annotations

from typing import Any

import pytest

from ditto.contracts import ContextItem, Message, Reference
from ditto.signal import AbortController, CancelledBySignal
from ditto.worker.context import create_context, create_in_memory_context_store
from tests.context.helpers import error_code


async def test_stable_ids_from_canonical_content() -> None:
    """CX-4: Message/Reference ids derive from canonical content; role/name go to metadata."""
    client = create_context()
    first = await client.load({"sources": [
        {"role": "user", "content": {"b": 1, "a": 2}, "name": "ann"},
        Reference(uri="file:///a.md", media_type="text/markdown"),
        Message(role="assistant", content="ok"),
        ContextItem(id="given", content=[1, 2]),
    ]})
    again = await client.load({"sources": [
        Message(role="user", content={"a": 2, "b": 1.0}, name="ann"),
        {"uri": "file:///a.md", "media_type": "text/markdown"},
        {"role": "assistant", "content": "ok"},
        {"id": "given", "content": [1, 2]},
    ]})
    assert [item.id for item in first.items] == [item.id for item in again.items]
    ids = [item.id for item in first.items]
    assert ids[0].startswith("message:") and ids[1].startswith("reference:") and ids[3] == "given"
    assert first.items[0].metadata == {"role": "user", "name": "ann"}
    assert first.items[2].metadata == {"role": "assistant"}
    reference = first.items[1]
    assert reference.source == Reference(uri="file:///a.md", media_type="text/markdown")
    assert reference.content == {"uri": "file:///a.md", "mediaType": "text/markdown"}
    other = await client.load({"sources": [{"role": "user", "content": "x"}, {"role": "system", "content": "x"}]})
    assert other.items[0].id != other.items[1].id


async def test_resolve_references_in_input_order_keeping_identity() -> None:
    """CX-4: resolveReferences calls the resolver in input order and keeps the stable id and source URI."""
    order: list[str] = []

    class Resolver:
        async def resolve(self, reference: Reference, options: Any) -> Any:
            order.append(reference.uri)
            return {"text": f"body of {reference.uri}"}

    client = create_context(services={"referenceResolver": Resolver()})
    sources = [{"uri": "urn:b"}, {"role": "user", "content": "hi"}, {"uri": "urn:a"}]
    plain = await client.load({"sources": sources})
    resolved = await client.load({"sources": sources, "resolveReferences": True})
    assert order == ["urn:b", "urn:a"]
    assert [item.id for item in plain.items] == [item.id for item in resolved.items]
    assert resolved.items[0].content == {"text": "body of urn:b"}
    assert resolved.items[0].source is not None and resolved.items[0].source.uri == "urn:b"
    assert plain.items[0].content == {"uri": "urn:b"}


async def test_unresolved_reference_items_may_exceed_the_inline_limit() -> None:
    """CX-2 CX-4: "引用项允许超出" — an unresolved reference inlines nothing, so maxInlineBytes does not apply.

    A resolved reference and any other item with a ``source`` carry inline content and are checked.
    """
    client = create_context(policy={"maxInlineBytes": 16})
    long_uri = "data:text/plain;base64," + "A" * 200
    loaded = await client.load({"sources": [{"uri": long_uri, "mediaType": "text/plain"}]})
    item = loaded.items[0]
    assert item.content == {"uri": long_uri, "mediaType": "text/plain"}
    updated = await client.update({"context": loaded, "add": [{"id": "n", "content": "short"}]})
    as_dicts = {"items": [{"id": item.id, "content": {"uri": long_uri, "mediaType": "text/plain"},
                           "source": {"uri": long_uri, "mediaType": "text/plain"}}]}
    assert (await client.select({"context": as_dicts, "purpose": "infer"})).selected_item_ids == (item.id,)
    assert len((await client.compress({"context": updated, "maxItems": 2})).items) == 2
    inline = {"id": "x", "content": "y" * 20, "source": {"uri": "urn:a"}}
    assert await error_code(client.load({"sources": [inline]})) == "INLINE_LIMIT_EXCEEDED"
    other_uri = {"id": "x", "content": {"uri": long_uri}, "source": {"uri": "urn:other"}}
    assert await error_code(client.load({"sources": [other_uri]})) == "INLINE_LIMIT_EXCEEDED"
    resolving = create_context(policy={"maxInlineBytes": 16},
                               services={"referenceResolver": lambda reference: "z" * 20})
    assert await error_code(resolving.load({"sources": [{"uri": "urn:a"}], "resolveReferences": True})) == (
        "INLINE_LIMIT_EXCEEDED")


async def test_resolver_errors() -> None:
    """CX-4: RESOLVER_UNAVAILABLE, INVALID_PROVIDER_OUTPUT, INLINE_LIMIT_EXCEEDED from resolution."""
    sources = {"sources": [{"uri": "urn:x"}], "resolveReferences": True}
    assert await error_code(create_context().load(sources)) == "RESOLVER_UNAVAILABLE"
    bad = create_context(services={"referenceResolver": lambda reference: float("inf")})
    assert await error_code(bad.load(sources)) == "INVALID_PROVIDER_OUTPUT"
    big = create_context(policy={"maxInlineBytes": 10}, services={"referenceResolver": lambda ref: "x" * 20})
    assert await error_code(big.load(sources)) == "INLINE_LIMIT_EXCEEDED"
    stored = create_context(services={"referenceResolver": lambda ref: 1,
                                      "stateStore": create_in_memory_context_store()})
    assert await error_code(stored.load({"resolveReferences": True, "scope": {"sessionId": "s"}})) == "INVALID_INPUT"

    class Failing:
        async def resolve(self, reference: Reference) -> Any:
            raise LookupError("secret path /etc/x")

    with pytest.raises(LookupError):  # the application's own exception propagates as-is (seed)
        await create_context(services={"referenceResolver": Failing()}).load(sources)


async def test_resolver_receives_signal_and_cancellation_rejects() -> None:
    """CX-4: the signal reaches the resolver; a cancelled call rejects."""
    controller = AbortController()
    seen: list[Any] = []

    async def resolve(reference: Reference, options: Any) -> str:
        seen.append(options.signal)
        controller.abort()
        options.raise_if_aborted()
        return "never"

    client = create_context(services={"referenceResolver": resolve})
    with pytest.raises(CancelledBySignal):
        await client.load({"sources": [{"uri": "urn:x"}], "resolveReferences": True}, signal=controller.signal)
    assert seen == [controller.signal]


async def test_update_order_remove_add_ingress() -> None:
    """CX-5: removeIds → add → ingress; replace keeps the original position; sourceNode into metadata."""
    client = create_context()
    context = await client.load({"sources": [{"id": i, "content": i} for i in ("a", "b", "c")]})
    updated = await client.update({
        "context": context,
        "remove_ids": ["a"],
        "add": [{"id": "a", "content": "new a"}, {"id": "b", "content": "B"}],
        "ingress": [{"id": "c", "source_node": "TOOL.OBSERVE", "content": "C", "reference": {"uri": "urn:c"},
                     "metadata": {"sourceNode": "spoofed", "k": 1}}],
    })
    assert [(item.id, item.content) for item in updated.items] == [("b", "B"), ("c", "C"), ("a", "new a")]
    assert updated.items[1].metadata == {"k": 1, "sourceNode": "TOOL.OBSERVE"}
    assert updated.items[1].source == Reference(uri="urn:c")
    assert [item.id for item in context.items] == ["a", "b", "c"]  # the input snapshot is untouched


async def test_duplicate_and_missing_removal_policies() -> None:
    """CX-5: duplicate replace|keep-first|reject, missingRemoval ignore|reject."""
    base = [{"id": "a", "content": 1}, {"id": "b", "content": 2}]
    add = {"add": [{"id": "a", "content": 9}]}
    replace = create_context()
    context = await replace.load({"sources": base})
    assert [i.content for i in (await replace.update({"context": context, **add})).items] == [9, 2]
    keep = create_context(policy={"duplicate": "keep-first"})
    assert [i.content for i in (await keep.update({"context": context, **add})).items] == [1, 2]
    reject = create_context(policy={"duplicate": "reject"})
    assert await error_code(reject.update({"context": context, **add})) == "DUPLICATE_ITEM"
    assert await error_code(reject.load({"sources": [*base, base[0]]})) == "DUPLICATE_ITEM"
    assert [i.id for i in (await replace.update({"context": context, "removeIds": ["zz"]})).items] == ["a", "b"]
    strict = create_context(policy={"missingRemoval": "reject"})
    assert await error_code(strict.update({"context": context, "removeIds": ["zz"]})) == "MISSING_ITEM"
    assert await error_code(replace.update({"context": context, "ingress": [{"id": "x", "content": 1}]})) == (
        "INVALID_INPUT")
    assert await error_code(replace.update({"add": []})) == "INVALID_INPUT"


async def test_typed_input_models_match_dicts() -> None:
    """CX-1: typed input models (snake_case or camelCase) behave exactly like dict input."""
    from ditto.worker.context import (
        ContextCompressInput,
        ContextIngressItem,
        ContextLoadInput,
        ContextSelectInput,
        ContextUpdateInput,
    )

    client = create_context(services={"stateStore": create_in_memory_context_store()})
    loaded = await client.load(ContextLoadInput(sources=({"id": "a", "content": 1}, Message(role="user", content="q"))))
    updated = await client.update(ContextUpdateInput.model_validate({
        "context": loaded, "removeIds": ["a"], "add": [{"id": "b", "content": None}],
        "ingress": [ContextIngressItem(id="c", source_node="X.Y", content=None)]}))
    assert [(i.id, i.content) for i in updated.items][1:] == [("b", None), ("c", None)]
    assert updated.items[2].metadata == {"sourceNode": "X.Y"}
    picked = await client.select(ContextSelectInput(context=updated, purpose="infer", max_tokens=100, limit=2))
    assert len(picked.selected_item_ids) == 2
    compressed = await client.compress(ContextCompressInput(context=updated, max_items=1))
    assert [i.id for i in compressed.items] == ["c"]
    await client.load(ContextLoadInput.model_validate({"scope": {"sessionId": "typed"}, "sources": []}))
    assert (await client.load(ContextLoadInput(scope={"session_id": "typed"}))).items == ()  # type: ignore[arg-type]
