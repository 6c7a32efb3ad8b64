"""MEMORY's keyword search uses ditto.text's notion of a term, and FTS5 sees the same terms (MEM-2)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from ditto.text import bm25_score, word_terms
from ditto.worker.memory import MemorySearchInput, MemoryWriteItem, _fts, create_sqlite_memory_store

from .schema_versions import as_older_version

# Latin letters (some with diacritics), digits, Han, Hiragana, Katakana, Hangul, spaces and punctuation.
_ALPHABET = st.sampled_from(list("abcXYZ019éü 　,.!?-_/") + list("数据库备份のデータ데이터"))


@given(st.text(_ALPHABET, max_size=40))
def test_fts_terms_are_ditto_text_terms(text: str) -> None:
    """MEM-2: the terms the store indexes and queries (FTS5 token boundaries of the indexed text) are
    ``ditto.text.word_terms``' terms, CJK characters one by one, so every worker agrees on what a term is."""
    indexed = _fts.index_text(text)
    tokens = [token.lower() for token in _fts._TOKEN.findall(indexed)]
    assert tokens == word_terms(text)
    assert _fts.token_count(indexed) == len(tokens)


def test_bm25_is_ditto_text_bm25() -> None:
    """MEM-2: the store re-scores with ditto.text's BM25 (one implementation)."""
    assert _fts.bm25_score is bm25_score


async def test_katakana_and_hangul_match_word_parts(tmp_path: Path) -> None:
    """MEM-2: Katakana and Hangul are CJK terms too (one per character), so part of a word finds it."""
    async with create_sqlite_memory_store(tmp_path / "memory.sqlite") as store:
        await store.write([MemoryWriteItem(id="ko", content="데이터베이스 백업"),
                           MemoryWriteItem(id="ja", content="データベースの保存"),
                           MemoryWriteItem(id="en", content="database backups")])
        assert [hit.memory.id for hit in await store.search(MemorySearchInput(query="데이터"))] == ["ko"]
        assert [hit.memory.id for hit in await store.search(MemorySearchInput(query="データ"))] == ["ja"]


async def test_version_2_file_is_reindexed(tmp_path: Path) -> None:
    """MEM-2: a version 2 file (Katakana/Hangul runs indexed as one term) is re-indexed on first writable
    open: the Hangul record becomes findable by part of a word; lengths and BM25 totals stay consistent."""
    path = tmp_path / "memory.sqlite"
    async with create_sqlite_memory_store(path) as store:
        await store.write([MemoryWriteItem(id="ko", content="데이터베이스"),
                           MemoryWriteItem(id="en", content="kept days")])
    as_older_version(path, "ko", "데이터베이스", total_tokens=3, version=2)  # what version 2 wrote
    async with create_sqlite_memory_store(path) as store:
        assert [hit.memory.id for hit in await store.search(MemorySearchInput(query="데이터"))] == ["ko"]
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == 3
        assert raw.execute("SELECT records, tokens FROM memory_stats").fetchone() == (2, 8)
        assert raw.execute("SELECT sum(length) FROM memory_records").fetchone()[0] == 8
