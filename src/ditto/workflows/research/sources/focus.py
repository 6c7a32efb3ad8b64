"""Reading closely the document a question names, or the best one found (the documents source's last search).

A research query finds documents, and shows of each the few passages its words rank
first. When the question names a document that a query found — ``useradd`` for
"useradd exited with code 9. What went wrong?" (``man-useradd.txt``), ``resolv.conf`` for
"How many nameservers will the resolver use from resolv.conf?" — the answer is nearly
always in that document, but often in a passage the query's words did not rank among
the first: the retriever found the right page and showed the wrong part of it. So the
documents source ends with one more search, by the whole question, inside the named
documents only (a ``path`` filter): what a reader does after opening the page.

A document is *named* when a word of the question (or its singular) is its file name, or a part of it between
``-`` and ``_`` (``useradd`` names ``man-useradd.txt``, ``ssh-keygen`` names ``man-ssh-keygen.txt``,
``hardlinks`` names ``man-hardlink.txt``, ``apt.conf.d`` names ``man-apt.conf.txt``; ``inotify-based``, naming
none, names what ``inotify`` names). An
English word (``date``, ``sort``, ``man``) names only the first document found, the retriever's best: "how is
the list kept up to *date*?" is not about ``date.txt`` because a query found it last; unless the asker writes it as
code ("I ran plain `ss`") or as the file of a path ("a DEBIAN/symbols file"); in a question written in
Chinese (or Japanese, Korean) every word in Latin letters is a name ("fold 怎样避免…"). Numbers name nothing
(SciFact's abstracts are ``12345.txt``). At most :data:`FOCUS_DOCUMENTS` documents. A question that names none
of the documents found is read in the first found, the retriever's best (:func:`documents_to_read`); a claim
to check that names none is not, since it wants the breadth of several documents more than the depth of one.

Which of a named document's passages are shown: the search returns the document's first
:data:`FOCUS_POOL` passages by the retriever's score, and :func:`closely_read` keeps the first
:data:`FOCUS_PASSAGES` by a reader's order (the built-in model's sentence scores,
:func:`~ditto.worker.infer.extractive.reading_order`). A retriever scores a passage as a whole, and a man
page's option entry that answers ("-n, --iterations=N  overwrite N times instead of the default (3)") often
ranks third or fifth within its page; read sentence by sentence it is first.

Example::

    named_documents("useradd exited with code 9", ["/docs/man-useradd.txt", "/docs/man-curl.txt"])
    # ['/docs/man-useradd.txt']
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Final

from ....text.analysis import has_cjk
from ....text.files import DOCUMENT_SUFFIXES, HTML_SUFFIXES, without_compression
from ....text.lexicon import is_english_word
from ....worker.infer.extractive import asks_a_question, reading_order
from ....worker.infer.tasks import ExcerptPassage

__all__ = ["FOCUS_DOCUMENTS", "FOCUS_PASSAGES", "FOCUS_PASSAGES_CJK", "FOCUS_POOL", "ReadPassage", "closely_read",
           "documents_to_read", "focus_text", "named_documents"]

#: The named documents read closely (the first found).
FOCUS_DOCUMENTS: Final = 2
#: Passages shown of each: the real-documents questions (docs/benchmarks.md) put the answer passage among the
#: first two of its document for most questions whose document was found and answer passage was not shown, and
#: among the first three for 15 more of 341 on the ten studied sets (four: 15 more again). In full runs the third
#: answered 5 more questions and let 2 unanswerable ones through. A fourth, on the 24 studied sets of session 31:
#: 11 more English questions answered and 4 unanswerable ones through; for Chinese questions, whose passages
#: match the question character by character, 3 fewer answered, so they keep three (:data:`FOCUS_PASSAGES_CJK`).
FOCUS_PASSAGES: Final = 4
#: Passages shown of each named document for a question written in Chinese (Japanese, Korean).
FOCUS_PASSAGES_CJK: Final = 3
#: Passages of each named document the retriever returns for the reader to order (a man page is dozens).
FOCUS_POOL: Final = 30
#: The longest question searched as it is (a longer one is cut after its last whole word that fits).
MAX_FOCUS_CHARS: Final = 1000

#: A word as a file is named: letters first, then letters, digits, ``.``, ``+``, ``-``, ``_`` (``resolv.conf``,
#: ``ssh-keygen``, ``login.defs``), ending in a letter or digit.
_WORD = re.compile(r"[A-Za-z][\w.+-]*[A-Za-z0-9]")
_PART = re.compile(r"[-_ ]+")
_HYPHEN = re.compile(r"-+")
#: What a question writes as code or as a path: a run between backquotes; a path's last part (its file); a file's
#: kind written as its suffix (".changes" of "A .changes file has …", whose format deb-changes(5) describes).
_MARKED = re.compile(r"`([^`\n]{1,200})`|((?:[\w.+-]*/)+[\w.+-]+)|(?<![\w./])\.([A-Za-z][\w+-]*[A-Za-z0-9])\b")
#: What a document's file name ends in that is no part of its name.
_NAME_SUFFIXES: Final = DOCUMENT_SUFFIXES | HTML_SUFFIXES


def _names(path: str) -> set[str]:
    """The words a file's name answers to: its stem without the document suffix (``fts5`` of ``fts5.html``), its
    parts between ``-``/``_``,
    and each run of parts that ends the stem, as written (``ssh-keygen`` of ``man-ssh-keygen``, ``pam_unix`` of
    ``man-pam_unix``), lower case."""
    stem = without_compression(PurePath(path).name.lower())
    for suffix in _NAME_SUFFIXES:
        if stem.endswith(suffix) and len(stem) > len(suffix):
            stem = stem[: -len(suffix)]
            break
    parts = [part for part in _PART.split(stem) if part]
    names = {stem, *parts, *(stem[cut.end():] for cut in _PART.finditer(stem))}
    return {word for word in names if len(word) >= 2 and any(char.isalpha() for char in word)}


def _forms(word: str) -> tuple[str, ...]:
    """``word`` and, for a plural, its singular: "hardlinks" names ``man-hardlink.txt``, "signals" ``signal``."""
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss") and word[-2].isalpha():
        return (word, word[:-1], word[:-2]) if word.endswith("es") else (word, word[:-1])
    return (word,)


def _parts(word: str, names: set[str]) -> tuple[str, ...]:
    """``word``; a drop-in folder's file (``apt.conf.d`` names ``apt.conf``, ``sysctl.d`` names ``sysctl``); and when
    it is hyphenated and no document of ``names`` is called so, its parts."""
    if word.endswith(".d") and len(word) > 3:
        return (word, *_parts(word[:-2], names))
    if "-" not in word or word in names:
        return (word,)
    return (word, *(part for part in _HYPHEN.split(word) if part))


def named_documents(question: str, paths: Sequence[str]) -> list[str]:
    """The ``paths`` (in the retriever's order, distinct) whose file name a word of ``question`` names, at most
    :data:`FOCUS_DOCUMENTS`; see the module docs for the English-word rule."""
    written = [word.lower() for word in _WORD.findall(question)]
    # A hyphenated word that names no document names what its parts name: "my inotify-based watcher" is about
    # inotify (and "ssh-keygen" only about ssh-keygen when its page was found).
    every = set().union(*(_names(path) for path in paths)) if paths else set()
    words = {form for word in written for part in _parts(word, every) for form in _forms(part)}
    # A question in Chinese (Japanese, Korean) writes only names in Latin letters: "fold 怎样…" is about fold.
    latin_names = has_cjk(question)
    # A word written as code (`ss`), as a path's file (DEBIAN/symbols) or as a file's suffix (a .changes file) is a
    # name, whatever English word it is too.
    marked = {form for found in _MARKED.finditer(question)
              for word in _WORD.findall(found.group(1) or found.group(3) or found.group(2).rsplit("/", 1)[-1])
              for part in _parts(word.lower(), every) for form in _forms(part)}
    named: list[str] = []
    for position, path in enumerate(dict.fromkeys(paths)):
        hits = words & _names(path)
        if any(latin_names or position == 0 or word in marked or not (word.isalpha() and is_english_word(word))
               for word in hits):
            named.append(path)
            if len(named) >= FOCUS_DOCUMENTS:
                break
    return named


@dataclass(frozen=True, slots=True)
class ReadPassage:
    """A passage of the close reading's search, as :func:`closely_read` needs it."""

    document: str
    text: str
    context: str | None = None


def closely_read(question: str, pool: Sequence[ReadPassage]) -> list[int]:
    """The indices of the ``pool`` passages to show (``pool`` in the retriever's order, best first): of each
    document, the first :data:`FOCUS_PASSAGES` (:data:`FOCUS_PASSAGES_CJK` for a question in Chinese) in a reader's
    order; documents in the order of their first passage."""
    count = FOCUS_PASSAGES_CJK if has_cjk(question) else FOCUS_PASSAGES
    documents: dict[str, list[int]] = {}
    for index, passage in enumerate(pool):
        documents.setdefault(passage.document, []).append(index)
    shown: list[int] = []
    for document, indices in documents.items():
        passages = [ExcerptPassage(source_id=f"p{position}", text=pool[index].text, context=pool[index].context,
                                   document=document) for position, index in enumerate(indices)]
        shown += [indices[position] for position in reading_order(question, passages)[:count]]
    return shown


def documents_to_read(question: str, paths: Sequence[str]) -> list[str]:
    """The documents among ``paths`` (found, in the retriever's order) to read closely for ``question``: those it
    names (:func:`named_documents`); for a question that names none, the first found; for a claim to check that
    names none, none (the real-documents questions: four more answered with the first document read, nothing
    lost; SciFact claims: a relevant abstract cited less often, 0.773 → 0.760)."""
    named = named_documents(question, paths)
    if named or not asks_a_question(question):
        return named
    return list(paths[:1])


def focus_text(question: str) -> str:
    """The question as the close reading's search text, within :data:`MAX_FOCUS_CHARS` (cut at a space)."""
    text = " ".join(question.split())
    if len(text) <= MAX_FOCUS_CHARS:
        return text
    cut = text[: MAX_FOCUS_CHARS + 1].rsplit(" ", 1)[0]
    return cut or text[:MAX_FOCUS_CHARS]
