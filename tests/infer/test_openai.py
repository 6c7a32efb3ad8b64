"""The ``openai`` provider against a local OpenAI-compatible server, through the real ``openai`` SDK."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from ditto import AbortController, create_ditto
from ditto.config import load_dotenv_mapping
from ditto.errors import InvalidArgumentError
from ditto.worker.infer import (
    ExcerptPassage,
    ExcerptTask,
    InferCounters,
    InferError,
    ModelConfig,
    OpenAIInferConfig,
    create_infer_client,
    create_infer_worker,
    create_openai_provider,
    infer_config_from_env,
    response_format,
    task_messages,
)
from tests.support.net import free_port
from tests.support.openai_chat_server import SERVER_SECRET, ChatServerState, ChatStep, openai_chat_server

KEY = "sk-test-key-4f1c2b"
OPENAI = ModelConfig(provider="openai", model="test-model")
TASK = ExcerptTask(question="How long are backups kept?",
                   passages=(ExcerptPassage(source_id="doc-1", text="Backups are kept for 30 days."),))
VALID = json.dumps({"excerpts": [{"sourceId": "doc-1", "quote": "Backups are kept for 30 days."}]})


def config(url: str, **overrides: Any) -> OpenAIInferConfig:
    options: dict[str, Any] = {"base_url": url, "model": "test-model", "api_key": KEY, "timeout_ms": 5_000,
                               "max_retries": 2, "backoff_ms": 5, "max_backoff_ms": 50}
    options.update(overrides)
    return OpenAIInferConfig(**options)


async def ask(url: str, *, counters: InferCounters | None = None, **overrides: Any) -> Any:
    async with create_openai_provider(config(url, **overrides)) as provider:
        client = create_infer_client({"openai": provider}, counters=counters)
        return await client.reasoning.sample(model=OPENAI, messages=task_messages(TASK),
                                             response_format=response_format(TASK), max_tokens=300,
                                             temperature=0.0)


async def failure(url: str, **overrides: Any) -> InferError:
    with pytest.raises(InferError) as caught:
        await ask(url, **overrides)
    return caught.value


def assert_clean(error: InferError) -> None:
    """INF-5: no error carries the key or the server's body."""
    for text in (str(error), error.message, repr(error)):
        assert KEY not in text and "hunter2" not in text and SERVER_SECRET not in text


async def test_valid_answer_is_parsed_and_the_request_is_what_the_sdk_sends() -> None:
    """INF-1, INF-3, INF-6: a schema answer is parsed, usage comes from the server, the request carries
    the key, the model, the JSON schema, max_tokens and temperature."""
    counters = InferCounters()
    async with openai_chat_server(ChatServerState(script=[ChatStep(VALID)], api_key=KEY)) as (url, state):
        result = await ask(url, counters=counters)
    assert result.parsed == {"excerpts": [{"sourceId": "doc-1", "quote": "Backups are kept for 30 days."}]}
    assert result.message.role == "assistant" and result.message.content == VALID
    assert (result.usage.input_tokens, result.usage.output_tokens) == (11, 7)
    assert result.model == "test-model" and result.finish_reason == "stop"
    (sent,) = state.requests
    assert state.authorizations == [f"Bearer {KEY}"]
    assert sent["model"] == "test-model" and sent["max_tokens"] == 300 and sent["temperature"] == 0.0
    assert sent["response_format"] == response_format(TASK)
    assert sent["messages"] == task_messages(TASK)
    counts = counters.snapshot()["openai/test-model"]
    assert (counts.calls, counts.failures, counts.input_tokens, counts.output_tokens) == (1, 0, 11, 7)


async def test_invalid_json_then_valid_retries_once_showing_the_error() -> None:
    """INF-4: an answer that is not JSON is shown back to the model with the problem; the second answer counts."""
    script = [ChatStep("Sure! Here are the excerpts: {"), ChatStep(VALID)]
    async with openai_chat_server(ChatServerState(script=script)) as (url, state):
        result = await ask(url)
    assert result.parsed["excerpts"][0]["sourceId"] == "doc-1"
    assert len(state.requests) == 2
    retry = state.requests[1]["messages"]
    assert retry[:2] == task_messages(TASK)
    assert retry[2] == {"role": "assistant", "content": "Sure! Here are the excerpts: {"}
    assert retry[3]["role"] == "user" and "not valid JSON" in retry[3]["content"]
    assert (result.usage.input_tokens, result.usage.output_tokens) == (22, 14)  # both attempts counted


