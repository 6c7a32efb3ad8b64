"""``update_with_retry``: an opt-in retry of a scoped UPDATE that lost a race (``STATE_CONFLICT``).

A scoped UPDATE reads the cached context once and commits once, with a compare-and-set on the version
it read; when another writer committed in between it fails with ``STATE_CONFLICT`` and nothing is
written. Retrying is the application's decision, never the worker's: only the caller knows whether
applying its increment again is right. This helper is that decision written down once, for updates
that are safe to re-apply on a fresher context, such as appending chat turns (a message's id is its
content hash, so an add that did land is not added twice).

Each retry re-reads (the UPDATE itself reads the latest version), waits a random time first ("full
jitter": uniform in ``[0, min(max_delay_s, base_delay_s * 2**attempt)]``, so writers that collided
do not collide again in step) and stops after ``attempts`` tries with the last ``STATE_CONFLICT``.
Every other error is raised at once. Inside one process, the operation queue
(``create_context_operation_queue``) serialises updates per scope so that they do not conflict at all;
this helper is for writers in different processes or hosts.
"""

from __future__ import annotations

import asyncio
import inspect
import math
import random
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

from ...contracts import Context
from ...signal import CancelSignal, await_with_signal
from .sdk import ContextClient
from .types import ContextArgumentError, ContextError

__all__ = ["UpdateBuilder", "update_with_retry"]

#: The most tries one call may ask for: a conflict storm should surface, not spin.
MAX_ATTEMPTS: Final = 20
#: The longest single wait between tries, in seconds.
MAX_DELAY_S: Final = 60.0

#: Builds the UPDATE fields (without ``scope``) from the context as it is now; ``None`` gives up.
UpdateBuilder = Callable[[Context], "Mapping[str, Any] | Awaitable[Mapping[str, Any] | None] | None"]


def _delay(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0 <= value <= MAX_DELAY_S:
        raise ContextArgumentError("INVALID_INPUT", f"{name} must be a number of seconds from 0 to {MAX_DELAY_S:g}")
    return float(value)


def backoff_delay(attempt: int, base_delay_s: float, max_delay_s: float, rng: random.Random) -> float:
    """The wait before retry number ``attempt`` (0 for the first retry): full jitter, capped."""
    return rng.uniform(0.0, min(max_delay_s, base_delay_s * 2.0 ** min(attempt, 62)))


async def update_with_retry(context: ContextClient, request: Mapping[str, Any] | UpdateBuilder, *,
                            scope: Mapping[str, Any] | None = None, attempts: int = 5,
                            base_delay_s: float = 0.02, max_delay_s: float = 1.0,
                            signal: CancelSignal | None = None, rng: random.Random | None = None) -> Context | None:
    """Run a scoped ``context.update``; on ``STATE_CONFLICT`` wait (jittered) and try again, at most ``attempts``.

    ``request`` is either the UPDATE input with its ``scope`` (``{"scope": ..., "add": [...]}``), re-sent
    as it is on every try, or a function that receives the current cached context and returns the
    UPDATE fields to apply to it (``scope=`` is then required), called again before each retry so the
    application can look at what the other writer did and decide; returning ``None`` gives up and
    returns ``None``. A request that pins ``expectedVersion`` is refused: after a conflict that version
    is gone, so a retry could never succeed.

    Returns the updated context. Raises the last ``STATE_CONFLICT`` when every try lost, and any other
    :class:`ContextError` (or a fired ``signal``) at once.

    Example::

        turn = {"role": "user", "content": "When do backups run?"}
        await update_with_retry(context, {"scope": {"sessionId": "chat-1"}, "add": [turn]})
    """
    if isinstance(attempts, bool) or not isinstance(attempts, int) or not 1 <= attempts <= MAX_ATTEMPTS:
        raise ContextArgumentError("INVALID_INPUT", f"attempts must be an integer from 1 to {MAX_ATTEMPTS}")
    base = _delay("base_delay_s", base_delay_s)
    cap = _delay("max_delay_s", max_delay_s)
    if callable(request):
        if scope is None:
            raise ContextArgumentError("INVALID_INPUT", "update_with_retry with a builder function needs scope=")
        build: UpdateBuilder | None = request
        fixed: dict[str, Any] = {"scope": scope}
    elif isinstance(request, Mapping):
        if scope is not None or "scope" not in request:
            raise ContextArgumentError("INVALID_INPUT", "update_with_retry needs the request's scope (and no scope=)")
        if request.get("expectedVersion") is not None or request.get("expected_version") is not None:
            raise ContextArgumentError("INVALID_INPUT", "a request pinned to expectedVersion cannot be retried; "
                                                        "pass a builder function instead")
        build, fixed = None, dict(request)
    else:
        raise ContextArgumentError("INVALID_INPUT", "request must be an UPDATE input or a builder function")
    random_source = rng if rng is not None else random.Random()
    for attempt in range(attempts):
        if signal is not None:
            signal.raise_if_aborted()
        if build is None:
            update = fixed
        else:
            current = await context.load({"scope": fixed["scope"]}, signal=signal)
            fields = build(current)
            if inspect.isawaitable(fields):
                fields = await fields
            if fields is None:
                return None
            if not isinstance(fields, Mapping) or "scope" in fields:
                raise ContextArgumentError("INVALID_INPUT", "the builder must return UPDATE fields without scope")
            update = {**fields, "scope": fixed["scope"]}
        try:
            return await context.update(update, signal=signal)
        except ContextError as error:
            if error.code != "STATE_CONFLICT" or attempt + 1 == attempts:
                raise
        await await_with_signal(asyncio.sleep(backoff_delay(attempt, base, cap, random_source)), signal)
    raise AssertionError("unreachable: the last attempt returns or raises")  # pragma: no cover
