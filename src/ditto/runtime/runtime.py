"""The runtime: registration, routing and execution of node calls (RT-1, RT-3, RT-5).

A call travels ``invoke`` → router (pick a replica: local, then same host,
then remote; round-robin inside a tier; skip full local replicas and remote
ones cooling down after a connection failure) → either ``_run_local`` (handler
awaited inline, so an in-process call costs a few microseconds) or
``transport.invoke`` (HTTP). A worker's failure becomes a ``NodeResult``;
routing, registration and transport failures raise.

Failover: a remote call that never reached its replica (the transport says
``TRANSPORT_UNAVAILABLE``: refused, DNS, TLS handshake, 503) goes to the next
replica the router would pick; one that may have reached it
(``TRANSPORT_FAILED``) is never re-sent, so nothing runs twice. Either failure
puts the replica in a cool-down, after which a jittered probe (the
transport's ``check_health``, ``GET /healthz`` over HTTP) lets it back in.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import logging
import os
import random
import socket
import uuid
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import HANDLER_ERROR, REJECTED, DittoError, RegistrationError, RoutingError, TransportError
from ..signal import CancelSignal, await_with_signal
from ._replica import LOCAL, LOCATION_NAMES, REMOTE, SAME_HOST, LocalReplica, RemoteReplica, Replica
from .graph import Graph, GraphNode, GraphResult, execute_graph
from .loop import DEFAULT_LOOP_BUDGET, LoopContext
from .result import NodeError, NodeResult
from .transport import Transport
from .worker import MAX_TIMEOUT_S, ExecutionContext, WorkerDefinition, WorkerInfo, _current, valid_timeout

if TYPE_CHECKING:
    from ..config import RuntimeConfig

__all__ = ["Runtime", "create_ditto"]

_log = logging.getLogger("ditto.runtime")

T = TypeVar("T")

#: How long a replica whose connection failed is skipped, unless the config says otherwise.
DEFAULT_REPLICA_COOLDOWN_S = 5.0
#: Transport failures that say the replica's connection is broken (the first never reached it).
_UNREACHED, _CONNECTION_LOST = "TRANSPORT_UNAVAILABLE", "TRANSPORT_FAILED"


def _signal_error(replica: LocalReplica, signal: CancelSignal) -> DittoError:
    """What a fired signal reports: the worker's own code when its definition names an error class
    (``INFER_CANCELLED``), else the runtime's ``CANCELLED`` / ``TIMEOUT``."""
    worker_error = replica.definition.signal_error
    if worker_error is None:
        return signal.abort_error()
    return worker_error.from_signal(signal.reason)


def _new_execution_id() -> str:
    # 128 random bits as 32 hex characters, like uuid4().hex but without building a UUID object
    # (this runs on every call).
    return os.urandom(16).hex()


class _BoundRuntime:
    """The runtime as a handler sees it: calls inherit the parent's signal."""

    __slots__ = ("_runtime", "_signal")

    def __init__(self, runtime: Runtime, signal: CancelSignal | None) -> None:
        self._runtime = runtime
        self._signal = signal

    async def invoke(self, node: str, input: Any, *, signal: CancelSignal | None = None,
                     timeout: float | None = None) -> NodeResult[Any]:
        return await self._runtime.invoke(node, input, signal=signal or self._signal, timeout=timeout)


