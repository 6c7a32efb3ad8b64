"""The default SQLite store: schema, writes, key namespaces, filters, FTS5 search (MEM-2)."""

from __future__ import annotations

import asyncio
import math
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from pydantic import ValidationError

from ditto.contracts import thaw_json
from ditto.signal import AbortController, CancelSignal
from ditto.worker.memory import (
    DittoMemoryError,
    MemoryCallOptions,
    MemorySearchInput,
    MemoryWriteItem,
    SqliteMemoryStore,
    create_memory,
    create_sqlite_memory_store,
)
from ditto.worker.memory._filters import prefix_upper_bound
from ditto.worker.memory._fts import match_expression, query_tokens

from .schema_versions import as_older_version


def items(*specs: dict[str, Any]) -> list[MemoryWriteItem]:
    return [MemoryWriteItem.model_validate(spec) for spec in specs]


async def test_file_is_wal_with_expected_schema(store: SqliteMemoryStore, db_path: Path) -> None:
    """MEM-2: one SQLite file in WAL mode with a records table and an FTS5 index."""
    await store.write(items({"content": "hello"}))
    with sqlite3.connect(db_path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert raw.execute("PRAGMA user_version").fetchone()[0] == 3
        columns = [row[1] for row in raw.execute("PRAGMA table_info(memory_records)")]
        assert columns == ["seq", "id", "key", "content", "metadata", "length", "created_at", "updated_at"]
        assert raw.execute("SELECT records, tokens FROM memory_stats").fetchone() == (1, 1)
        sql = raw.execute("SELECT sql FROM sqlite_master WHERE name = 'memory_fts'").fetchone()[0]
        assert "fts5" in sql.lower()
        created, updated = raw.execute("SELECT created_at, updated_at FROM memory_records").fetchone()
        assert created == updated and created.endswith("+00:00")


async def test_nothing_is_opened_before_the_first_call(db_path: Path) -> None:
    """MEM-2: creating the store does no I/O; the file appears on first use."""
    store = create_sqlite_memory_store(db_path)
    assert not await asyncio.to_thread(db_path.exists)
    await store.get(ids=["x"])
    assert await asyncio.to_thread(db_path.exists)
    await store.close()


async def test_write_generates_ids_and_round_trips_json(store: SqliteMemoryStore) -> None:
    """MEM-1/MEM-2: ids default to uuid4 hex; content is any JSON and comes back equal."""
    content = {"kind": "knowledge", "tags": ["a", "b"], "n": 3, "ok": True, "none": None, "x": 1.5, "u": "日本語"}
    written = await store.write(items({"content": content, "metadata": {"source": "unit"}}, {"content": [1, 2]},
                                      {"content": None}, {"content": "plain"}))
    assert [len(item.id) for item in written] == [32, 32, 32, 32]
    assert all(int(item.id, 16) >= 0 for item in written)
    fetched = await store.get(ids=[item.id for item in written])
    assert fetched == written
    assert thaw_json(fetched[0].content) == content and fetched[0].metadata == {"source": "unit"}
    assert fetched[1].content == (1, 2) and fetched[2].content is None and fetched[3].content == "plain"


async def test_returned_items_are_frozen_snapshots(store: SqliteMemoryStore) -> None:
    """MEM-1: callers cannot change stored state through a returned item."""
    source = {"nested": {"list": [1]}}
    (item,) = await store.write(items({"id": "a", "content": source, "metadata": {"m": 1}}))
    source["nested"]["list"].append(2)
    with pytest.raises(TypeError):
        item.content["nested"]["x"] = 1
    with pytest.raises(TypeError):
        item.metadata["m"] = 2  # type: ignore[index]
    with pytest.raises(ValidationError, match="frozen"):
        item.id = "b"  # type: ignore[misc]
    (again,) = await store.get(ids=["a"])
    assert again.content == {"nested": {"list": (1,)}}


async def test_same_id_replaces_record_and_keeps_created_at(store: SqliteMemoryStore, db_path: Path) -> None:
    """MEM-2: writing an existing id replaces the whole record (key, content, metadata)."""
    await store.write(items({"id": "a", "key": "k:1", "content": "old text", "metadata": {"v": 1}}))
    with sqlite3.connect(db_path) as raw:
        created = raw.execute("SELECT created_at FROM memory_records WHERE id = 'a'").fetchone()[0]
    await asyncio.sleep(0.002)
    await store.write(items({"id": "a", "content": "new words"}))
    (item,) = await store.get(ids=["a"])
    assert (item.key, item.content, item.metadata) == (None, "new words", None)
    assert await store.get(keys=["k:1"]) == ()
    assert await store.search(MemorySearchInput(query="old")) == ()
    assert [hit.memory.id for hit in await store.search(MemorySearchInput(query="words"))] == ["a"]
    with sqlite3.connect(db_path) as raw:
        row = raw.execute("SELECT created_at, updated_at FROM memory_records WHERE id = 'a'").fetchone()
        assert row[0] == created and row[1] > created
        assert raw.execute("SELECT count(*) FROM memory_records").fetchone()[0] == 1


async def test_existing_key_under_other_id_is_replaced(store: SqliteMemoryStore) -> None:
    """MEM-2: a key is unique; writing it under another id replaces the record that held it."""
    await store.write(items({"id": "first", "key": "knowledge:acme:retention", "content": "30 days"}))
    (second,) = await store.write(items({"id": "second", "key": "knowledge:acme:retention", "content": "90 days"}))
    assert await store.get(ids=["first"]) == ()
    assert await store.get(keys=["knowledge:acme:retention"]) == (second,)
    assert [hit.memory.id for hit in await store.search(MemorySearchInput(query="days"))] == ["second"]


async def test_get_keeps_request_order_omits_missing_and_repeats(store: SqliteMemoryStore) -> None:
    """MEM-1: GET answers in request order; missing ids are omitted; a repeated id is answered once."""
    await store.write(items({"id": "a", "key": "ka", "content": 1}, {"id": "b", "key": "kb", "content": 2},
                            {"id": "c", "content": 3}))
    assert [item.id for item in await store.get(ids=["c", "missing", "a", "c", "b"])] == ["c", "a", "b"]
    assert [item.id for item in await store.get(keys=["kb", "nope", "ka"])] == ["b", "a"]
    assert await store.get(ids=[]) == ()


async def test_delete_counts_existing_records_only(store: SqliteMemoryStore, db_path: Path) -> None:
    """MEM-1: DELETE by ids or keys returns how many records existed; the FTS rows go too."""
    await store.write(items({"id": "a", "key": "ka", "content": "apple"}, {"id": "b", "key": "kb", "content": "apple"},
                            {"id": "c", "content": "apple"}))
    assert await store.delete(ids=["a", "zzz"]) == 1
    assert await store.delete(keys=["kb", "kb"]) == 1
    assert await store.delete(ids=["a"]) == 0
    assert [hit.memory.id for hit in await store.search(MemorySearchInput(query="apple"))] == ["c"]
    with sqlite3.connect(db_path) as raw:
        assert raw.execute("SELECT count(*) FROM memory_fts").fetchone()[0] == 1


async def test_multi_item_write_with_invalid_item_stores_nothing(store: SqliteMemoryStore) -> None:
    """MEM-2: a write stores all items of a call or none (invalid JSON in the last item)."""
    good = MemoryWriteItem(id="ok", content="fine")
    bad = MemoryWriteItem(id="bad", content=float("nan"))
    with pytest.raises(DittoMemoryError) as raised:
        await store.write([good, bad])
    assert raised.value.code == "MEMORY_INVALID_INPUT"
    assert await store.get(ids=["ok", "bad"]) == ()
    memory = create_memory(store=store)
    with pytest.raises(DittoMemoryError) as via_sdk:
        await memory.write({"memories": [{"id": "ok", "content": "fine"}, {"id": "", "content": 1}]})
    assert via_sdk.value.code == "MEMORY_INVALID_INPUT"
    assert await store.get(ids=["ok"]) == ()


async def test_database_failure_mid_transaction_rolls_back_every_item(store: SqliteMemoryStore,
                                                                      db_path: Path) -> None:
    """MEM-2: a failure inside SQLite after some items were inserted leaves none of them stored."""
    await store.write(items({"id": "before", "content": "kept"}))
    with sqlite3.connect(db_path) as raw:  # a real constraint in the file, hit by the third insert
        raw.execute("CREATE TRIGGER refuse BEFORE INSERT ON memory_records WHEN NEW.id = 'boom' "
                    "BEGIN SELECT RAISE(ABORT, 'refused by /secret/path'); END")
    with pytest.raises(DittoMemoryError) as raised:
        await store.write(items({"id": "one", "content": "x"}, {"id": "two", "content": "y"},
                                {"id": "boom", "content": "z"}))
    assert raised.value.code == "MEMORY_BACKEND_ERROR"
    assert raised.value.message == "the memory backend failed"
    assert "secret" not in str(raised.value)
    assert [item.id for item in await store.get(ids=["before", "one", "two"])] == ["before"]
    with sqlite3.connect(db_path) as raw:
        assert raw.execute("SELECT count(*) FROM memory_fts").fetchone()[0] == 1


async def test_write_repeating_an_id_or_key_in_one_call_is_invalid(store: SqliteMemoryStore) -> None:
    """MEM-1: two items of one call may not claim the same id or the same key (ambiguous)."""
    for batch in (items({"id": "a", "content": 1}, {"id": "a", "content": 2}),
                  items({"key": "k", "content": 1}, {"key": "k", "content": 2})):
        with pytest.raises(DittoMemoryError) as raised:
            await store.write(batch)
        assert raised.value.code == "MEMORY_INVALID_INPUT"


async def test_keyword_search_ranks_with_bm25(store: SqliteMemoryStore) -> None:
    """MEM-2: OR of query tokens, ranked by BM25 (higher is better, always positive for a match)."""
    await store.write(items(
        {"id": "both", "content": "agent memory migration notes"},
        {"id": "one", "content": "memory of a trip"},
        {"id": "none", "content": "unrelated gardening tips"},
        *({"id": f"filler{i}", "content": f"filler text {i}"} for i in range(6)),
    ))
    hits = await store.search(MemorySearchInput(query="agent memory"))
    assert [hit.memory.id for hit in hits] == ["both", "one"]
    assert hits[0].score is not None and hits[1].score is not None
    assert hits[0].score > hits[1].score > 0
    # Case and diacritics are folded and English words stemmed (porter) on both sides.
    assert [hit.memory.id for hit in await store.search(MemorySearchInput(query="MIGRATIONS"))] == ["both"]
    await store.write(items({"id": "cafe", "content": "Café au lait"}))
    assert [hit.memory.id for hit in await store.search(MemorySearchInput(query="cafe"))] == ["cafe"]


async def test_small_store_scores_do_not_collapse(store: SqliteMemoryStore) -> None:
    """MEM-2: in a tiny store (terms in most records) more matched terms still rank higher, scores stay > 0."""
    await store.write(items(
        {"id": "r1", "content": "A backup runs every 6 hours."},
        {"id": "r2", "content": "Backups are kept for 35 days."},
        {"id": "r3", "content": "Backups are kept for 90 days."},
    ))
    hits = await store.search(MemorySearchInput(query="how many days are backups kept"))
    assert {hit.memory.id for hit in hits[:2]} == {"r2", "r3"} and hits[2].memory.id == "r1"
    assert all(hit.score is not None and hit.score > 0.1 for hit in hits)


async def test_bm25_scores_match_the_formula(store: SqliteMemoryStore) -> None:
    """MEM-2: score = Σ ln(1 + (N - df + 0.5)/(df + 0.5)) · tf·(k1+1)/(tf + k1·(1 - b + b·dl/avgdl))."""
    await store.write(items({"id": "a", "content": "red red blue"}, {"id": "b", "content": "blue green"},
                            {"id": "c", "content": "yellow"}))
    scores = {hit.memory.id: hit.score for hit in await store.search(MemorySearchInput(query="red blue"))}
    n, avgdl, k1, b = 3, 6 / 3, 1.2, 0.75

    def term(tf: int, df: int, dl: int) -> float:
        return math.log(1 + (n - df + 0.5) / (df + 0.5)) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))

    assert scores["a"] == pytest.approx(term(2, 1, 3) + term(1, 2, 3))
    assert scores["b"] == pytest.approx(term(1, 2, 2))
    # Statistics follow replacements and deletes.
    await store.delete(ids=["c"])
    await store.write(items({"id": "b", "content": "green"}))
    (only,) = await store.search(MemorySearchInput(query="red blue"))
    n, avgdl = 2, 4 / 2
    assert only.memory.id == "a" and only.score == pytest.approx(term(2, 1, 3) + term(1, 1, 3))


