"""The INFER SDK: ``create_infer_client(providers)`` → ``client.reasoning.sample(...)`` (INF-1, INF-4…6).

One call: validate and bound the input (``INFER_INVALID_INPUT``), find the
provider named by ``model.provider`` (``builtin:extractive`` unless the caller
says otherwise), ask it with the caller's signal, and when a JSON format was
asked check the answer; an answer that breaks the format is shown back to the
model once (the bad answer as an assistant turn, then a user turn with the
validation error) and a second bad answer is ``INFER_INVALID_OUTPUT``. Nothing
is repaired. Usage of every attempt is summed into the result and into the
client's :class:`~ditto.worker.infer.usage.InferCounters`.

The ``openai`` provider, when the application registered none, is built on
first use from the environment (``DITTO_WORKER_INFER_BASE_URL``, ``_MODEL``,
``_API_KEY``, read at that moment, never at import or construction), as
Haystack's and LlamaIndex's OpenAI components fall back to ``OPENAI_API_KEY``;
``.env`` is still read only when the application loads it. The client owns that
provider and closes it in :meth:`InferClient.aclose`.

A provider's own failure is its :class:`InferError` (passed through) or, for
anything else it raises, ``INFER_PROVIDER_UNAVAILABLE`` with a fixed message
while the exception is logged with its traceback; a fired signal is
``INFER_CANCELLED`` / ``INFER_TIMEOUT``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from pydantic import ValidationError

from ...contracts import InvalidJson, check_json
from ...errors import InvalidArgumentError, describe_validation_error
from ...signal import CancelledBySignal, CancelSignal, await_with_signal
from .config import infer_config_from_env
from .providers.builtin import ExtractiveProvider
from .structured import AnswerFormat, check_answer, parse_response_format, retry_message
from .types import (
    BUILTIN_PROVIDER,
    INVALID_INPUT,
    INVALID_OUTPUT,
    MAX_MESSAGE_CHARS,
    MAX_MESSAGES,
    MAX_TOTAL_CHARS,
    PROVIDER_UNAVAILABLE,
    ChatMessage,
    InferError,
    InferProvider,
    InferResult,
    InferUsage,
    ProviderReply,
    ProviderRequest,
    SampleInput,
)
from .usage import InferCounters, estimate_tokens

__all__ = ["OPENAI_PROVIDER", "InferClient", "Reasoning", "create_infer_client", "parse_sample_input"]

_log = logging.getLogger("ditto.infer")

_UNSET: Any = object()

#: The provider name built from ``DITTO_WORKER_INFER_*`` when the application registered none under it.
OPENAI_PROVIDER = "openai"


def _invalid(message: str) -> InferError:
    return InferError(INVALID_INPUT, message)


def parse_sample_input(input: Any) -> SampleInput:
    """A :class:`SampleInput` from the typed model or a plain dict (either spelling), bounded (INF-5)."""
    if isinstance(input, SampleInput):
        request = input
    elif isinstance(input, Mapping):
        messages = input.get("messages")
        if isinstance(messages, (list, tuple)) and len(messages) > MAX_MESSAGES:
            raise _invalid(f"messages: at most {MAX_MESSAGES} messages are allowed")
        try:
            request = SampleInput.model_validate(input)
        except ValidationError as error:
            raise _invalid(describe_validation_error(error)) from None
    else:
        raise _invalid("the input must be an object with model and messages")
    total = 0
    for index, message in enumerate(request.messages):
        content = message.content
        total += len(content)
        if "\x00" in content:
            raise _invalid(f"messages.{index}.content: must not contain NUL characters")
        try:
            check_json(content)
        except InvalidJson:
            raise _invalid(f"messages.{index}.content: must be valid Unicode (no lone surrogates)") from None
    if total > MAX_TOTAL_CHARS:
        raise _invalid(f"messages: at most {MAX_TOTAL_CHARS} characters in all")
    for name, value in (("model.provider", request.model.provider), ("model.model", request.model.model)):
        if value is not None and (not value.isprintable() or not value.strip()):
            raise _invalid(f"{name}: must be printable text")
    return request


def _provider_error(signal: CancelSignal) -> InferError:
    return InferError.from_signal(signal.reason)


class Reasoning:
    """``client.reasoning``: the sampling entry point, named as in the seed (``infer.reasoning.sample``)."""

    __slots__ = ("_client",)

    def __init__(self, client: InferClient) -> None:
        self._client = client

    async def sample(self, input: SampleInput | Mapping[str, Any] | None = None, /, *, model: Any = _UNSET,
                     messages: Any = _UNSET, response_format: Any = _UNSET, max_tokens: Any = _UNSET,
                     temperature: Any = _UNSET, signal: CancelSignal | None = None) -> InferResult:
        """Ask a model (INF-1).

        Either keywords or one input object (the seed's ``sample({model, messages})``)::

            result = await client.reasoning.sample(
                model=ModelConfig(),  # builtin:extractive
                messages=[{"role": "user", "content": "Backups are kept for 30 days."},
                          {"role": "user", "content": "How long are backups kept?"}])
            result.message.content, result.usage.input_tokens
        """
        keywords = {name: value for name, value in (
            ("model", model), ("messages", messages), ("response_format", response_format),
            ("max_tokens", max_tokens), ("temperature", temperature)) if value is not _UNSET}
        if input is not None and keywords:
            raise _invalid("pass either one input object or keywords, not both")
        if input is None:
            # An explicit None means "not given", as the defaults of the signature say.
            input = {name: value for name, value in keywords.items() if value is not None}
        return await self._client.sample(input, signal=signal)


class InferClient:
    """Models behind one interface. Build it with :func:`create_infer_client`.

    ``client.reasoning.sample(...)`` asks a model; ``client.counters`` holds the
    per-model call and token counts; ``client.providers`` the registered providers
    by name. The client closes nothing: providers belong to the application.
    """

    __slots__ = ("_counters", "_owned", "_providers", "reasoning")

    def __init__(self, providers: Mapping[str, InferProvider], counters: InferCounters) -> None:
        self._providers = dict(providers)
        self._owned: list[Any] = []
        self._counters = counters
        self.reasoning = Reasoning(self)

    @property
    def counters(self) -> InferCounters:
        return self._counters

    @property
    def providers(self) -> Mapping[str, InferProvider]:
        return MappingProxyType(dict(self._providers))

    async def aclose(self) -> None:
        """Close the providers this client built itself (the ``openai`` one from the environment);
        providers the application passed in stay the application's to close."""
        owned, self._owned = self._owned, []
        for provider in owned:
            self._providers.pop(OPENAI_PROVIDER, None)
            await provider.aclose()

    async def __aenter__(self) -> InferClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    def _provider(self, name: str) -> InferProvider | None:
        provider = self._providers.get(name)
        if provider is not None or name != OPENAI_PROVIDER:
            return provider
        try:
            config = infer_config_from_env()
            if config is None:
                return None
            from .providers.openai import create_openai_provider

            made = create_openai_provider(config)
        except Exception:
            _log.exception("INFER could not build the openai provider from the environment")
            raise InferError(PROVIDER_UNAVAILABLE, "The openai provider is not configured correctly "
                                                   "(DITTO_WORKER_INFER_* in the environment)") from None
        self._providers[name] = made
        self._owned.append(made)
        return made

    async def sample(self, input: Any, *, signal: CancelSignal | None = None) -> InferResult:
        """The ``INFER.SAMPLE`` node's body: ``input`` is a :class:`SampleInput` or its dict."""
        if signal is not None and not isinstance(signal, CancelSignal):
            raise _invalid("signal must be a CancelSignal")
        if signal is not None and signal.aborted:
            raise InferError.from_signal(signal.reason)
        request = parse_sample_input(input)
        answer_format = parse_response_format(request.response_format)
        name = request.model.provider
        key = f"{name}/{request.model.model or 'default'}"
        try:
            provider = self._provider(name)
        except InferError:
            self._counters.record(key, failed=True)
            raise

        if provider is None:
            self._counters.record(key, failed=True)
            raise InferError(PROVIDER_UNAVAILABLE, f"no INFER provider named {name[:64]!r} is configured")
        usage = [0, 0]
        try:
            result = await self._attempts(provider, request, answer_format, usage, signal)
        except InferError:
            self._counters.record(key, input_tokens=usage[0], output_tokens=usage[1], failed=True)
            raise
        self._counters.record(f"{name}/{request.model.model or result.model}", input_tokens=usage[0],
                              output_tokens=usage[1])
        return result

    async def _attempts(self, provider: InferProvider, request: SampleInput, answer_format: AnswerFormat | None,
                        usage: list[int], signal: CancelSignal | None) -> InferResult:
        messages: list[Mapping[str, str]] = [{"role": m.role, "content": m.content} for m in request.messages]
        options = dict(request.model.options)
        for attempt in (1, 2):
            asked = ProviderRequest(model=request.model.model, messages=tuple(messages), options=options,
                                    response_format=request.response_format, max_tokens=request.max_tokens,
                                    temperature=request.temperature)
            reply = await self._ask(provider, asked, signal)
            spent = reply.usage or InferUsage(input_tokens=estimate_tokens([dict(m) for m in messages]),
                                              output_tokens=estimate_tokens(reply.content))
            usage[0] += spent.input_tokens
            usage[1] += spent.output_tokens
            parsed: Any = None
            if answer_format is not None:
                parsed, for_model, for_caller = check_answer(reply.content, answer_format)
                if for_model is not None:
                    if attempt == 2 or for_caller is None:
                        raise InferError(INVALID_OUTPUT, f"The model's answer did not satisfy the requested "
                                                         f"format after one retry: {for_caller}")
                    messages += [{"role": "assistant", "content": reply.content},
                                 {"role": "user", "content": retry_message(for_model)}]
                    continue
            return InferResult(message=ChatMessage(role="assistant", content=reply.content), parsed=parsed,
                               usage=InferUsage(input_tokens=usage[0], output_tokens=usage[1]),
                               model=reply.model, finish_reason=reply.finish_reason)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _ask(self, provider: InferProvider, request: ProviderRequest, signal: CancelSignal | None
                   ) -> ProviderReply:
        try:
            reply = await await_with_signal(provider.sample(request, signal), signal, error=_provider_error)
        except InferError:
            raise
        except CancelledBySignal as error:
            raise InferError.from_signal(error.code) from None
        except Exception:
            _log.exception("INFER provider %s failed", type(provider).__name__)
            raise InferError(PROVIDER_UNAVAILABLE, "The model provider failed") from None
        if not isinstance(reply, ProviderReply) or not isinstance(reply.content, str) \
                or not isinstance(reply.model, str) or not isinstance(reply.finish_reason, str):
            _log.error("INFER provider %s answered %s, not a ProviderReply", type(provider).__name__,
                       type(reply).__name__)
            raise InferError(PROVIDER_UNAVAILABLE, "The model provider answered something that is not a reply")
        if len(reply.content) > MAX_MESSAGE_CHARS or "\x00" in reply.content:
            raise InferError(INVALID_OUTPUT, "The model's answer is too long or contains NUL characters")
        try:
            check_json(reply.content)
        except InvalidJson:
            raise InferError(INVALID_OUTPUT, "The model's answer is not valid Unicode") from None
        return reply


def _check_providers(providers: Mapping[str, Any] | None) -> dict[str, InferProvider]:
    registry: dict[str, InferProvider] = {BUILTIN_PROVIDER: ExtractiveProvider()}
    if providers is None:
        return registry
    if not isinstance(providers, Mapping):
        raise InvalidArgumentError("providers must be a mapping from provider name to provider")
    for name, provider in providers.items():
        if not isinstance(name, str) or not name.strip() or len(name) > 256:
            raise InvalidArgumentError("provider names must be non-empty strings of at most 256 characters")
        if not callable(getattr(provider, "sample", None)):
            raise InvalidArgumentError(f"INFER provider {name[:64]!r} has no sample method")
        registry[name] = provider
    return registry


def create_infer_client(providers: Mapping[str, InferProvider] | None = None, *,
                        counters: InferCounters | None = None) -> InferClient:
    """An INFER client over ``providers`` (name → provider); ``builtin:extractive`` is always there
    unless ``providers`` replaces it, and ``openai`` is built from ``DITTO_WORKER_INFER_*`` in the
    environment on first use unless ``providers`` names one. ``counters`` lets several clients share
    one tally (INF-6).

    Example::

        import os
        from ditto.worker.infer import create_infer_client, create_openai_provider, infer_config_from_env

        config = infer_config_from_env(os.environ)       # None when no model server is configured
        client = create_infer_client({"openai": create_openai_provider(config)} if config else None)
    """
    if counters is not None and not isinstance(counters, InferCounters):
        raise InvalidArgumentError("counters must be an InferCounters")
    return InferClient(_check_providers(providers), counters or InferCounters())
