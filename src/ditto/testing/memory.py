"""``MemoryStoreContract``: what every MEMORY store promises, as pytest tests."""

from __future__ import annotations

import asyncio
import math
from contextlib import AbstractAsyncContextManager
from typing import Any

from ..contracts import thaw_json
from ..signal import AbortController
from ..worker.memory import (
    DittoMemoryError,
    MemoryCallOptions,
    MemorySearchInput,
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
    A store with the built-in keyword search (``keyword_search = True``, the default) is
    also held to its semantics: exact key, key list and typed metadata filters, listing
    without a query, BM25 ranking with folded and stemmed English and one term per CJK
    character, refused filters/strategies/options, bounded input refused before anything
    is written, and concurrent writers racing for the same keys. Set it to ``False`` for
    a store whose search is another engine; it must still find a record by one of its words.
    """

    keyword_search: bool = True

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

    # -- the built-in keyword search ---------------------------------------------------
    def test_contract_filters_key_list_prefix_and_metadata(self) -> None:
        """Exact key, key in [...], keyPrefix and typed metadata equality (2 == 2.0, "2" != 2, true != 1),
        combined with AND."""
        if not self.keyword_search:
            return

        async def body() -> None:
            async with self.store() as store:
                await store.write(_items(
                    {"id": "k1", "key": "knowledge:acme:retention", "content": "policy text",
                     "metadata": {"tenant": "acme", "version": 2, "public": True, "nested": {"a": 1}}},
                    {"id": "k2", "key": "knowledge:acme:backup", "content": "policy text",
                     "metadata": {"tenant": "acme", "version": 1, "public": False, "owner": None, "one": 1}},
                    {"id": "k3", "key": "knowledge:globex:retention", "content": "policy text",
                     "metadata": {"tenant": "globex", "list": ["acme"]}},
                    {"id": "t1", "key": "retrieval:req1:queries", "content": "policy text"},
                    {"id": "nokey", "content": "policy text", "metadata": {"version": "2", "one": True}}))

                async def ids(filter: dict[str, Any]) -> set[str]:
                    hits = await store.search(MemorySearchInput(query="policy", filter=filter))
                    return {hit.memory.id for hit in hits}

                assert await ids({"key": "knowledge:acme:retention"}) == {"k1"}
                assert await ids({"key": {"in": ["knowledge:acme:backup", "knowledge:globex:retention", "x"]}}) \
                    == {"k2", "k3"}
                assert await ids({"key": {"in": []}}) == set()
                assert await ids({"keyPrefix": "knowledge:acme:"}) == {"k1", "k2"}
                assert await ids({"key_prefix": "retrieval:req1:"}) == {"t1"}
                assert await ids({"metadata": {"tenant": "acme"}}) == {"k1", "k2"}
                assert await ids({"metadata": {"version": 2}}) == {"k1"}
                assert await ids({"metadata": {"version": 2.0}}) == {"k1"}
                assert await ids({"metadata": {"version": "2"}}) == {"nokey"}
                assert await ids({"metadata": {"public": True}}) == {"k1"}
                assert await ids({"metadata": {"public": False}}) == {"k2"}
                assert await ids({"metadata": {"one": 1}}) == {"k2"}
                assert await ids({"metadata": {"one": True}}) == {"nokey"}
                assert await ids({"metadata": {"owner": None}}) == {"k2"}
                assert await ids({"metadata": {"tenant": "acme", "version": 1}}) == {"k2"}
                assert await ids({"metadata": {"list": "acme"}}) == set()  # top-level scalars only
                assert await ids({"keyPrefix": "knowledge:", "metadata": {"tenant": "globex"}}) == {"k3"}

        run(body())

    def test_contract_refuses_what_it_cannot_do(self) -> None:
        """An unsupported filter, strategy or option is MEMORY_INVALID_INPUT, never silently ignored."""
        if not self.keyword_search:
            return

        async def body() -> None:
            async with self.store() as store:
                filters: tuple[dict[str, Any], ...] = (
                    {"tenant": "acme"}, {"key": 5}, {"key": ""}, {"key": {"eq": "x"}}, {"key": {"in": [1]}},
                    {"keyPrefix": ""}, {"keyPrefix": "a\x00"}, {"metadata": {}}, {"metadata": {"a": [1]}},
                    {"metadata": {"a": {"b": 1}}}, {"metadata": {"a": 2**70}})
                requests = [MemorySearchInput(query="x", filter=filter) for filter in filters]
                requests += [MemorySearchInput(query="x", strategy="vector"),
                             MemorySearchInput(query="x", options={"k": 1})]
                for request in requests:
                    try:
                        await store.search(request)
                    except DittoMemoryError as error:
                        assert error.code == "MEMORY_INVALID_INPUT", (request, error)
                    else:
                        raise AssertionError(f"{request!r} must be refused")
                assert await store.search(MemorySearchInput(query="x", strategy="keyword")) == ()

        run(body())

    def test_contract_listing_without_a_query(self) -> None:
        """A None or blank query lists the filtered records, most recently written first, without scores; a
        query with no words finds nothing."""
        if not self.keyword_search:
            return

        async def body() -> None:
            async with self.store() as store:
                await store.write(_items({"id": "a", "key": "ns:a", "content": "x"}))
                await store.write(_items({"id": "b", "key": "ns:b", "content": "y"},
                                         {"id": "c", "key": "other:c", "content": "z"}))
                listed = await store.search(MemorySearchInput(query=None, filter={"keyPrefix": "ns:"}))
                assert [hit.memory.id for hit in listed] == ["b", "a"]
                assert all(hit.score is None for hit in listed)
                assert len(await store.search(MemorySearchInput(query="  ", limit=2))) == 2
                assert await store.search(MemorySearchInput(query="!!! ???")) == ()
                assert await store.search(MemorySearchInput(query=42)) == ()

        run(body())

    def test_contract_ranks_with_bm25(self) -> None:
        """Any query word matches (OR); BM25 ranks (Lucene idf, k1 = 1.2, b = 0.75, scores > 0 even in a tiny
        store); case and diacritics are folded and English stemmed; only string leaves are indexed."""
        if not self.keyword_search:
            return

        async def body() -> None:
            async with self.store() as store:
                await store.write(_items({"id": "a", "content": "red red blue"}, {"id": "b", "content": "blue green"},
                                         {"id": "c", "content": "yellow"}))
                scores = {hit.memory.id: hit.score for hit in await store.search(MemorySearchInput(query="red blue"))}
                n, average, k1, b = 3, 6 / 3, 1.2, 0.75

                def term(tf: int, df: int, length: int) -> float:
                    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                    return idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / average))

                assert set(scores) == {"a", "b"}
                assert math.isclose(scores["a"] or 0, term(2, 1, 3) + term(1, 2, 3), rel_tol=1e-9)
                assert math.isclose(scores["b"] or 0, term(1, 2, 2), rel_tol=1e-9)
                await store.delete(ids=["c"])  # the totals follow deletes and replacements
                await store.write(_items({"id": "b", "content": "green"}))
                (only,) = await store.search(MemorySearchInput(query="red blue"))
                n, average = 2, 4 / 2
                assert only.memory.id == "a" and math.isclose(only.score or 0, term(2, 1, 3) + term(1, 1, 3),
                                                              rel_tol=1e-9)
                await store.write(_items(
                    {"id": "r1", "content": "A backup runs every 6 hours."},
                    {"id": "r2", "content": "Backups are kept for 35 days."},
                    {"id": "cafe", "content": "Café au lait, naïve connections"},
                    {"id": "doc", "content": {"title": "Retention policy", "retentiondays": 90, "tags": ["ninety"]}}))
                hits = await store.search(MemorySearchInput(query="how many days are backups kept"))
                assert [hit.memory.id for hit in hits] == ["r2", "r1"]
                assert all(hit.score is not None and hit.score > 0.1 for hit in hits)
                for query, found in (("BACKUPS", ["r2", "r1"]), ("cafe NAIVE connected", ["cafe"]),
                                     ("ninety", ["doc"]), ("retentiondays", []), ("90", []),
                                     ('"; DROP TABLE x; -- \\ \' | & !', [])):
                    hits = await store.search(MemorySearchInput(query=query))
                    assert sorted(hit.memory.id for hit in hits) == sorted(found), query

        run(body())

    def test_contract_searches_cjk_by_character(self) -> None:
        """Han, Kana and Hangul characters are one term each, so a Chinese question finds Chinese knowledge
        written without spaces, and more shared characters rank higher."""
        if not self.keyword_search:
            return

        async def body() -> None:
            async with self.store() as store:
                await store.write(_items(
                    {"id": "zh", "key": "knowledge:acme:retention",
                     "content": {"kind": "knowledge", "text": "备份保留三十五天。"}},
                    {"id": "zh2", "content": "数据库每六小时备份一次"},
                    {"id": "ja", "content": "バックアップは35日間保存されます"},
                    {"id": "ko", "content": "백업은 35일 동안 보관됩니다"},
                    {"id": "en", "content": "Backups are kept for 35 days."}))
                hits = await store.search(MemorySearchInput(query="备份保留多少天"))
                assert [hit.memory.id for hit in hits][:2] == ["zh", "zh2"]
                assert (hits[0].score or 0) > (hits[1].score or 0) > 0
                assert (await store.search(MemorySearchInput(query="保存")))[0].memory.id == "ja"
                assert (await store.search(MemorySearchInput(query="보관")))[0].memory.id == "ko"
                mixed = await store.search(MemorySearchInput(query="backups 天",
                                                             filter={"key": {"in": ["knowledge:acme:retention"]}}))
                assert [hit.memory.id for hit in mixed] == ["zh"]

        run(body())

    def test_contract_bounds_input_before_writing(self) -> None:
        """Bad records (NUL or lone surrogates in ids and keys, over-long ids, non-finite or cyclic JSON,
        repeated ids or keys, more than 10,000 records) are MEMORY_INVALID_INPUT and nothing is written."""
        if not self.keyword_search:
            return

        async def body() -> None:
            async with self.store() as store:
                cyclic: list[Any] = []
                cyclic.append(cyclic)
                bad: list[list[dict[str, Any]]] = [[{"id": "a\x00b", "content": 1}], [{"key": "k\ud800", "content": 1}],
                       [{"id": "i" * 513, "content": 1}], [{"key": "k" * 1025, "content": 1}],
                       [{"id": "n", "content": float("nan")}], [{"id": "n", "content": {"x": float("inf")}}],
                       [{"id": "n", "content": cyclic}], [{"id": "n", "content": "x", "metadata": {"m": float("nan")}}],
                       [{"id": "d", "content": 1}, {"id": "d", "content": 2}],
                       [{"key": "k", "content": 1}, {"key": "k", "content": 2}],
                       [{"content": "many"}] * 10_001]
                for batch in bad:
                    try:
                        await store.write([MemoryWriteItem.model_construct(**{"id": None, "key": None,
                                                                             "metadata": None, **value})
                                           for value in [{"id": "ok", "content": "fine"}, *batch]])
                    except DittoMemoryError as error:
                        assert error.code == "MEMORY_INVALID_INPUT", error
                    else:
                        raise AssertionError(f"{batch[:1]!r} must be refused")
                assert await store.get(ids=["ok"]) == ()
                selectors: tuple[dict[str, Any], ...] = (
                    {"ids": ["a\x00"]}, {"keys": ["k\udfff"]}, {"ids": ["x"] * 10_001}, {"ids": "abc"}, {},
                    {"ids": ["a"], "keys": ["b"]})
                for selector in selectors:
                    try:
                        await store.get(**selector)
                    except DittoMemoryError as error:
                        assert error.code == "MEMORY_INVALID_INPUT", error
                    else:
                        raise AssertionError(f"get({selector!r}) must be refused")
                stored = await store.write(_items({"id": "u", "key": "k:\u2028", "content": "\x00 nul \U0001f600"}))
                assert (await store.get(keys=["k:\u2028"]))[0].content == stored[0].content == "\x00 nul \U0001f600"

        run(body())

    def test_contract_concurrent_writers_lose_nothing(self) -> None:
        """Many concurrent writes racing for the same keys: every key ends up naming exactly one record,
        every record written under a unique key is there, and search totals count them all."""
        if not self.keyword_search:
            return

        async def body() -> None:
            async with self.store() as store:
                async def writer(n: int) -> None:
                    await store.write(_items({"id": f"own{n}", "key": f"own:{n}", "content": f"record {n} apple"},
                                             {"id": f"race{n}", "key": f"race:{n % 3}", "content": "race apple"}))

                await asyncio.gather(*(writer(n) for n in range(24)))
                own = await store.get(keys=[f"own:{n}" for n in range(24)])
                assert len(own) == 24
                raced = await store.get(keys=["race:0", "race:1", "race:2"])
                assert len(raced) == 3 and len({item.id for item in raced}) == 3
                hits = await store.search(MemorySearchInput(query="apple", limit=100))
                assert len(hits) == 27
                assert len(await store.search(MemorySearchInput(query=None, limit=100,
                                                                filter={"keyPrefix": "race:"}))) == 3

        run(body())