async def test_structured_content_indexes_string_leaves_only(store: SqliteMemoryStore) -> None:
    """MEM-2: non-string content is searchable by its string values, not by keys or numbers."""
    await store.write(items({"id": "doc", "content": {"title": "Retention policy", "body": ["kept", "ninety days"],
                                                      "retentiondays": 90}}))
    assert [hit.memory.id for hit in await store.search(MemorySearchInput(query="ninety"))] == ["doc"]
    assert await store.search(MemorySearchInput(query="retentiondays")) == ()
    assert await store.search(MemorySearchInput(query="90")) == ()
    # A structured query searches by its string leaves too.
    assert [hit.memory.id for hit in await store.search(MemorySearchInput(query={"q": "policy"}))] == ["doc"]


@pytest.mark.parametrize(("query", "found"), [
    ('"', set()), ("(", set()), ("\\", set()), ("* : ^ ( ) - \"", set()),
    ('memory" OR body:*', {"m"}), ("NEAR(memory agent)", {"m"}), ("memory*", {"m"}), ("-memory", {"m"}),
    ("^memory", {"m"}), ("body:memory", {"m"}), ("memory AND", {"m"}), ('"memory"', {"m"}), ("(memory)", {"m"}),
    ("memory:", {"m"}), ("'; DROP TABLE memory_records; --", {"m"}), ('"*:^()-memory-)(^:*"', {"m"}),
    ("NOT unrelated", {"other"}), ("OR", set()),
])
async def test_fts_syntax_in_queries_is_literal(store: SqliteMemoryStore, query: str, found: set[str]) -> None:
    """MEM-2: query text becomes a quoted FTS5 expression: operators cannot break or widen it, and the record
    holding the query's real word is still found."""
    await store.write(items({"id": "m", "content": "memory"}, {"id": "other", "content": "unrelated"}))
    hits = await store.search(MemorySearchInput(query=query))
    assert {hit.memory.id for hit in hits} == found
    assert len(await store.get(ids=["m", "other"])) == 2


