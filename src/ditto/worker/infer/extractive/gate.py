"""The relevance gate (INF-3, WF-7): whether a passage shown is about the question at all.

A passage passes when it holds enough of the question's meaningful terms (weighted, :data:`RELEVANCE_THRESHOLD`)
and every name the question is about (a program, a file, an acronym, a page's title), or, in English, when a
sentence is semantically close (:data:`SEMANTIC_THRESHOLD`). One shared word ("cups", "point") is not enough:
``no-evidence`` is the honest answer when nothing shown is about the question."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final
from urllib.parse import unquote, urlsplit

from ....text.analysis import has_cjk
from ....text.files import without_compression
from ....text.lexicon import is_english_word, reads_as_english
from ....text.passages import HEADING_SEPARATOR
from ..tasks import (
    ExcerptPassage,
    ExcerptTask,
)
from .kinds import _CALL, _NAME_SECTION, _entry_of_another, _section, _tag_terms
from .terms import (
    _CJK_SPLIT,
    _CJK_STOP_SPLIT,
    _CLAUSE,
    _GATE_STOPWORDS,
    CJK_GATE_STOPWORDS,
    CJK_QUESTION_WORDS,
    CJK_SYNONYMS,
    _analyze_with_digits,
    analyze,
    asked_sentences,
    asks_a_question,
)

__all__ = [
    "CJK_NAMED_PAGE_SHARE", "MIN_MATCHED_TERMS", "RELEVANCE_THRESHOLD", "SEMANTIC_THRESHOLD", "STRONG_MATCH_SHARE",
    "STRONG_MATCH_TERMS", "SUBJECT_QUESTION_TERMS", "Origin", "Relevance", "gate_terms", "page_titles",
    "passage_relevance", "subject_terms", "unknown_names"
]
#: The relevance gate: a passage is evidence only when it holds at least this IDF-weighted share of
#: the question's content terms (chosen on the training questions of bench/research_realdocs.py).
RELEVANCE_THRESHOLD: Final = 0.5
#: ... and at least this many distinct ones (or all of them, when the question has fewer).
MIN_MATCHED_TERMS: Final = 2
#: ... or at least this many distinct ones and :data:`STRONG_MATCH_SHARE` of the threshold (chosen on the
#: same training questions and on SciFact train, whose long claims share their core with the abstract).
STRONG_MATCH_TERMS: Final = 3
STRONG_MATCH_SHARE: Final = 0.4
#: A question of at most this many content terms is *about* the names it writes (see :func:`subject_terms`); in
#: a longer one — a scientific claim — a name is one detail among many, often written otherwise in the
#: passage that answers it ("IL-6" for "interleukin 6"). SciFact train (809 claims, BM25) cites a relevant
#: abstract for 0.670 without the rule, 0.670 at 4, 0.667 at 5, 0.665 at 6, and 0.550-odd applied to every
#: question (no-evidence 0.17); 5 is the smallest that holds "the maximum file size on a FAT32 file system".
SUBJECT_QUESTION_TERMS: Final = 5
#: With embeddings (see :mod:`ditto.worker.infer.providers.builtin`), a passage whose best sentence reaches
#: this cosine with the question is about it even when it shares too few of its words for the lexical
#: gate: dense retrieval finds abstracts that say "IL-6" for "interleukin 6". Chosen on SciFact train
#: (809 claims, hybrid: cites 0.700 without, 0.723 at 0.6, 0.742 at 0.45, 0.743 at 0.4) and the
#: real-documents train questions (every English unanswerable one stays no-evidence down to 0.4; two
#: leak at 0.35). Only for English text: the local model is English-only, and to it any two Chinese
#: sentences look alike (at 0.6 two of three Chinese unanswerable questions leaked).
SEMANTIC_THRESHOLD: Final = 0.45
#: A question written in Chinese that names a program in Latin letters is about that program's manual page: a passage
#: of it passes with this share of the question's weight (character pairs match paraphrase poorly). The studied
#: real-documents sets, replayed: 0.2 answered 2 more Chinese questions and quoted no unanswerable one; 0.1 answered 6
#: more and quoted 4; 0.01, 8 and 5.
CJK_NAMED_PAGE_SHARE: Final = 0.2
_NAME_WORD = re.compile(r"(?<![\w-])\w+(?:[.+#]\w+)*")
#: A manual page's title in its header: ``WGET(1)``, ``SSH-KEYGEN(1)``, ``XARGS(1L)``.
_PAGE_TITLE = re.compile(r"(?<![\w-])([A-Za-z][\w.+-]*)\(\d[a-z]*\)")
#: A phrase that opens a question and sets its scene: "On Debian,", "In a Docker container,".
_FRONTED = re.compile(r"\s*(?:on|in|under|for|with|from|at|inside|within)\s+[^,?，？]{1,80}[,，]", re.IGNORECASE)
#: Units written after a number ("2 GB of RAM", "500 ms"): with it, a quantity, not a name.
_UNITS: Final = frozenset({"kb", "mb", "gb", "tb", "pb", "kib", "mib", "gib", "tib", "ms", "us", "ns", "hz", "khz",
                           "mhz", "ghz", "kbps", "mbps", "gbps"})
_AFTER_NUMBER = re.compile(r"\d\s*$")
#: The shortest name taken for a word cut short ("crypto", "config"): shorter ones open too many words.
_ABBREVIATION_CHARS: Final = 5
#: A number with its unit ("900k", "10MB", "2.5s"): a quantity, not a name.
_QUANTITY = re.compile(r"\d+(?:\.\d+)?[^\W\d_]{1,3}")


@dataclass(frozen=True, slots=True)
class Relevance:
    """How much of the question a passage is about: the IDF-weighted share of the question's
    content terms it contains (``coverage``, 0–1) and how many distinct ones (``matched``)."""

    coverage: float
    matched: int
    terms: int
    #: A name the question is about (see :func:`subject_terms`) that no passage shown holds: nothing shown
    #: is about that subject, whatever else it shares with the question.
    subject_missing: bool = False
    #: The question is written in a CJK script and names a command-line option, and the passage holds every
    #: word the question writes in Latin letters (the command and its options): that is what it asks about; or
    #: the passage is of the manual page of the program it names and holds :data:`CJK_NAMED_PAGE_SHARE` of it.
    names_held: bool = False

    def passes(self, threshold: float = RELEVANCE_THRESHOLD, min_terms: int = MIN_MATCHED_TERMS) -> bool:
        """Whether the passage is about the question: ``threshold`` of its weight with at least
        ``min_terms`` distinct terms (one shared word is never enough when the question has two or
        more), or :data:`STRONG_MATCH_TERMS` distinct terms and :data:`STRONG_MATCH_SHARE` of the
        threshold (a long question — a scientific claim — is answered by a passage that shares its
        core, not every incidental word; three distinct shared words are rarely chance)."""
        if self.terms == 0 or self.subject_missing:
            return False
        if self.names_held:
            return True
        if self.coverage >= threshold and self.matched >= min(min_terms, self.terms):
            return True
        return self.matched >= STRONG_MATCH_TERMS and self.coverage >= STRONG_MATCH_SHARE * threshold


def gate_terms(text: str, *, question: bool = False) -> list[str]:
    """The terms the relevance gate counts: the model's analysed terms for non-CJK text, and for
    CJK text character bigrams (runs split at function characters and question words, a lone
    character kept), because single characters say too little in Chinese ("杯" is in "杯子"); a word Chinese manuals
    write two ways is counted as one (:data:`~.terms.CJK_SYNONYMS`: 缺省 is 默认)."""
    terms: list[str] = []
    for index, part in enumerate(_CJK_SPLIT.split(text)):
        if not part:
            continue
        if index % 2 == 0:
            # A digit standing alone is what "exit code 9" asks about (see :func:`excerpt_candidates`).
            found = _analyze_with_digits(part)
            terms.extend(found)
            if not question:
                # A name joined by an underscore or a dot holds its parts: a passage about "pam_unix" is about the
                # "Unix PAM module" a question names.
                terms.extend(piece for term in found if "_" in term or "." in term
                             for piece in analyze(term.replace("_", " ").replace(".", " ")) if piece not in found)
            continue
        for written, word in CJK_SYNONYMS:
            part = part.replace(written, word)
        for word in CJK_QUESTION_WORDS:
            part = part.replace(word, " ")
        if question:
            for word in CJK_GATE_STOPWORDS:
                part = part.replace(word, " ")
        for chunk in _CJK_STOP_SPLIT.split(part):
            chunk = chunk.strip()
            if len(chunk) == 1:
                terms.append(chunk)
            terms.extend(chunk[i:i + 2] for i in range(len(chunk) - 1))
    return terms


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a passage shown comes from, as far as the names a question is about go."""

    #: The document (file, web page, record) it belongs to: passages with the same one are read together.
    document: str
    #: The document's own name (a file's name, a page's last URL segment): ``cp.txt`` is about ``cp``.
    label: str = ""
    #: The names of the folders a file sits in (``/usr/share/doc/nodejs/api``): they name the collection it belongs
    #: to, which every file in it is about ("my Node process" is Node.js's manual's subject, which its pages on
    #: sockets rarely write).
    folders: str = ""
    #: A web page's or record's passage: it comes without headings and with at most one other of its page, so
    #: a name anywhere in its document's passages shown counts.
    wide: bool = False
    #: What the document says it is about, when shown: a man page's NAME line ("rotatelogs - Piped logging program
    #: to rotate Apache logs"), which holds the names the whole page is about.
    about: str = ""
    #: The passage's heading path in its document: the passages shown of one section are read together for the
    #: names a question is about, as a reader reads an entry with its neighbours (chgrp's "only the last one takes
    #: effect" follows the entries of -H, -L and -P; resolv.conf's timeout entry says "resolver", not "DNS").
    #: ``None`` for a passage without headings: it must hold the names itself.
    section: str | None = None
    #: The passage is the entry of an option or setting the question does not write (see
    #: :func:`~.kinds._entry_of_another`): its section's names are not its own.
    other_entry: bool = False
    #: The terms of its manual page's title (``LSCPU(1)`` → ``lscpu``): a question that names the page is about it,
    #: and the other names it writes set the scene (see :func:`passage_relevance`).
    titles: frozenset[str] = frozenset()