async def test_schema_violating_answer_twice_is_invalid_output() -> None:
    """INF-4: two answers that break the schema → INFER_INVALID_OUTPUT after exactly one retry; nothing repaired."""
    bad = json.dumps({"excerpts": [{"sourceId": "doc-1", "quote": "x" * 1001}]})
    counters = InferCounters()
    async with openai_chat_server(ChatServerState(default=ChatStep(bad))) as (url, state):
        with pytest.raises(InferError) as caught:
            await ask(url, counters=counters)
        error = caught.value
    assert error.code == "INFER_INVALID_OUTPUT" and error.status == "error"
    assert len(state.requests) == 2
    assert "$.excerpts[0].quote" in state.requests[1]["messages"][-1]["content"]
    assert "xxxx" not in error.message and "maxLength" in error.message
    counts = counters.snapshot()["openai/test-model"]
    assert (counts.calls, counts.failures, counts.input_tokens) == (1, 1, 22)


async def test_rate_limited_then_success_backs_off_and_succeeds() -> None:
    """INF-3, INF-5: a 429 is retried after a bounded backoff (Retry-After honoured)."""
    script = [ChatStep(status=429, headers={"retry-after": "0"}), ChatStep(VALID)]
    async with openai_chat_server(ChatServerState(script=script)) as (url, state):
        result = await ask(url)
    assert result.parsed is not None and len(state.requests) == 2


async def test_rate_limited_every_time_is_infer_rate_limited() -> None:
    """INF-5: still 429 after max_retries → INFER_RATE_LIMITED, after exactly 1 + max_retries requests."""
    async with openai_chat_server(ChatServerState(default=ChatStep(status=429))) as (url, state):
        error = await failure(url, max_retries=2)
    assert error.code == "INFER_RATE_LIMITED" and len(state.requests) == 3
    assert_clean(error)


async def test_server_error_is_provider_unavailable_without_the_body() -> None:
    """INF-5: 500 is retried, then INFER_PROVIDER_UNAVAILABLE with our message (the body is not in it)."""
    async with openai_chat_server(ChatServerState(default=ChatStep(status=500))) as (url, state):
        error = await failure(url, max_retries=1)
    assert error.code == "INFER_PROVIDER_UNAVAILABLE" and "500" in error.message
    assert len(state.requests) == 2
    assert_clean(error)


async def test_unauthorized_is_not_retried_and_never_shows_the_key() -> None:
    """INF-5: 401 → INFER_PROVIDER_UNAVAILABLE at once; neither the key nor the server's text is shown."""
    async with openai_chat_server(ChatServerState(api_key="sk-the-right-one")) as (url, state):
        error = await failure(url)
    assert error.code == "INFER_PROVIDER_UNAVAILABLE" and "credentials" in error.message
    assert len(state.authorizations) == 1
    assert_clean(error)
    assert KEY not in repr(config(url))


async def test_slow_server_past_the_deadline_is_infer_timeout() -> None:
    """INF-3, INF-5: a server slower than timeout_ms → INFER_TIMEOUT, in about the deadline."""
    async with openai_chat_server(ChatServerState(default=ChatStep(VALID, delay=30))) as (url, _):
        started = time.monotonic()
        error = await failure(url, timeout_ms=300)
        elapsed = time.monotonic() - started
    assert error.code == "INFER_TIMEOUT" and error.status == "timeout"
    assert elapsed < 5


async def test_backoff_that_would_pass_the_deadline_is_not_started() -> None:
    """INF-3: a Retry-After longer than the time left ends the call with the server's code, not a hang."""
    step = ChatStep(status=429, headers={"retry-after": "3600"})
    async with openai_chat_server(ChatServerState(default=step)) as (url, state):
        started = time.monotonic()
        error = await failure(url, timeout_ms=400, max_backoff_ms=10_000)
    assert error.code == "INFER_RATE_LIMITED" and len(state.requests) == 1
    assert time.monotonic() - started < 2


async def test_signal_cancels_a_slow_call() -> None:
    """INF-5: the caller's signal fired mid-request → INFER_CANCELLED, promptly."""
    controller = AbortController()
    async with openai_chat_server(ChatServerState(default=ChatStep(VALID, delay=30))) as (url, state), \
            create_openai_provider(config(url)) as provider:
        client = create_infer_client({"openai": provider})
        call = asyncio.create_task(client.reasoning.sample(model=OPENAI, messages=task_messages(TASK),
                                                           signal=controller.signal))
        await state.received.wait()
        controller.abort()
        with pytest.raises(InferError) as caught:
            await call
    assert caught.value.code == "INFER_CANCELLED" and caught.value.status == "cancelled"


