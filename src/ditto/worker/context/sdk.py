"""``create_context`` (CX-1, CX-9): the direct SDK and the cache routing shared with the worker.

A request with ``context`` is computed on that snapshot. A request with
``scope`` reads the scope from the state store, computes, and (LOAD with
sources, UPDATE, COMPRESS) commits with one compare-and-set on the version it
read; a conflict is STATE_CONFLICT and is never retried here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, Literal, overload

from ...config import RuntimeConfig
from ...contracts import Context, ContextSelection
from ...runtime import RuntimeClient
from ...signal import CancelSignal, await_with_signal
from .compress import COMPRESS_FIELDS, run_compress
from .config import (
    ContextExecution,
    ContextOptions,
    PolicyInput,
    ServicesInput,
    build_execution,
    call_port,
    port_method,
    resolve_options,
)
from .inputs import construct, optional_bool, optional_str, parse_scope, read_fields
from .items import is_trusted_context, trusted_context
from .merge import LOAD_FIELDS, UPDATE_FIELDS, run_load, run_update
from .select import SELECT_FIELDS, run_select
from .types import ContextArgumentError, ContextError, ContextScope, StoredContext

__all__ = ["ContextClient", "create_context"]

_SCOPE_FIELDS: Final = ("scope", "expected_version")
_NODE_FIELDS: Final = {
    "CONTEXT.LOAD": LOAD_FIELDS + _SCOPE_FIELDS,
    "CONTEXT.UPDATE": UPDATE_FIELDS + _SCOPE_FIELDS,
    "CONTEXT.SELECT": SELECT_FIELDS + _SCOPE_FIELDS,
    "CONTEXT.COMPRESS": COMPRESS_FIELDS + _SCOPE_FIELDS,
}
_NODE_FUNCTIONS: Final[Mapping[str, Callable[[Any, ContextExecution], Awaitable[Any]]]] = {
    "CONTEXT.LOAD": run_load,
    "CONTEXT.UPDATE": run_update,
    "CONTEXT.SELECT": run_select,
    "CONTEXT.COMPRESS": run_compress,
}


def _stored(value: Any) -> StoredContext | None:
    """Accept a store's answer as StoredContext, ``{"version", "context"}`` or None."""
    if value is None:
        return None
    if isinstance(value, StoredContext) and is_trusted_context(value.context) and value.version:
        return value
    if isinstance(value, StoredContext):
        version, context = value.version, value.context
    elif isinstance(value, Mapping) and set(value) == {"version", "context"}:
        version, context = value["version"], value["context"]
    else:
        raise ContextError("INVALID_STATE", "the state store returned an unexpected value")
    if not isinstance(version, str) or not version:
        raise ContextError("INVALID_STATE", "the state store returned no version")
    trusted = trusted_context(context, "stored context", "INVALID_STATE")
    return construct(StoredContext, {"version": version, "context": trusted})


