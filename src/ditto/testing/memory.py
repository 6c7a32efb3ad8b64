"""``MemoryStoreContract``: what every MEMORY store promises, as pytest tests."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any

from ..contracts import thaw_json
from ..signal import AbortController
from ..worker.memory import (
    DittoMemoryError,
    MemoryCallOptions,
    MemoryStore,
    MemoryWriteItem,
    create_memory,
)
from ._support import SECRET, captured_logs, run

__all__ = ["MemoryStoreContract"]


def _items(*values: dict[str, Any]) -> list[MemoryWriteItem]:
    return [MemoryWriteItem.model_validate(value) for value in values]


class MemoryStoreContract:
    """Subclass as ``class TestMyStore(MemoryStoreContract)`` and implement:

    * ``store()`` — an async context manager yielding a new, empty store;
    * ``break_writes_of(store, memory_id, secret)`` — arrange (async) that the backend fails,
      with an error whose text contains ``secret``, when a write reaches the record
      ``memory_id`` (a trigger, a constraint, a fault-injecting connection).

    The suite checks, through the store and the MEMORY SDK: write/get/search/delete
    semantics (generated ids, replacement by id, unique keys, request order, counts),
    exact ``keyPrefix`` filtering (no LIKE wildcards, no neighbouring namespaces),
    frozen snapshots, all-or-nothing writes, cancellation before any work, and
    backend failures that are ``MEMORY_BACKEND_ERROR`` with the text hidden and logged.
    The store's keyword search must find a record by one of its words.
    """

    # -- hooks -------------------------------------------------------------------------
    def store(self) -> AbstractAsyncContextManager[MemoryStore]:
        raise NotImplementedError("implement store() as an async context manager")

    async def break_writes_of(self, store: MemoryStore, memory_id: str, secret: str) -> None:
        raise NotImplementedError("implement break_writes_of(store, memory_id, secret)")

    # -- the contract ------------------------------------------------------------------
    def test_contract_write_then_get(self) -> None:
        """Writes return the stored records in order (ids generated when omitted, JSON kept); GET answers
        in request order, omits missing ids and answers a repeated id once; keys select too."""

        async def body() -> None:
            async with self.store() as store:
                content = {"kind": "note", "tags": ["a", "b"], "n": 3, "ok": True, "x": 1.5, "u": "日本語"}
                written = await store.write(_items({"content": content, "metadata": {"source": "unit"}},
                                                   {"id": "b", "key": "k:b", "content": "plain"}))
                assert written[0].id and written[1].id == "b" and written[1].key == "k:b"
                assert thaw_json(written[0].content) == content and written[0].metadata == {"source": "unit"}
                fetched = await store.get(ids=["b", "missing", written[0].id, "b"])
                assert [item.id for item in fetched] == ["b", written[0].id]
                assert [item.id for item in await store.get(keys=["k:b", "k:none"])] == ["b"]

        run(body())

    def test_contract_same_id_replaces_and_keys_are_unique(self) -> None:
        """Writing an existing id replaces the whole record; writing a key under another id replaces the
        record that held the key."""

        async def body() -> None:
            async with self.store() as store:
                await store.write(_items({"id": "a", "key": "k:1", "content": "old", "metadata": {"v": 1}}))
                await store.write(_items({"id": "a", "content": "new"}))
                (item,) = await store.get(ids=["a"])
                assert (item.key, item.content, item.metadata) == (None, "new", None)
                assert await store.get(keys=["k:1"]) == ()
                await store.write(_items({"id": "first", "key": "k:2", "content": "30 days"}))
                await store.write(_items({"id": "second", "key": "k:2", "content": "90 days"}))
                assert await store.get(ids=["first"]) == ()
                assert [item.id for item in await store.get(keys=["k:2"])] == ["second"]

        run(body())

    def test_contract_delete_counts_existing_records(self) -> None:
        """DELETE returns how many records existed; deleted records are gone from GET and SEARCH."""

        async def body() -> None:
            async with self.store() as store:
                await store.write(_items({"id": "a", "key": "ka", "content": "apple pie"},
                                         {"id": "b", "key": "kb", "content": "apple tart"},
                                         {"id": "c", "content": "apple juice"}))
                assert await store.delete(ids=["a", "zzz"]) == 1
                assert await store.delete(keys=["kb"]) == 1
                assert await store.delete(ids=["a"]) == 0
                assert [item.id for item in await store.get(ids=["a", "b", "c"])] == ["c"]
                memory = create_memory(store=store)
                hits = await memory.search({"query": "apple"})
                assert [hit.memory.id for hit in hits] == ["c"]

        run(body())

    def test_contract_search_finds_words_and_respects_limit(self) -> None:
        """Keyword search finds records by their words, at most ``limit`` of them, with finite scores."""

        async def body() -> None:
            async with self.store() as store:
                await store.write(_items(*({"id": f"n{i}", "content": f"backup note number {i}"} for i in range(5)),
                                         {"id": "other", "content": "cooking pasta"}))
                memory = create_memory(store=store)
                hits = await memory.search({"query": "backup", "limit": 3})
                assert 1 <= len(hits) <= 3
                assert {hit.memory.id for hit in hits} <= {f"n{i}" for i in range(5)}
                assert await memory.search({"query": "pasta", "limit": 1}) != ()

        run(body())

    def test_contract_key_prefix_is_exact(self) -> None:
        """``filter.keyPrefix`` selects exactly the keys starting with it: no neighbouring namespace, no
        LIKE/GLOB wildcards, no keyless records."""

        async def body() -> None:
            async with self.store() as store:
                keys = ["tenant:a:1", "tenant:a:2", "tenant:ab:1", "tenant:a", "tenant_a:1", "tenantXa:1",
                        "Tenant:a:3", "t%:x", "t_:y"]
                await store.write(_items(*({"id": f"r{i}", "key": key, "content": "shared words"}
                                           for i, key in enumerate(keys)),
                                         {"id": "nokey", "content": "shared words"}))
                memory = create_memory(store=store)

                async def keys_for(prefix: str) -> set[str | None]:
                    hits = await memory.search({"query": "shared", "limit": 50, "filter": {"keyPrefix": prefix}})
                    return {hit.memory.key for hit in hits}

                assert await keys_for("tenant:a:") == {"tenant:a:1", "tenant:a:2"}
                assert await keys_for("t%") == {"t%:x"}
                assert await keys_for("t_") == {"t_:y"}
                assert await keys_for("tenant:a") == {"tenant:a:1", "tenant:a:2", "tenant:ab:1", "tenant:a"}

        run(body())

    def test_contract_snapshots_are_frozen(self) -> None:
        """Returned records cannot be changed, and changing the written value later changes nothing."""

        async def body() -> None:
            async with self.store() as store:
                source = {"nested": {"list": [1]}}
                (item,) = await store.write(_items({"id": "a", "content": source, "metadata": {"m": 1}}))
                source["nested"]["list"].append(2)
                metadata: Any = item.metadata
                for target, key in ((item.content["nested"], "x"), (metadata, "m")):
                    try:
                        target[key] = 2
                    except TypeError:
                        pass
                    else:
                        raise AssertionError("a returned record must be read-only")
                (again,) = await store.get(ids=["a"])
                assert thaw_json(again.content) == {"nested": {"list": [1]}}

        run(body())

    def test_contract_writes_are_all_or_nothing(self) -> None:
        """A backend failure on the third record of a write leaves none of that write's records stored; the
        caller gets MEMORY_BACKEND_ERROR without the backend's text, which is logged once."""

        async def body() -> None:
            async with self.store() as store:
                await store.write(_items({"id": "before", "content": "kept"}))
                await self.break_writes_of(store, "boom", SECRET)
                memory = create_memory(store=store)
                with captured_logs() as logs:
                    try:
                        await memory.write({"memories": [{"id": "one", "content": "x"}, {"id": "two", "content": "y"},
                                                         {"id": "boom", "content": "z"}]})
                    except DittoMemoryError as error:
                        assert error.code == "MEMORY_BACKEND_ERROR", error
                        assert SECRET not in str(error)
                    else:
                        raise AssertionError("the broken write must fail")
                assert len(logs.with_traceback()) == 1, [record.getMessage() for record in logs.records]
                assert [item.id for item in await store.get(ids=["before", "one", "two", "boom"])] == ["before"]

        run(body())

    def test_contract_cancelled_before_any_work(self) -> None:
        """A fired signal stops a call before it changes anything: MEMORY_CANCELLED, or MEMORY_TIMEOUT for a
        deadline."""

        async def body() -> None:
            async with self.store() as store:
                for reason, code in (("CANCELLED", "MEMORY_CANCELLED"), ("TIMEOUT", "MEMORY_TIMEOUT")):
                    controller = AbortController()
                    controller.abort(reason)
                    try:
                        await store.write(_items({"id": "x", "content": "never"}),
                                          MemoryCallOptions(signal=controller.signal))
                    except DittoMemoryError as error:
                        assert error.code == code, error
                    else:
                        raise AssertionError(f"a fired signal must stop the write with {code}")
                assert await store.get(ids=["x"]) == ()

        run(body())
