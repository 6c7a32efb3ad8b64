"""Structured output (INF-4, INF-5) at the edges the planted bugs slipped through: non-finite numbers in a
``json_object`` answer, the exact content of the one retry, and the final ``INFER_INVALID_OUTPUT``.

Issue 15, "Tests that catch the bug" (INFER). Each test here failed against a hand-planted bug before it
was committed: the retry turned off or repeated, the model shown another text than its validation error,
the caller shown the model's answer; and against the code as it was, which took ``1e999`` (parsed to
infinity, sent on the wire as ``null``) and a lone surrogate escape for valid ``json_object`` answers.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ditto import CancelSignal
from ditto.worker.infer import InferError, ProviderReply, ProviderRequest, create_infer_client
from ditto.worker.infer.structured import AnswerFormat, check_answer, parse_response_format, retry_message

USER = [{"role": "user", "content": "Give me the numbers as a JSON object."}]
JSON_OBJECT = {"type": "json_object"}
SCHEMA = {"type": "json_schema", "json_schema": {"name": "n", "schema": {
    "type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"], "additionalProperties": False}}}

#: Answers a model really writes when it "helps": JavaScript's non-finite literals, a float that
#: overflows to infinity, a lone surrogate escape. All are refused, none repaired.
NOT_CARRIED = ['{"n": NaN}', '{"n": Infinity}', '{"n": -Infinity}', '{"a": [1, 2, NaN]}',
               '{"a": {"b": {"c": Infinity}}}', '{"n": 1e999}', '{"n": -1e400}', '{"s": "\\ud800"}']


class Scripted:
    """A provider answering from a list (the last answer repeats); it records every request it gets."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.requests: list[ProviderRequest] = []

    async def sample(self, request: ProviderRequest, signal: CancelSignal | None, /) -> ProviderReply:
        self.requests.append(request)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        return ProviderReply(content=answer, model="scripted")


async def sample(provider: Scripted, response_format: Any) -> Any:
    client = create_infer_client({"s": provider})
    return await client.reasoning.sample(model={"provider": "s"}, messages=USER, response_format=response_format)


@pytest.mark.parametrize("answer", NOT_CARRIED)
async def test_non_finite_numbers_in_a_json_object_answer_are_invalid_output(answer: str) -> None:
    """INF-4, INF-5 (issue 15, NaN/Infinity in json_object): NaN, Infinity, a number that overflows to
    infinity or a lone surrogate is refused twice over (one retry) → INFER_INVALID_OUTPUT; never parsed into a
    float the wire would silently turn into null."""
    provider = Scripted(answer)
    with pytest.raises(InferError) as caught:
        await sample(provider, JSON_OBJECT)
    assert caught.value.code == "INFER_INVALID_OUTPUT" and len(provider.requests) == 2
    assert answer not in caught.value.message


async def test_a_non_finite_answer_then_a_finite_one_is_the_finite_one() -> None:
    """INF-4 (issue 15): the retry after a NaN answer shows the model its bad answer and what is wrong with it;
    the second, finite answer is the result."""
    provider = Scripted('{"n": NaN}', '{"n": 1.5}')
    result = await sample(provider, JSON_OBJECT)
    assert result.parsed == {"n": 1.5} and result.message.content == '{"n": 1.5}'
    first, second = provider.requests
    assert second.messages[:-2] == first.messages
    assert second.messages[-2] == {"role": "assistant", "content": '{"n": NaN}'}
    assert second.messages[-1] == {"role": "user", "content": retry_message("The answer is not valid JSON.")}


_SCALARS = st.integers(-(2**53), 2**53) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=4) \
    | st.booleans() | st.none()
_OBJECTS = st.dictionaries(st.text(max_size=4), st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3)
                                                           | st.dictionaries(st.text(max_size=4), inner, max_size=3),
                                                           max_leaves=8), max_size=4)
_MARK = "__constant__"


@settings.get_profile("security")
@example(value={}, constant="NaN", depth=0)
@example(value={"n": 1}, constant="Infinity", depth=2)
@example(value={"a": [1.5]}, constant="-Infinity", depth=1)
@example(value={"big": 2**53}, constant="1e999", depth=3)
@example(value={}, constant="-1e400", depth=0)
@example(value={"s": "ok"}, constant='"\\udfff"', depth=1)
@given(value=_OBJECTS, constant=st.sampled_from(["NaN", "Infinity", "-Infinity", "1e999", "-1e400", '"\\ud800"']),
       depth=st.integers(0, 3))
def test_a_value_json_cannot_carry_anywhere_in_an_object_is_refused(value: dict[str, Any], constant: str,
                                                                   depth: int) -> None:
    """INF-4 (issue 15, hypothesis): a finite JSON object is accepted as written; the same object with
    ``NaN`` / ``Infinity`` / ``-Infinity`` / an overflowing number / a lone surrogate put in at any depth is
    refused by check_answer, for json_object and for a JSON schema that accepts any object."""
    any_object = parse_response_format({"type": "json_schema", "json_schema": {"name": "any",
                                                                               "schema": {"type": "object"}}})
    assert any_object is not None
    for answer_format in (AnswerFormat("json_object"), any_object):
        assert check_answer(json.dumps(value, allow_nan=False), answer_format) == (value, None, None)
        poisoned: Any = {**value, "x": _MARK}
        for _ in range(depth):
            poisoned = {"a": [poisoned]}
        text = json.dumps(poisoned).replace(f'"{_MARK}"', constant)
        parsed, for_model, for_caller = check_answer(text, answer_format)
        assert parsed is None and for_model is not None and for_caller is not None, text


async def test_schema_breaking_answers_get_one_retry_with_the_validation_error_then_invalid_output() -> None:
    """INF-4 (issue 15, one retry with the validation error shown): exactly two requests; the second carries
    the first answer and the validator's own words with the location; the caller's error names the location
    and the failed keyword, never the model's text."""
    provider = Scripted('{"n": "seven"}', '{"n": "eight"}')
    with pytest.raises(InferError) as caught:
        await sample(provider, SCHEMA)
    error = caught.value
    assert error.code == "INFER_INVALID_OUTPUT" and error.status == "error"
    assert error.message == ("The model's answer did not satisfy the requested format after one retry: "
                             "the answer breaks the JSON schema at $.n (type)")
    first, second = provider.requests
    assert len(first.messages) == 1 and len(second.messages) == 3
    assert second.messages[1] == {"role": "assistant", "content": '{"n": "seven"}'}
    assert second.messages[2] == {"role": "user", "content": retry_message("At $.n: 'seven' is not of type 'number'")}
    assert "eight" not in error.message and "seven" not in error.message


async def test_a_valid_first_answer_is_not_retried() -> None:
    """INF-4 (issue 15): a valid answer is the result at once: one request, parsed as written."""
    provider = Scripted('{"n": 7}', '{"n": 8}')
    result = await sample(provider, SCHEMA)
    assert result.parsed == {"n": 7} and len(provider.requests) == 1


def test_the_retry_message_shows_the_problem_verbatim() -> None:
    """INF-4 (issue 15): the retry turn tells the model what was wrong, in its words, and what to do."""
    assert retry_message("At $.n: 'x' is not of type 'number'") == (
        "Your previous answer does not satisfy the required format. At $.n: 'x' is not of type 'number' "
        "Answer again with only the JSON value the format asks for.")