class ContextClient:
    """The CONTEXT SDK. Methods return ``Context`` / ``ContextSelection`` and raise ``ContextError``.

    Every method takes an optional ``signal``; it reaches every service the
    call uses (as ``ContextCallOptions``), and a cancelled call never commits.
    """

    def __init__(self, execution: ContextExecution) -> None:
        self._execution = execution

    @property
    def execution(self) -> ContextExecution:
        """The resolved policy and services (immutable)."""
        return self._execution

    async def load(self, input: Any, *, signal: CancelSignal | None = None) -> Context:
        return await await_with_signal(self.run("CONTEXT.LOAD", input, signal), signal)

    async def update(self, input: Any, *, signal: CancelSignal | None = None) -> Context:
        return await await_with_signal(self.run("CONTEXT.UPDATE", input, signal), signal)

    async def select(self, input: Any, *, signal: CancelSignal | None = None) -> ContextSelection:
        return await await_with_signal(self.run("CONTEXT.SELECT", input, signal), signal)

    async def compress(self, input: Any, *, signal: CancelSignal | None = None) -> Context:
        return await await_with_signal(self.run("CONTEXT.COMPRESS", input, signal), signal)

    @overload
    async def execute(self, node: Literal["CONTEXT.SELECT"], input: Any, *,
                      signal: CancelSignal | None = None) -> ContextSelection: ...

    @overload
    async def execute(self, node: Literal["CONTEXT.LOAD", "CONTEXT.UPDATE", "CONTEXT.COMPRESS"], input: Any, *,
                      signal: CancelSignal | None = None) -> Context: ...

    @overload
    async def execute(self, node: str, input: Any, *,
                      signal: CancelSignal | None = None) -> Context | ContextSelection: ...

    async def execute(self, node: str, input: Any, *,
                      signal: CancelSignal | None = None) -> Context | ContextSelection:
        """Run any of the four leaves by name; another name is UNKNOWN_NODE."""
        return await await_with_signal(self.run(node, input, signal), signal)

    async def run(self, node: str, input: Any, signal: CancelSignal | None = None,
                  runtime: RuntimeClient | None = None) -> Any:
        """One call without the signal guard (the worker's runtime already provides it)."""
        function = _NODE_FUNCTIONS.get(node) if isinstance(node, str) else None
        if function is None:
            raise ContextError("UNKNOWN_NODE", f"CONTEXT has no node {node!r}")
        execution = self._execution.with_options(signal, runtime)
        fields = read_fields(input, _NODE_FIELDS[node], "input")
        raw_scope = fields.pop("scope", None)
        expected = optional_str(fields.pop("expected_version", None), "expectedVersion")
        if raw_scope is None:
            if expected is not None:
                raise ContextError("INVALID_INPUT", "expectedVersion needs a scope")
            return await function(fields, execution)
        if "context" in fields:
            raise ContextError("INVALID_INPUT", "a cache request cannot also pass context")
        scope = parse_scope(raw_scope)
        # A request that cannot be valid for any store is refused as such first, with or without a store.
        if node == "CONTEXT.LOAD" and "sources" not in fields \
                and optional_bool(fields.pop("resolve_references", None), "resolveReferences"):
            raise ContextError("INVALID_INPUT", "resolveReferences needs sources")
        if execution.services.state_store is None:
            raise ContextError("STATE_STORE_UNAVAILABLE", "scope requests need redis or services.stateStore")

        async def operation() -> Any:
            return await self._scoped(node, fields, scope, expected, execution)

        queue = execution.services.operation_queue
        if queue is None:
            return await operation()
        return await call_port(port_method(queue, "enqueue"), (scope, operation), execution.options)

    async def _scoped(self, node: str, fields: dict[str, Any], scope: ContextScope, expected: str | None,
                      execution: ContextExecution) -> Any:
        store = execution.services.state_store
        execution.check()
        current = _stored(await call_port(port_method(store, "get"), (scope,), execution.options))
        if node == "CONTEXT.LOAD" and "sources" in fields:
            if expected is not None and (current is None or current.version != expected):
                raise ContextError("STATE_CONFLICT", "the scope's version changed or expired")
            result = await run_load(fields, execution)
            await self._commit(scope, None if current is None else current.version, result, execution)
            return result
        if current is None:
            raise ContextError("CONTEXT_NOT_FOUND", "no cached context for this scope (missing or expired)")
        if expected is not None and current.version != expected:
            raise ContextError("STATE_CONFLICT", "the scope's version changed")
        if node == "CONTEXT.LOAD":
            return current.context
        fields["context"] = current.context
        if node == "CONTEXT.SELECT":
            return await run_select(fields, execution)
        function = run_update if node == "CONTEXT.UPDATE" else run_compress
        result = await function(fields, execution)
        await self._commit(scope, current.version, result, execution)
        return result

    @staticmethod
    async def _commit(scope: ContextScope, version: str | None, context: Context,
                      execution: ContextExecution) -> None:
        execution.check()  # cancelled before persisting: nothing is written
        store = execution.services.state_store
        written = await call_port(port_method(store, "compare_and_set"), (scope, version, context),
                                  execution.options)
        if written is None:
            raise ContextError("INVALID_STATE", "the state store returned nothing for a write")


def create_context(options: ContextOptions | Mapping[str, Any] | RuntimeConfig | None = None, *,
                   policy: PolicyInput | None = None, services: ServicesInput | None = None,
                   redis: Mapping[str, Any] | None = None) -> ContextClient:
    """Create the direct SDK. It opens no connection; only scope calls touch the cache.

    ``options`` is a ``ContextOptions``, a dict of the same fields (camelCase or
    snake_case) or a ``RuntimeConfig`` (YAML ``workers.context``); the keyword
    arguments override it. Methods return ``Context`` / ``ContextSelection`` and
    raise ``ContextError``::

        context = create_context(policy={"maxItems": 64})
        working = await context.load({"sources": [{"role": "system", "content": "Answer with evidence."},
                                                  {"id": "goal", "content": "Explain the API"}]})
        chosen = await context.select({"context": working, "purpose": "infer", "query": "API", "limit": 8})

        cached = create_context(redis={"client": redis.asyncio.Redis.from_url(url)})
        await cached.update({"scope": {"sessionId": "s1"}, "add": [{"id": "note", "content": "..."}]})
    """
    resolved = resolve_options(options, policy=policy, services=services, redis=redis)
    if resolved.services_factory is not None or resolved.concurrency is not None:
        raise ContextArgumentError("INVALID_INPUT", "servicesFactory and concurrency are worker options")
    return ContextClient(build_execution(resolved.policy, resolved.services, resolved.redis))
