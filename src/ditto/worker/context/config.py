"""CONTEXT's options: policy, services, Redis, YAML ``workers.context`` and the environment.

Everything is resolved once, when an SDK or worker is created, into a frozen
:class:`ContextExecution` (policy + services + this call's options) that the
algorithm modules take explicitly. The config loader never connects anywhere;
:func:`context_options_from_config` only turns the typed YAML sections into
constructor arguments, and :func:`create_context_redis_client` reads
``DITTO_WORKER_CONTEXT_REDIS_URL`` when the application asks.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, Final, cast

from pydantic import ValidationError
from pydantic.alias_generators import to_camel

from ..._extras import require_extra
from ...config import ContextWorkerConfig, RuntimeConfig
from ...contracts import ContextItem, ContextPolicy
from ...contracts.types import MAX_SAFE_INTEGER
from ...errors import ConfigError, describe_validation_error
from ...signal import CancelSignal
from .inputs import read_fields
from .items import facts
from .queue import create_context_operation_queue
from .stores import RedisContextClient, create_in_memory_context_store, create_redis_context_store
from .types import ContextArgumentError, ContextCallOptions, ContextError, ContextServices

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.asyncio.cluster import RedisCluster

    from ...runtime import RuntimeClient

__all__ = [
    "REDIS_URL_ENV",
    "ContextExecution",
    "ContextOptions",
    "ServicesInput",
    "build_execution",
    "call_port",
    "context_options_from_config",
    "create_context_execution",
    "create_context_redis_client",
    "port_method",
    "resolve_options",
    "resolve_policy",
    "resolve_services",
    "tighten",
]

REDIS_URL_ENV: Final = "DITTO_WORKER_CONTEXT_REDIS_URL"

#: Services as ``ContextServices`` or a dict of services (camelCase or snake_case keys; functions allowed).
ServicesInput = ContextServices | Mapping[str, Any]
PolicyInput = ContextPolicy | Mapping[str, Any]


# -- policy ----------------------------------------------------------------------

_DEFAULT_POLICY: Final = ContextPolicy()
_POLICY_FIELDS: Final = tuple(ContextPolicy.model_fields)


def resolve_policy(value: PolicyInput | None = None) -> ContextPolicy:
    """A ``ContextPolicy`` from itself, a dict (camelCase or snake_case) or ``None`` (the defaults).

    Bad values are ``INVALID_INPUT`` (policy numbers are integers 1–1,000,000).
    """
    if value is None:
        return _DEFAULT_POLICY
    if isinstance(value, ContextPolicy):
        return value
    given = read_fields(value, _POLICY_FIELDS, "policy", error=ContextArgumentError)
    try:
        return ContextPolicy.model_validate({to_camel(name): got for name, got in given.items()})
    except ValidationError as error:
        message = "policy." + describe_validation_error(error, root="policy")
        raise ContextArgumentError("INVALID_INPUT", message) from None


def tighten(request: int | None, policy: int | None) -> int | None:
    """The effective limit: the smaller of request and policy, either may be unset."""
    if request is None:
        return policy
    if policy is None:
        return request
    return min(request, policy)


# -- services ----------------------------------------------------------------------

_SERVICE_FIELDS: Final = tuple(item.name for item in fields(ContextServices))
_METHODS: Final = {
    "token_estimator": ("estimate",),
    "selector": ("select",),
    "compressor": ("compress",),
    "rag_strategy": ("select",),
    "state_store": ("get", "compare_and_set"),
    "operation_queue": ("enqueue",),
    "reference_resolver": ("resolve",),
}


class _FunctionPort:
    """A plain function, or a ``{"method": fn}`` mapping, standing in for a service object.

    Its methods are the functions themselves (instance attributes, not bound),
    so :func:`call_port` inspects the caller's own signature.
    """

    def __init__(self, methods: Mapping[str, Callable[..., Any]]) -> None:
        for name, function in methods.items():
            setattr(self, name, function)

    def __repr__(self) -> str:
        return f"<service {', '.join(vars(self))}>"


def _service(name: str, service: Any) -> Any:
    methods = _METHODS[name]
    if all(callable(getattr(service, method, None)) for method in methods) and not isinstance(service, Mapping):
        return service
    if len(methods) == 1 and callable(service) and not isinstance(service, Mapping):
        return _FunctionPort({methods[0]: service})
    if isinstance(service, Mapping) and all(callable(service.get(method)) for method in methods):
        return _FunctionPort({method: service[method] for method in methods})
    raise ContextArgumentError("INVALID_INPUT", f"services.{to_camel(name)} must provide {', '.join(methods)}")


def resolve_services(value: ServicesInput | None = None) -> ContextServices:
    """``ContextServices`` whose every service is an object with its protocol's method(s)."""
    if value is None:
        return ContextServices()
    if isinstance(value, ContextServices):
        given = {name: getattr(value, name) for name in _SERVICE_FIELDS if getattr(value, name) is not None}
    else:
        given = read_fields(value, _SERVICE_FIELDS, "services", error=ContextArgumentError)
    return ContextServices(**{name: _service(name, service) for name, service in given.items()})


