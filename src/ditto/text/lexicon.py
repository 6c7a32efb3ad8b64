"""Whether a lower-case word is an ordinary English word, or a name (``rsync``, ``systemd``, ``zstd``).

The built-in model holds a question to the names it writes: a passage that lacks them answers another
question. Names written with capitals or digits (``PostgreSQL``, ``ext4``) show themselves; a program's
name in lower case does not, and "What port does the rsync daemon listen on?" was answered from ssh's
sentences about ports. A word that no English word list holds is taken for such a name.

The list is pyspellchecker's English word frequencies (about 160,000 words and their inflections,
possessives and contractions; a dependency of the base install). Parsing its JSON costs about 0.2 s of
CPU, more than a whole research task, so its decompressed text (about 2.7 MB, one ``"word": count`` per
line) is split into lines and sorted (the file is already in order, so sorting costs one pass), about
40 ms once per process; a word is then a binary search, so a long question costs no more per word than a
short one.

Example::

    is_english_word("daemon")  # True
    is_english_word("rsync")   # False
"""

from __future__ import annotations

import bisect
import functools
import gzip
import logging
import re
from importlib.util import find_spec
from pathlib import Path

__all__ = ["english_words_available", "is_english_word", "reads_as_english"]

_log = logging.getLogger(__name__)


@functools.cache
def _word_list() -> list[str] | None:
    """The word list's lines (``"word": count,``), sorted, or ``None`` when it cannot be read (logged once:
    names in lower case then go unrecognised, as before the list was used)."""
    try:
        spec = find_spec("spellchecker")  # its data file only: importing the package is not needed
        if spec is None or not spec.submodule_search_locations:
            raise ImportError("pyspellchecker is not installed")
        folder = Path(next(iter(spec.submodule_search_locations)))
        text = gzip.decompress((folder / "resources" / "en.json.gz").read_bytes()).decode("utf-8")
        return sorted(line for line in text.split("\n") if line.startswith('"'))
    except (ImportError, OSError, ValueError, EOFError):
        _log.warning("the English word list (pyspellchecker) cannot be read; lower-case names are not "
                     "recognised", exc_info=True)
        return None


def english_words_available() -> bool:
    """Whether the word list can be read (see the module's docstring)."""
    return _word_list() is not None


@functools.lru_cache(maxsize=4096)
def is_english_word(word: str) -> bool:
    """Whether ``word`` (lower case, letters, digits, ``'`` and ``-``) is in the English word list; a word with
    a possessive ``'s`` is looked up without it. Anything else, and everything when the list cannot be read,
    counts as English: only a word the list could hold and does not is a name."""
    lines = _word_list()
    if lines is None or not word or any(not (char.isascii() and (char.isalnum() or char in "'-")) for char in word) \
            or word != word.lower():
        return True
    word = word[:-2] if word.endswith("'s") else word
    return _listed(lines, word) or word in _EVERYDAY


#: Everyday words of computing the list lacks: "my app", "the repo", "a symlink", "on stdin" name no program (a page
#: may write "symbolic link", "regular expression", "system call" or "standard input" for them).
_EVERYDAY = frozenset({"app", "apps", "admin", "admins", "repo", "repos", "wifi", "distro", "distros", "sysadmin",
                       "sysadmins", "devs", "todo", "tech", "param", "params", "symlink", "symlinks", "cronjob",
                       "cronjobs", "regex", "regexes", "regexp", "regexps", "syscall", "syscalls", "lookup", "lookups",
                       "stdin", "stdout", "stderr"})
#: Prefixes that make English words of English words ("untracked", "multibyte", "autoremove", "deduplication").
_PREFIXES = ("un", "re", "de", "non", "sub", "pre", "multi", "auto", "inter", "over", "super", "self")
#: The British spellings the (American) word list lacks ("behaviour", "initialise", "organisation", "analysed",
#: "centre"), each with its American form in :data:`_AMERICAN`; "our" may sit inside a word ("favourite").
_BRITISH = re.compile(r"our|is(?=e[sd]?$|ing$|ation|ations$)|ys(?=e[sd]?$|ing$)|tre$")
_AMERICAN = {"our": "or", "is": "iz", "ys": "yz", "tre": "ter"}
#: Endings of plurals and inflections the word list may lack ("executables").
_ENDINGS = ("s", "es", "ed", "ing")
#: Endings that make an adjective of a verb ("activatable", "restorable"), which a word list may lack.
_ABLE = ("able", "ible")
#: The shortest part of a compound ("new" + "line"): shorter parts make names ("r" + "sync", "f" + "disk").
_PART = 3
#: The longest word :func:`reads_as_english` tries to read as English ("internationalisation" is 20 letters).
_LONGEST_WORD = 40


@functools.lru_cache(maxsize=4096)
def reads_as_english(word: str) -> bool:
    """Whether ``word`` is English (:func:`is_english_word`) or made of English: its British spelling
    ("behaviour", "initialise"), an inflection of a listed word ("executables"), a verb made an adjective
    ("activatable"), a prefix and a listed word
    ("untracked", "multibyte", "deduplication"), or two listed words of three letters or more ("workaround",
    "newline", "filesystem", "nameserver"). Technical English is written that way; a program's name ("rsync",
    "fdisk", "htop", "nscd") is not."""
    if is_english_word(word):
        return True
    if len(word) > _LONGEST_WORD:
        return False  # no English word is this long, and trying every split of it would cost its length squared
    if _american(word):
        return True
    stems = [word] + [word[:-len(end)] for end in _ENDINGS if word.endswith(end) and len(word) - len(end) >= _PART]
    # "mountable" is "mount" and "-able"; "activatable" is "activate": the ending replaces a verb's final "e".
    stems += [form for end in _ABLE if word.endswith(end) and len(stem := word[:-len(end)]) >= _PART
              for form in (stem, stem + "e")]
    for stem in stems:
        if stem != word and is_english_word(stem):
            return True
        if any(stem.startswith(prefix) and len(stem) - len(prefix) >= _PART and is_english_word(stem[len(prefix):])
               for prefix in _PREFIXES):
            return True
        if any(is_english_word(stem[:cut]) and is_english_word(stem[cut:])
               for cut in range(_PART, len(stem) - _PART + 1)):
            return True
    return False


def _american(word: str) -> bool:
    """Whether ``word`` is a British spelling of a listed word: each British ending (:data:`_BRITISH`) is tried
    in its American form on its own, so "behaviours" is "behaviors" and "centres" is "centers"."""
    for found in _BRITISH.finditer(word):
        american = word[:found.start()] + _AMERICAN[found.group()] + word[found.end():]
        if is_english_word(american):
            return True
    return False


def _listed(lines: list[str], word: str) -> bool:
    """Whether a line of the sorted ``lines`` is ``"word": count``: the key sorts just before its own line."""
    key = f'"{word}":'
    position = bisect.bisect_left(lines, key)
    return position < len(lines) and lines[position].startswith(key)