def passage_relevance(question: str, passages: Sequence[str], origins: Sequence[Origin] | None = None,
                      titles: Collection[str] = ()) -> list[Relevance]:
    """The :class:`Relevance` of each passage to ``question``.

    A term's weight is its smoothed IDF among ``passages``, ``ln(1 + (N + 1) / (max(df, 1) + 1))``: a
    term one passage (or none) contains weighs most, one every passage contains least (it is what
    the retriever matched on); a term no passage contains weighs like a rare one, not more, so one
    generic word ("the *rules* for backups") cannot veto passages that are about the rest. Words
    that only say what kind of answer is wanted (:data:`GATE_STOPWORDS`: "how *often*", "how
    *long*") are not counted. A question of several
    parts ("When does the export run, how long is it kept and who owns it?") is as well answered by
    a passage about one part: the coverage is the best of the whole question and of each clause
    with at least :data:`MIN_MATCHED_TERMS` terms; ``matched`` counts the whole question's terms.

    A question (see :func:`asks_a_question`) is about its names (:func:`subject_terms`, the words of
    ``titles``, the manual pages shown, and :func:`unknown_names`, words in no English word list): a passage
    lacking one in its text, its document's name, the passages shown of its section (unless it is the entry of an
    option or setting the question does not write) or — for a scene-setting name, or a passage of a web page or
    record — its document's passages shown (``origins``, one per passage; each passage is a document of its
    own without them) is ``subject_missing``. A passage holds a term it writes another way (:func:`_other_forms`:
    "pty" for "ptys", "cryptographic" for "crypto").
    """
    wanted = _gate_question_terms(question)
    clauses = [terms for terms in map(_gate_question_terms, _CLAUSE.split(question))
               if len(terms) >= MIN_MATCHED_TERMS and len(terms) < len(wanted)]
    asks = asks_a_question(question)
    unknown = unknown_names(question) if asks else []
    # A question is about its names: a passage counts only when it holds them (with its headings and its
    # document's name). A name in a fronted phrase ("On Debian, how is …") only sets the scene: the passage's
    # document (all its passages shown) holding it is enough. So it is for a passage of a web page or a record
    # (``Origin.wide``), which comes without headings and with at most one other passage of its page.
    where = list(origins) if origins is not None else [Origin(str(index)) for index in range(len(passages))]
    present = [set(gate_terms(text)) for text in passages]
    named = [terms | set(gate_terms(origin.label)) | set(gate_terms(origin.about))
             | _folder_names(origin.folders, wanted) for terms, origin in zip(present, where, strict=True)]
    forms = _other_forms(wanted, unknown, set().union(*named) if named else set()) | _numbered_forms(wanted, passages)
    if forms:  # a passage that writes a question's term another way holds it
        present = [terms | {term for term, written in forms.items() if not written.isdisjoint(terms)}
                   for terms in present]
        named = [terms | own for terms, own in zip(named, present, strict=True)]
    everywhere = set().union(*named) if named else set()
    total = len(passages)
    weights = {}
    for term in wanted:
        frequency = sum(1 for terms in present if term in terms)
        weights[term] = math.log(1 + (total + 1) / (max(frequency, 1) + 1))
    names = _names(question, wanted, titles)
    either = _alternatives(question)
    missing = (len(wanted) <= SUBJECT_QUESTION_TERMS or asks) and any(
        either.get(term, {term}).isdisjoint(everywhere) for term in names)
    asking = _asking_part(question)
    asked_names = _names(asking, wanted, titles)
    scenery = {term for term in names if term not in asked_names}
    latin = _latin_names(question)
    fronted = _FRONTED.match(question)
    scene = set(subject_terms(fronted.group())) if fronted else set()
    # A question whose asking sentence names nothing ("pclose() gave me an exit status of 127. Did the shell fail to
    # start, or did my command fail?") writes its names only to set the scene: the passage's page holding them is
    # enough, as for a fronted phrase (popen(3)'s BUGS paragraph answers without writing pclose).
    if asks and names and not asked_names and asking.strip() != " ".join(question.split()):
        scene |= set(names)
    held: dict[str, set[str]] = {}
    sections: dict[tuple[str, str], set[str]] = {}
    for origin, terms in zip(where, named, strict=True):
        held.setdefault(origin.document, set()).update(terms)
        if origin.section is not None:
            sections.setdefault((origin.document, origin.section), set()).update(terms)
    result = []
    for origin, terms, named_here in zip(where, present, named, strict=True):
        own = named_here if origin.section is None or origin.other_entry \
            else named_here | sections[(origin.document, origin.section)]
        hits = [term for term in wanted if term in terms]
        coverage = max((_covered(part, terms, weights) for part in (wanted, *clauses)), default=0.0)
        # A passage of the manual page the question names is not held to the names of the question's scene: the
        # question is about the page's program, and what the asker did around it is their own ("I ran unshare
        # --pid=/run/ns/pid1 …", "If I pipe lscpu into awk, …").
        page = [term for term in names if term in origin.titles and term in titles]
        # So is a passage that holds every name the question asks about: "I want to call mbind() directly. Which
        # package gives me the numaif.h header?" asks about numaif.h, and the page that names its package need not
        # write mbind.
        answers_asked = bool(asked_names) and len(asked_names) < len(names) and all(
            not either.get(term, {term}).isdisjoint(own) for term in asked_names)
        relaxed = bool(page) or answers_asked
        required = [term for term in names if term not in scenery] if relaxed else names
        lacks = (missing and not relaxed) or (asks and any(either.get(term, {term}).isdisjoint(
            held[origin.document] if origin.wide or term in scene else own) for term in required))
        # A question in Chinese shares few character pairs with the page that answers it in other words (合并 for
        # 替换为一个): on the page of the program it names in Latin letters, a fifth of its weight is enough.
        named_page = has_cjk(question) and bool(page) and coverage >= CJK_NAMED_PAGE_SHARE
        result.append(Relevance(coverage, len(hits), len(wanted), lacks, (bool(latin) and latin <= own) or named_page))
    return result


