"""Structured output (INF-4): what a ``response_format`` asks, and whether an answer satisfies it.

``{"type": "json_object"}`` asks for a JSON object; ``{"type": "json_schema",
"json_schema": {"name", "schema"}}`` for a JSON value that satisfies ``schema``
(checked with ``jsonschema``, the validator the schema's ``$schema`` names,
Draft 2020-12 by default; remote ``$ref``s are never fetched). An answer is
parsed strictly (no ``NaN``/``Infinity``) and never repaired: it satisfies the
format or it does not, and the SDK then shows the model what was wrong once.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from ...contracts import InvalidJson, check_json, js_json_dumps
from .types import INVALID_INPUT, InferError

__all__ = ["AnswerFormat", "check_answer", "parse_response_format", "retry_message"]

#: Longest description of a validation problem shown to the model.
_MAX_PROBLEM_CHARS: Final = 500

_log = logging.getLogger("ditto.infer")

_NOT_CARRIED: Final = ("The answer holds a value JSON cannot carry (a number out of range, a lone surrogate or "
                       "nesting too deep).")

_UNUSABLE_SCHEMA: Final = ("responseFormat.json_schema.schema cannot be used: a $ref loops forever or points "
                           "outside the schema (remote references are never fetched)")


@dataclass(frozen=True, slots=True)
class AnswerFormat:
    """A checked ``response_format``: ``json_object`` or ``json_schema`` (with its validator)."""

    kind: str
    validator: Any = None


@lru_cache(maxsize=64)
def _validator(schema_text: str) -> Any:
    from jsonschema import Draft202012Validator, SchemaError
    from jsonschema.validators import validator_for

    schema = json.loads(schema_text)
    cls = validator_for(schema, default=Draft202012Validator)
    try:
        cls.check_schema(schema)
    except SchemaError:
        return None
    validator = cls(schema)
    try:
        # A first validation resolves the top-level references, so a schema that is only a loop
        # ({"$ref": "#"}) or a remote reference is refused before any model is asked.
        for _ in validator.iter_errors(None):
            pass
    except Exception:  # RecursionError, referencing.exceptions.Unresolvable and its jsonschema wrappers
        return False
    return validator


def parse_response_format(response_format: Mapping[str, Any] | None) -> AnswerFormat | None:
    """The format to enforce, ``None`` for plain text; a malformed one is ``INFER_INVALID_INPUT``."""
    if response_format is None:
        return None
    kind = response_format.get("type")
    if kind == "text":
        return None
    if kind == "json_object":
        return AnswerFormat("json_object")
    if kind != "json_schema":
        raise InferError(INVALID_INPUT, "responseFormat.type must be text, json_object or json_schema")
    spec = response_format.get("json_schema")
    schema = spec.get("schema") if isinstance(spec, Mapping) else None
    if not isinstance(schema, Mapping):
        raise InferError(INVALID_INPUT, "responseFormat.json_schema.schema must be a JSON Schema object")
    name = spec.get("name") if isinstance(spec, Mapping) else None
    if name is not None and (not isinstance(name, str) or not 1 <= len(name) <= 64):
        raise InferError(INVALID_INPUT, "responseFormat.json_schema.name must be a string of 1 to 64 characters")
    validator = _validator(js_json_dumps(schema))
    if validator is None:
        raise InferError(INVALID_INPUT, "responseFormat.json_schema.schema is not a valid JSON Schema")
    if validator is False:
        raise InferError(INVALID_INPUT, _UNUSABLE_SCHEMA)
    return AnswerFormat("json_schema", validator)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _where(path: Any) -> str:
    where = "$"
    for part in path:
        where += f"[{part}]" if isinstance(part, int) else f".{part}"
    return where


def check_answer(content: str, answer_format: AnswerFormat) -> tuple[Any, str | None, str | None]:
    """``(parsed, problem for the model, problem for the caller)``; both problems ``None`` when valid.

    The model's problem quotes the validator's message (it is about the model's
    own answer); the caller's names only the location and the failed keyword.
    """
    try:
        parsed = json.loads(content, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return None, "The answer is not valid JSON.", "the answer is not valid JSON"
    try:
        # ``1e999`` parses to infinity and ``"\ud800"`` to a lone surrogate: JSON text, but not values
        # JSON can carry back out (the wire would turn the number into null).
        check_json(parsed)
    except InvalidJson:
        return None, _NOT_CARRIED, "the answer holds a value JSON cannot carry"
    if answer_format.kind == "json_object":
        if not isinstance(parsed, dict):
            return None, "The answer must be a JSON object.", "the answer is not a JSON object"
        return parsed, None, None
    from jsonschema.exceptions import best_match

    try:
        error = best_match(answer_format.validator.iter_errors(parsed))
    except Exception:  # a nested $ref that loops or points outside, reached by this answer
        _log.warning("INFER could not check an answer against the requested schema", exc_info=True)
        raise InferError(INVALID_INPUT, _UNUSABLE_SCHEMA) from None
    if error is None:
        return parsed, None, None
    where = _where(error.absolute_path)
    for_model = f"At {where}: {error.message}"
    if len(for_model) > _MAX_PROBLEM_CHARS:
        for_model = for_model[:_MAX_PROBLEM_CHARS] + "…"
    return None, for_model, f"the answer breaks the JSON schema at {where[:200]} ({error.validator})"


def retry_message(problem: str) -> str:
    """The user message that shows the model its validation error (INF-4's one retry)."""
    return (f"Your previous answer does not satisfy the required format. {problem} "
            "Answer again with only the JSON value the format asks for.")
