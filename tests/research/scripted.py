"""A scripted model behind the real INFER port (``INFER.SAMPLE``) for the research tests.

By default it answers like an extractive model: vocabulary entries or the
question as queries, and for each passage the line sharing most words with the
question as a verbatim quote. ``overrides`` replace the answer of a task kind
(``choose_queries`` / ``choose_excerpts``) with a fixed JSON answer or a
function of the posed task, which is how the tests drive wrong answers through
the port. ``calls`` counts the calls per task kind.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from ditto.runtime import WorkerDefinition
from ditto.text import TextAnalyzer
from ditto.worker.infer import ExcerptTask, QueryTask, parse_task
from ditto.worker.infer.tasks import AnswerTask

_ANALYZER = TextAnalyzer(cjk="unigram")
OVERRIDES_ENV = "DITTO_TEST_SCRIPTED_MODEL"


def _overlap(question: str, text: str) -> int:
    wanted = set(_ANALYZER.analyze(question))
    return len(wanted & set(_ANALYZER.analyze(text)))


def choose_queries(task: QueryTask) -> dict[str, Any]:
    if task.vocabulary is None:
        return {"queries": [task.question]}
    ranked = sorted(range(len(task.vocabulary)),
                    key=lambda i: (-_overlap(task.question, task.vocabulary[i]), i))  # type: ignore[index]
    scored = [i for i in ranked if _overlap(task.question, task.vocabulary[i]) > 0]  # type: ignore[index]
    count = max(task.min_queries, min(task.max_queries, len(scored)))
    return {"queries": [task.vocabulary[i] for i in ranked[:count]]}


def choose_excerpts(task: ExcerptTask) -> dict[str, Any]:
    picks: list[tuple[int, int, str, str]] = []
    for order, passage in enumerate(task.passages):
        best: tuple[int, str] | None = None
        for line in passage.text.split("\n"):
            quote = line.strip()
            if not quote or quote.startswith("#"):
                continue
            score = _overlap(task.question, quote)
            if score > 0 and (best is None or score > best[0]):
                best = (score, quote[:task.max_quote_chars])
        if best is not None:
            picks.append((-best[0], order, passage.source_id, best[1]))
    picks.sort()
    return {"excerpts": [{"sourceId": source, "quote": quote} for _, _, source, quote in picks[:task.max_excerpts]]}


Answer = Mapping[str, Any] | Callable[[Any], Mapping[str, Any]]


def answer_from(task: AnswerTask) -> dict[str, Any]:
    """The answer sentences the built-in model would give (verbatim sentences of the quotes, cited)."""
    from ditto.worker.infer.extractive import answer_question

    return {"sentences": [{"text": sentence.text, "evidence": list(sentence.evidence)}
                          for sentence in answer_question(task)]}


class ScriptedModel:
    def __init__(self, overrides: Mapping[str, Answer] | None = None) -> None:
        self.overrides = dict(overrides or {})
        self.calls: Counter[str] = Counter()

    async def sample(self, input: Mapping[str, Any]) -> dict[str, Any]:
        task = parse_task(input["messages"])
        assert task is not None, "the workflow posed a task the contract does not know"
        assert input.get("responseFormat", {}).get("type") == "json_schema"
        self.calls[task.task] += 1
        override = self.overrides.get(task.task)
        if override is not None:
            answer = override(task) if callable(override) else override
        elif isinstance(task, QueryTask):
            answer = choose_queries(task)
        elif isinstance(task, AnswerTask):
            answer = answer_from(task)
        else:
            answer = choose_excerpts(task)
        content = json.dumps(answer)
        return {"message": {"role": "assistant", "content": content}, "parsed": answer,
                "usage": {"inputTokens": 0, "outputTokens": 0}, "model": "scripted", "finishReason": "stop"}

    def worker(self) -> WorkerDefinition:
        return WorkerDefinition("INFER", {"INFER.SAMPLE": self.sample})


def create_scripted_infer_worker() -> WorkerDefinition:
    """For ``ditto research --worker tests.research.scripted:create_scripted_infer_worker`` (subprocess tests).

    ``$DITTO_TEST_SCRIPTED_MODEL`` may hold JSON overrides ``{"choose_excerpts": {...}}``.
    """
    raw = os.environ.get(OVERRIDES_ENV)
    return ScriptedModel(json.loads(raw) if raw else None).worker()
