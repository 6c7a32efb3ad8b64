"""``NodeResult``: what every routed call returns (RT-2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ..errors import NodeStatus

__all__ = ["NodeError", "NodeResult", "NodeStatus"]

T = TypeVar("T")

_STATUSES = frozenset({"success", "error", "cancelled", "timeout", "rejected"})


@dataclass(frozen=True, slots=True)
class NodeError:
    """A stable ``code`` for programs and a public ``message`` for people."""

    code: str
    message: str

    def to_wire(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


@dataclass(frozen=True, slots=True)
class NodeResult(Generic[T]):
    """The outcome of one node execution.

    ``output`` is set only when ``status == "success"``; ``error`` is set for
    every other status. A worker's own failure is reported here rather than
    raised, so graphs can branch on it.
    """

    execution_id: str
    node: str
    status: NodeStatus
    output: T | None = None
    error: NodeError | None = None

    @property
    def ok(self) -> bool:
        return self.status == "success"

    def unwrap(self) -> T:
        """The output, or a :class:`~ditto.errors.DittoError` carrying the node's error code."""
        if self.status == "success":
            return self.output  # type: ignore[return-value]
        from ..errors import DittoError

        error = self.error or NodeError(self.status.upper(), self.status)
        raise DittoError(error.code, error.message)

    def to_wire(self, output: Any = None) -> dict[str, Any]:
        """camelCase JSON shape; ``output`` lets the caller pass an already-serialised value."""
        body: dict[str, Any] = {"executionId": self.execution_id, "node": self.node, "status": self.status}
        if self.status == "success":
            body["output"] = output if output is not None else self.output
        if self.error is not None:
            body["error"] = self.error.to_wire()
        return body

    @classmethod
    def from_wire(cls, body: Any) -> NodeResult[Any]:
        """Parse a peer's JSON; raises ``ValueError`` when it is not a NodeResult."""
        if not isinstance(body, dict):
            raise ValueError("NodeResult must be an object")
        status = body.get("status")
        execution_id = body.get("executionId")
        node = body.get("node")
        if status not in _STATUSES or not isinstance(execution_id, str) or not isinstance(node, str):
            raise ValueError("NodeResult fields are missing or invalid")
        error = body.get("error")
        node_error = None
        if error is not None:
            if not isinstance(error, dict) or not isinstance(error.get("code"), str):
                raise ValueError("NodeResult error is invalid")
            node_error = NodeError(error["code"], str(error.get("message", error["code"])))
        if status != "success" and node_error is None:
            raise ValueError("a failed NodeResult needs an error")
        return cls(execution_id, node, status, body.get("output") if status == "success" else None, node_error)
