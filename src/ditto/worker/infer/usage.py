"""Token usage: the default estimate and the per-model counters a worker exposes (INF-6).

Providers that report usage (``openai``) are believed; otherwise a call's
tokens are estimated the way CONTEXT's default estimator does: the UTF-8 bytes
of the value's compact JSON, divided by 4, rounded up. That is not any model's
tokenizer, only a stable, language-neutral measure; it is what the built-in
model reports.

:class:`InferCounters` is a small thread-safe tally per ``provider/model``:
calls, failed calls, input and output tokens. A client or worker creates one
unless the application passes its own (to share one tally between several
clients or read it from outside the worker).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from ...contracts import js_json_dumps

__all__ = ["InferCounters", "ModelCounts", "estimate_tokens"]


def estimate_tokens(value: Any) -> int:
    """``ceil(len(utf8(compact JSON of value)) / 4)`` — CONTEXT's default token estimate."""
    return -(-len(js_json_dumps(value).encode("utf-8")) // 4)


@dataclass(frozen=True, slots=True)
class ModelCounts:
    """What one ``provider/model`` has done so far."""

    calls: int = 0
    failures: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def to_json_dict(self) -> dict[str, int]:
        return {"calls": self.calls, "failures": self.failures, "inputTokens": self.input_tokens,
                "outputTokens": self.output_tokens}


class InferCounters:
    """Per-model call and token counters (INF-6), safe to share between clients and threads.

    Example::

        counters = InferCounters()
        client = create_infer_client(counters=counters)
        await client.reasoning.sample(messages=[{"role": "user", "content": "hi"}])
        counters.snapshot()["builtin:extractive/extractive"].calls  # 1
    """

    __slots__ = ("_counts", "_lock")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, ModelCounts] = {}

    def record(self, key: str, *, input_tokens: int = 0, output_tokens: int = 0, failed: bool = False) -> None:
        """Count one call of ``key`` (``provider/model``) and the tokens it spent."""
        with self._lock:
            old = self._counts.get(key, ModelCounts())
            self._counts[key] = ModelCounts(old.calls + 1, old.failures + (1 if failed else 0),
                                            old.input_tokens + input_tokens, old.output_tokens + output_tokens)

    def snapshot(self) -> dict[str, ModelCounts]:
        """A copy of the counts, keyed ``provider/model``."""
        with self._lock:
            return dict(self._counts)

    def to_json_dict(self) -> dict[str, dict[str, int]]:
        """The counts as camelCase JSON, e.g. for a health endpoint."""
        return {key: counts.to_json_dict() for key, counts in sorted(self.snapshot().items())}

    def reset(self) -> None:
        with self._lock:
            self._counts.clear()

    def __repr__(self) -> str:
        return f"<InferCounters models={len(self._counts)}>"