def test_match_expression_quotes_every_token() -> None:
    """MEM-2: tokens are deduplicated after folding, quoted, and ORed."""
    assert query_tokens("Agent agent MEMORY, memory! foo_bar Café cafe") == (
        ("Agent", "agent"), ("MEMORY", "memory"), ("foo", "foo"), ("bar", "bar"), ("Café", "cafe"))
    assert match_expression(("a", 'b"c')) == '"a" OR "b""c"'
    assert len(query_tokens(" ".join(f"w{i}" for i in range(500)))) == 64


async def test_query_without_words_returns_nothing_and_blank_query_lists(store: SqliteMemoryStore) -> None:
    """MEM-2: a query with no searchable words finds nothing; a None/blank query lists the filtered records."""
    await store.write(items({"id": "a", "key": "ns:a", "content": "x"}, {"id": "b", "key": "ns:b", "content": "y"},
                            {"id": "c", "key": "other:c", "content": "z"}))
    assert await store.search(MemorySearchInput(query="!!! ???")) == ()
    assert await store.search(MemorySearchInput(query=42)) == ()
    listed = await store.search(MemorySearchInput(query=None, filter={"keyPrefix": "ns:"}))
    assert [hit.memory.id for hit in listed] == ["b", "a"]  # most recently written first
    assert all(hit.score is None for hit in listed)
    assert len(await store.search(MemorySearchInput(query="  ", limit=2))) == 2