#: A folder's name may write the collection's name with a few letters more: ``nodejs`` (Node), ``sqlite3`` (SQLite).
_FOLDER_SUFFIX_CHARS: Final = 2


@functools.lru_cache(maxsize=256)
def _folder_terms(folders: str) -> frozenset[str]:
    """The gate terms of a path's folders: every passage of a folder shares them, and a task shows several."""
    return frozenset(gate_terms(folders))


def _folder_names(folders: str, wanted: Collection[str]) -> set[str]:
    """The gate terms of the folders a file sits in, with each question term that one of them opens with at most
    :data:`_FOLDER_SUFFIX_CHARS` more ("node" for the folder ``nodejs``)."""
    if not folders:
        return set()
    terms = set(_folder_terms(folders))
    terms.update(term for term in wanted if len(term) >= 3 and any(
        other.startswith(term) and len(other) - len(term) <= _FOLDER_SUFFIX_CHARS for other in terms))
    return terms


#: Two words joined by "or" ("a Node HTTP or TCP client", "On Linux or macOS"): either is what the question asks about.
_EITHER = re.compile(r"(?<![\w.+#-])([\w.+#-]+),?\s+or\s+(?:else\s+)?([\w.+#-]+)", re.IGNORECASE)


def _alternatives(question: str) -> dict[str, frozenset[str]]:
    """Each gate term of a word ``question`` joins to another by "or", with the terms of all the words so joined:
    a passage about a "Node HTTP or TCP client" that writes HTTP holds what was asked. Chains join too ("HTTP or
    TCP or UDP"); a list written with commas ("grep, egrep or fgrep") joins only its last two."""
    groups: dict[str, set[str]] = {}
    position = 0
    while (match := _EITHER.search(question, position)) is not None:
        position = match.start(2)  # the right word may open the next pair ("HTTP or TCP or UDP")
        left, right = gate_terms(match.group(1), question=True), gate_terms(match.group(2), question=True)
        if not left or not right:
            continue
        group = set(left) | set(right)
        for term in list(group):
            group |= groups.get(term, set())
        for term in group:
            groups[term] = group
    return {term: frozenset(group) for term, group in groups.items()}


