"""Python tools through INTERACTION.ACT.TOOL and OBSERVE (INT-1, INT-3, INT-6)."""

from __future__ import annotations

import asyncio
import logging
import threading
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from ditto import create_ditto
from ditto.contracts import ToolCall
from ditto.errors import InvalidArgumentError
from ditto.signal import AbortController, CancelSignal
from ditto.worker.context import create_context_worker, create_in_memory_context_store
from ditto.worker.interaction import (
    InteractionError,
    Observation,
    ToolError,
    ToolResult,
    create_interaction,
    create_interaction_worker,
    tool,
)
from ditto.worker.interaction.types import INTERACTION_ERROR_CODES


def add(a: int, b: int = 2) -> int:
    """Add two integers.

    Longer explanation that a model does not need.
    """
    return a + b


async def greet(name: Annotated[str, Field(min_length=1, max_length=20)], style: Literal["plain", "loud"] = "plain"
                ) -> str:
    """Greet someone."""
    await asyncio.sleep(0)
    return f"hello {name}" if style == "plain" else f"HELLO {name.upper()}"


class Point(BaseModel):
    x: float
    y: float


@dataclass
class Distance:
    value: float
    unit: str


def measure(a: Point, b: Point) -> Distance:
    """Distance between two points."""
    return Distance(((a.x - b.x) ** 2 + (a.y - b.y) ** 2) ** 0.5, "m")


def leaky(path: str) -> str:
    """A tool that fails with a message that must not reach callers."""
    raise RuntimeError(f"cannot open /srv/secret/{path} with password hunter2")


def polite(path: str) -> str:
    """A tool that fails with a message meant for the model."""
    raise ToolError(f"{path} does not exist; try one of: a.txt, b.txt")


def not_json() -> Any:
    """Returns something JSON cannot carry."""
    return {"value": float("nan")}


def call(name: str, arguments: dict[str, Any] | None = None, id: str = "call-1") -> dict[str, Any]:
    return {"call": {"id": id, "name": name, "arguments": arguments or {}}}


async def test_sync_and_async_tools_with_schemas_from_type_hints() -> None:
    """INT-1: callables (sync and async) become tools; the schema comes from the type hints."""
    interaction = create_interaction(tools=[add, greet, measure])
    specs = {spec.name: spec for spec in await interaction.list_tools()}
    assert specs["add"].description == "Add two integers."
    assert specs["add"].input_schema["properties"]["a"]["type"] == "integer"
    assert specs["add"].input_schema["required"] == ["a"]
    assert specs["greet"].input_schema["properties"]["style"]["enum"] == ["plain", "loud"]
    assert specs["greet"].input_schema["properties"]["name"]["maxLength"] == 20
    assert specs["add"].input_schema["additionalProperties"] is False
    assert specs["add"].source == "tool:add"

    result = await interaction.act_tool(call("add", {"a": 1}))
    assert result == ToolResult(call_id="call-1", name="add", status="success", content=3, source="tool:add")
    loud = await interaction.act_tool({"call": ToolCall(id="c2", name="greet",
                                                        arguments={"name": "ada", "style": "loud"})})
    assert loud.content == "HELLO ADA"
    distance = await interaction.act_tool(call("measure", {"a": {"x": 0, "y": 0}, "b": {"x": 3, "y": 4}}))
    assert distance.content == {"value": 5.0, "unit": "m"}


