"""Public-shape checks for RETRIEVAL.SEARCH (RET-1 input, RET-4 output).

Every malformed input becomes ``RETRIEVAL_INVALID_INPUT`` and every malformed
provider answer ``RETRIEVAL_INVALID_BACKEND_OUTPUT``; no pydantic or
``TypeError`` escapes. The checks are explicit (not pydantic's lax coercion),
so ``"5"`` is not a limit and ``True`` is not a score.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from ..contracts import FrozenDict, valid_text
from ..contracts.json import MAX_JSON_DEPTH
from ..errors import describe_validation_error
from .errors import INVALID_BACKEND_OUTPUT, INVALID_INPUT, RetrievalError
from .types import (
    MAX_SEARCH_LIMIT,
    RetrievalCandidate,
    RetrievalCandidateSource,
    RetrievalQuery,
    RetrievalSearchInput,
    RetrievalSearchOutput,
    RetrievalTarget,
)

__all__ = [
    "coerce_input",
    "parse_candidates",
    "parse_search_input",
    "parse_search_output",
    "validate_search_output",
]

#: Integers at or beyond this magnitude round to infinity as a double.
_DOUBLE_LIMIT = 2**1024 - 2**970
_TARGET_FIELDS = frozenset({"name", "type", "namespace", "metadata"})
_CANDIDATE_FIELDS = frozenset({"id", "content", "score", "source", "metadata"})
_SOURCE_FIELDS = frozenset({"target", "ref"})
_OUTPUT_FIELDS = frozenset({"candidates", "strategy", "target", "metadata"})


def _fields(value: Any) -> dict[str, Any] | None:
    """A model or mapping as a plain dict of its *set* fields (``None`` if neither)."""
    if isinstance(value, BaseModel):
        return {name: getattr(value, name) for name in value.model_fields_set}
    if isinstance(value, Mapping):
        return dict(value)
    return None


def _is_name(value: Any) -> bool:
    return isinstance(value, str) and value.strip() != ""


def _is_object(value: Any) -> bool:
    """A string-keyed mapping. Plain and frozen dicts skip the (slow) ABC isinstance check."""
    if value.__class__ is dict or value.__class__ is FrozenDict:
        for key in value:  # noqa: SIM110 - a plain loop: no generator object on the hot path
            if key.__class__ is not str:
                return False
        return True
    return isinstance(value, Mapping) and all(isinstance(key, str) for key in value)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _fail_input(message: str) -> RetrievalError:
    return RetrievalError(INVALID_INPUT, message)


def _parse_output_target(raw: Any) -> RetrievalTarget:
    """The provider's output target, with the same shape rules as a request target."""
    fields = _fields(raw)
    if fields is None:
        raise _fail_output("output target must be an object")
    unknown = set(fields) - _TARGET_FIELDS
    if unknown:
        raise _fail_output(f"output target has unknown fields: {', '.join(sorted(map(str, unknown)))}")
    if not _is_name(fields.get("name")):
        raise _fail_output("output target.name must be a non-empty string")
    for name in ("type", "namespace"):
        if fields.get(name) is not None and not _is_name(fields[name]):
            raise _fail_output(f"output target.{name} must be a non-empty string")
    if fields.get("metadata") is not None and not _is_object(fields["metadata"]):
        raise _fail_output("output target.metadata must be an object")
    if isinstance(raw, RetrievalTarget):
        return raw
    return RetrievalTarget.model_validate({k: v for k, v in fields.items() if v is not None})


def _check_model_input(model: RetrievalSearchInput) -> None:
    """Checks pydantic does not make (blank names) or a hand-built model may have skipped."""
    target = model.target
    if not isinstance(target, RetrievalTarget) or not isinstance(model.query, RetrievalQuery):
        raise _fail_input("query and target must be objects")
    if not _is_name(target.name):
        raise _fail_input("target.name must be a non-empty string")
    if (target.type is not None and not _is_name(target.type)) or (
            target.namespace is not None and not _is_name(target.namespace)):
        raise _fail_input("target.type and target.namespace must be non-empty strings")
    if target.metadata is not None and not _is_object(target.metadata):
        raise _fail_input("target.metadata must be an object")
    if model.query.metadata is not None and not _is_object(model.query.metadata):
        raise _fail_input("query.metadata must be an object")
    if model.strategy is not None and not _is_name(model.strategy):
        raise _fail_input("strategy must be a non-empty string")
    if (model.filter is not None and not _is_object(model.filter)) or (
            model.options is not None and not _is_object(model.options)):
        raise _fail_input("filter and options must be objects")
    limit = model.limit
    if limit is not None and (not _is_int(limit) or not 1 <= limit <= MAX_SEARCH_LIMIT):
        raise _fail_input(f"limit must be an integer from 1 to {MAX_SEARCH_LIMIT}")


