"""How web search talks to a MediaWiki: request parameters, relaxed queries, ranking, page links.

Pure functions; :class:`~.web.WebClient` does the I/O. Why more than one request:
MediaWiki's ``list=search`` without ``srwhat`` searches *titles* on a stock install
(the database backends, SQLite or MariaDB; Wikipedia's CirrusSearch falls back to
text itself), and every backend requires *every* word of the query to appear, with
no stemming on the database backends. A question such as "how does a checkpoint
copy pages back" then finds nothing. So search asks for full text
(``srwhat=text``) with the query as given; when that finds fewer candidates than
wanted, it asks once more per content word (stop words dropped, a light suffix cut
and a ``*`` prefix match for the rest) and ranks the pages those answers name by
the summed rarity of the words they contain (``log(1 + pages / pages with the
word)``, the wiki's own counts). Pages that matched the whole query come first.

Ranking is the wiki's own, except on a wiki whose search backend does not rank: MediaWiki's
SQLite backend (``dbtype: sqlite`` in the site info) builds its answer without an ``ORDER BY``,
so hits come back in title order, and "the first candidate" would be the alphabetically first
page holding every word. There the per-word round always runs and every page named is ranked
by BM25 as far as the answers tell it (:func:`rank_unranked`): each query word the page holds
counts once (term frequencies are not reported), weighted by its rarity and normalised by the
page's word count (``srprop=wordcount``), plus the same weight again for a word in the title.

Page links come from the wiki's own site info (``meta=siteinfo``: ``server`` and
``articlepath``), fetched in the same first request, so any MediaWiki layout works
(``/wiki/$1`` on Wikipedia, ``/index.php/$1`` on a default install).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import quote, urljoin

__all__ = [
    "MAX_TERMS",
    "RELAXED_LIMIT",
    "WikiHit",
    "content_terms",
    "page_url",
    "parse_hits",
    "rank_relaxed",
    "rank_unranked",
    "ranks_by_relevance",
    "search_params",
    "term_query",
]

#: At most this many content words get a request of their own.
MAX_TERMS: Final = 6
#: Hits asked for per word in the relaxed round (the pages a word's answer can credit).
RELAXED_LIMIT: Final = 50
#: BM25's constants (the usual ones), for ranking a backend that does not rank.
_K1: Final = 1.2
_B: Final = 0.3
#: Characters MediaWiki leaves unescaped in page URLs (wfUrlencode).
_TITLE_SAFE: Final = ";@$!*(),/~:"
_WORD = re.compile(r"\w+", re.UNICODE)
#: Words that carry no topic (English question words, articles, auxiliaries, prepositions).
_STOP: Final = frozenset("""
a about above after again against all also am an and any are as at be because been before being below between both
but by can could did do does doing done down during each else every few for from further get gets got had has have
having he her here hers him his how however i if in into is it its itself just like may me might more most must my
no nor not now of off on once only or other our out over own same shall she should so some such than that the their
them then there these they this those through to too under until up upon us use used uses using very via was we
were what when where whether which while who whom whose why will with within without would you your
""".split())  # noqa: SIM905 - a word list reads better as text


@dataclass(frozen=True, slots=True)
class WikiHit:
    """One page a search answer named: its title, the (marked-up) snippet and the word count the wiki sent."""

    title: str
    snippet: str
    words: int | None = None


def search_params(query: str, limit: int, *, site_info: bool) -> dict[str, str]:
    """The ``action=query&list=search`` parameters for a full-text search (plus site info when asked)."""
    params = {
        "action": "query", "list": "search", "srsearch": query, "srwhat": "text", "srnamespace": "0",
        "srlimit": str(limit), "srprop": "snippet|wordcount", "srinfo": "totalhits", "format": "json",
        "formatversion": "2", "utf8": "1",
    }
    if site_info:
        params["meta"] = "siteinfo"
        params["siprop"] = "general|statistics"
    return params


def _stem(word: str) -> str:
    """A light English suffix cut so ``checkpoints``, ``copies``, ``locking`` also match their other forms."""
    if len(word) < 5 or not word.isascii():
        return word
    for suffix, keep in (("ies", "i"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and not word.endswith("ss") and len(word) - len(suffix) >= 4:
            return word[: len(word) - len(suffix)] + keep
    return word


def content_terms(query: str) -> tuple[str, ...]:
    """The query's topic words, lower-cased, stop words and repeats out, at most :data:`MAX_TERMS`.

    >>> content_terms("How does a checkpoint copy pages back into the database?")
    ('checkpoint', 'copy', 'pages', 'back', 'database')
    """
    seen: dict[str, None] = {}
    for match in _WORD.finditer(query.lower()):
        word = match.group()
        if word in _STOP or (len(word) < 2 and word.isascii()) or word.strip("_") == "":
            continue
        seen.setdefault(word, None)
    return tuple(seen)[:MAX_TERMS]


def term_query(term: str) -> str:
    """The search text for one word: its light stem with a ``*`` prefix match (``checkpoints`` → ``checkpoint*``)."""
    stem = _stem(term)
    return f"{stem}*" if len(stem) >= 4 and stem.isascii() else term


def parse_hits(payload: Any) -> tuple[list[WikiHit], int] | None:
    """``(hits, totalhits)`` from a ``list=search`` answer, or ``None`` when it has another shape."""
    query = payload.get("query") if isinstance(payload, dict) else None
    hits = query.get("search") if isinstance(query, dict) else None
    if not isinstance(hits, list):
        return None
    found: list[WikiHit] = []
    for hit in hits:
        if isinstance(hit, dict) and isinstance(hit.get("title"), str) and hit["title"].strip():
            snippet = hit.get("snippet")
            words = hit.get("wordcount")
            found.append(WikiHit(hit["title"], snippet if isinstance(snippet, str) else "",
                                 words if isinstance(words, int) and not isinstance(words, bool) and words >= 0
                                 else None))
    info = query.get("searchinfo") if isinstance(query, dict) else None
    total = info.get("totalhits") if isinstance(info, dict) else None
    total_hits = total if isinstance(total, int) and not isinstance(total, bool) and total >= 0 else len(found)
    return found, max(total_hits, len(found))


def rank_relaxed(answers: Sequence[tuple[list[WikiHit], int]], pages: int | None) -> list[WikiHit]:
    """Pages named by the per-word answers, best first: summed word rarity, then first appearance.

    ``answers[i]`` is word *i*'s ``(hits, totalhits)``; ``pages`` the wiki's article count
    (when unknown, the largest count seen stands in). A page's snippet is the one from its
    rarest word's answer, where the marked words say most about why it matched.
    """
    total = max([pages or 0, *(count for _, count in answers), 1])
    score: dict[str, float] = {}
    first: dict[str, int] = {}
    snippet: dict[str, tuple[float, WikiHit]] = {}
    order = 0
    for hits, count in answers:
        weight = math.log(1 + total / max(count, 1))
        for hit in hits:
            if hit.title not in first:
                first[hit.title] = order
                order += 1
            score[hit.title] = score.get(hit.title, 0.0) + weight
            if hit.title not in snippet or weight > snippet[hit.title][0]:
                snippet[hit.title] = (weight, hit)
    ranked = sorted(score, key=lambda title: (-score[title], first[title]))
    return [snippet[title][1] for title in ranked]


def ranks_by_relevance(general: Mapping[str, Any] | None) -> bool:
    """Whether the wiki's search answers best first: every backend but MediaWiki's SQLite one, which has no
    ``ORDER BY`` (its hits come in title order). Unknown site info counts as ranked."""
    return not (general is not None and general.get("dbtype") == "sqlite")


def _matches(term: str, title_words: set[str]) -> bool:
    stem = _stem(term)
    return any(word.startswith(stem) or term.startswith(_stem(word)) for word in title_words if len(word) > 1)


def rank_unranked(full: Sequence[WikiHit], terms: Sequence[str], answers: Sequence[tuple[list[WikiHit], int]],
                  pages: int | None) -> list[WikiHit]:
    """Pages of a backend that does not rank, best first: BM25 with what the answers tell.

    ``full`` are the hits for the whole query (they hold every word), ``answers[i]`` is
    ``terms[i]``'s ``(hits, totalhits)``. A page scores, for each query word it holds,
    ``idf · (k1 + 1) / (1 + k1 · (1 - b + b · words / average words))`` (a term frequency of 1:
    the wiki does not say more), plus ``idf`` when the word is in its title; ties keep first
    appearance. The snippet kept is the whole query's, else the rarest word's.
    """
    total = max([pages or 0, *(count for _, count in answers), 1])
    weights = [math.log(1 + total / max(count, 1)) for _, count in answers]
    held: dict[str, set[int]] = {}
    shown: dict[str, tuple[float, WikiHit]] = {}
    for hit in full:
        held.setdefault(hit.title, set()).update(range(len(terms)))
        shown.setdefault(hit.title, (math.inf, hit))
    for index, (hits, _) in enumerate(answers):
        for hit in hits:
            held.setdefault(hit.title, set()).add(index)
            if hit.title not in shown or weights[index] > shown[hit.title][0]:
                shown[hit.title] = (weights[index], hit)
    lengths = [hit.words for _, hit in shown.values() if hit.words]
    average = sum(lengths) / len(lengths) if lengths else 0.0

    def score(title: str) -> float:
        words = shown[title][1].words
        ratio = words / average if words and average else 1.0
        body = (_K1 + 1) / (1 + _K1 * (1 - _B + _B * ratio))
        title_words = {match.group() for match in _WORD.finditer(title.lower())}
        return sum(weights[index] * (body + _matches(terms[index], title_words))
                   for index in held[title] if index < len(weights))

    ranked = sorted(enumerate(shown), key=lambda item: (-score(item[1]), item[0]))
    return [shown[title][1] for _, title in ranked]


def _encode_title(title: str) -> str:
    return quote(title.replace(" ", "_"), safe=_TITLE_SAFE)


def page_url(api_url: str, general: Mapping[str, Any] | None, title: str) -> str:
    """The page's address: the wiki's ``server`` + ``articlepath`` when site info came, else a guess.

    Without site info, ``…/w/api.php`` means Wikipedia's layout (``…/wiki/Title``) and any other
    endpoint gets ``index.php?title=Title`` next to it, which every MediaWiki answers.
    """
    encoded = _encode_title(title)
    server = general.get("server") if general is not None else None
    article_path = general.get("articlepath") if general is not None else None
    if isinstance(server, str) and isinstance(article_path, str) and "$1" in article_path \
            and article_path.startswith("/"):
        return urljoin(api_url, server).rstrip("/") + article_path.replace("$1", encoded)
    if api_url.endswith("/w/api.php"):
        return f"{api_url[: -len('/w/api.php')]}/wiki/{encoded}"
    return urljoin(api_url, f"index.php?title={encoded}")