async def test_unknown_tool_and_bad_arguments_fail_before_anything_runs() -> None:
    """INT-1/INT-6: unknown tool → INTERACTION_UNKNOWN_TOOL; arguments failing the schema → INVALID_INPUT."""
    ran: list[int] = []

    def record(n: int) -> int:
        """Records its calls."""
        ran.append(n)
        return n

    interaction = create_interaction(tools=[record])
    with pytest.raises(InteractionError) as caught:
        await interaction.act_tool(call("missing"))
    assert caught.value.code == "INTERACTION_UNKNOWN_TOOL"
    for arguments in [{"n": "x"}, {}, {"n": 1, "extra": 2}, {"n": [1]}]:
        with pytest.raises(InteractionError) as caught:
            await interaction.act_tool(call("record", arguments))
        assert caught.value.code == "INTERACTION_INVALID_INPUT"
        assert caught.value.message.startswith("arguments.")
    for bad in [{}, {"call": None}, {"call": {"id": "", "name": "record"}}, {"call": {"id": "a", "name": "x" * 65}},
                {"call": {"id": "a", "name": "record", "arguments": {"n": float("inf")}}},
                {"call": {"id": "a", "name": "record", "arguments": [1]}}, {"call": {"id": "\ud800", "name": "record"}},
                "call", {"call": {"id": "a", "name": "record"}, "extra": 1}]:
        with pytest.raises(InteractionError) as caught:
            await interaction.act_tool(bad)  # type: ignore[arg-type]
        assert caught.value.code == "INTERACTION_INVALID_INPUT"
    assert ran == []


async def test_raising_tool_hides_its_text_and_logs_it(caplog: pytest.LogCaptureFixture) -> None:
    """INT-1/INT-6: a tool that raises gives status "error", INTERACTION_TOOL_FAILED and a fixed message."""
    interaction = create_interaction(tools=[leaky, polite, not_json])
    with caplog.at_level(logging.ERROR, logger="ditto.interaction"):
        result = await interaction.act_tool(call("leaky", {"path": "x"}))
    assert result.status == "error" and result.error is not None
    assert result.error.code == "INTERACTION_TOOL_FAILED"
    assert "hunter2" not in result.model_dump_json() and "/srv" not in result.model_dump_json()
    assert any("hunter2" in (record.exc_text or "") for record in caplog.records)  # logged once, with traceback

    shown = await interaction.act_tool(call("polite", {"path": "c.txt"}))
    assert shown.status == "error" and shown.error is not None
    assert shown.error.code == "INTERACTION_TOOL_FAILED"
    assert shown.content == shown.error.message == "c.txt does not exist; try one of: a.txt, b.txt"

    odd = await interaction.act_tool(call("not_json"))
    assert odd.status == "error" and odd.error is not None and odd.error.code == "INTERACTION_TOOL_FAILED"


async def test_observe_turns_results_into_tool_messages() -> None:
    """INT-3: OBSERVE → {message{role: "tool", content}, source, status}; failures keep their code."""
    interaction = create_interaction(tools=[add, measure, polite])
    ok = await interaction.observe({"result": await interaction.act_tool(call("add", {"a": 2, "b": 3}))})
    assert ok.message.role == "tool" and ok.message.content == "5" and ok.status == "success"
    assert ok.source == "tool:add" and ok.call_id == "call-1" and ok.message.tool_call_id == "call-1"
    structured = await interaction.observe({"result": await interaction.act_tool(
        call("measure", {"a": {"x": 0, "y": 0}, "b": {"x": 0, "y": 1}}))})
    assert structured.message.content == '{"value":1,"unit":"m"}'  # JSON as JavaScript writes it
    failed = await interaction.observe({"result": await interaction.act_tool(call("polite", {"path": "p"}))})
    assert failed.status == "error" and failed.error is not None
    assert failed.error.code == "INTERACTION_TOOL_FAILED" and "p does not exist" in failed.message.content
    wire = await interaction.observe({"result": {"callId": "c9", "name": "add", "status": "success",
                                                 "content": [1, 2], "source": "tool:add"}})
    assert wire.message.content == "[1,2]"
    for bad in [{"result": 5}, {"result": {"callId": "c9"}}, {}, {"result": {"executionId": "e", "status": "odd"}}]:
        with pytest.raises(InteractionError) as caught:
            await interaction.observe(bad)
        assert caught.value.code == "INTERACTION_INVALID_INPUT"