def _unsendable(value: Any, depth: int = 0) -> str | None:
    """Why a query part cannot be stored, sent or compared (``None`` if it can): a lone surrogate (no UTF-8
    for it: MEMORY and CONTEXT refuse it too), an integer beyond a double, or nesting past the contracts'
    bound. Other objects (a numpy vector) are the provider's to judge."""
    kind = type(value)
    if kind is float or value is None or kind is bool:
        return None
    if isinstance(value, str):
        return None if valid_text(value) else "strings must be valid Unicode (no lone surrogates)"
    if isinstance(value, int):
        return None if -_DOUBLE_LIMIT < value < _DOUBLE_LIMIT else "integers must fit a double"
    if depth >= MAX_JSON_DEPTH:
        return f"value is nested deeper than {MAX_JSON_DEPTH} levels"
    if isinstance(value, Mapping):
        for key, item in value.items():
            problem = _unsendable(key, depth + 1) or _unsendable(item, depth + 1)
            if problem:
                return problem
    elif isinstance(value, (list, tuple)):
        for item in value:
            if type(item) is not float:  # vectors: skip the common case without a call
                problem = _unsendable(item, depth + 1)
                if problem:
                    return problem
    return None


def _check_values(model: RetrievalSearchInput) -> None:
    for where, value in (("query.content", model.query.content), ("query.metadata", model.query.metadata),
                         ("filter", model.filter), ("options", model.options),
                         ("target.metadata", model.target.metadata)):
        if value is None or (type(value) is str and value.isascii()):
            continue
        problem = _unsendable(value)
        if problem:
            raise _fail_input(f"{where}: {problem}")


def parse_search_input(raw: Any) -> RetrievalSearchInput:
    """Check a search request (RET-1) and return it as a frozen model.

    Accepts a dict (camelCase and snake_case spell the same here) or a
    :class:`RetrievalSearchInput`. Validation is pydantic's *strict* mode (no
    ``"5"`` → 5, no ``True`` → 1, objects must be dicts) plus the checks strict
    mode does not make (blank names). ``limit`` stays ``None`` when omitted;
    the caller applies the limit precedence.
    """
    if isinstance(raw, RetrievalSearchInput):
        _check_model_input(raw)
        _check_values(raw)
        return raw
    if not isinstance(raw, Mapping):
        raise _fail_input("the search input must be an object")
    try:
        model = RetrievalSearchInput.model_validate(raw if type(raw) is dict else dict(raw), strict=True)
    except ValidationError as error:
        raise _fail_input(f"invalid search input ({describe_validation_error(error)})") from None
    except (TypeError, ValueError, RecursionError):
        raise _fail_input("invalid search input") from None
    _check_values(model)
    # Strict mode already checked every type and the limit range; only blank names remain.
    target = model.target
    if target.name.isspace() or (target.type is not None and target.type.isspace()) or (
            target.namespace is not None and target.namespace.isspace()) or (
            model.strategy is not None and model.strategy.isspace()):
        raise _fail_input("target names and strategy must be non-blank strings")
    return model


def coerce_input(input: RetrievalSearchInput | Mapping[str, Any]) -> RetrievalSearchInput:
    """What providers call first, so they can be used directly with a plain dict too."""
    return input if isinstance(input, RetrievalSearchInput) else parse_search_input(input)


def _fail_output(message: str) -> RetrievalError:
    return RetrievalError(INVALID_BACKEND_OUTPUT, message)


def _parse_candidate(raw: Any, index: int) -> RetrievalCandidate:
    if isinstance(raw, RetrievalCandidate) and _candidates_ok((raw,)):
        return raw
    fields = _fields(raw)
    if fields is None:
        raise _fail_output(f"candidate {index} is not an object")
    if set(fields) - _CANDIDATE_FIELDS:
        raise _fail_output(f"candidate {index} has unknown fields")
    if "content" not in fields:
        raise _fail_output(f"candidate {index} has no content")
    cid = fields.get("id")
    if cid is not None and not _is_name(cid):
        raise _fail_output(f"candidate {index} id must be a non-empty string")
    score = fields.get("score")
    if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float))
                              or not math.isfinite(score)):
        raise _fail_output(f"candidate {index} score must be a finite number")
    source = fields.get("source")
    source_model: RetrievalCandidateSource | None = None
    if source is not None:
        source_fields = _fields(source)
        if source_fields is None or set(source_fields) - _SOURCE_FIELDS or any(
                value is not None and not isinstance(value, str) for value in source_fields.values()):
            raise _fail_output(f"candidate {index} source must be {{target?, ref?}} strings")
        source_model = source if isinstance(source, RetrievalCandidateSource) else \
            RetrievalCandidateSource.model_validate({k: v for k, v in source_fields.items() if v is not None})
    metadata = fields.get("metadata")
    if metadata is not None and not _is_object(metadata):
        raise _fail_output(f"candidate {index} metadata must be an object")
    values: dict[str, Any] = {"content": fields["content"]}
    if cid is not None:
        values["id"] = cid
    if score is not None:
        values["score"] = float(score)
    if source_model is not None:
        values["source"] = source_model
    if metadata is not None:
        values["metadata"] = metadata
    return RetrievalCandidate.model_validate(values)