async def test_filters_exact_key_in_list_prefix_and_metadata(store: SqliteMemoryStore) -> None:
    """MEM-2: exact key, key in [...], keyPrefix and metadata equality filters, combined with AND."""
    await store.write(items(
        {"id": "k1", "key": "knowledge:acme:retention", "content": "policy text",
         "metadata": {"tenant": "acme", "version": 2, "public": True}},
        {"id": "k2", "key": "knowledge:acme:backup", "content": "policy text",
         "metadata": {"tenant": "acme", "version": 1, "public": False, "owner": None}},
        {"id": "k3", "key": "knowledge:globex:retention", "content": "policy text", "metadata": {"tenant": "globex"}},
        {"id": "t1", "key": "retrieval:req1:queries", "content": "policy text"},
        {"id": "nokey", "content": "policy text", "metadata": {"version": "2"}},
    ))

    async def ids(filter: dict[str, Any]) -> set[str]:
        return {hit.memory.id for hit in await store.search(MemorySearchInput(query="policy", filter=filter))}

    assert await ids({"key": "knowledge:acme:retention"}) == {"k1"}
    assert await ids({"key": {"in": ["knowledge:acme:backup", "knowledge:globex:retention", "missing"]}}) == {"k2",
                                                                                                            "k3"}
    assert await ids({"key": {"in": []}}) == set()
    assert await ids({"keyPrefix": "knowledge:acme:"}) == {"k1", "k2"}
    assert await ids({"key_prefix": "retrieval:req1:"}) == {"t1"}
    assert await ids({"metadata": {"tenant": "acme"}}) == {"k1", "k2"}
    assert await ids({"metadata": {"version": 2}}) == {"k1"}  # the string "2" does not equal 2
    assert await ids({"metadata": {"version": 2.0}}) == {"k1"}
    assert await ids({"metadata": {"public": True}}) == {"k1"}
    assert await ids({"metadata": {"public": False}}) == {"k2"}
    assert await ids({"metadata": {"owner": None}}) == {"k2"}
    assert await ids({"keyPrefix": "knowledge:", "metadata": {"tenant": "globex"}}) == {"k3"}


@pytest.mark.parametrize("filter", [
    {"tenant": "acme"}, {"id": "x"}, {"key": 5}, {"key": ""}, {"key": {"eq": "x"}}, {"key": {"in": "abc"}},
    {"key": {"in": [1]}}, {"keyPrefix": ""}, {"keyPrefix": None}, {"metadata": {}}, {"metadata": "x"},
    {"metadata": {"a": [1]}}, {"metadata": {"a": {"b": 1}}}, {"metadata": {"a": 2**70}},
])
async def test_unsupported_filters_are_refused_not_ignored(store: SqliteMemoryStore, filter: dict[str, Any]) -> None:
    """MEM-2: an unsupported filter is MEMORY_INVALID_INPUT, never silently ignored."""
    with pytest.raises(DittoMemoryError) as raised:
        await store.search(MemorySearchInput(query="x", filter=filter))
    assert raised.value.code == "MEMORY_INVALID_INPUT"


async def test_unsupported_strategy_or_options_are_refused(store: SqliteMemoryStore) -> None:
    """MEM-2: the built-in search is keyword only and takes no options."""
    assert await store.search(MemorySearchInput(query="x", strategy="keyword")) == ()
    for request in (MemorySearchInput(query="x", strategy="vector"), MemorySearchInput(query="x", options={"k": 1})):
        with pytest.raises(DittoMemoryError) as raised:
            await store.search(request)
        assert raised.value.code == "MEMORY_INVALID_INPUT"


async def test_key_prefix_is_literal_and_case_sensitive(store: SqliteMemoryStore) -> None:
    """MEM-2: keyPrefix is a literal, case-sensitive prefix: ``_`` and ``%`` are characters, not LIKE wildcards."""
    keys = ["tenant_a:1", "tenant_a:2", "tenantXa:1", "TENANT_A:1", "Tenant_a:1", "tenant%a:1", "tenant%%:1",
            "tenant\\a:1", "tenant_a", "tenant_ab:1"]
    await store.write([MemoryWriteItem(key=key, content="shared words") for key in keys])

    async def found(prefix: str, query: str | None) -> set[str]:
        hits = await store.search(MemorySearchInput(query=query, limit=100, filter={"keyPrefix": prefix}))
        return {hit.memory.key or "" for hit in hits}

    for query in (None, "shared"):
        assert await found("tenant_a:", query) == {"tenant_a:1", "tenant_a:2"}
        assert await found("TENANT_A:", query) == {"TENANT_A:1"}
        assert await found("tenant%", query) == {"tenant%a:1", "tenant%%:1"}
        assert await found("tenant%a", query) == {"tenant%a:1"}
        assert await found("tenant_", query) == {"tenant_a:1", "tenant_a:2", "tenant_a", "tenant_ab:1"}
        assert await found("tenant\\", query) == {"tenant\\a:1"}
        assert await found("t_nant", query) == set()


_WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel")
_NAMESPACES = ("knowledge:acme:", "knowledge:acme2:", "knowledge:ac:", "retrieval:r1:", "retrieval:r1:queries:",
               "k\U0010ffff:", "k\ud7ff", "k\ue000", "", "tenant_a:", "tenantXa:", "TENANT_A:", "Tenant_A:",
               "tenant%a:", "tenant%:", "tenant__:", "tenant_a%:")


@example(records=[("tenant_a:", "1", ["alpha"]), ("tenantXa:", "1", ["alpha"]), ("TENANT_A:", "1", ["alpha"]),
                  ("tenant%a:", "1", ["alpha"])], prefix="tenant_a:", query=["alpha"])
@example(records=[("tenant%a:", "", ["alpha"]), ("tenant_a%:", "", ["alpha"]), ("tenant__:", "", ["alpha"])],
         prefix="tenant%a:", query=[])
@given(records=st.lists(st.tuples(st.sampled_from(_NAMESPACES), st.text(max_size=4),
                                  st.lists(st.sampled_from(_WORDS), min_size=1, max_size=4)),
                        min_size=1, max_size=25),
       prefix=st.sampled_from([ns for ns in _NAMESPACES if ns]),
       query=st.lists(st.sampled_from(_WORDS), max_size=3))