def _names(question: str, wanted: Collection[str], titles: Collection[str]) -> list[str]:
    """The gate terms of the names ``question`` is about: :func:`subject_terms`, the manual pages' ``titles`` among
    its ``wanted`` terms, and :func:`unknown_names` (a question's only)."""
    names = subject_terms(question)
    names += [term for term in dict.fromkeys(gate_terms(question, question=True))
              if term in titles and term in wanted and term not in names]
    if asks_a_question(question):
        names += [term for term in unknown_names(question) if term not in names]
    return names


#: A clause that opens a question and sets its scene: "If I pipe lscpu into awk, …", "如果……，", and in Chinese
#: what comes before 我想知道 or 请问 ("服务器的 /tmp 很小，我想知道 msmtp 什么情况下 …").
_SCENE_CLAUSE = re.compile(r"\s*(?:(?:if|when|whenever|while|after|before|once|since)\b[^,?]*,"
                           r"|(?:如果|假如|要是|当)[^，？?]*，"
                           r"|[^？?]*?，\s*(?=我?想(?:知道|问)|请问|不知道))", re.IGNORECASE)


#: What a question compares its subject with: "What's wrong with mkdir lost+found?", "rather than plain sed".
_COMPARED = re.compile(r"\b(?:instead\s+of|rather\s+than|compared\s+(?:to|with)|versus|vs\.?|wrong\s+with"
                       r"|better\s+than)\s+(?:just\s+|plain\s+|an?\s+|the\s+)?[^\s?,;]+(?:\s+[^\s?,;]+)?",
                       re.IGNORECASE)


