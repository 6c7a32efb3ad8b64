"""The Redis ContextStateStore (CX-11) over an application-owned ``redis.asyncio`` client.

One JSON string per scope at ``key_prefix + sha256([sessionId, turnId,
invocationId])``. ``compare_and_set`` is one single-key Lua script (version
check, then ``SET ... PX``), so it is atomic on a single server and routes to
one slot on Redis Cluster without locks or timers. Writes reset the TTL, reads
do not. The store never closes the client: the application owns it.
"""

from __future__ import annotations

import hashlib
import uuid
from collections import OrderedDict
from typing import Any, Final, Protocol

from ....contracts import Context
from ..errors import ContextError
from ..items import trusted_context
from ..ports import ContextCallOptions, StoredContext
from ..scope import ContextScope, context_scope_key, parse_scope, scope_tuple
from ..validation import read_fields
from ._codec import dump_stored, load_stored, stored, version_prefix
from .memory import DEFAULT_TTL_MS, MAX_TTL_MS

__all__ = [
    "CAS_SCRIPT",
    "CAS_SCRIPT_SHA",
    "DEFAULT_KEY_PREFIX",
    "RedisContextClient",
    "RedisContextStore",
    "create_redis_context_store",
]

DEFAULT_KEY_PREFIX: Final = "ditto:context:"

#: KEYS[1] = scope key; ARGV = expected version prefix ("" = create only), document, TTL in ms.
CAS_SCRIPT: Final = """
local current = redis.call('GET', KEYS[1])
if ARGV[1] == '' then
  if current then return 0 end
else
  if not current then return 0 end
  if string.sub(current, 1, string.len(ARGV[1])) ~= ARGV[1] then return 0 end
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
"""
CAS_SCRIPT_SHA: Final = hashlib.sha1(CAS_SCRIPT.encode("utf-8")).hexdigest()


class RedisContextClient(Protocol):
    """What the store needs of a client: redis-py's ``get`` and ``eval`` signatures.

    ``redis.asyncio.Redis`` / ``RedisCluster`` fit as they are; any other client
    is adapted with these two forwarding methods, as the seed says. When the
    client also has ``evalsha`` the script is sent by hash (``EVAL`` on NOSCRIPT).
    """

    async def get(self, name: str) -> Any: ...

    async def eval(self, script: str, numkeys: int, *keys_and_args: Any) -> Any: ...


_UNAVAILABLE = "the context state store (Redis) is unavailable"
_RECENT_LIMIT = 256
_KEY_MEMO_LIMIT = 4096