def test_key_prefix_search_never_leaves_its_namespace(records: list[tuple[str, str, list[str]]], prefix: str,
                                                      query: list[str]) -> None:
    """MEM-2: a keyPrefix filter returns exactly the matching records of that namespace, never another one."""
    rows = {f"{namespace}{suffix}": " ".join(words) for namespace, suffix, words in records
            if _text_ok(f"{namespace}{suffix}") and f"{namespace}{suffix}"}

    async def run() -> tuple[set[str], set[str]]:
        with tempfile.TemporaryDirectory() as directory:
            store = create_sqlite_memory_store(Path(directory) / "memory.sqlite")
            try:
                await store.write([MemoryWriteItem(key=key, content=text) for key, text in rows.items()])
                text = " ".join(query)
                hits = await store.search(MemorySearchInput(query=text if query else None, limit=10_000,
                                                            filter={"keyPrefix": prefix}))
                listed = await store.search(MemorySearchInput(query=None, limit=10_000, filter={"keyPrefix": prefix}))
                return {hit.memory.key or "" for hit in hits}, {hit.memory.key or "" for hit in listed}
            finally:
                await store.close()

    found, listed = asyncio.run(run())
    in_namespace = {key for key in rows if key.startswith(prefix)}
    assert listed == in_namespace
    expected = in_namespace if not query else {key for key in in_namespace if set(rows[key].split()) & set(query)}
    assert found == expected


