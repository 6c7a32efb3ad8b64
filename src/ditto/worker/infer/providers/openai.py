"""``openai``: any OpenAI-compatible chat-completions server through the official SDK (INF-3, INF-5).

Extra ``ditto-agents[openai]``; the SDK is imported when the first call is made, so
``import ditto`` never loads it. One ``AsyncOpenAI`` per provider keeps its
connection pool; its own retries are off because ours are bounded by the
call's deadline and map to our codes:

* every call has one deadline (``timeout_ms``, shortened by the caller's signal
  deadline), retries and waits included → ``INFER_TIMEOUT``;
* 429 → wait and retry (``backoff_ms`` doubled each time, a ``Retry-After`` honoured
  up to ``max_backoff_ms``), at most ``max_retries`` times → ``INFER_RATE_LIMITED``;
* 5xx and connection failures → the same backoff → ``INFER_PROVIDER_UNAVAILABLE``;
* 401/403, 404, other statuses → ``INFER_PROVIDER_UNAVAILABLE`` at once; 400/422 →
  ``INFER_INVALID_INPUT`` (the server refused what we sent).

A wait that would pass the deadline is not started: the last failure's code is
raised instead. Errors carry our own message with at most the HTTP status; the
server's body goes to the log (``ditto.infer``), the API key nowhere.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from ...._extras import install_hint
from ....contracts import thaw_json
from ....errors import InvalidArgumentError
from ....signal import CancelSignal
from ..config import OpenAIInferConfig
from ..types import (
    INVALID_INPUT,
    PROVIDER_UNAVAILABLE,
    RATE_LIMITED,
    TIMEOUT,
    InferError,
    InferUsage,
    ProviderReply,
    ProviderRequest,
)

if TYPE_CHECKING:  # the openai package (extra ``ditto-agents[openai]``) loads on first use, not on import
    from openai import AsyncOpenAI

__all__ = ["OpenAIProvider", "create_openai_provider"]

_log = logging.getLogger("ditto.infer")

#: Sent as the bearer token when no key is configured (the SDK insists on one; local servers ignore it).
NO_KEY: Final = "no-key"
#: Request fields a model option may not override.
_RESERVED: Final = frozenset({"model", "messages", "response_format", "max_tokens", "temperature", "stream", "n"})


def _openai() -> Any:
    """The ``openai`` SDK, imported on first use; missing → a clear INFER_PROVIDER_UNAVAILABLE."""
    try:
        import openai
    except ImportError:
        raise InferError(PROVIDER_UNAVAILABLE,
                         f"The openai provider needs the 'openai' extra: {install_hint('openai')}") from None
    return openai


def _retry_after(error: Any) -> float | None:
    response = getattr(error, "response", None)
    headers = getattr(response, "headers", None)
    raw = headers.get("retry-after") if headers is not None else None
    try:
        value = float(raw) if raw is not None else None
    except ValueError:
        return None
    return value if value is not None and value >= 0 else None


class OpenAIProvider:
    """The ``openai`` INFER provider. Use as ``async with`` or call :meth:`aclose` when done;
    an injected ``client`` (an ``openai.AsyncOpenAI``) is never closed by us."""

    def __init__(self, config: OpenAIInferConfig, client: AsyncOpenAI | None = None) -> None:
        if not isinstance(config, OpenAIInferConfig):
            raise InvalidArgumentError("config must be an OpenAIInferConfig (see infer_config_from_env)")
        self.config = config
        self._client: Any = client
        self._owns_client = client is None

    def _sdk(self) -> Any:
        if self._client is None:
            self._client = _openai().AsyncOpenAI(base_url=self.config.base_url, api_key=self.config.api_key or NO_KEY,
                                       max_retries=0, timeout=self.config.timeout_ms / 1000)
        return self._client

    def _arguments(self, request: ProviderRequest) -> dict[str, Any]:
        arguments: dict[str, Any] = {"model": request.model or self.config.model,
                                     "messages": [dict(message) for message in request.messages]}
        answer_format = request.response_format
        if answer_format is not None and self.config.response_format != "none":
            if self.config.response_format == "json_object" and answer_format.get("type") == "json_schema":
                arguments["response_format"] = {"type": "json_object"}
            else:
                arguments["response_format"] = thaw_json(answer_format)
        if request.max_tokens is not None:
            arguments["max_tokens"] = request.max_tokens
        if request.temperature is not None:
            arguments["temperature"] = request.temperature
        extra = {key: thaw_json(value) for key, value in request.options.items() if key not in _RESERVED}
        if extra:
            arguments["extra_body"] = extra
        return arguments

    async def sample(self, request: ProviderRequest, signal: CancelSignal | None, /) -> ProviderReply:
        """One chat completion, with bounded retries inside one deadline."""
        openai = _openai()
        budget = self.config.timeout_ms / 1000
        remaining_signal = signal.remaining() if signal is not None else None
        if remaining_signal is not None:
            budget = min(budget, remaining_signal)
        deadline = time.monotonic() + budget
        arguments = self._arguments(request)
        sdk = self._sdk()
        code, message = PROVIDER_UNAVAILABLE, "The model server could not be reached"
        for attempt in range(self.config.max_retries + 1):
            left = deadline - time.monotonic()
            if left <= 0:
                raise InferError(TIMEOUT, "The model server did not answer in time")
            try:
                async with asyncio.timeout(left):
                    response = await sdk.chat.completions.create(**arguments, timeout=left)
                return _reply(response, arguments["model"])
            except (TimeoutError, openai.APITimeoutError):
                raise InferError(TIMEOUT, "The model server did not answer in time") from None
            except openai.RateLimitError as error:
                _log.warning("model server answered 429 (attempt %d)", attempt + 1)
                code, message = RATE_LIMITED, "The model server is rate limiting us"
                wait = _retry_after(error)
            except openai.InternalServerError as error:
                _log.warning("model server answered HTTP %s (attempt %d)", error.status_code, attempt + 1)
                code, message = PROVIDER_UNAVAILABLE, f"The model server answered HTTP {error.status_code}"
                wait = _retry_after(error)
            except openai.APIConnectionError:
                _log.warning("model server could not be reached (attempt %d)", attempt + 1, exc_info=True)
                code, message = PROVIDER_UNAVAILABLE, "The model server could not be reached"
                wait = None
            except (openai.AuthenticationError, openai.PermissionDeniedError) as error:
                _log.warning("model server refused the credentials (HTTP %s)", error.status_code)
                raise InferError(PROVIDER_UNAVAILABLE, "The model server refused the credentials "
                                                       f"(HTTP {error.status_code})") from None
            except (openai.BadRequestError, openai.UnprocessableEntityError) as error:
                _log.warning("model server refused the request (HTTP %s)", error.status_code, exc_info=True)
                raise InferError(INVALID_INPUT, "The model server refused the request "
                                                f"(HTTP {error.status_code})") from None
            except openai.APIStatusError as error:
                _log.warning("model server answered HTTP %s", error.status_code, exc_info=True)
                raise InferError(PROVIDER_UNAVAILABLE, f"The model server answered HTTP {error.status_code}") from None
            except openai.OpenAIError:
                _log.exception("model server answered something unreadable")
                raise InferError(PROVIDER_UNAVAILABLE, "The model server answered something unreadable") from None
            if attempt == self.config.max_retries:
                break
            backoff = self.config.backoff_ms / 1000 * (2 ** attempt)
            delay = min(self.config.max_backoff_ms / 1000, wait if wait is not None else backoff)
            if delay >= deadline - time.monotonic():
                break  # waiting would pass the deadline: report what the server said
            await asyncio.sleep(delay)
        raise InferError(code, message)

    async def aclose(self) -> None:
        if self._owns_client and self._client is not None:
            client, self._client = self._client, None
            await client.close()

    async def __aenter__(self) -> OpenAIProvider:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"<OpenAIProvider model={self.config.model!r}>"


def _reply(response: Any, asked_model: str) -> ProviderReply:
    """Our reply from a ``ChatCompletion``; a response without a choice is the server's fault."""
    choices = getattr(response, "choices", None)
    if not choices:
        _log.error("model server answered a completion without choices")
        raise InferError(PROVIDER_UNAVAILABLE, "The model server answered without a choice")
    choice = choices[0]
    content = getattr(choice.message, "content", None)
    usage = getattr(response, "usage", None)
    reported = None
    if usage is not None and isinstance(getattr(usage, "prompt_tokens", None), int) \
            and isinstance(getattr(usage, "completion_tokens", None), int):
        reported = InferUsage(input_tokens=max(0, usage.prompt_tokens), output_tokens=max(0, usage.completion_tokens))
    model = getattr(response, "model", None)
    return ProviderReply(content=content if isinstance(content, str) else "",
                         model=model if isinstance(model, str) and model else asked_model,
                         finish_reason=str(choice.finish_reason or "stop"), usage=reported)


def create_openai_provider(config: OpenAIInferConfig | Mapping[str, Any] | None = None, *,
                           client: AsyncOpenAI | None = None, **options: Any) -> OpenAIProvider:
    """The ``openai`` provider from a config (``infer_config_from_env(os.environ)``) or keywords.

    Example::

        provider = create_openai_provider(base_url="http://127.0.0.1:8000/v1", model="qwen2.5-7b-instruct")
        client = create_infer_client({"openai": provider})
        await client.reasoning.sample(model=ModelConfig(provider="openai"), messages=[...])
    """
    if isinstance(config, Mapping):
        options = {**config, **options}
        config = None
    if config is None:
        try:
            config = OpenAIInferConfig(**options)
        except TypeError:
            raise InvalidArgumentError("unknown option for the openai provider") from None
    elif options:
        raise InvalidArgumentError("pass either a config or keyword options, not both")
    return OpenAIProvider(config, client)
