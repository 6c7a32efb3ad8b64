"""The INFER SDK and worker: input bounds, structured output, errors, cancellation, counters."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ditto import AbortController, CancelSignal, create_ditto
from ditto.errors import InvalidArgumentError
from ditto.worker.infer import (
    INFER_ERROR_CODES,
    ExcerptPassage,
    ExcerptTask,
    InferCounters,
    InferError,
    InferResult,
    ModelConfig,
    ProviderReply,
    ProviderRequest,
    create_infer_client,
    create_infer_worker,
    infer_sample_node,
    response_format,
    task_messages,
)

USER = [{"role": "user", "content": "Backups are kept for 30 days."}, {"role": "user", "content": "How long?"}]
SCHEMA = {"type": "json_schema", "json_schema": {"name": "n", "schema": {
    "type": "object", "properties": {"n": {"type": "integer", "maximum": 5}}, "required": ["n"],
    "additionalProperties": False}}}


class ScriptedProvider:
    """A provider that answers from a list (the last answer repeats) and records what it was asked."""

    def __init__(self, *answers: str | BaseException) -> None:
        self.answers = list(answers)
        self.requests: list[ProviderRequest] = []
        self.started = asyncio.Event()

    async def sample(self, request: ProviderRequest, signal: CancelSignal | None, /) -> ProviderReply:
        self.requests.append(request)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, BaseException):
            raise answer
        return ProviderReply(content=answer, model="scripted")


class BlockingProvider:
    """A provider whose model never answers: only cancellation ends a call."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.stopped = asyncio.Event()

    async def sample(self, request: ProviderRequest, signal: CancelSignal | None, /) -> ProviderReply:
        self.started.set()
        try:
            await asyncio.Event().wait()
        finally:
            self.stopped.set()
        raise AssertionError("unreachable")


def scripted_client(*answers: str | BaseException, counters: InferCounters | None = None
                    ) -> tuple[Any, ScriptedProvider]:
    provider = ScriptedProvider(*answers)
    return create_infer_client({"s": provider}, counters=counters), provider


async def test_dict_and_keywords_are_the_same_call() -> None:
    """INF-1: sample({model, messages}) (the seed's form) and keywords give the same result."""
    client = create_infer_client()
    by_dict = await client.reasoning.sample({"model": {"provider": "builtin:extractive"}, "messages": USER})
    by_keywords = await client.reasoning.sample(model=ModelConfig(), messages=USER, response_format=None)
    assert isinstance(by_dict, InferResult) and by_dict == by_keywords
    assert by_dict.message.content == "Backups are kept for 30 days."
    with pytest.raises(InferError) as caught:
        await client.reasoning.sample({"messages": USER}, messages=USER)
    assert caught.value.code == "INFER_INVALID_INPUT"


async def test_result_wire_shape_is_camel_case() -> None:
    """INF-1, INF-2: the result's JSON form is camelCase with usage and finishReason."""
    client = create_infer_client()
    result = await client.reasoning.sample(messages=USER, response_format={"type": "json_object"})
    wire = result.to_json_dict()
    assert set(wire) == {"message", "parsed", "usage", "model", "finishReason"}
    assert set(wire["usage"]) == {"inputTokens", "outputTokens"}  # type: ignore[arg-type]


async def test_one_retry_shows_the_model_its_error_then_succeeds() -> None:
    """INF-4: a schema-breaking answer is followed by exactly one retry that carries the bad answer and the error."""
    client, provider = scripted_client('{"n": 9}', '{"n": 3}')
    result = await client.reasoning.sample(model={"provider": "s"}, messages=USER, response_format=SCHEMA)
    assert result.parsed == {"n": 3}
    first, second = provider.requests
    assert len(second.messages) == len(first.messages) + 2
    assert second.messages[-2] == {"role": "assistant", "content": '{"n": 9}'}
    assert second.messages[-1]["role"] == "user" and "$.n" in second.messages[-1]["content"]