def _text_ok(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\x00" not in value


_EDGE_CHARS = st.sampled_from(["a", "z", "\x7f", "\x80", "\ud7fe", "\ud7ff", "\ue000", "\ue001", "\uffff",
                                "\U00010000", "\U0010fffe", "\U0010ffff"])
_PREFIX_TEXT = st.text(st.one_of(_EDGE_CHARS, st.characters(blacklist_categories=["Cs"])), min_size=1,
                       max_size=6).filter(_text_ok)


def _step_code_point(code: int, offset: int) -> int | None:
    """``code`` moved ``offset`` scalar values (surrogates are skipped: U+E000 follows U+D7FF)."""
    for _ in range(abs(offset)):
        code += 1 if offset > 0 else -1
        if 0xD800 <= code <= 0xDFFF:
            code = 0xE000 if offset > 0 else 0xD7FF
    return code if 0 <= code <= 0x10FFFF else None


@example(prefix="k\ud7ff", offset=1, tail="")
@example(prefix="k\ue000", offset=-1, tail="x")
@example(prefix="ab", offset=1, tail="")
@given(prefix=_PREFIX_TEXT, offset=st.integers(-3, 3), tail=_PREFIX_TEXT | st.just(""))
def test_prefix_upper_bound_is_tight(prefix: str, offset: int, tail: str) -> None:
    """MEM-2: the index range used for keyPrefix is tight in UTF-8 byte order: a key lies in
    [prefix, upper) exactly when it starts with the prefix (checked on keys whose last prefix character is
    moved a few code points either way, across the surrogate gap); no upper bound only after U+10FFFF."""
    upper = prefix_upper_bound(prefix)
    last = ord(prefix[-1])
    assert (upper is None) == (last == 0x10FFFF)
    moved = _step_code_point(last, offset)
    if moved is None:
        return
    key = prefix[:-1] + chr(moved) + tail
    inside = prefix.encode() <= key.encode() and (upper is None or key.encode() < upper.encode())
    assert inside == key.startswith(prefix), (prefix, key, upper)
    if upper is not None:
        assert (prefix + "\U0010ffff" * 3).encode() < upper.encode()


@pytest.mark.parametrize(("prefix", "upper"), [("a", "b"), ("ns:", "ns;"), ("k\ud7ff", "k\ue000"),
                                               ("k\uffff", "k\U00010000"), ("k\U0010fffe", "k\U0010ffff"),
                                               ("k\U0010ffff", None)])
def test_prefix_upper_bound_examples(prefix: str, upper: str | None) -> None:
    """MEM-2: the upper bound bumps the last character to the next one UTF-8 can encode."""
    assert prefix_upper_bound(prefix) == upper


@given(st.text(max_size=40))
def test_arbitrary_query_text_never_breaks_search(query: str) -> None:
    """MEM-2: any query text is made safe: the search answers (possibly empty), never a backend error."""
    async def run() -> None:
        with tempfile.TemporaryDirectory() as directory:
            store = create_sqlite_memory_store(Path(directory) / "memory.sqlite")
            try:
                await store.write([MemoryWriteItem(id="a", content="alpha bravo \" NEAR * : ^ -")])
                try:
                    await store.search(MemorySearchInput(query=query))
                except DittoMemoryError as error:  # only lone surrogates may be refused, as invalid input
                    assert error.code == "MEMORY_INVALID_INPUT" and not _text_ok(query.replace("\x00", ""))
            finally:
                await store.close()

    asyncio.run(run())


async def test_closed_store_refuses_calls(db_path: Path) -> None:
    """MEM-2: after close() every call fails with MEMORY_BACKEND_ERROR (no reopening behind the caller)."""
    async with create_sqlite_memory_store(db_path) as store:
        await store.write(items({"content": "x"}))
    with pytest.raises(DittoMemoryError) as raised:
        await store.get(ids=["a"])
    assert raised.value.code == "MEMORY_BACKEND_ERROR" and str(db_path) not in str(raised.value)


async def test_read_only_mode_reads_but_refuses_writes(db_path: Path) -> None:
    """MEM-2: read_only=True opens the file with mode=ro; reads work, writes are MEMORY_BACKEND_ERROR."""
    async with create_sqlite_memory_store(db_path) as writer:
        await writer.write(items({"id": "a", "content": "alpha"}))
    async with create_sqlite_memory_store(db_path, read_only=True) as reader:
        assert [hit.memory.id for hit in await reader.search(MemorySearchInput(query="alpha"))] == ["a"]
        with pytest.raises(DittoMemoryError) as raised:
            await reader.write(items({"id": "b", "content": "beta"}))
        assert raised.value.code == "MEMORY_BACKEND_ERROR"
        assert raised.value.message == "the memory backend failed"
        assert str(db_path) not in str(raised.value) and "readonly" not in str(raised.value).lower()
        with pytest.raises(DittoMemoryError):
            await reader.delete(ids=["a"])
        assert len(await reader.get(ids=["a"])) == 1


async def test_read_only_mode_on_missing_file_is_backend_error(tmp_path: Path) -> None:
    """MEM-2: a read-only store never creates the file; a missing one is MEMORY_BACKEND_ERROR."""
    path = tmp_path / "absent.sqlite"
    async with create_sqlite_memory_store(path, read_only=True) as store:
        with pytest.raises(DittoMemoryError) as raised:
            await store.get(ids=["a"])
    assert raised.value.code == "MEMORY_BACKEND_ERROR" and "absent" not in str(raised.value)
    assert not path.exists()


async def test_newer_schema_version_is_refused(db_path: Path) -> None:
    """MEM-2: a file written by a newer schema is not modified; calls fail with MEMORY_BACKEND_ERROR."""
    with sqlite3.connect(db_path) as raw:
        raw.execute("PRAGMA user_version = 99")
    async with create_sqlite_memory_store(db_path) as store:
        with pytest.raises(DittoMemoryError) as raised:
            await store.write(items({"content": "x"}))
    assert raised.value.code == "MEMORY_BACKEND_ERROR"


async def test_signal_interrupts_a_running_statement(store: SqliteMemoryStore, db_path: Path) -> None:
    """MEM-2: a signal that fires mid-query interrupts SQLite; the write is rolled back, the store still works."""
    await store.write(items({"id": "seed", "content": "x"}))
    with sqlite3.connect(db_path) as raw:  # a trigger that keeps SQLite busy for minutes inside the write
        raw.execute("CREATE TABLE pad (x)")
        raw.executemany("INSERT INTO pad VALUES (?)", [(i,) for i in range(2000)])
        raw.execute("CREATE TRIGGER spin AFTER INSERT ON memory_records WHEN NEW.key = 'slow' BEGIN "
                    "SELECT count(*) FROM pad a, pad b, pad c; END")
    started = asyncio.get_running_loop().time()
    with pytest.raises(DittoMemoryError) as raised:
        await store.write(items({"id": "w1", "content": "x"}, {"id": "w2", "key": "slow", "content": "y"}),
                          MemoryCallOptions(signal=CancelSignal.timeout(0.3)))
    assert raised.value.code == "MEMORY_TIMEOUT" and raised.value.status == "timeout"
    assert asyncio.get_running_loop().time() - started < 10
    assert await store.get(ids=["w1", "w2"]) == ()
    assert len(await store.write(items({"id": "after", "content": "ok"}))) == 1


async def test_signal_stops_waiting_for_another_writer(store: SqliteMemoryStore, db_path: Path) -> None:
    """MEM-2: a write waiting on another process's lock gives up when its signal fires."""
    await store.write(items({"id": "seed", "content": "x"}))
    holder = sqlite3.connect(db_path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        controller = AbortController()
        asyncio.get_running_loop().call_later(0.2, controller.abort)
        started = asyncio.get_running_loop().time()
        with pytest.raises(DittoMemoryError) as raised:
            await store.write(items({"id": "blocked", "content": "x"}), MemoryCallOptions(signal=controller.signal))
        assert raised.value.code == "MEMORY_CANCELLED" and raised.value.status == "cancelled"
        assert asyncio.get_running_loop().time() - started < 2  # not the 5 s busy timeout
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert await store.get(ids=["blocked"]) == ()


async def test_aborted_signal_is_checked_before_starting(store: SqliteMemoryStore) -> None:
    """MEM-2: an already-aborted signal fails fast with MEMORY_CANCELLED and touches nothing."""
    controller = AbortController()
    controller.abort()
    with pytest.raises(DittoMemoryError) as raised:
        await store.write(items({"id": "x", "content": 1}), MemoryCallOptions(signal=controller.signal))
    assert raised.value.code == "MEMORY_CANCELLED"
    assert await store.get(ids=["x"]) == ()


async def test_concurrent_calls_in_one_process(store: SqliteMemoryStore) -> None:
    """MEM-2: many concurrent writes and reads through the connection pool lose nothing."""
    async def writer(n: int) -> None:
        await store.write(items({"id": f"r{n}", "key": f"ns:{n}", "content": f"record {n}"}))
        assert len(await store.get(ids=[f"r{n}"])) == 1

    await asyncio.gather(*(writer(n) for n in range(60)))
    listed = await store.search(MemorySearchInput(query=None, limit=1000, filter={"keyPrefix": "ns:"}))
    assert len(listed) == 60


_ops = st.lists(st.one_of(
    st.tuples(st.just("write"), st.lists(st.tuples(st.sampled_from(["a", "b", "c", "d", None]),
                                                   st.sampled_from(["k1", "k2", "k3", None]),
                                                   st.lists(st.sampled_from(_WORDS), max_size=5)),
                                         min_size=1, max_size=4)),
    st.tuples(st.just("delete"), st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=3)),
), min_size=1, max_size=8)


@given(_ops)
def test_ids_keys_and_bm25_totals_stay_consistent(ops: list[tuple[str, Any]]) -> None:
    """MEM-2: after any mix of writes (ids and keys colliding across records) and deletes, every key names at
    most one record, the FTS index has one row per record, and the BM25 totals equal the records' own sums."""
    async def run() -> None:
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory) / "memory.sqlite"
            store = create_sqlite_memory_store(path)
            expected: dict[str, str | None] = {}  # id -> key, a model of the documented semantics
            try:
                for op, arg in ops:
                    if op == "delete":
                        await store.delete(ids=arg)
                        for record_id in arg:
                            expected.pop(record_id, None)
                        continue
                    batch, seen_ids, seen_keys = [], set(), set()
                    for record_id, key, words in arg:
                        if (record_id is not None and record_id in seen_ids) or (key is not None and key in seen_keys):
                            continue  # a call may not repeat an id or a key
                        seen_ids.add(record_id)
                        seen_keys.add(key)
                        batch.append(MemoryWriteItem(id=record_id, key=key, content=" ".join(words)))
                    for written in await store.write(batch):
                        for other, held in list(expected.items()):
                            if written.key is not None and held == written.key and other != written.id:
                                del expected[other]
                        expected[written.id] = written.key
            finally:
                await store.close()
            with sqlite3.connect(path) as raw:
                rows = dict(raw.execute("SELECT id, key FROM memory_records").fetchall())
                stats = raw.execute("SELECT records, tokens FROM memory_stats").fetchone()
                totals = raw.execute("SELECT count(*), coalesce(sum(length), 0) FROM memory_records").fetchone()
                indexed = raw.execute("SELECT count(*) FROM memory_fts").fetchone()[0]
            assert rows == expected
            assert stats == totals and indexed == totals[0]

    asyncio.run(run())


