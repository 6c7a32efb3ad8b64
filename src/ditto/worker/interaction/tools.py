"""Python callables as tools: a JSON schema from the type hints, arguments validated before the call (INT-1).

A :class:`Tool` wraps one function. Its arguments model is built with pydantic
from the signature, so the schema a model sees and the validation a call goes
through come from the same object. Parameters annotated ``CancelSignal`` are not
arguments: the worker passes the call's signal there, so a long tool can stop
cooperatively.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import re
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Union

from pydantic import BaseModel, ConfigDict, Field, create_model

from ...contracts.interaction import MAX_TOOL_NAME_LENGTH
from ...errors import InvalidArgumentError
from ...signal import CancelSignal

__all__ = ["Tool", "tool", "tool_from"]

#: Tool names a model can address (the OpenAI-compatible rule, plus dots for namespaces).
_TOOL_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,64}")
_MAX_DESCRIPTION = 4000


def _is_signal_annotation(annotation: Any) -> bool:
    if annotation is CancelSignal:
        return True
    origin = typing.get_origin(annotation)
    if origin in (Union, types.UnionType):
        members = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        return members == [CancelSignal]
    return False


def _describe(function: Callable[..., Any]) -> str:
    """The docstring's first paragraph: what a model reads to decide whether to call the tool."""
    doc = inspect.getdoc(function) or ""
    return doc.split("\n\n", 1)[0].strip()[:_MAX_DESCRIPTION]


@dataclass(frozen=True, slots=True)
class _Parameter:
    name: str
    field: str
    kind: inspect._ParameterKind


@dataclass(frozen=True, slots=True, eq=False)
class Tool:
    """One callable tool: ``name``, ``description``, ``input_schema`` (JSON schema) and the function.

    Build it with :func:`tool` (or pass the function itself to the worker)::

        async def lookup(term: str, limit: int = 3) -> list[str]:
            \"\"\"Find glossary entries for a term.\"\"\"
            ...

        lookup_tool = tool(lookup)              # name "lookup", schema from the hints
    """

    name: str
    description: str
    input_schema: Mapping[str, Any]
    function: Callable[..., Any]
    arguments_model: type[BaseModel]
    parameters: tuple[_Parameter, ...]
    signal_parameter: str | None
    is_async: bool

    def validate(self, arguments: Mapping[str, Any]) -> BaseModel:
        """Check ``arguments`` against the schema; raises pydantic's ``ValidationError``."""
        return self.arguments_model.model_validate(dict(arguments))

    async def run(self, validated: BaseModel, signal: CancelSignal | None) -> Any:
        """Call the function with validated arguments; a sync function runs in a worker thread.

        A sync function cannot be interrupted: when the call is cancelled we stop
        waiting and its thread finishes on its own.
        """
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        for parameter in self.parameters:
            value = getattr(validated, parameter.field)
            if parameter.kind is inspect.Parameter.POSITIONAL_ONLY:
                args.append(value)
            else:
                kwargs[parameter.name] = value
        if self.signal_parameter is not None:
            kwargs[self.signal_parameter] = signal if signal is not None else CancelSignal()
        if self.is_async:
            return await self.function(*args, **kwargs)
        result = await asyncio.to_thread(self.function, *args, **kwargs)
        if inspect.isawaitable(result):  # a sync wrapper returning a coroutine
            return await result
        return result


def _build(function: Callable[..., Any], name: str | None, description: str | None) -> Tool:
    if not callable(function):
        raise InvalidArgumentError("a tool must be a callable")
    tool_name = name if name is not None else getattr(function, "__name__", None)
    if not isinstance(tool_name, str) or not _TOOL_NAME.fullmatch(tool_name):
        raise InvalidArgumentError(
            f"a tool name must match [A-Za-z0-9_.-]{{1,{MAX_TOOL_NAME_LENGTH}}}; pass name= for lambdas and partials")
    text = description if description is not None else _describe(function)
    if not isinstance(text, str):
        raise InvalidArgumentError("a tool description must be a string")
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"tool {tool_name}: its signature cannot be read") from None
    hint_source: Any = function
    while isinstance(hint_source, functools.partial):  # partials: the wrapped function's hints
        hint_source = hint_source.func
    if not (inspect.isfunction(hint_source) or inspect.ismethod(hint_source)):
        hint_source = type(hint_source).__call__  # a callable object: its __call__'s hints
    try:
        hints = typing.get_type_hints(hint_source, include_extras=True)
    except Exception:  # unresolved forward references: the schema cannot be trusted
        raise InvalidArgumentError(f"tool {tool_name}: its type hints cannot be resolved") from None
    fields: dict[str, Any] = {}
    parameters: list[_Parameter] = []
    signal_parameter: str | None = None
    for index, parameter in enumerate(signature.parameters.values()):
        if parameter.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise InvalidArgumentError(f"tool {tool_name}: *args and **kwargs have no schema; name every argument")
        annotation = hints.get(parameter.name, Any)
        if _is_signal_annotation(annotation):
            if parameter.kind is inspect.Parameter.POSITIONAL_ONLY:
                raise InvalidArgumentError(f"tool {tool_name}: a CancelSignal parameter must be nameable")
            signal_parameter = parameter.name
            continue
        # Field names are ours (p0, p1, ...) and the parameter name is the alias: any
        # Python name works, even one pydantic reserves ("model_config", "json").
        field_name = f"p{index}"
        default = ... if parameter.default is inspect.Parameter.empty else parameter.default
        fields[field_name] = (annotation, Field(default, alias=parameter.name))
        parameters.append(_Parameter(parameter.name, field_name, parameter.kind))
    try:
        model = create_model(f"{tool_name.replace('.', '_').replace('-', '_')}_arguments",
                             __config__=ConfigDict(extra="forbid", populate_by_name=False,
                                                   arbitrary_types_allowed=False),
                             **fields)
        schema = model.model_json_schema(by_alias=True)
    except Exception:  # a hint pydantic cannot turn into a schema (a socket, a class without a model)
        raise InvalidArgumentError(f"tool {tool_name}: an argument type has no JSON schema") from None
    schema.pop("title", None)
    is_async = inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(
        getattr(function, "__call__", None))  # noqa: B004 - callable objects with async __call__
    return Tool(tool_name, text, schema, function, model, tuple(parameters), signal_parameter, is_async)


@typing.overload
def tool(function: Callable[..., Any], /, *, name: str | None = None, description: str | None = None) -> Tool: ...


@typing.overload
def tool(function: None = None, /, *, name: str | None = None, description: str | None = None
         ) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(function: Callable[..., Any] | None = None, /, *, name: str | None = None,
         description: str | None = None) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Make a :class:`Tool` from a function (directly or as a decorator).

    ``name`` defaults to the function's name, ``description`` to the first
    paragraph of its docstring. Raises :class:`InvalidArgumentError` when the
    signature has no schema (``*args``, unknown types).

    >>> @tool(name="add")
    ... def add_numbers(a: int, b: int) -> int:
    ...     "Add two integers."
    ...     return a + b
    >>> add_numbers.name, sorted(add_numbers.input_schema["properties"])
    ('add', ['a', 'b'])
    """
    if function is None:
        return lambda inner: _build(inner, name, description)
    return _build(function, name, description)


def tool_from(value: Any) -> Tool:
    """A :class:`Tool` as is, or one built from a plain callable."""
    if isinstance(value, Tool):
        return value
    return _build(value, None, None)
