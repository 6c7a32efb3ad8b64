"""The error taxonomy shared by every layer.

Every public failure is a :class:`DittoError` carrying a stable ``code`` (for
programs) and a public ``message`` (for people). Messages are written by us and
never echo a backend's own text, which may contain hosts, paths or credentials.

Workers raise subclasses (``ContextError``, ``DittoMemoryError``,
``RetrievalError``); the runtime turns those into ``NodeResult.error``. The
classes defined here are the runtime's own failures: registration, routing,
transport, graph plans and configuration. Those are *raised* by
``runtime.invoke`` / ``runtime.run`` because they are not a worker's answer.
"""

from __future__ import annotations

from typing import ClassVar, Literal

NodeStatus = Literal["success", "error", "cancelled", "timeout", "rejected"]


class DittoError(Exception):
    """Base of every error the library raises on purpose."""

    #: Codes whose NodeResult status is not plain ``"error"``.
    status_by_code: ClassVar[dict[str, NodeStatus]] = {}

    def __init__(self, code: str, message: str | None = None) -> None:
        self.code = code
        self.message = message if message is not None else code
        super().__init__(f"{code}: {self.message}")

    @property
    def status(self) -> NodeStatus:
        """The NodeResult status a runtime reports when a handler raises this error."""
        return self.status_by_code.get(self.code, "error")

    def __reduce__(self) -> tuple[type[DittoError], tuple[str, str]]:
        # Keeps (code, message) across pickling, e.g. from a worker process.
        return (type(self), (self.code, self.message))


class RegistrationError(DittoError):
    """A worker definition or remote replica could not be registered.

    Codes: ``INVALID_WORKER``, ``UNKNOWN_TRANSPORT``, ``DUPLICATE_TRANSPORT``, ``RUNTIME_CLOSED``.
    """


class RoutingError(DittoError):
    """No replica can take the call (``UNKNOWN_NODE``, ``RUNTIME_CLOSED``, ``INVALID_INPUT``)."""


class TransportError(DittoError):
    """A remote call failed in the transport, not in the worker.

    Codes: ``TRANSPORT_UNAVAILABLE`` (could not connect), ``TRANSPORT_UNAUTHORIZED``
    (401), ``TRANSPORT_FAILED`` (connection lost mid-call), ``TRANSPORT_PROTOCOL_ERROR``
    (the peer answered something that is not a NodeResult).
    """


class GraphError(DittoError):
    """A graph plan is malformed or a loop ran out of budget.

    Codes: ``INVALID_GRAPH``, ``GRAPH_DUPLICATE_NODE``, ``GRAPH_UNKNOWN_DEPENDENCY``,
    ``GRAPH_CYCLE``, ``LOOP_BUDGET_EXHAUSTED``.
    """


class ConfigError(DittoError):
    """The runtime YAML is unreadable or does not match the schema.

    Codes: ``CONFIG_NOT_FOUND``, ``CONFIG_INVALID_YAML``, ``CONFIG_INVALID``,
    ``CONFIG_MISSING_ENV``. The message names the YAML path (``workers.context.policy``).
    """


# Codes the runtime itself writes into NodeResult.error.
CANCELLED = "CANCELLED"
TIMEOUT = "TIMEOUT"
REJECTED = "WORKER_BUSY"
HANDLER_ERROR = "HANDLER_ERROR"
OUTPUT_NOT_SERIALIZABLE = "OUTPUT_NOT_SERIALIZABLE"
