"""The exact code and message of the runtime's own refusals (what a caller or log reader sees)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from ditto import RegistrationError, RoutingError, WorkerDefinition, create_ditto

from .workers import make


async def test_register_refusals_pin_code_and_message() -> None:
    """RT-1: register() refuses a non-definition and a closed runtime with a fixed code and message."""
    runtime = create_ditto()
    with pytest.raises(RegistrationError) as wrong:
        runtime.register({"type": "TEST"})  # type: ignore[arg-type]
    assert (wrong.value.code, wrong.value.message) == ("INVALID_WORKER", "register() takes a WorkerDefinition")
    await runtime.close()
    with pytest.raises(RegistrationError) as closed:
        runtime.register(make()[0])
    assert (closed.value.code, closed.value.message) == ("RUNTIME_CLOSED", "the runtime is closed")


async def test_invoke_refusals_pin_code_and_message() -> None:
    """RT-3: an unknown node and a non-string node name are RoutingErrors naming the node."""
    runtime = create_ditto(workers=make())
    with pytest.raises(RoutingError) as unknown:
        await runtime.invoke("TEST.NOPE", {})
    assert (unknown.value.code, unknown.value.message) == (
        "UNKNOWN_NODE", "no registered worker offers node 'TEST.NOPE'")
    with pytest.raises(RoutingError) as not_a_name:
        await runtime.invoke(7, {})  # type: ignore[arg-type]
    assert (not_a_name.value.code, not_a_name.value.message) == (
        "UNKNOWN_NODE", "no registered worker offers node 7")
    await runtime.close()
    with pytest.raises(RoutingError) as closed:
        await runtime.invoke("TEST.ECHO", 1)
    assert (closed.value.code, closed.value.message) == ("RUNTIME_CLOSED", "the runtime is closed")


async def test_handler_failure_message_names_the_worker_type(caplog: pytest.LogCaptureFixture) -> None:
    """RT-5, RT-6: a handler's raw exception becomes HANDLER_ERROR with a fixed message naming its worker;
    the developer's log line names the node in a fixed sentence."""
    async def broken(_input: Any) -> Any:
        raise RuntimeError("secret detail")

    runtime = create_ditto(workers=[WorkerDefinition("BROKEN", {"BROKEN.RUN": broken})])
    with caplog.at_level(logging.ERROR, logger="ditto.runtime"):
        result = await runtime.invoke("BROKEN.RUN", None)
    (record,) = [record for record in caplog.records if record.name == "ditto.runtime"]
    assert record.getMessage() == "the handler of BROKEN.RUN raised"
    assert result.status == "error" and result.error is not None
    assert (result.error.code, result.error.message) == ("HANDLER_ERROR", "the BROKEN worker failed")
    await runtime.close()
