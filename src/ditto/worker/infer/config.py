"""INFER configuration: where the ``openai`` provider finds its server (INF-3).

Nothing here reads the environment on import or by itself: the application
calls :func:`infer_config_from_env` with ``os.environ`` or the mapping
:func:`ditto.config.load_dotenv_mapping` read from a ``.env`` it chose to load.

Variables (prefix ``DITTO_WORKER_INFER_``):

* ``BASE_URL`` — the OpenAI-compatible server's base URL, e.g. ``https://api.openai.com/v1``,
  ``http://127.0.0.1:8000/v1`` (vLLM), ``http://127.0.0.1:8080/v1`` (llama.cpp),
  ``http://127.0.0.1:11434/v1`` (Ollama);
* ``MODEL`` — the model name the server knows;
* ``API_KEY`` — optional (local servers usually need none);
* ``TIMEOUT_MS`` — the deadline of one call, retries included (default 60 000);
* ``MAX_RETRIES`` — retries after a 429/5xx/connection failure (default 2, at most 10);
* ``RESPONSE_FORMAT`` — what the server understands: ``json_schema`` (default: the
  schema is sent), ``json_object`` (only "answer JSON" is sent), ``none`` (nothing is
  sent; the schema is still enforced on the answer).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Literal

from ...errors import InvalidArgumentError
from .types import ModelConfig

__all__ = ["INFER_ENV_PREFIX", "OpenAIInferConfig", "ServerResponseFormat", "infer_config_from_env"]

INFER_ENV_PREFIX: Final = "DITTO_WORKER_INFER_"
DEFAULT_TIMEOUT_MS: Final = 60_000
DEFAULT_MAX_RETRIES: Final = 2
MAX_RETRIES: Final = 10

#: How much of ``response_format`` the model server understands.
ServerResponseFormat = Literal["json_schema", "json_object", "none"]


@dataclass(frozen=True, slots=True)
class OpenAIInferConfig:
    """Where and how the ``openai`` provider calls its server. ``api_key`` never appears in ``repr``.

    ``backoff_ms`` is the first wait after a 429/5xx (doubled each retry, at most
    ``max_backoff_ms``; a server's ``Retry-After`` is honoured within that cap).
    """

    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    timeout_ms: int = DEFAULT_TIMEOUT_MS
    max_retries: int = DEFAULT_MAX_RETRIES
    backoff_ms: int = 500
    max_backoff_ms: int = 8_000
    response_format: ServerResponseFormat = "json_schema"

    def __post_init__(self) -> None:
        if not isinstance(self.base_url, str) or not self.base_url.startswith(("http://", "https://")):
            raise InvalidArgumentError("base_url must be an http:// or https:// URL")
        if not isinstance(self.model, str) or not self.model.strip():
            raise InvalidArgumentError("model must be a non-empty string")
        for name in ("timeout_ms", "backoff_ms", "max_backoff_ms"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 3_600_000:
                raise InvalidArgumentError(f"{name} must be an integer from 1 to 3600000")
        if isinstance(self.max_retries, bool) or not isinstance(self.max_retries, int) \
                or not 0 <= self.max_retries <= MAX_RETRIES:
            raise InvalidArgumentError(f"max_retries must be an integer from 0 to {MAX_RETRIES}")
        if self.response_format not in ("json_schema", "json_object", "none"):
            raise InvalidArgumentError("response_format must be json_schema, json_object or none")

    def model_config(self) -> ModelConfig:
        """The :class:`ModelConfig` that selects this server's model through the ``openai`` provider."""
        return ModelConfig(provider="openai", model=self.model)


def _int(env: Mapping[str, str], name: str, default: int) -> int:
    raw = (env.get(INFER_ENV_PREFIX + name) or "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise InvalidArgumentError(f"{INFER_ENV_PREFIX}{name} must be an integer") from None


def infer_config_from_env(env: Mapping[str, str] | None = None, *, model: str | None = None
                          ) -> OpenAIInferConfig | None:
    """The ``openai`` provider's config from ``env`` (default ``os.environ``, read only when called).

    ``None`` when neither ``DITTO_WORKER_INFER_BASE_URL`` nor ``_MODEL`` is set (use the
    built-in model); :class:`~ditto.errors.InvalidArgumentError` when only one is, or a
    number is malformed. The error never quotes the key. ``model`` (a caller's
    ``openai/NAME``) stands in for an unset ``DITTO_WORKER_INFER_MODEL``.

    Example::

        from ditto.config import load_dotenv_mapping
        config = infer_config_from_env(load_dotenv_mapping(".env"))
    """
    source: Mapping[str, str] = os.environ if env is None else env
    base_url = (source.get(INFER_ENV_PREFIX + "BASE_URL") or "").strip()
    model = (source.get(INFER_ENV_PREFIX + "MODEL") or "").strip() or (model or "").strip()
    if not base_url and not model:
        return None
    if not base_url:
        raise InvalidArgumentError(f"{INFER_ENV_PREFIX}MODEL is set but {INFER_ENV_PREFIX}BASE_URL is not")
    if not model:
        raise InvalidArgumentError(f"{INFER_ENV_PREFIX}BASE_URL is set but {INFER_ENV_PREFIX}MODEL is not")
    response_format = (source.get(INFER_ENV_PREFIX + "RESPONSE_FORMAT") or "json_schema").strip().lower()
    if response_format not in ("json_schema", "json_object", "none"):
        raise InvalidArgumentError(f"{INFER_ENV_PREFIX}RESPONSE_FORMAT must be json_schema, json_object or none")
    return OpenAIInferConfig(base_url=base_url, model=model, api_key=source.get(INFER_ENV_PREFIX + "API_KEY") or None,
                             timeout_ms=_int(source, "TIMEOUT_MS", DEFAULT_TIMEOUT_MS),
                             max_retries=_int(source, "MAX_RETRIES", DEFAULT_MAX_RETRIES),
                             response_format=response_format)  # type: ignore[arg-type]