def _candidates_ok(candidates: tuple[Any, ...]) -> bool:
    """Fast path for candidates that are already models (possibly built with ``model_construct``).

    One loop, no per-item calls: this runs on every search. ``x - x == 0.0`` is the
    cheap finiteness test for floats (NaN and ±inf give NaN).
    """
    for candidate in candidates:
        if candidate.__class__ is not RetrievalCandidate:
            return False
        # Plain attribute reads: a hand-built model missing a field raises AttributeError,
        # which parse_search_output turns into RETRIEVAL_INVALID_BACKEND_OUTPUT.
        score = candidate.score
        if score is not None and not ((score.__class__ is float and score - score == 0.0)
                                      or score.__class__ is int):
            return False
        cid = candidate.id
        if cid is not None and (cid.__class__ is not str or not cid or cid.isspace()):
            return False
        source = candidate.source
        if source is not None:
            if source.__class__ is not RetrievalCandidateSource:
                return False
            target, ref = source.target, source.ref
            if (target is not None and target.__class__ is not str) or (ref is not None and ref.__class__ is not str):
                return False
        metadata = candidate.metadata
        if metadata is not None and not _is_object(metadata):
            return False
        candidate.content  # noqa: B018 - must exist
    return True


def parse_candidates(raw: Any) -> tuple[RetrievalCandidate, ...]:
    """Check a candidate list (RET-4 shape rules) without the request-bound checks."""
    if isinstance(raw, (str, bytes, Mapping)) or not isinstance(raw, Sequence):
        raise _fail_output("candidates must be a list")
    return tuple(_parse_candidate(item, index) for index, item in enumerate(raw))


def _output_ok(output: RetrievalSearchOutput) -> bool:
    """Fast path: a well-formed model is returned as is (no copy, order and objects kept)."""
    target = output.target
    strategy = output.strategy
    return (type(output.candidates) is tuple and type(target) is RetrievalTarget and _is_name(target.name)
            and (strategy is None or _is_name(strategy))
            and (output.metadata is None or _is_object(output.metadata))
            and _candidates_ok(output.candidates))


def parse_search_output(raw: Any) -> RetrievalSearchOutput:
    """Check an output's shape only (used by composite providers on their branches).

    Raises ``RETRIEVAL_INVALID_BACKEND_OUTPUT`` and nothing else, even for hand-built models
    missing required attributes or exotic sequences whose iteration fails.
    """
    try:
        return _parse_search_output(raw)
    except RetrievalError:
        raise
    except Exception:
        raise _fail_output("the provider output is malformed") from None


def _parse_search_output(raw: Any) -> RetrievalSearchOutput:
    if type(raw) is RetrievalSearchOutput and _output_ok(raw):
        return raw
    fields = _fields(raw)
    if fields is None:
        raise _fail_output("the provider output must be an object")
    if set(fields) - _OUTPUT_FIELDS:
        raise _fail_output("the provider output has unknown fields")
    if "candidates" not in fields:
        raise _fail_output("the provider output has no candidates")
    candidates = parse_candidates(fields["candidates"])
    if "target" not in fields:
        raise _fail_output("the provider output has no target")
    target = _parse_output_target(fields["target"])
    strategy = fields.get("strategy")
    if strategy is not None and not _is_name(strategy):
        raise _fail_output("output strategy must be a non-empty string")
    metadata = fields.get("metadata")
    if metadata is not None and not _is_object(metadata):
        raise _fail_output("output metadata must be an object")
    return RetrievalSearchOutput.model_validate({"candidates": candidates, "target": target,
                                                 "strategy": strategy, "metadata": metadata})


def validate_search_output(raw: Any, request: RetrievalSearchInput, *, limit: int,
                           strategy: str | None) -> RetrievalSearchOutput:
    """RET-4: shape, count ≤ ``limit``, target identity and strategy match the request.

    Candidates keep the provider's order, scores, ids and metadata; nothing is
    re-scored, de-duplicated or invented. A missing output strategy is filled
    with ``strategy`` (the explicit or registry-chosen one), and a target the
    provider returned without metadata is the request's target.
    """
    output = parse_search_output(raw)
    if len(output.candidates) > limit:
        raise _fail_output(f"the provider returned {len(output.candidates)} candidates for limit {limit}")
    want, got = request.target, output.target
    if (got.name, got.type, got.namespace) != (want.name, want.type, want.namespace):
        raise _fail_output("the output target does not match the request target")
    if strategy is not None and output.strategy is not None and output.strategy != strategy:
        raise _fail_output("the output strategy does not match the requested strategy")
    update: dict[str, Any] = {}
    if output.strategy is None and strategy is not None:
        update["strategy"] = strategy
    if got is not want and got.metadata is None and want.metadata is not None:
        # The output target is the request's logical identity: a provider that echoes only the
        # name does not drop the caller's target metadata.
        update["target"] = want
    return output.model_copy(update=update) if update else output