async def test_chinese_and_japanese_text_is_searchable_by_character(store: SqliteMemoryStore) -> None:
    """MEM-2: Han and Hiragana characters are single-character terms (as Lucene's StandardTokenizer makes
    them), so a Chinese question finds Chinese knowledge without spaces, and BM25 favours more shared characters."""
    await store.write(items(
        {"id": "zh", "key": "knowledge:acme:retention", "content": {"kind": "knowledge", "text": "备份保留三十五天。"}},
        {"id": "zh2", "content": "数据库每六小时备份一次"},
        {"id": "ja", "content": "バックアップは35日間保存されます"},
        {"id": "en", "content": "Backups are kept for 35 days."},
    ))
    hits = await store.search(MemorySearchInput(query="备份保留多少天"))
    assert [hit.memory.id for hit in hits][:2] == ["zh", "zh2"]
    assert hits[0].score is not None and hits[1].score is not None and hits[0].score > hits[1].score > 0
    assert (await store.search(MemorySearchInput(query="保存")))[0].memory.id == "ja"
    allowed = {"key": {"in": ["knowledge:acme:retention"]}}
    mixed = await store.search(MemorySearchInput(query="backups 天", filter=allowed))
    assert [hit.memory.id for hit in mixed] == ["zh"]
    assert query_tokens("数据库 DB") == (("数", "数"), ("据", "据"), ("库", "库"), ("DB", "db"))


async def test_version_1_file_is_upgraded_in_place(db_path: Path) -> None:
    """MEM-2: a version 1 file (CJK runs indexed as one term) is re-indexed on first writable open; records,
    other records' index rows and the BM25 totals stay consistent."""
    async with create_sqlite_memory_store(db_path) as store:
        await store.write(items({"id": "zh", "content": "备份保留三十五天"}, {"id": "en", "content": "kept for days"}))
    as_older_version(db_path, "zh", "备份保留三十五天", total_tokens=4, version=1)  # what version 1 wrote
    async with create_sqlite_memory_store(db_path, read_only=True) as reader:  # read-only never upgrades
        with pytest.raises(DittoMemoryError) as raised:
            await reader.get(ids=["zh"])
        assert raised.value.code == "MEMORY_BACKEND_ERROR"
    async with create_sqlite_memory_store(db_path) as store:
        assert [hit.memory.id for hit in await store.search(MemorySearchInput(query="保留多少天"))] == ["zh"]
        assert [hit.memory.id for hit in await store.search(MemorySearchInput(query="days"))] == ["en"]
    with sqlite3.connect(db_path) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == 3
        assert raw.execute("SELECT records, tokens FROM memory_stats").fetchone() == (2, 11)
        assert raw.execute("SELECT sum(length) FROM memory_records").fetchone()[0] == 11


_KEY_TEXT = "must be a non-empty string of at most 1024 characters"


@pytest.mark.parametrize(("filter", "message"), [
    ({"tenant": "acme"}, "filter supports only key, keyPrefix and metadata"),
    ({"key": ""}, f"filter key {_KEY_TEXT}"),
    ({"key": "a\x00b"}, f"filter key {_KEY_TEXT}"),
    ({"key": "k" * 1025}, f"filter key {_KEY_TEXT}"),
    ({"key": 5}, 'filter key must be a string or {"in": [keys]}'),
    ({"key": {"eq": "x"}}, 'filter key must be a string or {"in": [keys]}'),
    ({"key": {"in": "abc"}}, "filter key.in must be a list of keys"),
    ({"key": {"in": 7}}, "filter key.in must be a list of keys"),
    ({"key": {"in": ["k"] * 10_001}}, "filter key.in may name at most 10000 keys"),
    ({"key": {"in": ["ok", 1]}}, f"filter key.in entry {_KEY_TEXT}"),
    ({"key": {"in": ["ok", "\x00"]}}, f"filter key.in entry {_KEY_TEXT}"),
    ({"keyPrefix": ""}, f"filter keyPrefix {_KEY_TEXT}"),
    ({"key_prefix": "p" * 1025}, f"filter keyPrefix {_KEY_TEXT}"),
    ({"metadata": {}}, "filter metadata must be a non-empty object of field: value pairs"),
    ({"metadata": ["a"]}, "filter metadata must be a non-empty object of field: value pairs"),
    ({"metadata": {"": 1}}, f"filter metadata field {_KEY_TEXT}"),
    ({"metadata": {"a": 2**63}}, "filter metadata integers must fit in 64 bits"),
    ({"metadata": {"a": -(2**63) - 1}}, "filter metadata integers must fit in 64 bits"),
    ({"metadata": {"a": [1]}}, "filter metadata values must be strings, numbers, booleans or null"),
    ({"metadata": {"a": {"b": 1}}}, "filter metadata values must be strings, numbers, booleans or null"),
])
async def test_filter_refusals_name_the_problem(store: SqliteMemoryStore, filter: dict[str, Any],
                                                message: str) -> None:
    """MEM-2: each refused filter is MEMORY_INVALID_INPUT with a public message naming what is wrong."""
    for query in ("x", None):
        with pytest.raises(DittoMemoryError) as raised:
            await store.search(MemorySearchInput(query=query, filter=filter))
        assert (raised.value.code, raised.value.message) == ("MEMORY_INVALID_INPUT", message)