def _asking_part(question: str) -> str:
    """What ``question`` asks, without its scene: its sentences that end in a question mark (all of it when none
    does), each without an opening conditional clause and without what it compares its subject with. "My wrapper
    script runs pldd on a PID and checks $?. Which exit code means …?" asks about pldd's exit codes; the PID is the
    asker's. "Why is there a special mklost+found tool? What's wrong with mkdir lost+found?" asks about
    mklost+found, whose page need not write mkdir."""
    return " ".join(_COMPARED.sub(" ", sentence[scene.end():] if (scene := _SCENE_CLAUSE.match(sentence)) else sentence)
                    for sentence in asked_sentences(question))


def _other_forms(wanted: Sequence[str], unknown: Collection[str], shown: Collection[str]) -> dict[str, set[str]]:
    """The question's terms that passages shown write another way, each with the terms they write it as: a name
    in the plural ("ptys") as its singular ("pty", where the page is pty(7)), a name cut short (``unknown``,
    :func:`unknown_names`: "crypto") as the words it opens ("cryptographic"), a name with its version number
    ("apache2" for "apache"). The analyser stems English plurals itself; a name in no word list keeps its "s", and
    an abbreviation is in no word list, so the question would otherwise ask about words no page holds."""
    forms: dict[str, set[str]] = {}
    for term in wanted:
        if len(term) <= 3:
            continue
        if term.endswith("s"):
            found = gate_terms(term[:-1])  # as the analyser writes the singular: "pty" is "pti"
            if len(found) == 1 and found[0] in shown:
                forms[term] = {found[0]}
                continue
        if term in unknown and len(term) >= _ABBREVIATION_CHARS:
            longer = {other for other in shown if other.startswith(term) and other != term and other.isalpha()}
            if longer:
                forms[term] = longer
    # A name with its version: "apache" is written "apache2" in Debian's README of it, "python" "python3".
    asked = set(wanted)
    for other in shown:
        name = other.rstrip("0123456789")
        if len(name) >= 3 and name != other and name.isalpha():
            found = gate_terms(name)
            if len(found) == 1 and found[0] in asked:
                forms.setdefault(found[0], set()).add(other)
    return forms


