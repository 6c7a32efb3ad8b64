"""Building result models from values a provider already guarantees: the one fast path every provider uses.

A search builds a :class:`RetrievalCandidate` per hit and one :class:`RetrievalSearchOutput`;
pydantic's validation costs several microseconds each and even ``model_construct``
walks every field's aliases and defaults. A provider that knows its values have the
right types (an id string from its own index, a finite float score, a metadata dict)
needs neither: these functions set the instance dictionary directly, which gives the
very object ``model_construct`` with every field passed would give (same ``__dict__``,
same ``model_fields_set``, equal, hashable, dumpable) for about a tenth of the cost.

The values are *trusted*: nothing is checked here. Output that crosses a boundary is
still checked by :func:`~ditto.retrieval.validation.validate_search_output` (its fast
path reads these models as they are), so a provider bug surfaces as
``RETRIEVAL_INVALID_BACKEND_OUTPUT``, not as a malformed answer.
"""

from __future__ import annotations

from typing import Any, Final

from .types import RetrievalCandidate, RetrievalCandidateSource, RetrievalSearchOutput, RetrievalTarget

__all__ = ["trusted_candidate", "trusted_output", "trusted_source", "with_score"]

_new: Final = object.__new__
_set: Final = object.__setattr__
_CANDIDATE_FIELDS: Final = frozenset(RetrievalCandidate.model_fields)
_SOURCE_FIELDS: Final = frozenset(RetrievalCandidateSource.model_fields)
_OUTPUT_FIELDS: Final = frozenset(RetrievalSearchOutput.model_fields)


def _check_shape() -> None:
    """The shortcut relies on these models having no post-init hook, no private attributes and no extras
    (pydantic's ``model_construct`` would run or fill them); fail at import if that ever changes."""
    for model, fields in ((RetrievalCandidate, {"id", "content", "score", "source", "metadata"}),
                          (RetrievalCandidateSource, {"target", "ref"}),
                          (RetrievalSearchOutput, {"candidates", "strategy", "target", "metadata"})):
        if (model.__pydantic_post_init__ is not None or model.__private_attributes__
                or model.model_config.get("extra") == "allow" or set(model.model_fields) != fields):
            raise TypeError(f"{model.__name__} changed shape; update ditto.retrieval._results")


_check_shape()


def trusted_candidate(id: str | None, content: Any, score: float | None,
                      source: RetrievalCandidateSource | None, metadata: dict[str, Any] | None) -> RetrievalCandidate:
    """``RetrievalCandidate.model_construct`` with every field given, without its per-field walk."""
    made = _new(RetrievalCandidate)
    _set(made, "__dict__", {"id": id, "content": content, "score": score, "source": source, "metadata": metadata})
    _set(made, "__pydantic_fields_set__", set(_CANDIDATE_FIELDS))
    _set(made, "__pydantic_extra__", None)
    _set(made, "__pydantic_private__", None)
    return made


def trusted_source(target: str | None, ref: str | None) -> RetrievalCandidateSource:
    """``RetrievalCandidateSource.model_construct(target=..., ref=...)``, the same shortcut."""
    made = _new(RetrievalCandidateSource)
    _set(made, "__dict__", {"target": target, "ref": ref})
    _set(made, "__pydantic_fields_set__", set(_SOURCE_FIELDS))
    _set(made, "__pydantic_extra__", None)
    _set(made, "__pydantic_private__", None)
    return made


def trusted_output(candidates: tuple[RetrievalCandidate, ...], target: RetrievalTarget, strategy: str | None,
                   metadata: dict[str, Any] | None = None) -> RetrievalSearchOutput:
    """``RetrievalSearchOutput.model_construct`` with every field given; ``candidates`` must be a tuple."""
    made = _new(RetrievalSearchOutput)
    _set(made, "__dict__", {"candidates": candidates, "strategy": strategy, "target": target, "metadata": metadata})
    _set(made, "__pydantic_fields_set__", set(_OUTPUT_FIELDS))
    _set(made, "__pydantic_extra__", None)
    _set(made, "__pydantic_private__", None)
    return made


def with_score(candidate: RetrievalCandidate, score: float) -> RetrievalCandidate:
    """``candidate.model_copy(update={"score": score})`` (fusion and reranking re-score every hit).

    The same object ``model_copy`` makes: the other fields shared, ``score`` added to the set fields.
    A subclass of the candidate type goes through ``model_copy`` itself.
    """
    if candidate.__class__ is not RetrievalCandidate:
        return candidate.model_copy(update={"score": score})
    values = candidate.__dict__.copy()
    values["score"] = score
    fields = set(candidate.__pydantic_fields_set__)
    fields.add("score")
    made = _new(RetrievalCandidate)
    _set(made, "__dict__", values)
    _set(made, "__pydantic_fields_set__", fields)
    _set(made, "__pydantic_extra__", None)
    _set(made, "__pydantic_private__", None)
    return made
