"""One error machinery: every worker's error class declares its closed code set and its signal codes."""

from __future__ import annotations

import pickle

import pytest

from ditto.errors import DittoError, InvalidArgumentError
from ditto.retrieval import RetrievalError
from ditto.signal import CancelledBySignal
from ditto.worker.context import ContextArgumentError, ContextError
from ditto.worker.infer import InferError
from ditto.worker.interaction import InteractionError
from ditto.worker.memory import DittoMemoryError
from ditto.workflows.research import ResearchError

#: Classes with their own cancellation and timeout codes (status cancelled / timeout).
SIGNALLED: list[type[DittoError]] = [DittoMemoryError, RetrievalError, InferError, InteractionError, ResearchError]


@pytest.mark.parametrize("error_class", SIGNALLED, ids=lambda cls: cls.__name__)
def test_worker_error_classes_declare_codes_and_signal_codes(error_class: type[DittoError]) -> None:
    """RET-5 INF-5 INT-6 RT-2: ``codes`` is closed, both signal codes belong to it, the base refuses other
    codes, ``from_signal`` maps a deadline to timeout and anything else to cancelled, and pickling keeps both."""
    assert error_class.codes and error_class.cancelled_code in error_class.codes
    assert error_class.timeout_code in error_class.codes
    with pytest.raises(ValueError, match="unknown"):
        error_class("NOT_A_CODE_OF_THIS_CLASS", "x")
    timeout, cancelled = error_class.from_signal("TIMEOUT"), error_class.from_signal("CANCELLED")
    assert (timeout.code, timeout.status) == (error_class.timeout_code, "timeout")
    assert (cancelled.code, cancelled.status) == (error_class.cancelled_code, "cancelled")
    copy = pickle.loads(pickle.dumps(cancelled))
    assert (type(copy), copy.code, copy.message) == (error_class, cancelled.code, cancelled.message)


def test_context_error_has_codes_and_uses_the_runtime_signal_codes() -> None:
    """CX-1 RT-2: CONTEXT's codes are closed too; it declares no signal codes of its own, because a fired
    signal is the runtime's CancelledBySignal (CANCELLED / TIMEOUT) as the seed says."""
    assert ContextError.codes and ContextError.cancelled_code is None and ContextError.timeout_code is None
    with pytest.raises(ValueError, match="unknown"):
        ContextError("NOT_A_CONTEXT_CODE")
    with pytest.raises(TypeError):
        ContextError.from_signal("CANCELLED")
    assert CancelledBySignal("TIMEOUT").code == "TIMEOUT"


def test_construction_mistakes_share_one_type() -> None:
    """CX-8 RT-3: each worker's construction-mistake class is an InvalidArgumentError and a ValueError."""
    from ditto.retrieval.errors import RetrievalArgumentError
    from ditto.worker.memory.types import MemoryArgumentError

    for cls in (ContextArgumentError, MemoryArgumentError, RetrievalArgumentError):
        assert issubclass(cls, InvalidArgumentError) and issubclass(cls, ValueError)