def _numbered_forms(wanted: Sequence[str], passages: Sequence[str]) -> dict[str, set[str]]:
    """The question's names with a number ("ttys0") that a passage writes as a family, the name without its number
    and a wildcard after it ("/dev/ttyS*", "ttySN", "sdX"), each with that name: ``/dev/ttyS0`` is one of the
    ``/dev/ttyS*`` a page speaks of. A page that writes only the bare word ("--pid" for a file named "pid1") does not
    hold it."""
    forms: dict[str, set[str]] = {}
    for term in wanted:
        name = term.rstrip("0123456789")
        if name == term or len(name) < 3 or not name.isalpha():
            continue
        family = re.compile(rf"(?<![\w-]){re.escape(name)}(?:\*|\[0-9\]|[NX]\b|<n>)", re.IGNORECASE)
        if any(family.search(text) for text in passages):
            forms[term] = {name}
    return forms


def _latin_names(question: str) -> set[str]:
    """The gate terms a CJK question writes in Latin letters (numbers aside) when they include a command-line
    option: "xargs 的 -P 参数如果设成 0 是什么效果？" asks about ``xargs`` and ``-P``, whatever words the page uses
    for the rest (设成 0 against 为 0). Empty for any other question."""
    if not has_cjk(question):
        return set()
    terms = {term for part in _CJK_SPLIT.split(question) if part and not has_cjk(part)
             for term in analyze(part) if not term.isdigit()}
    return terms if any(term.startswith("-") for term in terms) and len(terms) >= 2 else set()


def subject_terms(question: str) -> list[str]:
    """The gate terms of the names a question is about: words written with a capital inside them
    (``PostgreSQL``, ``TCP``), with letters and digits (``FAT32``, ``ext4``), joined by a dot, plus, hash or
    underscore (``vm.swappiness``, ``C++``, ``sshd_config``, ``MAIL_DIR``), or capitalised after the question's
    first word (``Jupiter``); and in a question written in Chinese (or another CJK script), every word in Latin
    letters (``crontab``, ``systemd``): such a question writes only names that way. A number with a unit
    (``900k``) is no name. When a passage about such a name is not among those shown, the rest of the
    question's words match by chance: "the maximum file size on FAT32" is not answered by curl's "Maximum file
    size exceeded." One letter (``I``, vitamin ``C``) is no name."""
    names: list[str] = []
    cjk = has_cjk(question)
    data = _askers_data(question)
    for match in _NAME_WORD.finditer(question):
        word = match.group()
        if any(start <= match.start() < end for start, end in data):
            continue
        if len(word) < 2 or word.isdigit() or has_cjk(word) or _QUANTITY.fullmatch(word) \
                or (word.lower() in _UNITS and _AFTER_NUMBER.search(question, 0, match.start())):
            continue
        mixed = any(char.isdigit() for char in word) and any(char.isalpha() for char in word)
        joined = any(char in ".+#_" for char in word)
        if cjk or mixed or joined or any(char.isupper() for char in word[1:]) \
                or (word[0].isupper() and not _opens_sentence(question, match.start())):
            # A file's kind is no name: "inetd.conf" names inetd (whose page may write the file only once).
            word = _FILE_KIND.sub("", word) or word
            if not _placeholder(word):
                names.extend(term for term in analyze(word) if term not in _GATE_STOPWORDS)
    return list(dict.fromkeys(names))


#: What a question writes as the asker's own data, not as what it is about: the arguments of a call it writes
#: (``setTimeout(fn, 100)``), an e-mail address (``John.Smith@Example.COM``), a URL, a path from where the asker
#: stands (``./scripts/sync.sh``) and an example it gives (", say uid >= 1000 and shell = /bin/bash,").
_ASKERS_DATA = re.compile(_CALL.pattern + r"|(?<![\w.+-])([\w.+-]+@[\w-]+(?:\.[\w-]+)+)"
                          r"|(?<![\w+.-])([a-z][a-z0-9+.-]*://\S+)|(?<![\w~/.-])(\.{1,2}/[\w./+-]+)"
                          r"|,\s*(?:say|e\.g\.|for\s+example|for\s+instance)[,:]?\s+([^,;?!]{1,120})", re.IGNORECASE)


def _askers_data(question: str) -> list[tuple[int, int]]:
    """The spans of what ``question`` writes as the asker's data (:data:`_ASKERS_DATA`): the arguments of a call
    (``setTimeout(fn, 100)`` → ``fn, 100``; a manual page's section, ``crontab(5)``, has none worth the name), an
    e-mail address, a URL, a relative path, an example ("…, say uid >= 1000,"). Their words are no names."""
    return [match.span(match.lastindex or 0) for match in _ASKERS_DATA.finditer(question)]