async def test_never_repaired_and_invalid_after_two() -> None:
    """INF-4: JSON with a trailing remark, NaN, or a wrong type is never repaired: twice bad → INFER_INVALID_OUTPUT."""
    for bad in ('{"n": 1} thanks!', '{"n": NaN}', '{"n": "1"}', "[1]", ""):
        client, provider = scripted_client(bad)
        with pytest.raises(InferError) as caught:
            await client.reasoning.sample(model={"provider": "s"}, messages=USER, response_format=SCHEMA)
        assert caught.value.code == "INFER_INVALID_OUTPUT" and len(provider.requests) == 2
    client, provider = scripted_client('["not an object"]')
    with pytest.raises(InferError) as caught:
        await client.reasoning.sample(model={"provider": "s"}, messages=USER, response_format={"type": "json_object"})
    assert caught.value.code == "INFER_INVALID_OUTPUT"


async def test_text_format_is_not_checked() -> None:
    """INF-4: without a JSON format the answer is returned as written, parsed is None, no retry."""
    client, provider = scripted_client("not json at all")
    result = await client.reasoning.sample(model={"provider": "s"}, messages=USER, response_format={"type": "text"})
    assert result.message.content == "not json at all" and result.parsed is None and len(provider.requests) == 1


async def test_provider_failures_hide_their_text(caplog: pytest.LogCaptureFixture) -> None:
    """INF-5: a provider's own exception becomes INFER_PROVIDER_UNAVAILABLE; its text is logged, not shown;
    its InferError passes through."""
    client, _ = scripted_client(RuntimeError("password=hunter2"))
    with caplog.at_level(logging.ERROR, logger="ditto.infer"), pytest.raises(InferError) as caught:
        await client.reasoning.sample(model={"provider": "s"}, messages=USER)
    assert caught.value.code == "INFER_PROVIDER_UNAVAILABLE" and "hunter2" not in str(caught.value)
    assert "hunter2" in caplog.text
    client, _ = scripted_client(InferError("INFER_RATE_LIMITED", "slow down"))
    with pytest.raises(InferError) as caught:
        await client.reasoning.sample(model={"provider": "s"}, messages=USER)
    assert (caught.value.code, caught.value.message) == ("INFER_RATE_LIMITED", "slow down")


async def test_unknown_provider_and_bad_replies() -> None:
    """INF-5: an unregistered provider name, or a reply that is not a ProviderReply, is PROVIDER_UNAVAILABLE;
    an answer with NUL or lone surrogates is INVALID_OUTPUT."""
    client = create_infer_client()
    with pytest.raises(InferError) as caught:
        await client.reasoning.sample(model={"provider": "openai"}, messages=USER)
    assert caught.value.code == "INFER_PROVIDER_UNAVAILABLE"

    class Wrong:
        async def sample(self, request: ProviderRequest, signal: CancelSignal | None, /) -> Any:
            return {"content": "hi"}

    wrong = create_infer_client({"w": Wrong()})
    with pytest.raises(InferError) as caught:
        await wrong.reasoning.sample(model={"provider": "w"}, messages=USER)
    assert caught.value.code == "INFER_PROVIDER_UNAVAILABLE"
    for content in ("a\x00b", "lone \udc80"):
        bad, _ = scripted_client(content)
        with pytest.raises(InferError) as caught:
            await bad.reasoning.sample(model={"provider": "s"}, messages=USER)
        assert caught.value.code == "INFER_INVALID_OUTPUT"


