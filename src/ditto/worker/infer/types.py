"""INFER's data contracts: model choice, chat messages, the call and its result (INF-1, INF-5).

Everything a caller sends or receives is a frozen :class:`~ditto.contracts.DittoModel`
(camelCase on the wire, both spellings accepted): ``ModelConfig``, ``ChatMessage``,
``SampleInput`` (what ``INFER.SAMPLE`` takes) and ``InferResult`` (what it answers).
Providers see the call as a :class:`ProviderRequest` and answer a
:class:`ProviderReply`; the SDK owns validation, the JSON-schema check and the
usage accounting, so a provider only talks to its model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Final, Literal, Protocol, runtime_checkable

from pydantic import Field, field_validator

from ...contracts import DittoModel, FrozenDict, check_json, freeze_json
from ...errors import DittoError
from ...signal import CancelSignal

__all__ = [
    "BUILTIN_PROVIDER",
    "INFER_ERROR_CODES",
    "ChatMessage",
    "InferError",
    "InferProvider",
    "InferResult",
    "InferUsage",
    "ModelConfig",
    "ProviderReply",
    "ProviderRequest",
    "SampleInput",
]

#: The provider used when a ModelConfig names none: offline, deterministic, no key.
BUILTIN_PROVIDER: Final = "builtin:extractive"

INVALID_INPUT: Final = "INFER_INVALID_INPUT"
PROVIDER_UNAVAILABLE: Final = "INFER_PROVIDER_UNAVAILABLE"
RATE_LIMITED: Final = "INFER_RATE_LIMITED"
TIMEOUT: Final = "INFER_TIMEOUT"
INVALID_OUTPUT: Final = "INFER_INVALID_OUTPUT"
CANCELLED: Final = "INFER_CANCELLED"

INFER_ERROR_CODES: Final = frozenset({INVALID_INPUT, PROVIDER_UNAVAILABLE, RATE_LIMITED, TIMEOUT, INVALID_OUTPUT,
                                      CANCELLED})

#: Bounds of one call (INF-5): a chat is refused before any provider sees it when it is larger.
MAX_MESSAGES: Final = 512
MAX_MESSAGE_CHARS: Final = 1_000_000
MAX_TOTAL_CHARS: Final = 4_000_000
MAX_OUTPUT_TOKENS: Final = 1_000_000
MAX_NAME_CHARS: Final = 256


class InferError(DittoError):
    """An INFER failure (INF-5). Messages are ours: never the provider's body, never a key.

    ``INFER_INVALID_INPUT`` the call was malformed or too large; ``INFER_PROVIDER_UNAVAILABLE``
    no such provider, or it could not be reached / refused us; ``INFER_RATE_LIMITED`` still 429
    after bounded backoff; ``INFER_TIMEOUT`` the deadline passed; ``INFER_INVALID_OUTPUT`` the answer
    broke the asked JSON schema twice; ``INFER_CANCELLED`` the caller's signal fired.
    """

    codes = INFER_ERROR_CODES
    cancelled_code = CANCELLED
    timeout_code = TIMEOUT


def _frozen_json(value: Any) -> Any:
    """Refuse what JSON cannot carry (NaN, lone surrogates, deep nesting) and freeze the rest."""
    if value is None:
        return None
    check_json(value)
    return freeze_json(value)


_Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS)]


class ModelConfig(DittoModel):
    """Which model answers: a registered ``provider`` name, its ``model`` and free ``options``.

    ``ModelConfig()`` is the built-in offline model. ``model=None`` lets the
    provider use its configured default (``DITTO_WORKER_INFER_MODEL`` for ``openai``).
    ``options`` are JSON values passed to the provider as they are (e.g. ``top_p``
    for ``openai``, ``embeddingWeight`` for the built-in model).
    """

    provider: _Name = BUILTIN_PROVIDER
    model: _Name | None = None
    options: dict[str, Any] = Field(default_factory=FrozenDict)

    _json_options = field_validator("options")(_frozen_json)


class ChatMessage(DittoModel):
    """One chat turn: ``{role, content}``."""

    role: Literal["system", "user", "assistant"]
    content: Annotated[str, Field(max_length=MAX_MESSAGE_CHARS)]


class SampleInput(DittoModel):
    """The input of ``INFER.SAMPLE`` and of ``client.reasoning.sample`` (INF-1, INF-2).

    ``responseFormat`` is OpenAI's: ``{"type": "text"}``, ``{"type": "json_object"}`` or
    ``{"type": "json_schema", "json_schema": {"name", "schema", "strict"?}}``.
    """

    model: ModelConfig = Field(default_factory=ModelConfig)
    messages: Annotated[tuple[ChatMessage, ...], Field(min_length=1, max_length=MAX_MESSAGES)]
    response_format: dict[str, Any] | None = None
    max_tokens: Annotated[int, Field(ge=1, le=MAX_OUTPUT_TOKENS)] | None = None
    temperature: Annotated[float, Field(ge=0.0, le=2.0, allow_inf_nan=False)] | None = None

    _json_format = field_validator("response_format")(_frozen_json)


class InferUsage(DittoModel):
    """Tokens spent by one call, every attempt counted (INF-6)."""

    input_tokens: int = 0
    output_tokens: int = 0


class InferResult(DittoModel):
    """A model's answer (INF-1).

    ``parsed`` is the answer's JSON value when a ``json_object``/``json_schema``
    response format was asked (already validated), else ``None``.
    """

    message: ChatMessage
    parsed: Any = None
    usage: InferUsage
    model: str
    finish_reason: str


@dataclass(frozen=True, slots=True)
class ProviderRequest:
    """What a provider is asked: the validated call, messages as plain ``{role, content}`` dicts."""

    model: str | None
    messages: tuple[Mapping[str, str], ...]
    options: Mapping[str, Any] = field(default_factory=dict)
    response_format: Mapping[str, Any] | None = None
    max_tokens: int | None = None
    temperature: float | None = None


@dataclass(frozen=True, slots=True)
class ProviderReply:
    """What a provider answers; ``usage=None`` lets the SDK estimate it (UTF-8 JSON bytes / 4)."""

    content: str
    model: str
    finish_reason: str = "stop"
    usage: InferUsage | None = None


@runtime_checkable
class InferProvider(Protocol):
    """A model behind INFER. Raise :class:`InferError` for failures you can name; anything
    else becomes ``INFER_PROVIDER_UNAVAILABLE`` with a fixed message (its text is logged, not shown)."""

    async def sample(self, request: ProviderRequest, signal: CancelSignal | None, /) -> ProviderReply: ...