#: The names every example uses for a thing of its own: ``foo``, ``bar``, ``baz`` (``/etc/foo.conf``, ``${foo}``).
_METASYNTACTIC: Final = frozenset({"foo", "bar", "baz", "qux", "quux", "foobar"})


def _placeholder(word: str) -> bool:
    """Whether ``word`` is the asker's placeholder, not a name a page must write: a metasyntactic name
    (:data:`_METASYNTACTIC`), "my" joined to an English word (``myservice``, ``mypackage``; not ``mysql``,
    ``mypy``), or "some" joined to anything ("somepkg", "somehost")."""
    lower = word.lower()
    return lower in _METASYNTACTIC or (lower.startswith("my") and len(lower) > 4 and lower[2:].isalpha()
                                       and is_english_word(lower[2:])) \
        or (lower.startswith("some") and len(lower) > 6 and lower.isalpha() and not is_english_word(lower))


#: The suffix that says what kind of file a dotted name is: ``.conf``, ``.d``, ``.log`` …
_FILE_KIND = re.compile(r"(?<=\w)\.(?:conf|cfg|ini|d|log|txt|list|json|ya?ml|xml|gz|sh|rc|service|socket|timer)$",
                        re.IGNORECASE)


def _opens_sentence(text: str, start: int) -> bool:
    """Whether the word at ``start`` of ``text`` opens one of its sentences: a capital there is the sentence's, not a
    name's ("… in /etc/apt/auth.conf. *Anything* I should watch out for?")."""
    before = text[:start].rstrip().rstrip("\"'“‘(")
    return not before or before.endswith((".", "!", "?"))


#: A word in lower case, with its hyphenated parts and an apostrophe's ending ("rsync", "ssh-keygen", "sshd's");
#: not a piece of a path, a dotted name or an option ("/etc/shells", "policy-rc.d", "--printf").
_LOWER_WORD = re.compile(r"(?<![\w'./+#-])[a-z][a-z0-9]*(?:['-][a-z0-9]+)*(?![\w'./+#-])")


def unknown_names(question: str) -> list[str]:
    """The gate terms of the words of an English question, in lower case, that no English word list holds
    (:func:`~ditto.text.lexicon.is_english_word`): a program's name such as ``rsync`` or ``zstd`` — the
    names :func:`subject_terms` cannot tell by their letters. A word made of English
    (:func:`~ditto.text.lexicon.reads_as_english`: "workaround", "multibyte", "filesystem") is no name; a
    hyphenated word is one unless all its parts are English ("ssh-keygen" is, "read-only" is not); a two-letter
    word is one when the list lacks it ("xz", "dd"), a single letter never."""
    if has_cjk(question):
        return []  # a CJK question's words in Latin letters are all names already
    names: list[str] = []
    data = _askers_data(question)
    for match in _LOWER_WORD.finditer(question):
        word = match.group()
        if any(start <= match.start() < end for start, end in data):
            continue
        if len(word) < 2 or is_english_word(word) or _placeholder(word):
            continue
        if "-" in word:
            if all(is_english_word(part) for part in word.split("-")):
                continue
        elif reads_as_english(word.split("'")[0]):
            continue
        names.extend(term for term in analyze(word) if term not in _GATE_STOPWORDS)
    return list(dict.fromkeys(names))


def _origins(passages: Sequence[ExcerptPassage], question: str = "") -> list[Origin]:
    """The :class:`Origin` of each passage shown, with what its document says it is about (the text of a NAME
    section shown of the same document): "the Apache log rotation program's offset argument" is answered by
    rotatelogs' "offset" entry, which only its NAME line ties to Apache; with its section, and whether it is the
    entry of an option or setting ``question`` does not write."""
    asked = _tag_terms(question)
    origins = [replace(_origin(passage), section=passage.context, titles=frozenset(_title_terms(passage)),
                       other_entry=bool(question) and _entry_of_another(passage, asked)) for passage in passages]
    about: dict[str, str] = {}
    for passage, origin in zip(passages, origins, strict=True):
        if _NAME_SECTION.match(_section(passage.context)):
            about[origin.document] = f"{about.get(origin.document, '')} {passage.text}".strip()
    return [replace(origin, about=about[origin.document]) if origin.document in about else origin
            for origin in origins]


