"""A failing node's traceback is logged once per cause and window, with a count (issue 19 findings 4, 13)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from ditto import WorkerDefinition, create_ditto
from ditto._log_limit import LogLimiter, failure_cause


def _raise(text: str) -> BaseException:
    try:
        raise RuntimeError(text)
    except RuntimeError as error:
        return error


def test_one_report_per_cause_and_window_then_a_count() -> None:
    """Issue 19 finding 13: repeats of one cause inside the window are counted, not logged; the first report
    after the window says how many were left out; another cause is reported on its own."""
    now = [0.0]
    limiter = LogLimiter(window=60, clock=lambda: now[0])
    cause = failure_cause("N.X", _raise("a"))
    assert limiter.admit(cause) == 0
    assert [limiter.admit(cause) for _ in range(99)] == [None] * 99
    assert limiter.admit(failure_cause("N.Y", _raise("a"))) == 0
    now[0] = 61.0
    assert limiter.admit(cause) == 99
    assert limiter.admit(cause) is None


def test_causes_differ_by_type_and_line_not_by_text() -> None:
    """Issue 19 finding 13: a message that changes per call (an id, a secret) does not make a new cause."""
    first, second = _raise("id=1"), _raise("id=2")
    assert failure_cause("K", first) == failure_cause("K", second)
    try:
        raise ValueError("x")
    except ValueError as other:
        assert failure_cause("K", other) != failure_cause("K", first)


def test_remembered_causes_are_bounded() -> None:
    """Issue 19 finding 4: the limiter forgets the oldest cause past ``max_causes`` (memory stays bounded)."""
    limiter = LogLimiter(window=60, max_causes=10, clock=lambda: 0.0)
    for n in range(100):
        limiter.admit((f"k{n}", "E", "f:1"))
    assert len(limiter._causes) == 10
    assert limiter.admit(("k0", "E", "f:1")) == 0  # forgotten, so reported again


def test_huge_exception_text_is_cut_in_the_log(caplog: pytest.LogCaptureFixture) -> None:
    """Issue 19 finding 4: an exception whose text is a megabyte is logged in a few kilobytes."""
    limiter = LogLimiter()
    with caplog.at_level(logging.ERROR, logger="test.limit"):
        limiter.exception(logging.getLogger("test.limit"), "K", _raise("s" * 1_000_000), "it failed")
    (record,) = caplog.records
    text = caplog.text
    assert record.getMessage().startswith("it failed") and "RuntimeError" in text and len(text) < 20_000


async def test_a_node_failing_on_every_call_logs_its_traceback_once(caplog: pytest.LogCaptureFixture) -> None:
    """Issue 19 findings 4, 13: 500 failures of one node write one traceback, not 500 (each call still answers
    HANDLER_ERROR)."""
    async def broken(input: Any) -> Any:
        raise RuntimeError(f"token=secret-{input}")

    runtime = create_ditto(workers=[WorkerDefinition("BROKE", {"BROKE.RUN": broken})])
    with caplog.at_level(logging.ERROR, logger="ditto.runtime"):
        results = [await runtime.invoke("BROKE.RUN", n) for n in range(500)]
    assert {r.error.code for r in results if r.error} == {"HANDLER_ERROR"} and len(results) == 500
    records = [r for r in caplog.records if r.name == "ditto.runtime"]
    assert len(records) == 1 and records[0].exc_info is not None
    assert len(caplog.text) < 4096
    await runtime.close()
