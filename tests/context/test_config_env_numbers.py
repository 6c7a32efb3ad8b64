"""``${ENV}`` in a numeric YAML key validates as the number it expands to (CX-16, issue 10)."""

from __future__ import annotations

import pytest

from ditto.config import load_runtime_config
from ditto.errors import ConfigError
from ditto.worker.context import create_context

DOCUMENT = {"workers": {
    "context": {"policy": {"maxTokens": "${CONTEXT_MAX_TOKENS}", "maxItems": "${CONTEXT_MAX_ITEMS}"},
                "cache": {"keyPrefix": "${PREFIX}"}},
    "retrieval": {"searchLimit": "${SEARCH_LIMIT}"},
}}


async def test_numbers_from_the_environment_validate_as_numbers() -> None:
    """CX-16 CX-2 (seed 001 line 60): a policy number and RETRIEVAL ``search_limit`` read from ``${ENV}``."""
    config = load_runtime_config(DOCUMENT, {"CONTEXT_MAX_TOKENS": "3000", "CONTEXT_MAX_ITEMS": " 8 ",
                                            "PREFIX": "123", "SEARCH_LIMIT": "25"})
    policy = config.context.policy
    assert policy is not None and policy.max_tokens == 3000 and policy.max_items == 8
    assert config.retrieval.search_limit == 25
    assert config.context.cache is not None and config.context.cache.key_prefix == "123"  # a string field stays text
    client = create_context(policy=policy)
    assert client.execution.policy.max_tokens == 3000


@pytest.mark.parametrize("env", [
    {"CONTEXT_MAX_TOKENS": "lots", "CONTEXT_MAX_ITEMS": "8", "PREFIX": "p", "SEARCH_LIMIT": "25"},
    {"CONTEXT_MAX_TOKENS": "3000", "CONTEXT_MAX_ITEMS": "8.5", "PREFIX": "p", "SEARCH_LIMIT": "25"},
    {"CONTEXT_MAX_TOKENS": "3000", "CONTEXT_MAX_ITEMS": "8", "PREFIX": "p", "SEARCH_LIMIT": "0"},
    {"CONTEXT_MAX_TOKENS": "2000000", "CONTEXT_MAX_ITEMS": "8", "PREFIX": "p", "SEARCH_LIMIT": "25"},
])
def test_non_numbers_and_out_of_range_numbers_stay_config_invalid(env: dict[str, str]) -> None:
    """CX-16 CX-2: text that is no integer, or a number out of range after expansion, is CONFIG_INVALID."""
    with pytest.raises(ConfigError) as caught:
        load_runtime_config(DOCUMENT, env)
    assert caught.value.code == "CONFIG_INVALID"


def test_a_literal_string_is_not_converted() -> None:
    """CX-16: only values that came from ``${ENV}`` are converted; a quoted YAML number stays refused."""
    with pytest.raises(ConfigError) as caught:
        load_runtime_config({"workers": {"retrieval": {"searchLimit": "25"}}}, {})
    assert caught.value.code == "CONFIG_INVALID"