class Runtime:
    """Routes node calls to local and remote worker replicas.

    Create it with :func:`create_ditto`. The runtime owns nothing it was given:
    ``close()`` stops routing and waits for accepted calls, but never closes
    injected clients (Redis, databases) or transports.
    """

    def __init__(self, config: RuntimeConfig | None = None, transports: Iterable[Transport] = ()) -> None:
        from ..config import RuntimeConfig

        self.config: RuntimeConfig = config if config is not None else RuntimeConfig()
        self.id = uuid.uuid4().hex[:12]
        self.host = socket.gethostname()
        self._transports: dict[str, Transport] = {}
        self._replicas: list[Replica] = []
        self._routes: dict[str, list[list[Replica]]] = {}
        self._cursors: dict[tuple[str, int], itertools.count[int]] = {}
        self._serial = itertools.count(1)
        self._inflight = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._closed = False
        self._unbound_client = _BoundRuntime(self, None)
        cooldown_ms = self.config.transport.replica_cooldown_ms
        self._cooldown_s = DEFAULT_REPLICA_COOLDOWN_S if cooldown_ms is None else cooldown_ms / 1000
        self._cooling = 0  # replicas cooling now; while zero the router checks nothing
        self._probe_tasks: set[asyncio.Task[None]] = set()
        for transport in transports:
            self.add_transport(transport)

    # -- registration -------------------------------------------------------
    def add_transport(self, transport: Transport) -> None:
        if not isinstance(transport, Transport):
            raise RegistrationError("INVALID_TRANSPORT", "transport does not implement the Transport protocol")
        if transport.id in self._transports:
            raise RegistrationError("DUPLICATE_TRANSPORT", f"transport {transport.id!r} is already installed")
        self._transports[transport.id] = transport

    def register(self, definition: WorkerDefinition) -> WorkerInfo:
        """Add one local replica of ``definition``; registering it again adds another replica."""
        self._check_open(RegistrationError)
        if not isinstance(definition, WorkerDefinition):
            raise RegistrationError("INVALID_WORKER", "register() takes a WorkerDefinition")
        address = f"{definition.type}@{self.id}#{next(self._serial)}"
        replica = LocalReplica(address, definition, definition.replica_handlers())
        self._add_replica(replica, definition.capabilities)
        return self._info(replica)

    def register_remote(self, *, address: str, transport_id: str, capabilities: Iterable[str],
                        worker_type: str | None = None, same_host: bool | None = None) -> WorkerInfo:
        """Add a replica served by another process, reached through ``transport_id``.

        ``same_host`` defaults to what the transport says about its URL (loopback
        or this host's name), which decides the routing tier.
        """
        self._check_open(RegistrationError)
        transport = self._transports.get(transport_id)
        if transport is None:
            raise RegistrationError("UNKNOWN_TRANSPORT", f"no transport {transport_id!r} is installed")
        if not isinstance(address, str) or not address:
            raise RegistrationError("INVALID_WORKER", "remote address must be a non-empty string")
        caps = tuple(capabilities)
        if not caps or not all(isinstance(cap, str) and cap for cap in caps):
            raise RegistrationError("INVALID_WORKER", "remote capabilities must be non-empty node names")
        is_same_host = transport.same_host if same_host is None else same_host
        wtype = worker_type or caps[0].split(".", 1)[0]
        replica = RemoteReplica(address, wtype, transport, caps, tier=SAME_HOST if is_same_host else REMOTE)
        self._add_replica(replica, caps)
        return self._info(replica)

    def unregister_remote(self, *, address: str, transport_id: str) -> WorkerInfo:
        """Remove a replica added by :meth:`register_remote` (the most recent one, if it was added twice).

        Calls already sent to it finish; new calls no longer route to it, and a node
        no replica offers any more is ``UNKNOWN_NODE`` again. Raises
        ``RegistrationError(UNKNOWN_WORKER)`` when no such replica is registered.
        """
        for replica in reversed(self._replicas):
            if isinstance(replica, RemoteReplica) and replica.address == address \
                    and replica.transport.id == transport_id:
                break
        else:
            raise RegistrationError("UNKNOWN_WORKER",
                                    f"no remote replica {address!r} is registered through transport {transport_id!r}")
        self._replicas.remove(replica)
        for node in replica.capabilities:
            tiers = self._routes.get(node)
            if tiers is None:
                continue
            tier = tiers[replica.tier]
            if replica in tier:
                tier.remove(replica)
            if not any(tiers):
                del self._routes[node]
        self._recover(replica)
        return self._info(replica)

    def _add_replica(self, replica: Replica, capabilities: Iterable[str]) -> None:
        self._replicas.append(replica)
        for node in capabilities:
            tiers = self._routes.setdefault(node, [[], [], []])
            tiers[replica.tier].append(replica)

    def workers(self) -> list[WorkerInfo]:
        return [self._info(replica) for replica in self._replicas]

    @staticmethod
    def _info(replica: Replica) -> WorkerInfo:
        if isinstance(replica, LocalReplica):
            return WorkerInfo(replica.address, replica.worker_type, replica.definition.capabilities,
                              LOCATION_NAMES[LOCAL], replica.definition.concurrency)
        return WorkerInfo(replica.address, replica.worker_type, replica.capabilities,
                          LOCATION_NAMES[replica.tier], None, replica.transport.id)

    # -- invocation -----------------------------------------------------------
    async def invoke(self, node: str, input: Any, *, signal: CancelSignal | None = None,
                     timeout: float | None = None) -> NodeResult[Any]:
        """Run ``node`` on the best available replica and return its NodeResult.

        Raises :class:`RoutingError` when no replica offers ``node`` or the runtime
        is closed, and :class:`~ditto.errors.TransportError` when a remote call
        fails in transit. Everything the worker itself reports (including a
        cancellation or timeout) comes back as a NodeResult.

        Example::

            result = await runtime.invoke("MEMORY.SEARCH", {"query": "backups", "limit": 3}, timeout=5)
            if result.status == "success":
                hits = result.output
            else:
                print(result.error.code)
        """
        self._check_open(RoutingError)
        tiers = self._routes.get(node) if isinstance(node, str) else None
        if tiers is None:
            raise RoutingError("UNKNOWN_NODE", f"no registered worker offers node {node!r}")
        replica = self._choose(node, tiers)
        if replica is None:
            return NodeResult(_new_execution_id(), node, "rejected",
                              error=NodeError(REJECTED, f"every replica of {node} is at its concurrency limit"))
        return await self._dispatch(replica, node, input, signal, timeout, _new_execution_id(), tiers)

    async def invoke_local(self, node: str, input: Any, *, address: str | None = None,
                           execution_id: str | None = None, signal: CancelSignal | None = None,
                           timeout: float | None = None) -> NodeResult[Any]:
        """Serve a call that arrived over a transport: only local replicas are eligible.

        Used by the HTTP app so a request is never forwarded on to another host.
        """
        self._check_open(RoutingError)
        tiers = self._routes.get(node)
        local = tiers[LOCAL] if tiers else []
        if address is not None:
            local = [replica for replica in local if replica.address == address]
        if not local:
            raise RoutingError("UNKNOWN_NODE", f"this runtime serves no node {node!r} at that address")
        replica = self._choose(node, [local, [], []])
        exec_id = execution_id or _new_execution_id()
        if replica is None:
            return NodeResult(exec_id, node, "rejected",
                              error=NodeError(REJECTED, f"every replica of {node} is at its concurrency limit"))
        return await self._dispatch(replica, node, input, signal, timeout, exec_id)

    def _choose(self, node: str, tiers: list[list[Replica]], tried: set[Replica] | None = None) -> Replica | None:
        """The next replica with room that is not cooling down (and not in ``tried``), in tier order.

        When only cooling replicas are left, one of them is tried anyway: a call that
        might succeed beats refusing it, and a lone replica behaves as it would with
        no health tracking at all.
        """
        for tier_index, tier in enumerate(tiers):
            if not tier:
                continue
            if len(tier) == 1:
                replica = tier[0]
                if replica.has_room() and not replica.cooling and (tried is None or replica not in tried):
                    return replica
                continue
            cursor = self._cursors.get((node, tier_index))
            if cursor is None:
                cursor = self._cursors[(node, tier_index)] = itertools.count()
            start = next(cursor)
            for offset in range(len(tier)):
                replica = tier[(start + offset) % len(tier)]
                if replica.has_room() and not replica.cooling and (tried is None or replica not in tried):
                    return replica
        if self._cooling:
            for tier in tiers:
                for replica in tier:
                    if replica.cooling and (tried is None or replica not in tried):
                        return replica
        return None

    async def _dispatch(self, replica: Replica, node: str, input: Any, signal: CancelSignal | None,
                        timeout: float | None, execution_id: str,
                        tiers: list[list[Replica]] | None = None) -> NodeResult[Any]:
        if not valid_timeout(timeout):
            # NaN, infinity and 10**400 are not "<= 0": they get the message about size.
            finite = isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and not timeout <= 0
            raise RoutingError("INVALID_INPUT", f"timeout must be a finite number of seconds, at most {MAX_TIMEOUT_S}"
                               if finite else "timeout must be a positive number of seconds")
        self._inflight += 1
        self._idle.clear()
        try:
            if isinstance(replica, RemoteReplica):
                return await self._call_remote(replica, node, input, signal, timeout, execution_id, tiers)
            replica.active += 1
            try:
                return await self._run_local(replica, node, input, signal, timeout, execution_id)
            finally:
                replica.active -= 1
        finally:
            self._inflight -= 1
            if self._inflight == 0:
                self._idle.set()

    async def _call_remote(self, replica: RemoteReplica, node: str, input: Any, signal: CancelSignal | None,
                           timeout: float | None, execution_id: str,
                           tiers: list[list[Replica]] | None) -> NodeResult[Any]:
        """Send the call; while it provably never reached a replica, send it to the next one instead."""
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        tried: set[Replica] | None = None
        current: Replica = replica
        while True:
            try:
                if isinstance(current, LocalReplica):  # a local replica freed up while we failed over
                    current.active += 1
                    try:
                        return await self._run_local(current, node, input, signal, timeout, execution_id)
                    finally:
                        current.active -= 1
                current.active += 1
                try:
                    result = await current.transport.invoke(current.address, node, input,
                                                            execution_id=execution_id, timeout=timeout, signal=signal)
                finally:
                    current.active -= 1
            except TransportError as error:
                if not isinstance(current, RemoteReplica) or error.code not in (_UNREACHED, _CONNECTION_LOST):
                    raise
                self._cool(current, error)
                if error.code != _UNREACHED or tiers is None or (signal is not None and signal.aborted):
                    raise
                tried = tried or set()
                tried.add(current)
                following = self._choose(node, tiers, tried)
                if following is None:
                    raise
                if deadline is not None:
                    timeout = deadline - loop.time()
                    if timeout <= 0:
                        raise
                current = following
                continue
            if current.cooling:
                self._recover(current)  # a call got through: no need to wait for the probe
            return result

    # -- replica health ---------------------------------------------------------
    def _cool(self, replica: RemoteReplica, error: TransportError) -> None:
        """Skip ``replica`` for a jittered cool-down, then probe it."""
        if replica.cooling or self._closed:
            return
        replica.cooling = True
        self._cooling += 1
        _log.warning("replica %s (transport %s) is skipped for %.1f s: %s", replica.address, replica.transport.id,
                     self._cooldown_s, error.message)
        self._schedule_probe(replica)

    def _schedule_probe(self, replica: RemoteReplica) -> None:
        # ±20 % so the replicas of many callers do not all probe a recovering server at once.
        delay = self._cooldown_s * random.uniform(0.8, 1.2)
        replica.probe = asyncio.get_running_loop().call_later(delay, self._start_probe, replica)

    def _start_probe(self, replica: RemoteReplica) -> None:
        if not replica.cooling or self._closed:
            return
        task = asyncio.ensure_future(self._probe(replica))
        replica.probe = task
        self._probe_tasks.add(task)
        task.add_done_callback(self._probe_tasks.discard)

    async def _probe(self, replica: RemoteReplica) -> None:
        check = getattr(replica.transport, "check_health", None)
        try:
            healthy = True if check is None else bool(await check())
        except Exception:
            _log.exception("the health check of transport %s raised", replica.transport.id)
            healthy = False
        if not replica.cooling:
            return
        if healthy:
            replica.probe = None  # this task is ending by itself; _recover must not cancel it
            self._recover(replica)
            _log.info("replica %s (transport %s) answers again", replica.address, replica.transport.id)
        elif not self._closed:
            self._schedule_probe(replica)

    def _recover(self, replica: Replica) -> None:
        """Put ``replica`` back in rotation and drop its pending probe."""
        if not isinstance(replica, RemoteReplica) or not replica.cooling:
            return
        replica.cooling = False
        self._cooling -= 1
        probe, replica.probe = replica.probe, None
        if probe is not None:
            probe.cancel()

    async def _run_local(self, replica: LocalReplica, node: str, input: Any, signal: CancelSignal | None,
                         timeout: float | None, execution_id: str) -> NodeResult[Any]:
        if timeout is not None:
            signal = CancelSignal.any([signal, CancelSignal.timeout(timeout)])
        # Handlers that delegate without a signal share one client (most calls have no signal).
        client = self._unbound_client if signal is None else _BoundRuntime(self, signal)
        context = ExecutionContext(execution_id, node, replica.definition.type, replica.address, signal, client,
                                   self.config)
        token = _current.set(context)
        try:
            if signal is None:
                output = await replica.handlers[node](input, context)
            else:
                if signal.aborted:  # an already-cancelled call never starts its handler
                    raise _signal_error(replica, signal)
                output = await await_with_signal(replica.handlers[node](input, context), signal,
                                                 error=functools.partial(_signal_error, replica))
        except DittoError as error:
            return NodeResult(execution_id, node, error.status, error=NodeError(error.code, error.message))
        except Exception:
            # The handler's own exception text may hold secrets: report a fixed message, and log
            # the original once with its traceback so the application's developer can see it.
            _log.exception("the handler of %s raised", node)
            return NodeResult(execution_id, node, "error",
                              error=NodeError(HANDLER_ERROR, f"the {replica.worker_type} worker failed"))
        finally:
            _current.reset(token)
        if isinstance(output, NodeResult):
            # A handler that already wraps its answer (the seed's ``define("RETRIEVAL", input =>
            # retrieval.search(input))``) *is* that answer: its status/output/error, this call's identity.
            return NodeResult(execution_id, node, output.status, output.output, output.error)
        return NodeResult(execution_id, node, "success", output)

    # -- graphs and loops -------------------------------------------------------
    async def run(self, plan: Graph, input: Any, *, signal: CancelSignal | None = None) -> GraphResult:
        """Run a graph plan once (its own budget is its node count).

        Example::

            plan = graph("search").node("hits", "MEMORY.SEARCH", [], lambda query, _deps: {"query": query})
            result = await runtime.run(plan, "backup interval")
            hits = result.output("hits")
        """
        return await self.run_graph(plan, input, signal, None)

    async def run_graph(self, plan: Graph, input: Any, signal: CancelSignal | None,
                        charge: Callable[[GraphNode], None] | None) -> GraphResult:
        """Run ``plan`` calling ``charge(node)`` before each node execution (how a loop keeps its budget)."""
        self._check_open(RoutingError)
        plan.validate()
        for graph_node in plan.nodes:
            if graph_node.node_type not in self._routes:
                raise RoutingError("UNKNOWN_NODE",
                                   f"graph node {graph_node.id!r} uses unknown node {graph_node.node_type!r}")

        async def call(node: str, node_input: Any) -> NodeResult[Any]:
            return await self.invoke(node, node_input, signal=signal)

        return await execute_graph(plan, input, call, _new_execution_id, charge)

    async def loop(self, body: Callable[[LoopContext, Any], Awaitable[T]], input: Any = None, *,
                   max_executions: int = DEFAULT_LOOP_BUDGET, signal: CancelSignal | None = None) -> T:
        """Drive stage graphs under one shared budget of node executions (default 1024).

        ``body(loop, input)`` runs plans with ``loop.run`` and single nodes with
        ``loop.invoke``; every node execution takes one unit of the budget and the
        1025th raises ``GraphError(LOOP_BUDGET_EXHAUSTED)``.

        Example::

            async def body(loop: LoopContext, question: str) -> GraphResult:
                return await loop.run(plan, question)

            result = await runtime.loop(body, "How long are backups kept?")
        """
        self._check_open(RoutingError)
        return await body(LoopContext(self, max_executions, signal), input)

    # -- lifecycle --------------------------------------------------------------
    @property
    def closed(self) -> bool:
        return self._closed

    async def close(self) -> None:
        """Stop routing new calls and wait until every accepted call has finished (pending re-probes stop)."""
        self._closed = True
        await self._idle.wait()
        for replica in self._replicas:
            self._recover(replica)
        if self._probe_tasks:
            await asyncio.gather(*self._probe_tasks, return_exceptions=True)

    async def __aenter__(self) -> Runtime:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    def _check_open(self, error: type[DittoError]) -> None:
        if self._closed:
            raise error("RUNTIME_CLOSED", "the runtime is closed")


def create_ditto(config: RuntimeConfig | None = None, workers: Iterable[WorkerDefinition] = (),
                 transports: Iterable[Transport] = ()) -> Runtime:
    """Create a runtime and register ``workers`` (one local replica each).

    Example::

        runtime = create_ditto(workers=[create_context_worker(), create_memory_worker(store=store)])
        try:
            result = await runtime.invoke("CONTEXT.LOAD", {"sources": [{"role": "user", "content": "hi"}]})
        finally:
            await runtime.close()
    """
    runtime = Runtime(config, transports)
    for definition in workers:
        runtime.register(definition)
    return runtime