def port_method(service: Any, method: str) -> Callable[..., Any]:
    """The callable behind a service: a method, a mapping entry or the service itself."""
    bound = getattr(service, method, None)
    if callable(bound) and not isinstance(service, Mapping):
        return bound  # type: ignore[no-any-return]
    if isinstance(service, Mapping):
        return service[method]  # type: ignore[no-any-return]
    return cast("Callable[..., Any]", service)


_ARITY_FN: weakref.WeakKeyDictionary[Any, int | None] = weakref.WeakKeyDictionary()
_ARITY_METHOD: weakref.WeakKeyDictionary[Any, int | None] = weakref.WeakKeyDictionary()


def _max_positional(fn: Callable[..., Any]) -> int | None:
    """How many positional arguments ``fn`` takes (``None``: any number), cached per function."""
    is_method = inspect.ismethod(fn)
    table, target = (_ARITY_METHOD, fn.__func__) if is_method else (_ARITY_FN, fn)  # type: ignore[attr-defined]
    try:
        return table[target]
    except (KeyError, TypeError):
        pass
    count: int | None
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        count = None
    else:
        if any(p.kind is p.VAR_POSITIONAL for p in params):
            count = None
        else:
            count = sum(1 for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    with contextlib.suppress(TypeError):
        table[target] = count
    return count


async def call_port(fn: Callable[..., Any], args: tuple[Any, ...], options: ContextCallOptions) -> Any:
    """Call a port with ``options`` appended when it accepts it; await the result if needed."""
    limit = _max_positional(fn)
    result = fn(*args, options) if limit is None or limit > len(args) else fn(*args)
    if inspect.isawaitable(result):
        result = await result
    return result


# -- the resolved execution ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ContextExecution:
    """A resolved policy plus services plus this call's options: what an algorithm needs besides its input.

    The low-level functions (``run_load`` …) take one explicitly, so a custom
    worker can reuse them without the SDK's cache routing.
    """

    policy: ContextPolicy
    services: ContextServices
    options: ContextCallOptions = field(default_factory=ContextCallOptions)

    def with_options(self, signal: CancelSignal | None = None, runtime: RuntimeClient | None = None
                     ) -> ContextExecution:
        if signal is None and runtime is None:
            return self
        return replace(self, options=ContextCallOptions(signal, runtime))

    def check(self) -> None:
        """Raise ``CancelledBySignal`` if this call was cancelled (before every commit and port call)."""
        self.options.raise_if_aborted()

    async def estimate(self, item: ContextItem) -> int:
        """Token estimate of one item's content: the injected estimator, or JSON UTF-8 bytes / 4 rounded up."""
        estimator = self.services.token_estimator
        if estimator is None:
            return facts(item).default_tokens
        self.check()
        value = await call_port(port_method(estimator, "estimate"), (item.content,), self.options)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_SAFE_INTEGER:
            raise ContextError("INVALID_PROVIDER_OUTPUT",
                               "the token estimator must return a non-negative safe integer")
        return value


def create_context_execution(policy: PolicyInput | None = None,
                             services: ServicesInput | None = None) -> ContextExecution:
    """Resolve and freeze ``policy`` and ``services`` for direct use of the built-in strategies::

        execution = create_context_execution({"maxItems": 16})
        compressed = await deterministic_compress({"context": context, "maxItems": 8}, execution)
    """
    return ContextExecution(resolve_policy(policy), resolve_services(services))


def _with_redis(services: ContextServices, redis: Mapping[str, Any] | None) -> ContextServices:
    if redis is None:
        return services
    if services.state_store is not None:
        raise ContextArgumentError("INVALID_INPUT", "pass either redis or services.stateStore, not both")
    given = read_fields(redis, ("client", "ttl_ms", "key_prefix"), "redis", error=ContextArgumentError)
    if given.get("client") is None:
        raise ContextArgumentError("INVALID_INPUT", "redis.client is required")
    store = create_redis_context_store(given["client"], ttl_ms=given.get("ttl_ms"),
                                       key_prefix=given.get("key_prefix"))
    return replace(services, state_store=store)


def build_execution(policy: PolicyInput | None, services: ServicesInput | None,
                    redis: Mapping[str, Any] | None) -> ContextExecution:
    return ContextExecution(resolve_policy(policy), _with_redis(resolve_services(services), redis))


# -- options ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ContextOptions:
    """Options of ``create_context`` / ``create_context_worker``.

    ``redis`` is ``{"client": redis.asyncio client, "ttl_ms"?: int, "key_prefix"?: str}``
    and cannot be combined with ``services.state_store``. ``services_factory``
    and ``concurrency`` are worker-only.
    """

    policy: PolicyInput | None = None
    services: ServicesInput | None = None
    redis: Mapping[str, Any] | None = None
    services_factory: Callable[[], ServicesInput] | None = None
    concurrency: int | None = None


_OPTION_FIELDS: Final = ("policy", "services", "redis", "services_factory", "concurrency")


def resolve_options(options: ContextOptions | Mapping[str, Any] | RuntimeConfig | None = None,
                    **overrides: Any) -> ContextOptions:
    """Options from a ``ContextOptions``, a dict, a ``RuntimeConfig`` or ``None``, plus keyword overrides."""
    if isinstance(options, RuntimeConfig):
        options = context_options_from_config(options)
    if options is None:
        given: dict[str, Any] = {}
    elif isinstance(options, ContextOptions):
        given = {name: getattr(options, name) for name in _OPTION_FIELDS if getattr(options, name) is not None}
    else:
        given = read_fields(options, _OPTION_FIELDS, "options", error=ContextArgumentError)
    given.update({key: value for key, value in overrides.items() if value is not None})
    return ContextOptions(**given)


def context_options_from_config(config: RuntimeConfig | ContextWorkerConfig | None, *,
                                redis_client: RedisContextClient | None = None,
                                services: ServicesInput | None = None,
                                concurrency: int | None = None) -> ContextOptions:
    """``ContextOptions`` from ``config.context`` (YAML ``workers.context``)::

        config = load_runtime_config_file("ditto.yaml", os.environ)
        context = create_context(context_options_from_config(config, redis_client=client))

    * ``policy`` → ``options.policy``;
    * ``cache{ttl_ms, key_prefix}`` + ``redis_client`` → ``options.redis``;
    * ``local_cache{ttl_ms, max_entries}`` (only without a Redis client) → an in-memory store;
    * ``queue{max_pending}`` → an operation queue.

    Explicit ``services`` win over what the config would create.
    """
    section = config.context if isinstance(config, RuntimeConfig) else (config or ContextWorkerConfig())
    resolved = resolve_services(services)
    redis: dict[str, Any] | None = None
    if redis_client is not None:
        redis = {"client": redis_client}
        if section.cache is not None:
            redis.update(section.cache.model_dump(exclude_none=True))
    elif section.local_cache is not None and resolved.state_store is None:
        resolved = replace(resolved, state_store=create_in_memory_context_store(section.local_cache))
    if section.queue is not None and resolved.operation_queue is None:
        resolved = replace(resolved, operation_queue=create_context_operation_queue(section.queue))
    return ContextOptions(
        policy=section.policy,
        services=None if resolved == ContextServices() else resolved,
        redis=redis,
        concurrency=concurrency,
    )


def create_context_redis_client(env: Mapping[str, str] | None = None, *,
                                cluster: bool = False) -> Redis | RedisCluster:
    """A ``redis.asyncio`` client (or ``RedisCluster``) for ``DITTO_WORKER_CONTEXT_REDIS_URL``.

    No connection is made until the first command. The client is the
    application's: close it with ``await client.aclose()``; ``runtime.close()``
    never does. Raises ConfigError ``CONFIG_MISSING_ENV`` when the variable is unset::

        client = create_context_redis_client(os.environ)
        context = create_context(services={"state_store": create_redis_context_store(client)})
        ...
        await client.aclose()
    """
    source = os.environ if env is None else env
    url = source.get(REDIS_URL_ENV)
    if not url:
        raise ConfigError("CONFIG_MISSING_ENV", f"{REDIS_URL_ENV} is not set")
    require_extra("redis", "redis", "a Redis client from DITTO_WORKER_CONTEXT_REDIS_URL")
    if cluster:
        from redis.asyncio.cluster import RedisCluster

        return RedisCluster.from_url(url)
    from redis.asyncio import Redis

    return Redis.from_url(url)
