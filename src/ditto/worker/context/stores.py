"""ContextStateStore implementations: Redis (shared state) and in-process (TTL + LRU).

Both keep one JSON document per scope, ``{"version": "...", "context": {"items": [...]}}``,
``version`` first so the Redis CAS script compares it by string prefix instead of
decoding the document. Versions are random UUIDs, never reused.

* :class:`RedisContextStore` over an application-owned ``redis.asyncio`` client: the key is
  ``key_prefix + sha256([sessionId, turnId, invocationId])``; ``compare_and_set`` is one
  single-key Lua script (version check, then ``SET ... PX``), so it is atomic on a single
  server and routes to one slot on Redis Cluster without locks or timers. Writes reset the
  TTL, reads do not. The store never closes the client: the application owns it.
* :class:`InMemoryContextStore` for a single process, tests and a local cache. It has no
  connections and no background timers: expiry is checked on access, and a write that
  needs room first removes expired entries, then the least recently used.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol

from ..._extras import require_extra
from ...contracts import Context, ContextItem, valid_text
from ...contracts.types import MAX_SAFE_INTEGER, MAX_TTL_MS
from .inputs import construct, context_scope_key, options_or_value, parse_scope, read_fields, read_json, scope_tuple
from .items import coerce_reference, encode_json, facts, is_trusted, make_context, make_item, trusted_context
from .types import ContextArgumentError, ContextCallOptions, ContextError, ContextScope, StoredContext

if TYPE_CHECKING:
    from ...config import ContextCacheConfig, ContextLocalCacheConfig

__all__ = [
    "CAS_SCRIPT",
    "CAS_SCRIPT_SHA",
    "DEFAULT_KEY_PREFIX",
    "DEFAULT_MAX_ENTRIES",
    "DEFAULT_TTL_MS",
    "InMemoryContextStore",
    "RedisContextClient",
    "RedisContextStore",
    "create_in_memory_context_store",
    "create_redis_context_store",
]

DEFAULT_TTL_MS: Final = 3_600_000
DEFAULT_MAX_ENTRIES: Final = 1000

_Key = tuple[str | None, str | None, str | None]


# -- the stored document ------------------------------------------------------------

def _item_json(item: ContextItem) -> dict[str, Any]:
    body: dict[str, Any] = {"id": item.id, "content": item.content}
    if item.source is not None:
        source: dict[str, Any] = {"uri": item.source.uri}
        if item.source.media_type is not None:
            source["mediaType"] = item.source.media_type
        if item.source.digest is not None:
            source["digest"] = item.source.digest
        body["source"] = source
    if item.metadata is not None:
        body["metadata"] = item.metadata
    return body


def version_prefix(version: str) -> str:
    return '{"version":' + json.dumps(version) + ","


def _item_fragment(item: ContextItem) -> str:
    info = facts(item)
    fragment = info.json
    if fragment is None:
        fragment = encode_json(_item_json(item))
        if is_trusted(item):
            info.json = fragment  # items are immutable, so their JSON never changes
    return fragment


def dump_stored(version: str, context: Context) -> str:
    """The stored document. Frozen values (FrozenDict, tuples) serialise natively."""
    return (version_prefix(version) + '"context":{"items":['
            + ",".join([_item_fragment(item) for item in context.items]) + "]}}")


def stored(version: str, context: Context) -> StoredContext:
    return construct(StoredContext, {"version": version, "context": context})


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_ITEM_KEYS: Final = frozenset({"id", "content", "source", "metadata"})


def _invalid(reason: str) -> ContextError:
    return ContextError("INVALID_STATE", f"the stored context is corrupt: {reason}")


def _decode_item(raw: Any) -> ContextItem:
    """A stored item, checked like input: ``json.loads`` turns ``"\\ud800"`` into a lone surrogate."""
    if type(raw) is not dict or "content" not in raw or not raw.keys() <= _ITEM_KEYS:
        raise _invalid("an item has an unexpected shape")
    item_id = raw.get("id")
    if type(item_id) is not str or not item_id or not valid_text(item_id):
        raise _invalid("an item id is missing")
    metadata = raw.get("metadata")
    if metadata is not None and type(metadata) is not dict:
        raise _invalid("an item's metadata is not an object")
    source = raw.get("source")
    return make_item(item_id, read_json(raw["content"], "stored content", "INVALID_STATE"),
                     None if source is None else coerce_reference(source, "stored source", "INVALID_STATE"),
                     None if metadata is None else read_json(metadata, "stored metadata", "INVALID_STATE"))


def load_stored(raw: str | bytes) -> StoredContext:
    """Parse a stored document; anything unexpected is INVALID_STATE (never an empty context)."""
    try:
        body = json.loads(raw, parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise ContextError("INVALID_STATE", "the stored context is not valid JSON") from None
    if type(body) is not dict or body.keys() != {"version", "context"}:
        raise ContextError("INVALID_STATE", "the stored context has an unexpected shape")
    version = body["version"]
    if not isinstance(version, str) or not version:
        raise ContextError("INVALID_STATE", "the stored context has no version")
    context = body["context"]
    if type(context) is not dict or context.keys() != {"items"} or type(context["items"]) is not list:
        raise _invalid("context.items is missing")
    items = [_decode_item(entry) for entry in context["items"]]
    if len({item.id for item in items}) != len(items):
        raise _invalid("an item id appears twice")
    return stored(version, make_context(items))


# -- in process ------------------------------------------------------------------------



@dataclass(slots=True)
class _Entry:
    value: StoredContext
    expires_at: float


def _wall_ms() -> float:
    return time.time() * 1000.0


class InMemoryContextStore:
    """``get`` refreshes LRU order but not the TTL; ``compare_and_set`` resets the TTL."""

    def __init__(self, ttl_ms: int = DEFAULT_TTL_MS, max_entries: int = DEFAULT_MAX_ENTRIES,
                 now: Callable[[], float] | None = None) -> None:
        if isinstance(ttl_ms, bool) or not isinstance(ttl_ms, int) or not 1 <= ttl_ms <= MAX_TTL_MS:
            raise ContextArgumentError("INVALID_INPUT", f"ttlMs must be an integer from 1 to {MAX_TTL_MS}")
        if isinstance(max_entries, bool) or not isinstance(max_entries, int) \
                or not 1 <= max_entries <= MAX_SAFE_INTEGER:
            raise ContextArgumentError("INVALID_INPUT", "maxEntries must be a positive safe integer")
        if now is not None and not callable(now):
            raise ContextArgumentError("INVALID_INPUT", "now must be a function returning milliseconds")
        self.ttl_ms = ttl_ms
        self.max_entries = max_entries
        self._now = now or _wall_ms
        self._entries: OrderedDict[_Key, _Entry] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def _live(self, key: _Key, now: float) -> _Entry | None:
        entry = self._entries.get(key)
        if entry is not None and entry.expires_at <= now:
            del self._entries[key]
            return None
        return entry

    async def get(self, scope: ContextScope | Any, options: ContextCallOptions | None = None) -> StoredContext | None:
        if options is not None:
            options.raise_if_aborted()
        key = scope_tuple(parse_scope(scope))
        entry = self._live(key, self._now())
        if entry is None:
            return None
        self._entries.move_to_end(key)
        return entry.value

    async def compare_and_set(self, scope: ContextScope | Any, expected_version: str | None, next: Context | Any,
                              options: ContextCallOptions | None = None) -> StoredContext:
        if options is not None:
            options.raise_if_aborted()
        key = scope_tuple(parse_scope(scope))
        if expected_version is not None and (not isinstance(expected_version, str) or not expected_version):
            raise ContextError("INVALID_INPUT", "expectedVersion must be a non-empty string or None")
        context = trusted_context(next)
        now = self._now()
        current = self._live(key, now)
        if expected_version is None:
            if current is not None:
                raise ContextError("STATE_CONFLICT", "the scope already has a context")
        elif current is None or current.value.version != expected_version:
            raise ContextError("STATE_CONFLICT", "the scope's version changed or expired")
        if current is None and len(self._entries) >= self.max_entries:
            self._make_room(now)
        value = stored(str(uuid.uuid4()), context)
        self._entries[key] = _Entry(value, now + self.ttl_ms)
        self._entries.move_to_end(key)
        return value

    def _make_room(self, now: float) -> None:
        for key in [key for key, entry in self._entries.items() if entry.expires_at <= now]:
            del self._entries[key]
        while len(self._entries) >= self.max_entries:
            self._entries.popitem(last=False)


def create_in_memory_context_store(ttl_ms: int | ContextLocalCacheConfig | Mapping[str, Any] | None = None,
                                   max_entries: int | None = None, now: Callable[[], float] | None = None, *,
                                   options: ContextLocalCacheConfig | Mapping[str, Any] | None = None
                                   ) -> InMemoryContextStore:
    """Create a store; ``options`` may be ``config.context.local_cache`` or a dict (camelCase ok), also
    given in ``ttl_ms``'s place::

        store = create_in_memory_context_store(60_000, 100)
        store = create_in_memory_context_store({"ttlMs": 60_000, "maxEntries": 100})
        context = create_context(services={"state_store": store})
    """
    options, given = options_or_value(ttl_ms, options)
    fields = {} if options is None else read_fields(options, ("ttl_ms", "max_entries", "now"), "options",
                                                    error=ContextArgumentError)
    return InMemoryContextStore(
        ttl_ms=given if given is not None else fields.get("ttl_ms", DEFAULT_TTL_MS),
        max_entries=max_entries if max_entries is not None else fields.get("max_entries", DEFAULT_MAX_ENTRIES),
        now=now if now is not None else fields.get("now"),
    )


# -- Redis -------------------------------------------------------------------------------

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

    # Plain methods returning awaitables, as redis-py's own annotations say; an ``async def`` fits too.
    def get(self, name: str) -> Awaitable[Any]: ...

    def eval(self, script: str, numkeys: int, *keys_and_args: Any) -> Any: ...


_UNAVAILABLE = "the context state store (Redis) is unavailable"
_LOG = logging.getLogger(__name__)
_RECENT_LIMIT = 256
_KEY_MEMO_LIMIT = 4096


class RedisContextStore:
    """A :class:`~ditto.worker.context.ContextStateStore` backed by Redis."""

    def __init__(self, client: RedisContextClient, *, ttl_ms: int = DEFAULT_TTL_MS,
                 key_prefix: str = DEFAULT_KEY_PREFIX) -> None:
        if client is None or not callable(getattr(client, "get", None)) \
                or not callable(getattr(client, "eval", None)):
            raise ContextArgumentError("INVALID_INPUT", "the Redis store needs a client with get() and eval()")
        if isinstance(ttl_ms, bool) or not isinstance(ttl_ms, int) or not 1 <= ttl_ms <= MAX_TTL_MS:
            raise ContextArgumentError("INVALID_INPUT", f"ttlMs must be an integer from 1 to {MAX_TTL_MS}")
        if not isinstance(key_prefix, str):
            raise ContextArgumentError("INVALID_INPUT", "keyPrefix must be a string")
        require_extra("redis", "redis", "the Redis context store")
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
        """The public error for a Redis failure; Redis's own text (hosts, ports) only goes to the log."""
        _LOG.warning("Redis context store call failed", exc_info=error)
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


def create_redis_context_store(client: RedisContextClient,
                               ttl_ms: int | ContextCacheConfig | Mapping[str, Any] | None = None,
                               key_prefix: str | None = None, *,
                               options: ContextCacheConfig | Mapping[str, Any] | None = None) -> RedisContextStore:
    """Create the store; ``options`` may be ``config.context.cache`` or ``{"ttlMs":…, "keyPrefix":…}``, also
    given in ``ttl_ms``'s place::

        store = create_redis_context_store(Redis.from_url(url), 3_600_000, "app:ctx:")
        store = create_redis_context_store(Redis.from_url(url), {"ttlMs": 3_600_000, "keyPrefix": "app:ctx:"})
        context = create_context(services={"state_store": store})
    """
    options, given = options_or_value(ttl_ms, options)
    fields = {} if options is None else read_fields(options, ("ttl_ms", "key_prefix"), "options",
                                                    error=ContextArgumentError)
    return RedisContextStore(
        client,
        ttl_ms=given if given is not None else fields.get("ttl_ms", DEFAULT_TTL_MS),
        key_prefix=key_prefix if key_prefix is not None else fields.get("key_prefix", DEFAULT_KEY_PREFIX),
    )
