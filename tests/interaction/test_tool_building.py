"""How a Python callable becomes a tool (INT-1): the name, the description, the schema and how the call
reaches the function — positional-only parameters, the CancelSignal parameter wherever it stands, partials,
callable objects, sync wrappers returning coroutines — and every construction refusal's message.

Issue 15, "Tests that catch the bug": written in answer to the survivors of
``scripts/mutation interaction.tools`` (the decorator form returning nothing, positional arguments
dropped, a partial's hints ignored, the schema keeping pydantic's field names or title, refusal messages
emptied); see docs/testing.md.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable
from typing import Any

import pytest

from ditto.errors import InvalidArgumentError
from ditto.signal import AbortController, CancelSignal
from ditto.worker.interaction import InteractionError, Tool, create_interaction, tool


class Opaque:
    """A class pydantic has no schema for."""


def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"call": {"id": "t1", "name": name, "arguments": arguments}}


async def run(item: Any, arguments: dict[str, Any], signal: CancelSignal | None = None) -> Any:
    made = item if isinstance(item, Tool) else tool(item)
    async with create_interaction(tools=[made]) as interaction:
        result = await interaction.act_tool(call(made.name, arguments), signal=signal)
    assert result.status == "success", result
    return result.content


def test_the_decorator_form_and_the_direct_form() -> None:
    """INT-1 (issue 15): ``@tool(name=..., description=...)`` gives a Tool with both; ``tool(f)`` takes the
    function's name and the first paragraph of its docstring; no docstring is an empty description."""

    @tool(name="plus", description="Adds two integers.")
    def add(a: int, b: int) -> int:
        return a + b

    assert isinstance(add, Tool) and (add.name, add.description) == ("plus", "Adds two integers.")

    def documented(a: int) -> int:
        """First paragraph,
        still the first.

        Second paragraph.

        Third paragraph."""
        return a

    made = tool(documented)
    assert (made.name, made.description) == ("documented", "First paragraph,\nstill the first.")
    assert tool(lambda: 1, name="bare").description == ""
    long = tool(lambda: 1, name="long", description="x" * 5000)
    assert long.description == "x" * 5000  # an explicit description is the caller's; only docstrings are cut

    def wordy() -> int:
        return 1

    wordy.__doc__ = "y" * 5000
    assert tool(wordy).description == "y" * 4000


def test_the_schema_names_the_parameters_and_has_no_title() -> None:
    """INT-1 (issue 15): properties are the parameter names (never pydantic's internal field names), an
    unannotated parameter accepts anything, and the schema carries no generated title."""

    def lookup(term: str, anything, limit: int = 3) -> str:  # type: ignore[no-untyped-def]
        return term

    made = tool(lookup)
    assert sorted(made.input_schema["properties"]) == ["anything", "limit", "term"]
    assert "title" not in made.input_schema and made.input_schema["required"] == ["term", "anything"]
    assert made.input_schema["properties"]["term"]["type"] == "string"
    assert made.validate({"term": "t", "anything": [1, {"x": None}]}) is not None


async def test_internal_field_names_are_not_arguments() -> None:
    """INT-1 (issue 15): only the parameter names are accepted (the internal p0, p1 are not aliases)."""

    def echo(text: str) -> str:
        return text

    async with create_interaction(tools=[echo]) as interaction:
        with pytest.raises(InteractionError) as caught:
            await interaction.act_tool(call("echo", {"p0": "x"}))
    assert caught.value.code == "INTERACTION_INVALID_INPUT"


async def test_positional_only_parameters_reach_sync_and_async_functions() -> None:
    """INT-1 (issue 15): positional-only parameters are passed by position, to sync and async tools."""

    def sync_divide(a: int, b: int, /) -> float:
        return a / b

    async def async_divide(a: int, b: int, /, *, scale: int = 1) -> float:
        return a / b * scale

    assert await run(sync_divide, {"a": 6, "b": 3}) == 2.0
    assert await run(async_divide, {"a": 6, "b": 3, "scale": 10}) == 20.0
    assert tool(async_divide).is_async is True and tool(sync_divide).is_async is False


