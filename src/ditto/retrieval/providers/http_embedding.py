"""OpenAI-compatible HTTP embeddings (``POST {url}/v1/embeddings``) over httpx (RET-6).

The application calls :func:`embedding_config_from_env` with its own mapping
(``os.environ`` or a dotenv dict); nothing reads the environment implicitly.
Every request has a deadline (``timeout_ms``, shortened by the caller's
signal deadline). Failures are mapped to public codes and never carry the
server's text or the API key:

* deadline passed → ``RETRIEVAL_TIMEOUT``; signal fired → ``RETRIEVAL_CANCELLED``
* 401/403 → ``RETRIEVAL_PERMISSION_DENIED``; other non-2xx, connection
  errors, malformed JSON → ``RETRIEVAL_BACKEND_ERROR``
* wrong vector count, bad ``index`` values, NaN/inf, wrong dimension →
  ``RETRIEVAL_INVALID_EMBEDDING``
* an answer over ``max_response_bytes`` → ``RETRIEVAL_BACKEND_ERROR``, read no further. The default
  allows 256 KiB of JSON per text in the batch (a 12,000-number vector) plus 64 KiB.

The deadline covers reading *and* parsing the answer (parsing runs in a thread), so a server that
answers a 2,000,000-number vector cannot make a 3 s call take 8.

``dimensions`` only *checks* vectors; it is not sent to the server (changing
the model's output size is a model/index decision, not a request option).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from ..config import DEFAULT_BATCH_SIZE, pick_number
from ..errors import (
    BACKEND_ERROR,
    INVALID_EMBEDDING,
    INVALID_INPUT,
    PERMISSION_DENIED,
    TIMEOUT,
    RetrievalArgumentError,
    RetrievalError,
    await_with_signal,
    check_signal,
)
from ..types import RetrievalExecutionContext
from .embedding import (
    Vector,
    check_batch_size,
    check_dimensions,
    effective_dimensions,
    embedding_text,
    validate_vector,
)

__all__ = [
    "EMBEDDING_ENV_PREFIX",
    "EmbeddingConfig",
    "HttpEmbeddingProvider",
    "create_http_embedding_provider",
    "embedding_config_from_env",
]

EMBEDDING_ENV_PREFIX = "DITTO_WORKER_RETRIEVAL_EMBEDDING_"
DEFAULT_TIMEOUT_MS = 30_000
#: Answer bytes allowed per text in the batch when ``max_response_bytes`` is not set: a vector of
#: 12,000 numbers as JSON. A server answering a 2,000,000-number vector (22 MB) is cut off early.
RESPONSE_BYTES_PER_TEXT = 256 * 1024


class _TooLarge(Exception):
    pass


async def _read_capped(response: httpx.Response, limit: int, *, cut: bool = False) -> bytes:
    """The body, or :class:`_TooLarge` past ``limit`` bytes (``cut``: its first ``limit`` bytes instead)."""
    declared = response.headers.get("content-length")
    if not cut and declared is not None and declared.isdigit() and int(declared) > limit:
        raise _TooLarge
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > limit:
            if cut:
                return bytes(body[:limit])
            raise _TooLarge
    return bytes(body)


def _parse_data(payload: bytes) -> Any:
    return json.loads(payload)["data"]

_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class EmbeddingConfig:
    """Where and how to call the embeddings endpoint. ``api_key`` never appears in ``repr``."""

    url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    dimensions: int | None = None
    batch_size: int | None = None
    timeout_ms: int = DEFAULT_TIMEOUT_MS
    max_response_bytes: int | None = None


def _env_int(env: Mapping[str, str], name: str) -> int | None:
    raw = env.get(EMBEDDING_ENV_PREFIX + name)
    if raw is None or raw.strip() == "":
        return None
    try:
        value = int(raw.strip())
    except ValueError:
        raise RetrievalArgumentError(INVALID_INPUT, f"{EMBEDDING_ENV_PREFIX}{name} must be an integer") from None
    if value < 1:
        raise RetrievalArgumentError(INVALID_INPUT, f"{EMBEDDING_ENV_PREFIX}{name} must be positive")
    return value


def embedding_config_from_env(env: Mapping[str, str]) -> EmbeddingConfig:
    """Read ``DITTO_WORKER_RETRIEVAL_EMBEDDING_{URL,MODEL,API_KEY}`` (+ ``DIMENSIONS``,
    ``BATCH_SIZE``, ``TIMEOUT_MS``) from ``env``. URL and MODEL are required; the key is
    optional (local servers often need none). ``_BASE_URL`` stands in for ``_URL`` when that is
    unset: INFER's server is ``DITTO_WORKER_INFER_BASE_URL``, and one ``.env`` naming both servers
    the same way should not leave the embedding server unconfigured."""
    url = (env.get(EMBEDDING_ENV_PREFIX + "URL") or env.get(EMBEDDING_ENV_PREFIX + "BASE_URL") or "").strip()
    model = (env.get(EMBEDDING_ENV_PREFIX + "MODEL") or "").strip()
    if not url:
        raise RetrievalArgumentError(INVALID_INPUT, f"{EMBEDDING_ENV_PREFIX}URL (or _BASE_URL) is not set")
    if not model:
        raise RetrievalArgumentError(INVALID_INPUT, f"{EMBEDDING_ENV_PREFIX}MODEL is not set")
    api_key = env.get(EMBEDDING_ENV_PREFIX + "API_KEY") or None
    batch_size = _env_int(env, "BATCH_SIZE")
    if batch_size is not None:
        check_batch_size(batch_size)
    return EmbeddingConfig(url=url, model=model, api_key=api_key, dimensions=_env_int(env, "DIMENSIONS"),
                           batch_size=batch_size, timeout_ms=_env_int(env, "TIMEOUT_MS") or DEFAULT_TIMEOUT_MS)


def _endpoint(url: str) -> str:
    """Accept a server root, an ``.../v1`` base URL or the full ``.../embeddings`` URL."""
    url = url.rstrip("/")
    if url.endswith("/embeddings"):
        return url
    if url.endswith("/v1"):
        return url + "/embeddings"
    return url + "/v1/embeddings"


class HttpEmbeddingProvider:
    """An :class:`~ditto.retrieval.providers.embedding.EmbeddingProvider` over HTTP.

    Use as ``async with`` or call :meth:`aclose`; an injected ``client`` is
    never closed by us.
    """

    def __init__(self, config: EmbeddingConfig, client: httpx.AsyncClient | None = None) -> None:
        if not config.url or not config.model:
            raise RetrievalArgumentError(INVALID_INPUT, "the embedding provider needs a url and a model")
        if config.timeout_ms < 1:
            raise RetrievalArgumentError(INVALID_INPUT, "timeout_ms must be positive")
        if config.max_response_bytes is not None and (
                isinstance(config.max_response_bytes, bool) or not isinstance(config.max_response_bytes, int)
                or config.max_response_bytes < 1):
            raise RetrievalArgumentError(INVALID_INPUT, "max_response_bytes must be a positive integer")
        if config.batch_size is not None:
            check_batch_size(config.batch_size)
        check_dimensions(config.dimensions)
        self.config = config
        self.dimensions = config.dimensions
        self._endpoint = _endpoint(config.url)
        self._owns_client = client is None
        self._client = client
        self._headers = {"content-type": "application/json"}
        if config.api_key:
            self._headers["authorization"] = f"Bearer {config.api_key}"

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=httpx.Timeout(None), follow_redirects=False)
        return self._client

    async def embed(self, contents: Sequence[Any], context: RetrievalExecutionContext | None = None
                    ) -> list[Vector]:
        """Embed ``contents`` (non-strings are sent as their JSON text), one request per batch."""
        size = check_batch_size(pick_number(self.config.batch_size, context, "embedding", "batch_size",
                                            DEFAULT_BATCH_SIZE))
        dimensions = effective_dimensions(self.dimensions, context)
        signal = context.signal if context is not None else None
        vectors: list[Vector] = []
        for start in range(0, len(contents), size):
            check_signal(signal)
            batch = [embedding_text(item, index=start + offset)
                     for offset, item in enumerate(contents[start:start + size])]
            answer = await await_with_signal(self._request(batch, signal.remaining() if signal else None), signal)
            for offset, raw in enumerate(answer):
                vector = validate_vector(raw, index=start + offset, dimensions=dimensions)
                if dimensions is None:
                    dimensions = len(vector)
                vectors.append(vector)
        return vectors

    async def _request(self, batch: list[str], remaining: float | None) -> list[Any]:
        deadline = self.config.timeout_ms / 1000
        if remaining is not None:
            deadline = min(deadline, remaining)
        body = {"model": self.config.model, "input": batch, "encoding_format": "float"}
        limit = self.config.max_response_bytes or len(batch) * RESPONSE_BYTES_PER_TEXT + 64 * 1024
        try:
            async with asyncio.timeout(deadline):
                async with self._http().stream("POST", self._endpoint, content=json.dumps(body).encode(),
                                               headers=self._headers) as response:
                    # A refusal's body is only logged (its start): never read more of it than that.
                    ok = 200 <= response.status_code < 300
                    payload = await _read_capped(response, limit if ok else 4096, cut=not ok)
                if ok:
                    try:  # in a thread, within the deadline: megabytes of numbers take a while to read
                        data = await asyncio.to_thread(_parse_data, payload)
                    except (ValueError, KeyError, TypeError, RecursionError):
                        raise RetrievalError(BACKEND_ERROR,
                                             "The embedding service answered malformed JSON") from None
                    return _ordered_vectors(data, len(batch))
        except TimeoutError:
            raise RetrievalError(TIMEOUT, "The embedding request timed out") from None
        except httpx.TimeoutException:
            raise RetrievalError(TIMEOUT, "The embedding request timed out") from None
        except _TooLarge:
            _log.warning("the embedding service answered more than %d bytes", limit)
            raise RetrievalError(BACKEND_ERROR, f"The embedding service answered more than {limit} bytes") from None
        except httpx.HTTPError as error:
            _log.warning("the embedding service could not be reached", exc_info=error)
            raise RetrievalError(BACKEND_ERROR, "The embedding service could not be reached") from None
        if response.status_code in (401, 403):
            raise RetrievalError(PERMISSION_DENIED, "The embedding service refused the credentials")
        if response.status_code in (408, 504):
            raise RetrievalError(TIMEOUT, "The embedding service timed out")
        if not 200 <= response.status_code < 300:
            # The body may name hosts or keys: operators see its start, callers only the status.
            _log.warning("the embedding service answered HTTP %s: %.300r", response.status_code, payload)
        raise RetrievalError(BACKEND_ERROR, f"The embedding service answered HTTP {response.status_code}")

    async def aclose(self) -> None:
        if self._owns_client and self._client is not None:
            await self._client.aclose()
            self._client = None

    async def __aenter__(self) -> HttpEmbeddingProvider:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"<HttpEmbeddingProvider model={self.config.model!r}>"


def _ordered_vectors(data: Any, expected: int) -> list[Any]:
    """Check the ``data`` array (count and ``index`` permutation) and return vectors in input order."""
    if not isinstance(data, list):
        raise RetrievalError(BACKEND_ERROR, "The embedding service answered malformed JSON")
    if len(data) != expected:
        raise RetrievalError(INVALID_EMBEDDING, f"The embedding service returned {len(data)} vectors for {expected}")
    ordered: list[Any] = [None] * expected
    seen: set[int] = set()
    for position, item in enumerate(data):
        if not isinstance(item, dict) or "embedding" not in item:
            raise RetrievalError(INVALID_EMBEDDING, f"embedding item {position} has no vector")
        index = item.get("index", position)
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < expected or index in seen:
            raise RetrievalError(INVALID_EMBEDDING, f"embedding item {position} has an invalid index")
        seen.add(index)
        ordered[index] = item["embedding"]
    return ordered


def create_http_embedding_provider(config: EmbeddingConfig | None = None, *, url: str | None = None,
                                   model: str | None = None, api_key: str | None = None,
                                   dimensions: int | None = None, batch_size: int | None = None,
                                   timeout_ms: int | None = None, max_response_bytes: int | None = None,
                                   client: httpx.AsyncClient | None = None) -> HttpEmbeddingProvider:
    """Build the provider from a config (e.g. ``embedding_config_from_env(os.environ)``)
    and/or keyword options; keywords override the config's fields::

        async with create_http_embedding_provider(url="http://127.0.0.1:8000/v1", model="bge-small") as embedder:
            vectors = await embed_contents(embedder, ["agent memory", "garbage collection"])
    """
    base = config or EmbeddingConfig(url=url or "", model=model or "")
    merged = EmbeddingConfig(
        url=url or base.url, model=model or base.model, api_key=api_key if api_key is not None else base.api_key,
        dimensions=dimensions if dimensions is not None else base.dimensions,
        batch_size=batch_size if batch_size is not None else base.batch_size,
        timeout_ms=timeout_ms if timeout_ms is not None else base.timeout_ms,
        max_response_bytes=max_response_bytes if max_response_bytes is not None else base.max_response_bytes)
    return HttpEmbeddingProvider(merged, client)
