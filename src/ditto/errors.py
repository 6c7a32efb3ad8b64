"""The error taxonomy shared by every layer: one machinery for every worker.

::

    DittoError (code, message, status)
    ├── InvalidArgumentError   a factory or constructor was called wrongly (also a ValueError)
    ├── RegistrationError      a worker or remote replica cannot be registered
    ├── RoutingError           no replica can take the call
    ├── TransportError         a remote call failed in the transport
    ├── GraphError             a plan is malformed or a loop ran out of budget
    ├── ConfigError            the runtime YAML is unreadable or invalid
    ├── CancelledBySignal      a CancelSignal fired (ditto.signal)
    ├── MissingExtraError      an optional feature's library is not installed (also an ImportError)
    └── worker errors          ContextError, DittoMemoryError, RetrievalError, InferError,
                               InteractionError: each declares its closed ``codes`` set and its
                               ``cancelled_code`` / ``timeout_code``

A worker error class is three class attributes::

    class InferError(DittoError):
        codes = frozenset({"INFER_INVALID_INPUT", ..., "INFER_CANCELLED", "INFER_TIMEOUT"})
        cancelled_code = "INFER_CANCELLED"
        timeout_code = "INFER_TIMEOUT"

The base checks every code against ``codes`` (an unknown code is a bug, so it
raises ``ValueError``), derives the NodeResult status of the cancellation and
timeout codes, and builds the error a fired signal stands for with
:meth:`DittoError.from_signal`. :func:`describe_validation_error` is the one
way a pydantic ``ValidationError`` becomes a public message.


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

from typing import TYPE_CHECKING, Any, ClassVar, Literal

if TYPE_CHECKING:
    from typing import Self

    from pydantic import ValidationError

__all__ = [
    "CANCELLED",
    "HANDLER_ERROR",
    "OUTPUT_NOT_SERIALIZABLE",
    "REJECTED",
    "TIMEOUT",
    "ConfigError",
    "DittoError",
    "GraphError",
    "InvalidArgumentError",
    "MissingExtraError",
    "NodeStatus",
    "RegistrationError",
    "RoutingError",
    "TransportError",
    "describe_validation_error",
]

NodeStatus = Literal["success", "error", "cancelled", "timeout", "rejected"]


class DittoError(Exception):
    """Base of every error the library raises on purpose.

    Subclasses declare ``codes`` (the closed set they may carry; empty means
    any), and, for workers, ``cancelled_code`` / ``timeout_code``.
    """

    #: The codes this class may carry; empty: not restricted (the runtime's own classes).
    codes: ClassVar[frozenset[str]] = frozenset()
    #: The code a cancelled call reports (status ``cancelled``).
    cancelled_code: ClassVar[str | None] = None
    #: The code a call past its deadline reports (status ``timeout``).
    timeout_code: ClassVar[str | None] = None
    #: Codes whose NodeResult status is not plain ``"error"`` (beyond the two above).
    status_by_code: ClassVar[dict[str, NodeStatus]] = {}

    def __init__(self, code: str, message: str | None = None) -> None:
        if self.codes and code not in self.codes:
            raise ValueError(f"unknown {type(self).__name__} code {code!r}")
        self.code = code
        self.message = message if message is not None else code
        super().__init__(f"{code}: {self.message}")

    @property
    def status(self) -> NodeStatus:
        """The NodeResult status a runtime reports when a handler raises this error."""
        if self.code == self.cancelled_code:
            return "cancelled"
        if self.code == self.timeout_code:
            return "timeout"
        return self.status_by_code.get(self.code, "error")

    @classmethod
    def from_signal(cls, reason: str | None, message: str | None = None) -> Self:
        """The error a fired signal stands for: its deadline → ``timeout_code``, else ``cancelled_code``.

        ``reason`` is :attr:`ditto.CancelSignal.reason` (``"TIMEOUT"`` or ``"CANCELLED"``).
        """
        if reason == "TIMEOUT" and cls.timeout_code is not None:
            return cls(cls.timeout_code, message or "The deadline passed")
        if cls.cancelled_code is None:
            raise TypeError(f"{cls.__name__} declares no cancelled_code")
        return cls(cls.cancelled_code, message or "The call was cancelled")

    def __reduce__(self) -> tuple[type[DittoError], tuple[str, str]]:
        # Keeps (code, message) across pickling, e.g. from a worker process.
        return (type(self), (self.code, self.message))


class InvalidArgumentError(DittoError, ValueError):
    """A factory, constructor or option was given a value it cannot work with.

    Raised when something is *built* wrongly (``create_*`` options, provider
    constructor arguments), never for a call's input: that is the worker's own
    ``*_INVALID_INPUT`` code in a NodeResult. Also a ``ValueError``, so code
    written against plain Python conventions keeps working. Code ``INVALID_ARGUMENT``.
    """

    def __init__(self, message: str, code: str = "INVALID_ARGUMENT") -> None:
        super().__init__(code, message)

    def __reduce__(self) -> tuple[type[DittoError], tuple[str, str]]:
        return (type(self), (self.message, self.code))


class RegistrationError(DittoError):
    """A worker definition or remote replica could not be registered (or unregistered).

    Codes: ``INVALID_WORKER``, ``UNKNOWN_TRANSPORT``, ``DUPLICATE_TRANSPORT``, ``UNKNOWN_WORKER``
    (``unregister_remote`` of a replica that is not registered), ``RUNTIME_CLOSED``.
    """


class RoutingError(DittoError):
    """No replica can take the call (``UNKNOWN_NODE``, ``RUNTIME_CLOSED``, ``INVALID_INPUT``)."""


class TransportError(DittoError):
    """A remote call failed in the transport, not in the worker.

    Codes: ``TRANSPORT_UNAVAILABLE`` (the call cannot have reached a handler: could not
    connect, TLS handshake failed, 503; the runtime sends it to the next replica),
    ``TRANSPORT_UNAUTHORIZED`` (401), ``TRANSPORT_FAILED`` (connection lost after the
    request was sent: it may have run, so it is never re-sent), ``TRANSPORT_PROTOCOL_ERROR``
    (the peer answered something that is not a NodeResult), ``TRANSPORT_PAYLOAD_TOO_LARGE``
    (413), ``TRANSPORT_INVALID_INPUT`` (the input or ``timeout=`` cannot be sent).
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