async def test_the_signal_parameter_may_stand_anywhere_and_always_gets_a_signal() -> None:
    """INT-1 (issue 15): a CancelSignal parameter before the arguments is not an argument and does not hide
    the ones after it; without a caller's signal the tool still gets a (never-firing) CancelSignal, with one
    it gets the caller's."""
    seen: list[Any] = []

    def first(signal: CancelSignal, n: int, m: int = 1) -> int:
        seen.append(signal)
        return n * m

    made = tool(first)
    assert sorted(made.input_schema["properties"]) == ["m", "n"] and made.signal_parameter == "signal"
    assert await run(made, {"n": 4, "m": 5}) == 20
    assert isinstance(seen[0], CancelSignal) and not seen[0].aborted
    controller = AbortController()
    assert await run(made, {"n": 2}, signal=controller.signal) == 2
    assert seen[1] is controller.signal


async def test_a_partial_keeps_the_wrapped_functions_hints() -> None:
    """INT-1 (issue 15): a partial's remaining parameters keep their types in the schema and are checked."""

    def power(base: int, exponent: int) -> int:
        return int(base**exponent)

    square = tool(functools.partial(power, exponent=2), name="square")
    assert square.input_schema["properties"]["base"]["type"] == "integer"
    assert await run(square, {"base": 7}) == 49
    with pytest.raises(Exception) as caught:
        square.validate({"base": "seven"})
    assert "base" in str(caught.value)


async def test_a_sync_wrapper_returning_a_coroutine_is_awaited() -> None:
    """INT-1 (issue 15): a sync function that returns an awaitable gives the awaited value, not a coroutine."""

    async def later(value: int) -> int:
        await asyncio.sleep(0)
        return value + 1

    def wrapper(value: int) -> Awaitable[int]:
        return later(value)

    assert await run(wrapper, {"value": 41}) == 42


def test_every_construction_refusal_has_its_message() -> None:
    """INT-1 (issue 15): each callable that cannot be a tool is refused with its own InvalidArgumentError."""

    def refusal(function: Any, **options: Any) -> str:
        with pytest.raises(InvalidArgumentError) as caught:
            tool(function, **options)
        return caught.value.message

    def star(*args: int) -> int:
        return 0

    def signal_by_position(signal: CancelSignal, /) -> int:
        return 0

    def unresolved(value: Missing) -> int:  # type: ignore[name-defined]  # noqa: F821
        return 0

    def opaque(value: Opaque) -> int:
        return 0

    class Unreadable:
        __signature__ = "not a signature"

        def __call__(self) -> int:
            return 0

    assert refusal(42) == "a tool must be a callable"
    assert refusal(lambda: 0) == ("a tool name must match [A-Za-z0-9_.-]{1,64}; pass name= for lambdas and "
                                  "partials")
    assert refusal(star) == "tool star: *args and **kwargs have no schema; name every argument"
    assert refusal(signal_by_position) == "tool signal_by_position: a CancelSignal parameter must be nameable"
    assert refusal(unresolved) == "tool unresolved: its type hints cannot be resolved"
    assert refusal(opaque) == "tool opaque: an argument type has no JSON schema"
    assert refusal(lambda: 0, name="x", description=5) == "a tool description must be a string"
    assert refusal(Unreadable(), name="unreadable") == "tool unreadable: its signature cannot be read"


class Scale:
    """Multiply by a factor (a callable object with an async __call__, and a method)."""

    def __init__(self, factor: int) -> None:
        self.factor = factor

    async def __call__(self, value: float) -> float:
        return value * self.factor

    def times(self, value: int) -> int:
        """Multiply an integer."""
        return value * self.factor


async def test_callable_objects_and_bound_methods() -> None:
    """INT-1 (issue 15): an object with an async __call__ is an async tool (and needs name=, having no
    __name__); a bound method keeps its own hints in the schema and is called with its instance."""
    scale = Scale(3)
    with pytest.raises(InvalidArgumentError) as caught:
        tool(scale)
    assert caught.value.message.startswith("a tool name must match")
    made = tool(scale, name="scale")
    assert made.is_async is True
    assert await run(made, {"value": 1.5}) == 4.5
    method = tool(scale.times)
    assert (method.name, method.description) == ("times", "Multiply an integer.")
    assert method.input_schema["properties"]["value"]["type"] == "integer" and method.is_async is False
    assert await run(method, {"value": 4}) == 12
