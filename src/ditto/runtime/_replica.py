"""Replicas: the units the router chooses between (RT-3, RT-5)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .transport import Transport
from .worker import NodeHandler, WorkerDefinition

LOCAL, SAME_HOST, REMOTE = 0, 1, 2
LOCATION_NAMES = {LOCAL: "local", SAME_HOST: "same-host", REMOTE: "remote"}


@dataclass(slots=True, eq=False)
class LocalReplica:
    address: str
    definition: WorkerDefinition
    handlers: dict[str, NodeHandler[Any, Any]]
    active: int = 0
    tier: int = LOCAL
    #: A local replica is never skipped for failing to connect.
    cooling: ClassVar[bool] = False

    @property
    def worker_type(self) -> str:
        return self.definition.type

    def has_room(self) -> bool:
        limit = self.definition.concurrency
        return limit is None or self.active < limit


@dataclass(slots=True, eq=False)
class RemoteReplica:
    address: str
    worker_type: str
    transport: Transport
    capabilities: tuple[str, ...]
    tier: int = REMOTE
    active: int = field(default=0)
    #: Its connection failed: the router skips it until a re-probe (or a call) gets through again.
    cooling: bool = False
    #: The pending re-probe: a timer while the cool-down runs, then the probe's task.
    probe: asyncio.TimerHandle | asyncio.Task[None] | None = None

    def has_room(self) -> bool:
        # Capacity of a remote replica is enforced by the receiving runtime.
        return True


Replica = LocalReplica | RemoteReplica
