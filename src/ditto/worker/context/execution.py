"""``ContextExecution``: a resolved policy plus services plus this call's options (CX-15).

The node functions (``run_load`` …) take one explicitly, so a custom worker can
reuse them without the SDK's cache routing.
"""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from ...runtime import RuntimeClient
from ...signal import CancelledBySignal, CancelSignal, await_with_signal
from .errors import ContextError
from .items import facts
from .policy import ContextPolicy, resolve_policy
from .ports import ContextCallOptions, ContextServices, call_port, port_method, resolve_services
from .validation import MAX_SAFE_INTEGER

__all__ = ["ContextExecution", "create_context_execution", "guard"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ContextExecution:
    """Everything a node function needs besides its input."""

    policy: ContextPolicy
    services: ContextServices
    options: ContextCallOptions = field(default_factory=ContextCallOptions)

    def with_options(self, signal: CancelSignal | None = None, runtime: RuntimeClient | None = None
                     ) -> ContextExecution:
        if signal is None and runtime is None:
            return self
        return replace(self, options=ContextCallOptions(signal, runtime))

    def check(self) -> None:
        """Raise if this call was cancelled (used before every commit and port call)."""
        self.options.raise_if_aborted()

    async def estimate(self, item: Any) -> int:
        """Token estimate of one item's content (CX-3): injected estimator or bytes/4."""
        estimator = self.services.token_estimator
        if estimator is None:
            return facts(item).default_tokens
        self.check()
        value = await call_port(port_method(estimator, "estimate"), (item.content,), self.options)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_SAFE_INTEGER:
            raise ContextError("INVALID_PROVIDER_OUTPUT",
                               "the token estimator must return a non-negative safe integer")
        return value


def create_context_execution(policy: Any = None, services: Any = None) -> ContextExecution:
    """Resolve and freeze ``policy`` and ``services`` for direct use of the node functions."""
    return ContextExecution(resolve_policy(policy), resolve_services(services))


def _context_abort_error(signal: CancelSignal) -> CancelledBySignal:
    code = signal.reason or "CANCELLED"
    return CancelledBySignal(code, "The context operation was cancelled" if code == "CANCELLED"
                             else "The context operation timed out")


async def guard(awaitable: Awaitable[T], signal: CancelSignal | None) -> T:
    """Await ``awaitable`` but stop at once, with CancelledBySignal, when ``signal`` fires.

    The SDK wraps each call in this so a slow port (resolver, Redis) does not
    keep a cancelled caller waiting; ports also get the signal to stop early.
    """
    return await await_with_signal(awaitable, signal, error=_context_abort_error)