async def test_seed_flow_tool_observation_into_cached_context() -> None:
    """INT-3: ACT.TOOL → OBSERVE → CONTEXT.UPDATE with a scope, as seed 001's example; failures branch."""
    store = create_in_memory_context_store()
    worker = create_interaction_worker(tools=[add, polite])
    runtime = create_ditto(workers=[worker, create_context_worker(services={"stateStore": store})])
    scope = {"sessionId": "tenant-a:session-1", "turnId": "turn-1"}
    try:
        assert (await runtime.invoke("CONTEXT.LOAD", {"scope": scope, "sources": []})).status == "success"

        async def tool_to_cached_context(tool_call: ToolCall) -> Any:
            result = await runtime.invoke("INTERACTION.ACT.TOOL", {"call": tool_call})
            observed = await runtime.invoke("INTERACTION.OBSERVE", {"result": result, "call": tool_call})
            observation: Observation = observed.unwrap()
            # The application chooses whether failed observations should enter its working set.
            if observation.status != "success":
                raise RuntimeError(observation.error.code if observation.error else observation.status)
            return await runtime.invoke("CONTEXT.UPDATE", {"scope": scope, "ingress": [{
                "id": f"observation:{tool_call.id}", "sourceNode": "INTERACTION.OBSERVE",
                "content": observation.message.content,
                "metadata": {"callId": tool_call.id, "source": observation.source, "status": observation.status},
            }]})

        updated = await tool_to_cached_context(ToolCall(id="call-1", name="add", arguments={"a": 20, "b": 22}))
        item = updated.unwrap().items[0]
        assert item.id == "observation:call-1" and item.content == "42"
        assert item.metadata["sourceNode"] == "INTERACTION.OBSERVE" and item.metadata["source"] == "tool:add"
        with pytest.raises(RuntimeError, match="INTERACTION_TOOL_FAILED"):
            await tool_to_cached_context(ToolCall(id="call-2", name="polite", arguments={"path": "x"}))
        with pytest.raises(RuntimeError, match="INTERACTION_UNKNOWN_TOOL"):
            await tool_to_cached_context(ToolCall(id="call-3", name="nope"))
        stored = await runtime.invoke("CONTEXT.LOAD", {"scope": scope})
        assert [entry.id for entry in stored.unwrap().items] == ["observation:call-1"]
    finally:
        await runtime.close()
        await worker.aclose()


async def test_observe_of_failed_node_result_keeps_status_and_call() -> None:
    """INT-3/INT-6: a failed ACT NodeResult becomes an observation with its status, code and the call's id."""
    worker = create_interaction_worker(tools=[add])
    runtime = create_ditto(workers=[worker])
    try:
        the_call = {"id": "c7", "name": "add", "arguments": {"a": "seven"}}
        failed = await runtime.invoke("INTERACTION.ACT.TOOL", {"call": the_call})
        assert failed.status == "error"
        observed = (await runtime.invoke("INTERACTION.OBSERVE", {"result": failed, "call": the_call})).unwrap()
        assert observed.status == "error" and observed.call_id == "c7" and observed.message.name == "add"
        assert observed.error is not None and observed.error.code == "INTERACTION_INVALID_INPUT"
        assert observed.source == "INTERACTION.ACT.TOOL"
        wire = failed.to_wire()
        again = (await runtime.invoke("INTERACTION.OBSERVE", {"result": wire})).unwrap()
        assert again.error == observed.error
    finally:
        await runtime.close()


def _deep(levels: int) -> Any:
    value: Any = "leaf"
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.parametrize("content", [float("nan"), float("inf"), 10**400, "lone \ud800", ["x", "\udc80"], _deep(300)],
                         ids=["nan", "inf", "huge-int", "surrogate", "nested-surrogate", "too-deep"])