async def test_signal_cancels_and_times_out_the_provider() -> None:
    """INF-5: a fired signal → INFER_CANCELLED; a deadline signal → INFER_TIMEOUT; the provider really stops."""
    provider = BlockingProvider()
    client = create_infer_client({"b": provider})
    controller = AbortController()
    call = asyncio.create_task(client.reasoning.sample(model={"provider": "b"}, messages=USER,
                                                       signal=controller.signal))
    await provider.started.wait()
    controller.abort()
    with pytest.raises(InferError) as caught:
        await call
    assert caught.value.code == "INFER_CANCELLED" and provider.stopped.is_set()
    with pytest.raises(InferError) as caught:
        await client.reasoning.sample(model={"provider": "b"}, messages=USER, signal=CancelSignal.timeout(0.05))
    assert caught.value.code == "INFER_TIMEOUT" and caught.value.status == "timeout"
    fired = AbortController()
    fired.abort()
    with pytest.raises(InferError) as caught:
        await client.reasoning.sample(messages=USER, signal=fired.signal)
    assert caught.value.code == "INFER_CANCELLED"


async def test_schemas_whose_references_cannot_be_resolved_are_invalid_input() -> None:
    """INF-4/INF-5: a schema that is only a $ref loop or a remote $ref is INFER_INVALID_INPUT before the model
    is asked (nothing is fetched); a nested loop reached by the answer is INFER_INVALID_INPUT too, never a raw
    RecursionError — also through the runtime (not HANDLER_ERROR)."""
    def schema_format(schema: dict[str, Any]) -> dict[str, Any]:
        return {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}}

    client, provider = scripted_client('{"answer": "x"}')
    for schema in ({"$ref": "#"}, {"$ref": "http://127.0.0.1:9/schema.json"}):
        with pytest.raises(InferError) as caught:
            await client.reasoning.sample(model={"provider": "s"}, messages=USER, response_format=schema_format(schema))
        assert caught.value.code == "INFER_INVALID_INPUT"
    assert provider.requests == []
    nested = schema_format({"type": "object", "properties": {"answer": {"$ref": "#/properties/answer"}}})
    with pytest.raises(InferError) as caught:
        await client.reasoning.sample(model={"provider": "s"}, messages=USER, response_format=nested)
    assert caught.value.code == "INFER_INVALID_INPUT"
    runtime = create_ditto(workers=[create_infer_worker({"s": ScriptedProvider('{"answer": "x"}')})])
    routed = await runtime.invoke("INFER.SAMPLE", {"model": {"provider": "s"}, "messages": USER,
                                                   "responseFormat": nested})
    assert routed.status == "error" and routed.error is not None and routed.error.code == "INFER_INVALID_INPUT"
    await runtime.close()


async def test_signal_through_the_runtime_reports_infer_codes() -> None:
    """INF-2/INF-5: cancelled through runtime.invoke (a fired signal, an already-fired one, timeout=) the
    NodeResult carries INFER_CANCELLED / INFER_TIMEOUT with status cancelled / timeout, and the provider stops."""
    provider = BlockingProvider()
    runtime = create_ditto(workers=[create_infer_worker({"b": provider})])
    request = {"model": {"provider": "b"}, "messages": USER}
    controller = AbortController()
    call = asyncio.create_task(runtime.invoke("INFER.SAMPLE", request, signal=controller.signal))
    await provider.started.wait()
    controller.abort()
    result = await call
    assert (result.status, result.error and result.error.code) == ("cancelled", "INFER_CANCELLED")
    assert provider.stopped.is_set()
    fired = AbortController()
    fired.abort()
    result = await runtime.invoke("INFER.SAMPLE", request, signal=fired.signal)
    assert (result.status, result.error and result.error.code) == ("cancelled", "INFER_CANCELLED")
    for deadline in ({"timeout": 0.05}, {"signal": CancelSignal.timeout(0.05)}):
        result = await runtime.invoke("INFER.SAMPLE", request, **deadline)  # type: ignore[arg-type]
        assert (result.status, result.error and result.error.code) == ("timeout", "INFER_TIMEOUT")
    await runtime.close()


