"""A plain chat answered from the material it is given: the sentences of earlier messages that best match the
last user message, in their original order."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from ....text import score_documents
from ....text.sentences import split_sentences
from .excerpts import FOLLOW_UP_SHARE
from .terms import analyze

__all__ = ["CHAT_SENTENCES", "answer_chat"]
#: Sentences a plain chat answer quotes at most.
CHAT_SENTENCES: Final = 3


def answer_chat(messages: Sequence[tuple[str, str]]) -> str:
    """A plain chat's answer: the sentences of earlier messages that best match the last user message.

    ``messages`` are ``(role, content)`` pairs; system messages are instructions,
    not material. When nothing matches, the first sentence of each earlier
    message stands in (an extract, never an invention).
    """
    last = max((i for i, (role, _) in enumerate(messages) if role == "user"), default=None)
    if last is None:
        return "There is no question to answer."
    question = analyze(messages[last][1])
    material = [content for i, (role, content) in enumerate(messages) if i != last and role != "system"]
    sentences = [(m, content[s.start:s.end]) for m, content in enumerate(material) for s in split_sentences(content)]
    if not sentences:
        return "There is no material to answer from."
    scores = score_documents(question, [analyze(text) for _, text in sentences]) if question else [0.0] * len(
        sentences)
    ranked = sorted((i for i, score in enumerate(scores) if score > 0), key=lambda i: (-scores[i], i))
    best = scores[ranked[0]] if ranked else 0.0
    picked = sorted(i for i in ranked[:CHAT_SENTENCES] if scores[i] >= FOLLOW_UP_SHARE * best)
    if not picked:
        firsts: dict[int, int] = {}
        for i, (m, _) in enumerate(sentences):
            firsts.setdefault(m, i)
        picked = sorted(firsts.values())[:CHAT_SENTENCES]
    return " ".join(sentences[i][1] for i in picked)