async def test_filter_limits_are_inclusive(store: SqliteMemoryStore) -> None:
    """MEM-2: a 1024-character key or prefix, 10000 keys in key.in and metadata integers at the 64-bit edges
    are accepted and match; combined metadata conditions (boolean with others) all apply."""
    long_key = "k" * 1024
    await store.write(items(
        {"id": "long", "key": long_key, "content": "edge", "metadata": {"low": -(2**63), "high": 2**63 - 1}},
        {"id": "flag", "key": "f", "content": "edge", "metadata": {"public": True, "tenant": "acme", "n": 1}},
        {"id": "other", "key": "g", "content": "edge", "metadata": {"public": True, "tenant": "globex", "n": 1}},
    ))

    async def ids(filter: dict[str, Any]) -> set[str]:
        return {hit.memory.id for hit in await store.search(MemorySearchInput(query="edge", filter=filter))}

    assert await ids({"key": long_key}) == {"long"}
    assert await ids({"keyPrefix": long_key}) == {"long"}
    assert await ids({"key": {"in": [long_key, *(f"x{i}" for i in range(9_999))]}}) == {"long"}
    assert await ids({"metadata": {"low": -(2**63)}}) == {"long"}
    assert await ids({"metadata": {"high": 2**63 - 1}}) == {"long"}
    assert await ids({"metadata": {"public": True, "tenant": "acme"}}) == {"flag"}
    assert await ids({"metadata": {"tenant": "globex", "public": True, "n": 1}}) == {"other"}
    assert await ids({"metadata": {"public": False, "tenant": "acme"}}) == set()
    assert await ids({"key": "f", "metadata": {"tenant": "acme"}}) == {"flag"}
    assert await ids({"key": "g", "metadata": {"tenant": "acme"}}) == set()


def test_fts_text_helpers() -> None:
    """MEM-2: what is indexed (string leaves, Han and kana one term per character), how tokens fold and count,
    and the 64-token cap on distinct query terms."""
    from ditto.worker.memory._fts import MAX_QUERY_TOKENS, fold, index_text, token_count

    assert index_text({"title": "Plan", "tags": ["a", {"deep": "b"}], "n": 3, "ok": True, "none": None}) == \
        "Plan\na\nb"
    assert index_text("备份ひらがなカタカナ x") == " 备  份  ひ  ら  が  な  カ  タ  カ  ナ  x"
    assert index_text("abc def") == "abc def"
    assert index_text(["한국", "\uf900"]) == " 한  국 \n \uf900 "
    assert index_text(42) == ""
    assert fold("Ÿ́ÉCOLE") == "yecole" and fold("ǅ") == "dz"
    assert token_count("one, two_three 四") == 4 and token_count("") == 0
    assert MAX_QUERY_TOKENS == 64
    tokens = query_tokens(" ".join(f"w{i} W{i}" for i in range(100)))
    assert len(tokens) == 64 and tokens[0] == ("w0", "w0") and tokens[-1] == ("w63", "w63")
    assert query_tokens({"a": "Über", "b": ["uber", "Ubër"]}) == (("Über", "uber"),)


def test_bm25_score_edges() -> None:
    """MEM-2: terms absent from a document add nothing, a document frequency above the corpus size is
    clamped, and an empty corpus length counts documents as average length."""
    from ditto.worker.memory._fts import BM25_B, BM25_K1, bm25_score

    def term(tf: int, df: int, n: int, relative: float) -> float:
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        return idf * tf * (BM25_K1 + 1) / (tf + BM25_K1 * (1 - BM25_B + BM25_B * relative))

    assert (BM25_K1, BM25_B) == (1.2, 0.75)
    assert bm25_score({"a": 0, "b": -1}, 5, {"a": 1, "b": 1}, 10, 5.0) == 0.0
    assert bm25_score({"a": 2}, 10, {"a": 3}, 10, 5.0) == pytest.approx(term(2, 3, 10, 2.0))
    assert bm25_score({"a": 1}, 4, {"a": 50}, 10, 4.0) == pytest.approx(term(1, 10, 10, 1.0))
    assert bm25_score({"a": 1}, 4, {}, 10, 4.0) == pytest.approx(term(1, 0, 10, 1.0))
    assert bm25_score({"a": 1}, 7, {"a": 1}, 3, 0.0) == pytest.approx(term(1, 1, 3, 1.0))
    assert bm25_score({"a": 1, "b": 3}, 2, {"a": 1, "b": 2}, 4, 4.0) == pytest.approx(
        term(1, 1, 4, 0.5) + term(3, 2, 4, 0.5))


async def test_key_prefix_ending_in_the_last_code_point(store: SqliteMemoryStore) -> None:
    """MEM-2: a keyPrefix ending in U+10FFFF has no upper bound; its keys are still found, others are not."""
    await store.write(items({"id": "in", "key": "t\U0010ffff:1", "content": "edge"},
                            {"id": "exact", "key": "t\U0010ffff", "content": "edge"},
                            {"id": "out", "key": "t\U0010fffe:1", "content": "edge"}))
    for query in ("edge", None):
        hits = await store.search(MemorySearchInput(query=query, filter={"keyPrefix": "t\U0010ffff"}))
        assert {hit.memory.id for hit in hits} == {"in", "exact"}