async def test_unreachable_server_is_provider_unavailable() -> None:
    """INF-5: nothing listening → INFER_PROVIDER_UNAVAILABLE after the bounded retries."""
    error = await failure(f"http://127.0.0.1:{free_port()}/v1", max_retries=1)
    assert error.code == "INFER_PROVIDER_UNAVAILABLE"


async def test_response_format_modes_for_servers_that_know_less() -> None:
    """INF-3, INF-4: json_object servers get only "answer JSON", none-servers nothing; the schema is
    enforced on the answer either way."""
    async with openai_chat_server(ChatServerState(default=ChatStep(VALID))) as (url, state):
        await ask(url, response_format="json_object")
        await ask(url, response_format="none")
    assert state.requests[0]["response_format"] == {"type": "json_object"}
    assert "response_format" not in state.requests[1]


async def test_model_options_travel_as_extra_fields_but_cannot_override_the_call() -> None:
    """INF-1, INF-3: ModelConfig.options go to the server (top_p, seed); reserved names are ignored."""
    model = ModelConfig(provider="openai", options={"top_p": 0.5, "seed": 7, "model": "other", "messages": []})
    async with openai_chat_server(ChatServerState(default=ChatStep("hello"))) as (url, state), \
            create_openai_provider(config(url)) as provider:
        client = create_infer_client({"openai": provider})
        result = await client.reasoning.sample({"model": model, "messages": [{"role": "user", "content": "hi"}]})
    assert result.message.content == "hello" and result.parsed is None
    (sent,) = state.requests
    assert sent["top_p"] == 0.5 and sent["seed"] == 7 and sent["model"] == "test-model"
    assert sent["messages"] == [{"role": "user", "content": "hi"}]


async def test_worker_node_over_the_openai_provider() -> None:
    """INF-2, INF-6: INFER.SAMPLE with camelCase input reaches the server; counters see the call."""
    counters = InferCounters()
    async with openai_chat_server(ChatServerState(default=ChatStep(VALID))) as (url, state), \
            create_openai_provider(config(url)) as provider:
        runtime = create_ditto(workers=[create_infer_worker({"openai": provider}, counters=counters)])
        result = await runtime.invoke("INFER.SAMPLE", {
            "model": {"provider": "openai", "model": "test-model"}, "messages": task_messages(TASK),
            "responseFormat": response_format(TASK), "maxTokens": 100})
        await runtime.close()
    assert result.status == "success" and result.output.parsed["excerpts"][0]["sourceId"] == "doc-1"
    assert state.requests[0]["max_tokens"] == 100
    assert counters.to_json_dict()["openai/test-model"]["calls"] == 1


def test_config_from_env_mapping_and_dotenv(tmp_path: Path) -> None:
    """INF-3: DITTO_WORKER_INFER_* are read only from the mapping the application passes (or a .env it loads)."""
    assert infer_config_from_env({}) is None
    env = {"DITTO_WORKER_INFER_BASE_URL": "http://127.0.0.1:8000/v1", "DITTO_WORKER_INFER_MODEL": "qwen",
           "DITTO_WORKER_INFER_API_KEY": KEY, "DITTO_WORKER_INFER_TIMEOUT_MS": "1500",
           "DITTO_WORKER_INFER_RESPONSE_FORMAT": "json_object"}
    loaded = infer_config_from_env(env)
    assert loaded is not None and loaded.model == "qwen" and loaded.api_key == KEY and loaded.timeout_ms == 1500
    assert loaded.response_format == "json_object" and KEY not in repr(loaded)
    assert loaded.model_config() == ModelConfig(provider="openai", model="qwen")
    dotenv = tmp_path / ".env"
    dotenv.write_text("DITTO_WORKER_INFER_BASE_URL=https://api.example.com/v1\nDITTO_WORKER_INFER_MODEL=m\n")
    from_file = infer_config_from_env(load_dotenv_mapping(dotenv))
    assert from_file is not None and from_file.base_url == "https://api.example.com/v1" and from_file.api_key is None
    for broken in ({"DITTO_WORKER_INFER_MODEL": "m"}, {"DITTO_WORKER_INFER_BASE_URL": "http://x"},
                   {**env, "DITTO_WORKER_INFER_TIMEOUT_MS": "soon"},
                   {**env, "DITTO_WORKER_INFER_RESPONSE_FORMAT": "xml"},
                   {**env, "DITTO_WORKER_INFER_BASE_URL": "ftp://x"}):
        with pytest.raises(InvalidArgumentError) as caught:
            infer_config_from_env(broken)
        assert KEY not in str(caught.value)


