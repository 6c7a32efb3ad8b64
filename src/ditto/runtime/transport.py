"""The port a remote transport implements; the runtime knows nothing else about HTTP."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from ..signal import CancelSignal
from .result import NodeResult

__all__ = ["Transport"]


@runtime_checkable
class Transport(Protocol):
    """Carries one call to a remote replica and brings back its NodeResult.

    Failures of the transport itself raise :class:`~ditto.errors.TransportError`;
    a client-side ``timeout`` or ``signal`` only stops waiting and yields a
    ``timeout``/``cancelled`` result (the server may still finish the work).

    The runtime's failover relies on one promise: ``TRANSPORT_UNAVAILABLE`` only
    for a call that cannot have reached a handler (it is sent to the next
    replica), ``TRANSPORT_FAILED`` for one that may have (never re-sent). A
    transport may also offer ``async def check_health(self) -> bool``, which the
    runtime calls to re-probe a replica after its cool-down; without it the
    replica simply returns to the rotation when the cool-down ends.
    """

    id: str

    @property
    def same_host(self) -> bool: ...

    async def invoke(self, address: str, node: str, input: Any, *, execution_id: str,
                     timeout: float | None = None, signal: CancelSignal | None = None) -> NodeResult[Any]: ...

    async def aclose(self) -> None: ...