class RedisContextStore:
    """A :class:`~ditto.worker.context.ContextStateStore` backed by Redis."""

    def __init__(self, client: RedisContextClient, *, ttl_ms: int = DEFAULT_TTL_MS,
                 key_prefix: str = DEFAULT_KEY_PREFIX) -> None:
        if client is None or not callable(getattr(client, "get", None)) \
                or not callable(getattr(client, "eval", None)):
            raise ContextError("INVALID_INPUT", "the Redis store needs a client with get() and eval()")
        if isinstance(ttl_ms, bool) or not isinstance(ttl_ms, int) or not 1 <= ttl_ms <= MAX_TTL_MS:
            raise ContextError("INVALID_INPUT", f"ttlMs must be an integer from 1 to {MAX_TTL_MS}")
        if not isinstance(key_prefix, str):
            raise ContextError("INVALID_INPUT", "keyPrefix must be a string")
        from redis.exceptions import NoScriptError, RedisError, ResponseError

        self.client = client
        evalsha = getattr(client, "evalsha", None)
        self._evalsha = evalsha if callable(evalsha) else None
        # The last document this store wrote or read per key. When Redis returns exactly
        # these bytes again, the parsed (immutable) snapshot is reused instead of re-parsed.
        self._recent: OrderedDict[str, tuple[bytes, StoredContext]] = OrderedDict()
        self._keys: dict[tuple[str | None, str | None, str | None], str] = {}
        self.ttl_ms = ttl_ms
        self.key_prefix = key_prefix
        self._no_script = NoScriptError
        self._redis_error = RedisError
        self._response_error = ResponseError

    def key(self, scope: ContextScope | Any) -> str:
        """The Redis key of ``scope`` (memoised: hashing is per scope, not per call)."""
        parsed = parse_scope(scope)
        ident = scope_tuple(parsed)
        key = self._keys.get(ident)
        if key is None:
            if len(self._keys) >= _KEY_MEMO_LIMIT:
                self._keys.clear()
            key = self._keys[ident] = context_scope_key(parsed, self.key_prefix)
        return key

    def _translate(self, error: BaseException) -> ContextError:
        if isinstance(error, self._response_error) and str(error).startswith("WRONGTYPE"):
            return ContextError("INVALID_STATE", "the stored context is not a JSON string")
        return ContextError("STATE_STORE_UNAVAILABLE", _UNAVAILABLE)

    async def get(self, scope: ContextScope | Any, options: ContextCallOptions | None = None) -> StoredContext | None:
        """The stored context, or ``None`` when missing or expired. Never extends the TTL."""
        if options is not None:
            options.raise_if_aborted()
        key = self.key(scope)
        try:
            raw = await self.client.get(key)
        except (self._redis_error, OSError) as error:
            raise self._translate(error) from error
        if raw is None:
            self._recent.pop(key, None)
            return None
        data = raw if isinstance(raw, bytes) else str(raw).encode("utf-8")
        recent = self._recent.get(key)
        if recent is not None and recent[0] == data:
            self._recent.move_to_end(key)
            return recent[1]
        value = load_stored(data)
        self._remember(key, data, value)
        return value

    def _remember(self, key: str, data: bytes, value: StoredContext) -> None:
        self._recent[key] = (data, value)
        self._recent.move_to_end(key)
        if len(self._recent) > _RECENT_LIMIT:
            self._recent.popitem(last=False)

    async def compare_and_set(self, scope: ContextScope | Any, expected_version: str | None, next: Context | Any,
                              options: ContextCallOptions | None = None) -> StoredContext:
        """Write ``next`` if the stored version is ``expected_version`` (``None``: only if missing)."""
        if options is not None:
            options.raise_if_aborted()
        key = self.key(scope)
        if expected_version is not None and (not isinstance(expected_version, str) or not expected_version):
            raise ContextError("INVALID_INPUT", "expectedVersion must be a non-empty string or None")
        context = trusted_context(next)
        version = str(uuid.uuid4())
        document = dump_stored(version, context)
        expected = "" if expected_version is None else version_prefix(expected_version)
        args = (key, expected, document, self.ttl_ms)
        try:
            if self._evalsha is None:
                written = await self.client.eval(CAS_SCRIPT, 1, *args)
            else:
                try:
                    written = await self._evalsha(CAS_SCRIPT_SHA, 1, *args)
                except self._no_script:
                    written = await self.client.eval(CAS_SCRIPT, 1, *args)
        except (self._redis_error, OSError) as error:
            raise self._translate(error) from error
        if int(written) != 1:
            raise ContextError("STATE_CONFLICT", "the scope's version changed, expired or already exists")
        value = stored(version, context)
        self._remember(key, document.encode("utf-8"), value)
        return value


def create_redis_context_store(client: RedisContextClient, options: Any = None, *, ttl_ms: int | None = None,
                               key_prefix: str | None = None) -> RedisContextStore:
    """Create the store; ``options`` may be ``config.context.cache`` or ``{"ttlMs":…, "keyPrefix":…}``."""
    fields = {} if options is None else read_fields(options, ("ttl_ms", "key_prefix"), "options")
    return RedisContextStore(
        client,
        ttl_ms=ttl_ms if ttl_ms is not None else fields.get("ttl_ms", DEFAULT_TTL_MS),
        key_prefix=key_prefix if key_prefix is not None else fields.get("key_prefix", DEFAULT_KEY_PREFIX),
    )