async def test_openai_provider_from_the_environment_without_registering_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """INF-3: with DITTO_WORKER_INFER_* in the environment, create_infer_client() / create_infer_worker() answer
    ModelConfig(provider="openai") through that server (the env's model and key) without the application
    building the provider; a half configuration is INFER_PROVIDER_UNAVAILABLE without the key; aclose closes it."""
    state = ChatServerState(default=ChatStep(content=VALID), api_key=KEY)
    async with openai_chat_server(state) as (url, _):
        monkeypatch.setenv("DITTO_WORKER_INFER_BASE_URL", url)
        monkeypatch.setenv("DITTO_WORKER_INFER_MODEL", "env-model")
        monkeypatch.setenv("DITTO_WORKER_INFER_API_KEY", KEY)
        async with create_infer_client() as client:
            result = await client.reasoning.sample(model=ModelConfig(provider="openai"), messages=task_messages(TASK),
                                                   response_format=response_format(TASK))
            assert result.parsed["excerpts"][0]["sourceId"] == "doc-1" and result.usage.input_tokens == 11
            assert client.providers["openai"] is not None
        assert "openai" not in client.providers  # closed and forgotten
        worker = create_infer_worker()
        runtime = create_ditto(workers=[worker])
        routed = await runtime.invoke("INFER.SAMPLE", {"model": {"provider": "openai"},
                                                       "messages": [{"role": "user", "content": "hi"}]})
        assert routed.status == "success" and routed.output.model == "env-model"
        await runtime.close()
        await worker.aclose()
        assert state.requests[0]["model"] == "env-model" and set(state.authorizations) == {f"Bearer {KEY}"}
        monkeypatch.delenv("DITTO_WORKER_INFER_BASE_URL")
        with pytest.raises(InferError) as caught:
            await create_infer_client().reasoning.sample(model={"provider": "openai"}, messages=[
                {"role": "user", "content": "hi"}])
        assert caught.value.code == "INFER_PROVIDER_UNAVAILABLE" and KEY not in str(caught.value)


def test_provider_construction_is_checked() -> None:
    """INF-3: bad provider options are InvalidArgumentError, not a failure at the first call."""
    with pytest.raises(InvalidArgumentError):
        create_openai_provider(base_url="http://x/v1", model="m", max_retries=99)
    with pytest.raises(InvalidArgumentError):
        create_openai_provider(base_url="http://x/v1", model="m", colour="blue")
    with pytest.raises(InvalidArgumentError):
        create_openai_provider(config("http://x/v1"), model="m")
    provider = create_openai_provider({"base_url": "http://x/v1", "model": "m"})
    assert provider.config.max_retries == 2


async def test_refused_requests_and_unknown_models_are_not_retried() -> None:
    """INF-5: 400 → INFER_INVALID_INPUT (the server refused what we sent), 404 → INFER_PROVIDER_UNAVAILABLE,
    each after one request; a Retry-After that is a date is ignored in favour of our own backoff."""
    async with openai_chat_server(ChatServerState(default=ChatStep(status=400))) as (url, state):
        refused = await failure(url)
    assert refused.code == "INFER_INVALID_INPUT" and "400" in refused.message and len(state.requests) == 1
    assert_clean(refused)
    async with openai_chat_server(ChatServerState(default=ChatStep(status=404))) as (url, state):
        missing = await failure(url)
    assert missing.code == "INFER_PROVIDER_UNAVAILABLE" and len(state.requests) == 1
    assert_clean(missing)
    dated = ChatStep(status=503, headers={"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"})
    async with openai_chat_server(ChatServerState(script=[dated], default=ChatStep(VALID))) as (url, state):
        result = await ask(url)
    assert result.parsed is not None and len(state.requests) == 2


async def test_answer_without_usage_is_estimated() -> None:
    """INF-6: a server that reports no usage still yields counted tokens (the UTF-8 JSON bytes / 4 estimate)."""
    async with openai_chat_server(ChatServerState(default=ChatStep(VALID, usage=None))) as (url, _):
        result = await ask(url)
    assert result.usage.input_tokens > 0 and result.usage.output_tokens == -(-len(json.dumps(VALID)) // 4)
