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

_INPUT_FIELDS = frozenset({"query", "target", "strategy", "filter", "limit", "options"})
_QUERY_FIELDS = frozenset({"content", "metadata"})
_TARGET_FIELDS = frozenset({"name", "type", "namespace", "metadata"})
_CANDIDATE_FIELDS = {"id": "id", "content": "content", "score": "score", "source": "source", "metadata": "metadata"}
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
    return isinstance(value, Mapping) and all(isinstance(key, str) for key in value)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _fail_input(message: str) -> RetrievalError:
    return RetrievalError(INVALID_INPUT, message)


def _parse_target(raw: Any, error: type[Exception] | None = None, *,
                  code: str = INVALID_INPUT, where: str = "target") -> RetrievalTarget:
    fields = _fields(raw)
    if fields is None:
        raise RetrievalError(code, f"{where} must be an object")
    unknown = set(fields) - _TARGET_FIELDS
    if unknown:
        raise RetrievalError(code, f"{where} has unknown fields: {', '.join(sorted(map(str, unknown)))}")
    if not _is_name(fields.get("name")):
        raise RetrievalError(code, f"{where}.name must be a non-empty string")
    for name in ("type", "namespace"):
        if fields.get(name) is not None and not _is_name(fields[name]):
            raise RetrievalError(code, f"{where}.{name} must be a non-empty string")
    if fields.get("metadata") is not None and not _is_object(fields["metadata"]):
        raise RetrievalError(code, f"{where}.metadata must be an object")
    if isinstance(raw, RetrievalTarget):
        return raw
    return RetrievalTarget.model_construct(**{k: v for k, v in fields.items() if v is not None})


def parse_search_input(raw: Any) -> RetrievalSearchInput:
    """Check a search request (RET-1) and return it as a frozen model.

    Accepts a dict (camelCase and snake_case spell the same here) or a
    :class:`RetrievalSearchInput`. ``limit`` stays ``None`` when omitted; the
    caller applies the limit precedence.
    """
    fields = _fields(raw)
    if fields is None:
        raise _fail_input("the search input must be an object")
    unknown = set(fields) - _INPUT_FIELDS
    if unknown:
        raise _fail_input(f"unknown input fields: {', '.join(sorted(map(str, unknown)))}")
    query_fields = _fields(fields.get("query"))
    if query_fields is None:
        raise _fail_input("query must be an object")
    if set(query_fields) - _QUERY_FIELDS:
        raise _fail_input("query has unknown fields")
    if "content" not in query_fields:
        raise _fail_input("query.content is required")
    if query_fields.get("metadata") is not None and not _is_object(query_fields["metadata"]):
        raise _fail_input("query.metadata must be an object")
    if "target" not in fields:
        raise _fail_input("target is required")
    target = _parse_target(fields["target"])
    strategy = fields.get("strategy")
    if strategy is not None and not _is_name(strategy):
        raise _fail_input("strategy must be a non-empty string")
    for name in ("filter", "options"):
        if fields.get(name) is not None and not _is_object(fields[name]):
            raise _fail_input(f"{name} must be an object")
    limit = fields.get("limit")
    if limit is not None and (not _is_int(limit) or not 1 <= limit <= MAX_SEARCH_LIMIT):
        raise _fail_input(f"limit must be an integer from 1 to {MAX_SEARCH_LIMIT}")
    query = raw.query if isinstance(raw, RetrievalSearchInput) else RetrievalQuery.model_construct(
        **{k: v for k, v in query_fields.items() if k == "content" or v is not None})
    if isinstance(raw, RetrievalSearchInput) and isinstance(raw.target, RetrievalTarget):
        return raw
    # The checks above are the validation; construct skips a second, lax pass.
    return RetrievalSearchInput.model_construct(
        query=query, target=target, strategy=strategy, filter=fields.get("filter"), limit=limit,
        options=fields.get("options"))


def coerce_input(input: RetrievalSearchInput | Mapping[str, Any]) -> RetrievalSearchInput:
    """What providers call first, so they can be used directly with a plain dict too."""
    return input if isinstance(input, RetrievalSearchInput) else parse_search_input(input)


def _fail_output(message: str) -> RetrievalError:
    return RetrievalError(INVALID_BACKEND_OUTPUT, message)


def _parse_candidate(raw: Any, index: int) -> RetrievalCandidate:
    if isinstance(raw, RetrievalCandidate) and _candidate_ok(raw):
        return raw
    fields = _fields(raw)
    if fields is None:
        raise _fail_output(f"candidate {index} is not an object")
    if set(fields) - set(_CANDIDATE_FIELDS):
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
            RetrievalCandidateSource.model_construct(**{k: v for k, v in source_fields.items() if v is not None})
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
    return RetrievalCandidate.model_construct(**values)


def _candidate_ok(candidate: RetrievalCandidate) -> bool:
    score = candidate.score
    return (score is None or (not isinstance(score, bool) and isinstance(score, (int, float))
                              and math.isfinite(score))) and (candidate.id is None or _is_name(candidate.id))


def parse_candidates(raw: Any) -> tuple[RetrievalCandidate, ...]:
    """Check a candidate list (RET-4 shape rules) without the request-bound checks."""
    if isinstance(raw, (str, bytes, Mapping)) or not isinstance(raw, Sequence):
        raise _fail_output("candidates must be a list")
    return tuple(_parse_candidate(item, index) for index, item in enumerate(raw))


def parse_search_output(raw: Any) -> RetrievalSearchOutput:
    """Check an output's shape only (used by composite providers on their branches)."""
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
    target = _parse_target(fields["target"], code=INVALID_BACKEND_OUTPUT, where="output target")
    strategy = fields.get("strategy")
    if strategy is not None and not _is_name(strategy):
        raise _fail_output("output strategy must be a non-empty string")
    metadata = fields.get("metadata")
    if metadata is not None and not _is_object(metadata):
        raise _fail_output("output metadata must be an object")
    return RetrievalSearchOutput.model_construct(candidates=candidates, target=target, strategy=strategy,
                                                 metadata=metadata)


def validate_search_output(raw: Any, request: RetrievalSearchInput, *, limit: int,
                           strategy: str | None) -> RetrievalSearchOutput:
    """RET-4: shape, count ≤ ``limit``, target identity and strategy match the request.

    Candidates keep the provider's order, scores, ids and metadata; nothing is
    re-scored, de-duplicated or invented. A missing output strategy is filled
    with ``strategy`` (the explicit or registry-chosen one).
    """
    try:
        output = parse_search_output(raw)
    except RetrievalError:
        raise
    except (TypeError, ValueError, ValidationError):  # exotic Mapping/Sequence implementations
        raise _fail_output("the provider output is malformed") from None
    if len(output.candidates) > limit:
        raise _fail_output(f"the provider returned {len(output.candidates)} candidates for limit {limit}")
    want, got = request.target, output.target
    if (got.name, got.type, got.namespace) != (want.name, want.type, want.namespace):
        raise _fail_output("the output target does not match the request target")
    if strategy is not None and output.strategy is not None and output.strategy != strategy:
        raise _fail_output("the output strategy does not match the requested strategy")
    if output.strategy is None and strategy is not None:
        output = output.model_copy(update={"strategy": strategy})
    return output