def _origin(passage: ExcerptPassage) -> Origin:
    """The :class:`Origin` of a passage shown: its document (else its page, else itself) and that one's name, the
    last segment of its path or URL without compression and extension ("file:///docs/cp.txt" → "cp",
    "README.Debian.gz" → "README.Debian"; a web page's with its underscores as spaces, as wikis write titles in
    URLs)."""
    document = passage.document or passage.page
    if document is None:
        return Origin(passage.source_id)
    try:
        path = urlsplit(document).path
    except ValueError:  # not a URL ("http://[x"): the document's id as given
        path = document
    folders, _, last = path.rstrip("/").rpartition("/")
    segment = without_compression(unquote(last))
    # The extension is no part of the name ("cp.txt" → "cp"), but a capitalised part after a dot is one:
    # Debian's "README.Debian" is about Debian, and so is "README.Debian.gz".
    stem, dot, extension = segment.rpartition(".")
    label = stem if dot and stem and not extension[:1].isupper() else segment
    if passage.page is not None:
        return Origin(document, label.replace("_", " "), wide=True)  # a wiki's title: "Isolation_In_SQLite"
    if not document.startswith("file:"):
        return Origin(document, label)  # a record's id: its "folders" are no collection
    return Origin(document, label, folders=" ".join(unquote(part) for part in folders.split("/") if part))


#: What separates the words of a manual page's title that the analyser splits too (``MACHINE-ID``); a dotted or
#: underscored title (``SSH_CONFIG``, ``SYSTEMD.TIMER``) stays one name, as the analyser keeps it.
_TITLE_PARTS = re.compile(r"-+")


def page_titles(passages: Sequence[ExcerptPassage]) -> set[str]:
    """The terms of the manual pages' titles among ``passages``' heading paths (``WGET(1)`` → ``wget``): a
    question that writes such a title in lower case ("How many retries does wget make?") names that command
    as surely as one that writes ``PostgreSQL`` names a program, and curl's page does not answer it.

    A title that is an English word (``DATE(1)``, ``SORT(1)``) counts only from the first passage, the
    retriever's best: "how is the list kept up to *date*?" does not name date(1) because a passage of its page
    came last, while "how do I sort numerically?" ranks sort's page first."""
    return set().union(*(_title_terms(passage, english=position == 0) for position, passage in enumerate(passages)))


def _title_terms(passage: ExcerptPassage, *, english: bool = True) -> set[str]:
    """The terms of the manual page's title in ``passage``'s heading path (``WGET(1)`` → ``wget``); ``english``:
    with the title's words that are English words too."""
    if not passage.context:
        return set()
    top = passage.context.split(HEADING_SEPARATOR, 1)[0]
    # Each word of the title as written is judged, not its stem: MACHINE-ID(5)'s "machine" is English ("machin"
    # is not, and every question about a machine was held to name machine-id).
    return {term for match in _PAGE_TITLE.finditer(top) for word in _TITLE_PARTS.split(match.group(1).lower())
            for term in analyze(word) if english or not is_english_word(word)}


def _gate_question_terms(text: str) -> list[str]:
    return [term for term in dict.fromkeys(gate_terms(text, question=True)) if term not in _GATE_STOPWORDS]


def _covered(wanted: Sequence[str], present: set[str], weights: Mapping[str, float]) -> float:
    whole = sum(weights.get(term, 0.0) for term in wanted)
    return sum(weights.get(term, 0.0) for term in wanted if term in present) / whole if whole > 0 else 0.0


def _semantically_close(similarities: Sequence[float] | None, counts: Sequence[int], threshold: float,
                        lead_ins: Sequence[bool]) -> set[int]:
    """The passages (``counts[i]`` sentences each) one of whose sentences reaches ``threshold`` cosine, a lead-in
    (``lead_ins``, in sentence order) aside: "Note that further rsync updates should be done with:" is close to any
    question about rsync and says nothing of it."""
    if similarities is None:
        return set()
    close: set[int] = set()
    position = 0
    for index, count in enumerate(counts):
        if any(value >= threshold and not lead_ins[at]
               for at, value in enumerate(similarities[position:position + count], start=position)):
            close.add(index)
        position += count
    return close


def _english_only(task: ExcerptTask, similarities: Sequence[float] | None, counts: Sequence[int]
                  ) -> list[float] | None:
    """``similarities`` with every sentence of a CJK passage at 0, or ``None`` for a CJK question: the local
    embedding model reads English only, and to it any two Chinese sentences look alike."""
    if similarities is None or has_cjk(task.question):
        return None
    kept: list[float] = []
    for passage, count in zip(task.passages, counts, strict=True):
        values = similarities[len(kept):len(kept) + count]
        kept.extend([0.0] * len(values) if has_cjk(passage.text) else values)
    return kept
