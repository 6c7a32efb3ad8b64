"""load_runtime_config_file: typed config, ${VAR} expansion from the given mapping only."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ditto import ConfigError, load_runtime_config, load_runtime_config_file
from ditto.config import RuntimeConfig


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "ditto.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_loads_both_spellings(tmp_path: Path) -> None:
    """RT-1: workers.context / workers.retrieval load into config.context / config.retrieval (camel or snake)."""
    config = load_runtime_config_file(write(tmp_path, """
workers:
  context:
    policy: {maxItems: 64, max_tokens: 4096, duplicate: keep-first}
    cache: {ttlMs: 60000, key_prefix: "app:context:"}
    localCache: {maxEntries: 10}
    queue: {maxPending: 8}
  retrieval:
    searchLimit: 20
    embedding: {batchSize: 32}
    hybrid: {candidateLimit: 50, rrfK: 30}
    rerank: {candidate_limit: 40}
"""), {})
    assert config.context.policy is not None and config.context.policy.max_items == 64
    assert config.context.policy.max_tokens == 4096 and config.context.policy.duplicate == "keep-first"
    assert config.context.cache is not None and config.context.cache.ttl_ms == 60000
    assert config.context.cache.key_prefix == "app:context:"
    assert config.retrieval.search_limit == 20 and config.retrieval.hybrid is not None
    assert config.retrieval.hybrid.rrf_k == 30 and config.retrieval.rerank is not None
    assert config.retrieval.embedding is not None and config.retrieval.embedding.batch_size == 32


def test_env_expansion_uses_given_mapping_only(tmp_path: Path) -> None:
    """RT-1: ${VAR} comes from the mapping passed in, never from os.environ; $$ escapes."""
    path = write(tmp_path, 'workers:\n  context:\n    cache: {keyPrefix: "${PREFIX}:$$x:"}\n')
    config = load_runtime_config_file(path, {"PREFIX": "tenant"})
    assert config.context.cache is not None and config.context.cache.key_prefix == "tenant:$x:"
    os.environ["PREFIX_ONLY_IN_OS"] = "leak"
    try:
        with pytest.raises(ConfigError) as missing:
            load_runtime_config_file(write(tmp_path, 'workers:\n  memory: {path: "${PREFIX_ONLY_IN_OS}"}\n'), {})
    finally:
        del os.environ["PREFIX_ONLY_IN_OS"]
    assert missing.value.code == "CONFIG_MISSING_ENV" and "workers.memory.path" in missing.value.message


@pytest.mark.parametrize(("text", "path"), [
    ("workers:\n  context:\n    policy: {maxItemz: 3}\n", "workers.context.policy.maxItemz"),
    ("workers:\n  retrieval: {searchLimit: '10'}\n", "workers.retrieval.searchLimit"),
    ("workers:\n  retrieval: {searchLimit: 0}\n", "workers.retrieval.searchLimit"),
    ("workers:\n  context:\n    policy: {maxItems: 2000000}\n", "workers.context.policy.maxItems"),
    ("workerz: {}\n", "workerz"),
    ("workers:\n  context:\n    policy: {duplicate: merge}\n", "workers.context.policy.duplicate"),
])
def test_unknown_keys_and_wrong_types_name_the_path(tmp_path: Path, text: str, path: str) -> None:
    """RT-1: unknown keys and wrong types give CONFIG_INVALID naming the YAML path."""
    with pytest.raises(ConfigError) as raised:
        load_runtime_config_file(write(tmp_path, text), {})
    assert raised.value.code == "CONFIG_INVALID" and path in raised.value.message


def test_missing_and_malformed_files(tmp_path: Path) -> None:
    """RT-1: a missing file and invalid YAML have their own codes; an empty file is the default config."""
    with pytest.raises(ConfigError) as missing:
        load_runtime_config_file(tmp_path / "nope.yaml", {})
    assert missing.value.code == "CONFIG_NOT_FOUND"
    with pytest.raises(ConfigError) as bad:
        load_runtime_config_file(write(tmp_path, "workers: [unclosed\n"), {})
    assert bad.value.code == "CONFIG_INVALID_YAML"
    assert load_runtime_config_file(write(tmp_path, ""), {}).retrieval.search_limit is None


_CONFIG_KEYS = st.sampled_from(["workers", "transport", "context", "retrieval", "memory", "http", "policy", "cache",
                                "maxItems", "max_items", "ttlMs", "searchLimit", "token", "concurrency"])


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5) | _CONFIG_KEYS,
                                                                              inner, max_size=3), max_leaves=10))
def test_any_document_gives_config_or_config_error(document: object) -> None:
    """RT-1: whatever the YAML holds, the loader returns a RuntimeConfig or raises ConfigError; a config it returns
    came from a mapping (or an empty file) and loads again, unchanged, from its own dump."""
    try:
        config = load_runtime_config(document, {})
    except ConfigError as error:
        assert error.code in {"CONFIG_INVALID", "CONFIG_MISSING_ENV"}
    else:
        assert isinstance(config, RuntimeConfig) and (document is None or isinstance(document, dict))
        if not document:
            assert config == RuntimeConfig()
        assert load_runtime_config(config.model_dump(by_alias=True, exclude_unset=True), {}) == config
