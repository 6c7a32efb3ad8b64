"""The exact refusals of structured output (INF-4, INF-5): every ``responseFormat`` problem's message, the
two texts ``check_answer`` gives (one for the model, one for the caller), their bounds, and the log line of
a schema that cannot be checked.

Issue 15, "Tests that catch the bug": written in answer to the survivors of
``scripts/mutation infer.structured`` (messages changed or emptied, the name bound moved by one, the
model's problem cut at another length, the log line's traceback dropped); see docs/testing.md.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from ditto.worker.infer import InferError
from ditto.worker.infer.structured import AnswerFormat, check_answer, parse_response_format


def schema_format(schema: Any, name: Any = "answer") -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}


def refusal(response_format: Any) -> str:
    with pytest.raises(InferError) as caught:
        parse_response_format(response_format)
    assert caught.value.code == "INFER_INVALID_INPUT"
    return caught.value.message


_UNUSABLE = ("responseFormat.json_schema.schema cannot be used: a $ref loops forever or points outside the schema "
             "(remote references are never fetched)")


def test_every_response_format_refusal_has_its_message() -> None:
    """INF-4, INF-5 (issue 15): each malformed responseFormat is INFER_INVALID_INPUT with its own message."""
    assert refusal({"type": "xml"}) == "responseFormat.type must be text, json_object or json_schema"
    assert refusal({}) == "responseFormat.type must be text, json_object or json_schema"
    for spec in ("a schema", None, ["schema"], {"name": "n"}, {"name": "n", "schema": "object"}):
        assert refusal({"type": "json_schema", "json_schema": spec}) == (
            "responseFormat.json_schema.schema must be a JSON Schema object"), spec
    for name in ("", "n" * 65, 5, ["n"]):
        assert refusal(schema_format({"type": "object"}, name)) == (
            "responseFormat.json_schema.name must be a string of 1 to 64 characters"), name
    assert refusal(schema_format({"type": "no-such-type"})) == (
        "responseFormat.json_schema.schema is not a valid JSON Schema")
    assert refusal(schema_format({"$ref": "#"})) == _UNUSABLE


def test_name_bounds_and_the_formats_that_pass() -> None:
    """INF-4 (issue 15): names of 1 and 64 characters and no name at all are accepted; text is no format;
    json_object and json_schema give formats of their kind."""
    for name in ("n", "n" * 64, None):
        parsed = parse_response_format(schema_format({"type": "object"}, name))
        assert parsed is not None and parsed.kind == "json_schema" and parsed.validator is not None
    assert parse_response_format(None) is None and parse_response_format({"type": "text"}) is None
    assert parse_response_format({"type": "json_object"}) == AnswerFormat("json_object")


def test_check_answer_gives_one_text_for_the_model_and_one_for_the_caller() -> None:
    """INF-4 (issue 15): the exact pair of problems for each way an answer can be wrong, and the parsed value
    with no problem when it is right."""
    as_object = AnswerFormat("json_object")
    assert check_answer("{} thanks", as_object) == (None, "The answer is not valid JSON.",
                                                    "the answer is not valid JSON")
    assert check_answer("[1]", as_object) == (None, "The answer must be a JSON object.",
                                              "the answer is not a JSON object")
    assert check_answer('{"n": 1e999}', as_object) == (
        None, "The answer holds a value JSON cannot carry (a number out of range, a lone surrogate or nesting too "
              "deep).", "the answer holds a value JSON cannot carry")
    assert check_answer('{"n": 1}', as_object) == ({"n": 1}, None, None)
    numbers = parse_response_format(schema_format({"type": "object", "properties": {"n": {"type": "number"}}}))
    assert numbers is not None
    assert check_answer('{"n": "x"}', numbers) == (None, "At $.n: 'x' is not of type 'number'",
                                                  "the answer breaks the JSON schema at $.n (type)")
    nested = parse_response_format(schema_format({"type": "array", "items": {"type": "object", "properties": {
        "v": {"type": "array", "items": {"type": "integer"}}}}}))
    assert nested is not None
    assert check_answer('[{"v": [1, "two"]}]', nested)[1:] == ("At $[0].v[1]: 'two' is not of type 'integer'",
                                                              "the answer breaks the JSON schema at $[0].v[1] (type)")


def test_the_models_problem_is_cut_at_500_characters_and_the_callers_location_at_200() -> None:
    """INF-4 (issue 15): the validator's message shown to the model is at most 500 characters plus "…"
    (exactly 500 is not cut); the location in the caller's message at most 200 characters."""
    bounded = parse_response_format(schema_format({"type": "object", "properties": {"s": {"maxLength": 1}}}))
    assert bounded is not None
    prefix = len("At $.s: '' is too long")
    fits = "x" * (500 - prefix)
    _, exact, _ = check_answer(f'{{"s": "{fits}"}}', bounded)
    assert exact == f"At $.s: '{fits}' is too long" and len(exact) == 500
    _, cut, _ = check_answer(f'{{"s": "{fits}y"}}', bounded)
    assert cut == f"At $.s: '{fits}y' is too long"[:500] + "…"
    key = "k" * 300
    deep = parse_response_format(schema_format({"type": "object", "additionalProperties": {"type": "integer"}}))
    assert deep is not None
    _, _, for_caller = check_answer(f'{{"{key}": "x"}}', deep)
    assert for_caller == f"the answer breaks the JSON schema at {('$.' + key)[:200]} (type)"


def test_a_nested_unusable_reference_is_refused_and_logged_with_its_traceback(
        caplog: pytest.LogCaptureFixture) -> None:
    """INF-4, INF-5 (issue 15): a $ref loop only an answer reaches is INFER_INVALID_INPUT with the unusable-schema
    message, and one warning on ditto.infer carries the traceback (the hidden error is logged once)."""
    looping = parse_response_format(schema_format({"type": "object", "properties": {
        "a": {"$ref": "#/properties/a"}}}))
    assert looping is not None
    caplog.set_level(logging.WARNING, logger="ditto.infer")
    with pytest.raises(InferError) as caught:
        check_answer('{"a": 1}', looping)
    assert (caught.value.code, caught.value.message) == ("INFER_INVALID_INPUT", _UNUSABLE)
    (record,) = [r for r in caplog.records if r.name == "ditto.infer"]
    assert record.levelno == logging.WARNING and record.exc_info and record.exc_info[0] is not None
    assert record.getMessage() == "INFER could not check an answer against the requested schema"