async def test_observe_refuses_a_tool_result_that_is_not_json(content: Any) -> None:
    """INT-3/INT-6: OBSERVE of a ToolResult whose content is not finite JSON (NaN, inf, huge ints, lone
    surrogates, nesting past the limit) or whose ids carry NUL is INTERACTION_INVALID_INPUT through the SDK and
    the runtime — never a raw ValueError/RecursionError (HANDLER_ERROR)."""
    result = {"callId": "c1", "name": "add", "status": "success", "source": "tool:add", "content": content}
    interaction = create_interaction()
    with pytest.raises(InteractionError) as caught:
        await interaction.observe({"result": result})
    assert caught.value.code == "INTERACTION_INVALID_INPUT"
    runtime = create_ditto(workers=[create_interaction_worker()])
    for bad in (result, {**result, "content": "ok", "callId": "c\x00"}):
        routed = await runtime.invoke("INTERACTION.OBSERVE", {"result": bad})
        assert routed.status == "error" and routed.error is not None
        assert routed.error.code == "INTERACTION_INVALID_INPUT"
    await runtime.close()


def test_tool_construction_errors() -> None:
    """INT-1: tools without a schema or with clashing names are refused when the worker is built."""

    def star(*args: int) -> int:
        return 0

    def kw(**kwargs: int) -> int:
        return 0

    class Opaque:
        pass

    def opaque(value: Opaque) -> int:
        return 0

    for bad in [star, kw, opaque, lambda x: x, 42]:
        with pytest.raises(InvalidArgumentError):
            create_interaction(tools=[bad])
    with pytest.raises(InvalidArgumentError):
        create_interaction(tools=[add, tool(greet, name="add")])
    with pytest.raises(InvalidArgumentError):
        create_interaction(tools="add")  # type: ignore[arg-type]
    named = tool(lambda x: x, name="identity", description="Return x.")
    assert named.name == "identity" and named.description == "Return x."
    assert len(INTERACTION_ERROR_CODES) == 9


async def test_reserved_parameter_names_and_signal_parameter() -> None:
    """INT-1: any parameter name works; a CancelSignal parameter gets the call's signal and is not an argument."""
    seen: list[CancelSignal | None] = []

    def odd_names(json: str, model_config: int, signal: CancelSignal | None = None) -> str:
        """Parameter names pydantic reserves."""
        seen.append(signal)
        return f"{json}:{model_config}"

    interaction = create_interaction(tools=[odd_names])
    spec = (await interaction.list_tools())[0]
    assert sorted(spec.input_schema["properties"]) == ["json", "model_config"]
    controller = AbortController()
    result = await interaction.act_tool(call("odd_names", {"json": "j", "model_config": 3}), signal=controller.signal)
    assert result.content == "j:3" and seen == [controller.signal]
    with pytest.raises(InteractionError):
        await interaction.act_tool(call("odd_names", {"json": "j", "model_config": 3, "signal": None}))


async def test_signal_cancels_async_tool_and_stops_waiting_for_sync_tool() -> None:
    """INT-1/INT-6: a signal fired mid-call gives INTERACTION_CANCELLED; an async tool really stops."""
    started, finished = asyncio.Event(), asyncio.Event()
    cancelled: list[bool] = []

    async def slow() -> str:
        """Waits until cancelled."""
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        finally:
            finished.set()
        return "never"

    gate = threading.Event()
    thread_started = threading.Event()

    def blocking() -> str:
        """Blocks a worker thread until released."""
        thread_started.set()
        gate.wait(10)
        return "late"

    worker = create_interaction_worker(tools=[slow, blocking])
    runtime = create_ditto(workers=[worker])
    try:
        controller = AbortController()
        pending = asyncio.create_task(runtime.invoke("INTERACTION.ACT.TOOL", call("slow"), signal=controller.signal))
        await started.wait()
        controller.abort()
        result = await pending
        assert result.status == "cancelled"
        assert finished.is_set() and cancelled == [True]

        controller = AbortController()
        pending = asyncio.create_task(runtime.invoke("INTERACTION.ACT.TOOL", call("blocking"),
                                                     signal=controller.signal))
        await asyncio.to_thread(thread_started.wait, 10)
        controller.abort()
        result = await pending
        assert result.status == "cancelled"
        gate.set()

        timed = await runtime.invoke("INTERACTION.ACT.TOOL", call("slow"), timeout=0.2)
        assert timed.status == "timeout"

        aborted = AbortController()
        aborted.abort()
        with pytest.raises(InteractionError) as caught:
            await worker.interaction.act_tool(call("slow"), signal=aborted.signal)
        assert caught.value.code == "INTERACTION_CANCELLED"
    finally:
        gate.set()
        await runtime.close()