class MissingExtraError(DittoError, ImportError):
    """An optional feature was used without its extra installed. Code ``MISSING_EXTRA``.

    Also an ``ImportError``, so ``except ImportError`` around an optional import keeps working.
    The message names the feature and the install command (``pip install 'ditto-agents[web]'``);
    ``extra`` is the extra's name for programs.
    """

    def __init__(self, message: str, extra: str = "") -> None:
        super().__init__("MISSING_EXTRA", message)
        self.extra = extra

    def __reduce__(self) -> tuple[type[DittoError], tuple[str, str]]:
        return (type(self), (self.message, self.extra))


# Codes the runtime itself writes into NodeResult.error.
CANCELLED = "CANCELLED"
TIMEOUT = "TIMEOUT"
REJECTED = "WORKER_BUSY"
HANDLER_ERROR = "HANDLER_ERROR"
OUTPUT_NOT_SERIALIZABLE = "OUTPUT_NOT_SERIALIZABLE"


#: Longest field name quoted back in a message (an unknown field's name is the caller's text).
_MAX_FIELD_NAME = 40


def describe_validation_error(error: ValidationError, *, root: str = "input") -> str:
    """The location and reason of a pydantic error's first problem, never the offending value.

    ``"limit: Input should be less than or equal to 10000"``. Field names longer
    than 40 characters are cut, since an unknown field's name is the caller's text.
    """
    first: dict[str, Any] = dict(error.errors(include_url=False, include_input=False, include_context=False)[0])
    parts = (str(part) if len(str(part)) <= _MAX_FIELD_NAME else str(part)[:_MAX_FIELD_NAME] + "…"
             for part in first.get("loc", ()))
    return f"{'.'.join(parts) or root}: {first.get('msg', 'invalid value')}"