async def test_the_worker_itself_exposes_its_counters() -> None:
    """INF-6: create_infer_worker() exposes per-model call and token counters (worker.counters) without the
    application passing its own tally; every call's usage is counted, failures too."""
    worker = create_infer_worker()
    runtime = create_ditto(workers=[worker])
    ok = await runtime.invoke("INFER.SAMPLE", {"messages": USER})
    assert ok.status == "success" and ok.output.usage.input_tokens > 0
    await runtime.invoke("INFER.SAMPLE", {"model": {"provider": "absent"}, "messages": USER})
    counts = worker.counters.snapshot()
    assert counts["builtin:extractive/extractive"].calls == 1
    assert counts["builtin:extractive/extractive"].input_tokens == ok.output.usage.input_tokens
    assert counts["absent/default"].failures == 1
    assert worker.client.counters is worker.counters
    await runtime.close()


async def test_counters_per_model() -> None:
    """INF-6: calls, failures and tokens are counted per provider/model, shared when the counters are."""
    counters = InferCounters()
    client = create_infer_client(counters=counters)
    scripted, _ = scripted_client('{"n": 9}', counters=counters)
    first = await client.reasoning.sample(messages=USER)
    await client.reasoning.sample(model={"model": "tuned"}, messages=USER)
    with pytest.raises(InferError):
        await scripted.reasoning.sample(model={"provider": "s", "model": "m"}, messages=USER, response_format=SCHEMA)
    counts = counters.to_json_dict()
    assert counts["builtin:extractive/extractive"] == {
        "calls": 1, "failures": 0, "inputTokens": first.usage.input_tokens, "outputTokens": first.usage.output_tokens}
    assert counts["builtin:extractive/tuned"]["calls"] == 1
    assert counts["s/m"]["calls"] == 1 and counts["s/m"]["failures"] == 1 and counts["s/m"]["inputTokens"] > 0
    assert client.counters is counters


def test_error_codes_are_exactly_the_six() -> None:
    """INF-5: InferError declares exactly the six codes; an unknown code is a bug."""
    expected = {"INFER_INVALID_INPUT", "INFER_PROVIDER_UNAVAILABLE", "INFER_RATE_LIMITED", "INFER_TIMEOUT",
                "INFER_INVALID_OUTPUT", "INFER_CANCELLED"}
    assert expected == INFER_ERROR_CODES == InferError.codes
    assert InferError.from_signal("TIMEOUT").code == "INFER_TIMEOUT"
    assert InferError.from_signal("CANCELLED").status == "cancelled"
    with pytest.raises(ValueError):
        InferError("INFER_OOPS")


def test_factories_refuse_bad_options() -> None:
    """INF-1, INF-2: wrong providers/counters/client are InvalidArgumentError at construction."""
    for providers in ([1], {"": ScriptedProvider("x")}, {"x": object()}):
        with pytest.raises(InvalidArgumentError):
            create_infer_client(providers)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError):
        create_infer_client(counters={})  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError):
        create_infer_worker(client=create_infer_client(), counters=InferCounters())


BAD_INPUTS: list[Any] = [
    None, 42, "hello", [], {}, {"messages": []}, {"messages": [{"role": "user"}]},
    {"messages": [{"role": "robot", "content": "x"}]}, {"messages": USER, "temperature": float("nan")},
    {"messages": USER, "temperature": 3}, {"messages": USER, "temperature": float("inf")},
    {"messages": USER, "maxTokens": 0}, {"messages": USER, "maxTokens": 10**30}, {"messages": USER, "colour": 1},
    {"messages": [{"role": "user", "content": "a\x00b"}]}, {"messages": [{"role": "user", "content": "\ud800"}]},
    {"messages": [{"role": "user", "content": "x"}] * 513},
    {"messages": [{"role": "user", "content": "x" * 1_000_001}]},
    {"messages": [{"role": "user", "content": "x" * 900_000}] * 5},
    {"messages": USER, "model": {"provider": ""}}, {"messages": USER, "model": {"provider": "a\nb"}},
    {"messages": USER, "model": {"options": {"x": float("nan")}}},
    {"messages": USER, "responseFormat": {"type": "xml"}},
    {"messages": USER, "responseFormat": {"type": "json_schema", "json_schema": {"schema": {"type": 12}}}},
    {"messages": USER, "responseFormat": {"type": "json_schema", "json_schema": {"name": "x"}}},
    {"messages": USER, "responseFormat": {"type": "json_schema", "json_schema": {"name": "", "schema": {}}}},
]


