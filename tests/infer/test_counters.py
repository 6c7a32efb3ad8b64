"""INFER's per-model counters add up (INF-6): calls, failures and tokens accumulate per ``provider/model``
across calls, and a call that fails before any model answers counts as a failed call with no tokens.

Issue 15, "Tests that catch the bug": written in answer to the survivors of ``scripts/mutation infer.usage``
(each record replacing the previous counts instead of adding to them; a default of one token for a call
that spent none).
"""

from __future__ import annotations

import pytest

from ditto.worker.infer import InferCounters, InferError, ModelCounts, create_infer_client

USER = [{"role": "user", "content": "Backups are kept for 30 days."}, {"role": "user", "content": "How long?"}]


def test_records_accumulate_per_key() -> None:
    """INF-6 (issue 15): three records of one key add up; another key is counted apart; reset empties."""
    counters = InferCounters()
    counters.record("p/m", input_tokens=3, output_tokens=2)
    counters.record("p/m", input_tokens=4, output_tokens=1, failed=True)
    counters.record("p/m")
    counters.record("q/m", input_tokens=1)
    assert counters.snapshot() == {"p/m": ModelCounts(calls=3, failures=1, input_tokens=7, output_tokens=3),
                                   "q/m": ModelCounts(calls=1, failures=0, input_tokens=1, output_tokens=0)}
    assert counters.to_json_dict()["p/m"] == {"calls": 3, "failures": 1, "inputTokens": 7, "outputTokens": 3}
    counters.reset()
    assert counters.snapshot() == {}


async def test_calls_through_the_client_add_up_and_a_missing_provider_spends_nothing() -> None:
    """INF-6 (issue 15): two calls to the built-in model count 2 calls and the sum of both usages; a call to
    a provider nobody configured is one failed call with zero tokens."""
    counters = InferCounters()
    client = create_infer_client(counters=counters)
    first = await client.reasoning.sample(messages=USER)
    second = await client.reasoning.sample(messages=USER)
    counts = counters.snapshot()["builtin:extractive/extractive"]
    assert (counts.calls, counts.failures) == (2, 0)
    assert counts.input_tokens == first.usage.input_tokens + second.usage.input_tokens
    assert counts.output_tokens == first.usage.output_tokens + second.usage.output_tokens
    with pytest.raises(InferError):
        await client.reasoning.sample(model={"provider": "nowhere", "model": "m"}, messages=USER)
    assert counters.snapshot()["nowhere/m"] == ModelCounts(calls=1, failures=1, input_tokens=0, output_tokens=0)
