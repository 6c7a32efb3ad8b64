"""A bounded, per-scope serial operation queue (CX-13).

Operations on the same scope run one after another in arrival order;
different scopes run independently. It only orders work inside this process:
cross-process safety still comes from the store's compare-and-set.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, TypeVar

from ...contracts.types import MAX_SAFE_INTEGER
from .inputs import options_or_value, parse_scope, read_fields, scope_tuple
from .types import ContextArgumentError, ContextCallOptions, ContextError, ContextScope

if TYPE_CHECKING:
    from ...config import ContextQueueConfig

__all__ = ["DEFAULT_MAX_PENDING", "InProcessContextQueue", "create_context_operation_queue"]

DEFAULT_MAX_PENDING: Final = 1024

T = TypeVar("T")
_Key = tuple[str | None, str | None, str | None]


class _Lane:
    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.users = 0


class InProcessContextQueue:
    """``enqueue(scope, operation, options)`` runs ``await operation()`` in its scope's turn.

    Capacity counts waiting and running operations together; at capacity a new
    call fails at once with QUEUE_FULL. A failed operation releases its slot
    and does not block the ones behind it. Cancellation (``options.signal``) is
    checked when enqueuing and again when the operation's turn comes. As in the
    seed's promise chain, a cancelled waiter keeps its slot until the
    operations ahead of it end, also when its caller stops waiting (an SDK
    signal or a task cancellation): a small task then waits for that turn.
    """

    def __init__(self, max_pending: int = DEFAULT_MAX_PENDING) -> None:
        if isinstance(max_pending, bool) or not isinstance(max_pending, int) \
                or not 1 <= max_pending <= MAX_SAFE_INTEGER:
            raise ContextArgumentError("INVALID_INPUT", "maxPending must be a positive safe integer")
        self.max_pending = max_pending
        self._pending = 0
        self._lanes: dict[_Key, _Lane] = {}
        self._holders: set[asyncio.Task[None]] = set()

    @property
    def pending(self) -> int:
        """Operations waiting or running now (cancelled waiters included until their turn)."""
        return self._pending

    async def enqueue(self, scope: ContextScope | Any, operation: Callable[[], Awaitable[T]],
                      options: ContextCallOptions | None = None) -> T:
        if not callable(operation):
            raise ContextError("INVALID_INPUT", "operation must be an async function")
        key = scope_tuple(parse_scope(scope))
        if options is not None:
            options.raise_if_aborted()
        if self._pending >= self.max_pending:
            raise ContextError("QUEUE_FULL", f"the context operation queue holds {self.max_pending} operations")
        lane = self._lanes.get(key)
        if lane is None:
            lane = self._lanes[key] = _Lane()
        lane.users += 1
        self._pending += 1
        try:
            await lane.lock.acquire()
        except BaseException:
            self._hold_until_turn(key, lane)
            raise
        try:
            if options is not None:
                options.raise_if_aborted()
            return await operation()
        finally:
            lane.lock.release()
            self._leave(key, lane)

    def _leave(self, key: _Key, lane: _Lane) -> None:
        self._pending -= 1
        lane.users -= 1
        if lane.users == 0:
            del self._lanes[key]

    def _hold_until_turn(self, key: _Key, lane: _Lane) -> None:
        async def wait_turn() -> None:
            try:
                async with lane.lock:
                    pass
            finally:
                self._leave(key, lane)

        holder = asyncio.get_running_loop().create_task(wait_turn())
        self._holders.add(holder)  # keep a reference until it is done
        holder.add_done_callback(self._holders.discard)


def create_context_operation_queue(max_pending: int | ContextQueueConfig | Mapping[str, Any] | None = None, *,
                                   options: ContextQueueConfig | Mapping[str, Any] | None = None
                                   ) -> InProcessContextQueue:
    """Create a queue; ``options`` may be ``config.context.queue`` or ``{"maxPending": n}``, also given in
    ``max_pending``'s place::

        queue = create_context_operation_queue(256)
        queue = create_context_operation_queue({"maxPending": 256})
        context = create_context(services={"operation_queue": queue})
    """
    options, given = options_or_value(max_pending, options)
    fields = {} if options is None else read_fields(options, ("max_pending",), "options", error=ContextArgumentError)
    return InProcessContextQueue(given if given is not None
                                 else fields.get("max_pending", DEFAULT_MAX_PENDING))