@given(arguments=st.dictionaries(st.text(max_size=8), st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**53), max_value=2**53), st.floats(allow_nan=False,
                                                                                           allow_infinity=False),
    st.text(max_size=8), st.lists(st.integers(), max_size=3)), max_size=4))
async def test_arguments_are_validated_against_the_schema(arguments: dict[str, Any]) -> None:
    """INT-1/INT-6 (hypothesis): the tool runs only with arguments its schema accepts; otherwise INVALID_INPUT."""
    ran: list[tuple[int, str]] = []

    def strict_tool(count: Annotated[int, Field(ge=0, le=100, strict=True)], label: str = "x") -> int:
        """count in [0, 100]; label a string."""
        ran.append((count, label))
        return count

    interaction = create_interaction(tools=[strict_tool])
    valid = (set(arguments) <= {"count", "label"} and "count" in arguments
             and type(arguments["count"]) is int and 0 <= arguments["count"] <= 100
             and isinstance(arguments.get("label", "x"), str))
    try:
        result = await interaction.act_tool(call("strict_tool", arguments))
    except InteractionError as error:
        assert error.code == "INTERACTION_INVALID_INPUT"
        assert not valid and ran == []
    else:
        assert valid and result.status == "success" and ran == [(arguments["count"], arguments.get("label", "x"))]


async def test_arguments_as_json_text_like_chat_completions() -> None:
    """INT-1: arguments may arrive as the JSON text OpenAI-compatible servers send; bad text is INVALID_INPUT."""
    interaction = create_interaction(tools=[add])
    result = await interaction.act_tool({"call": {"id": "c", "name": "add", "arguments": '{"a": 4, "b": 5}'}})
    assert result.content == 9
    assert (await interaction.act_tool({"call": {"id": "c", "name": "add", "arguments": '{"a": 1}'}})).content == 3
    for text in ['{"a": 1', "[1, 2]", '"a"', '{"a": NaN}', '{"a": 1e999}', "[" * 100_000, "x" * (1024 * 1024 + 1)]:
        with pytest.raises(InteractionError) as caught:
            await interaction.act_tool({"call": {"id": "c", "name": "add", "arguments": text}})
        assert caught.value.code == "INTERACTION_INVALID_INPUT"


async def test_partials_and_callable_objects_are_tools() -> None:
    """INT-1: a functools.partial and an object with an async __call__ get schemas from their hints."""
    import functools

    class Scale:
        """Multiply by a factor."""

        def __init__(self, factor: int) -> None:
            self.factor = factor

        async def __call__(self, value: float) -> float:
            return value * self.factor

    def power(base: int, exponent: int) -> int:
        """Raise base to exponent."""
        return int(base**exponent)

    interaction = create_interaction(tools=[tool(Scale(3), name="scale"),
                                            tool(functools.partial(power, exponent=2), name="square")])
    specs = {spec.name: spec for spec in await interaction.list_tools()}
    assert specs["scale"].input_schema["properties"]["value"]["type"] == "number"
    assert specs["square"].input_schema["required"] == ["base"]
    assert (await interaction.act_tool(call("scale", {"value": 1.5}))).content == 4.5
    assert (await interaction.act_tool(call("square", {"base": 7}))).content == 49
    with pytest.raises(InteractionError):
        await interaction.act_tool(call("scale", {"value": "x"}))