@pytest.mark.parametrize("bad", BAD_INPUTS)
async def test_bad_input_is_infer_invalid_input(bad: Any) -> None:
    """INF-5: malformed or oversized input → INFER_INVALID_INPUT before any provider runs."""
    client, provider = scripted_client("{}")
    with pytest.raises(InferError) as caught:
        await client.sample(bad)
    assert caught.value.code == "INFER_INVALID_INPUT" and not provider.requests


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                                 max_size=4), max_leaves=20)


@given(st.dictionaries(st.sampled_from(["model", "messages", "responseFormat", "maxTokens", "temperature",
                                        "response_format", "other"]), _json, max_size=5))
def test_any_input_is_a_result_or_an_infer_error(input: dict[str, Any]) -> None:
    """INF-5: arbitrary JSON input never raises anything but InferError."""
    client = create_infer_client()

    async def call() -> None:
        try:
            await client.sample(input)
        except InferError as error:
            assert error.code in {"INFER_INVALID_INPUT", "INFER_PROVIDER_UNAVAILABLE", "INFER_INVALID_OUTPUT"}

    asyncio.run(call())


async def test_worker_node_in_a_runtime() -> None:
    """INF-2: INFER.SAMPLE answers camelCase input; errors and deadlines become NodeResults."""
    counters = InferCounters()
    blocking = BlockingProvider()
    runtime = create_ditto(workers=[create_infer_worker({"b": blocking}, counters=counters, concurrency=2)])
    task = ExcerptTask(question="How long are backups kept?",
                       passages=(ExcerptPassage(source_id="d", text="Logs rotate. Backups are kept for 30 days."),))
    result = await runtime.invoke(infer_sample_node.type, {"messages": task_messages(task),
                                                           "responseFormat": response_format(task)})
    assert result.status == "success"
    assert result.output.parsed == {"excerpts": [{"sourceId": "d", "quote": "Backups are kept for 30 days."}]}
    bad = await runtime.invoke("INFER.SAMPLE", {"messages": [], "maxTokens": 5})
    assert bad.status == "error" and bad.error is not None and bad.error.code == "INFER_INVALID_INPUT"
    late = await runtime.invoke("INFER.SAMPLE", {"model": {"provider": "b"}, "messages": USER}, timeout=0.05)
    assert late.status == "timeout" and blocking.stopped.is_set()
    assert counters.snapshot()["builtin:extractive/extractive"].calls == 1
    await runtime.close()


async def test_worker_over_http_keeps_the_wire_camel_case() -> None:
    """INF-2: through the HTTP transport the output is the camelCase JSON of the result."""
    from ditto.transport import create_http_transport, create_worker_http_app
    from tests.support.uvicorn_thread import serve_app

    server = create_ditto(workers=[create_infer_worker()])
    async with serve_app(create_worker_http_app(server, token="t")) as url, \
            create_http_transport(id="svc", url=url, token="t") as transport:
        caller = create_ditto(transports=[transport])
        (worker,) = await transport.workers()
        caller.register_remote(address=worker["address"], transport_id="svc", capabilities=worker["capabilities"])
        result = await caller.invoke("INFER.SAMPLE", {"messages": USER, "maxTokens": 50})
    await server.close()
    assert result.status == "success"
    assert json.loads(json.dumps(result.output))["finishReason"] == "stop"
    assert result.output["usage"]["outputTokens"] > 0
