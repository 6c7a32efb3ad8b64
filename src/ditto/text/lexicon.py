"""Whether a lower-case word is an ordinary English word, or a name (``rsync``, ``systemd``, ``zstd``).

The built-in model holds a question to the names it writes: a passage that lacks them answers another
question. Names written with capitals or digits (``PostgreSQL``, ``ext4``) show themselves; a program's
name in lower case does not, and "What port does the rsync daemon listen on?" was answered from ssh's
sentences about ports. A word that no English word list holds is taken for such a name.

The list is pyspellchecker's English word frequencies (about 160,000 words and their inflections,
possessives and contractions; a dependency of the base install). Parsing its JSON costs about 0.2 s of
CPU, more than a whole research task, so the decompressed text (about 2.7 MB, one ``"word": count`` per
line, about 20 ms to inflate) is searched as it is, and each answer is remembered.

Example::

    is_english_word("daemon")  # True
    is_english_word("rsync")   # False
"""

from __future__ import annotations

import functools
import gzip
import logging
from importlib.util import find_spec
from pathlib import Path

__all__ = ["english_words_available", "is_english_word"]

_log = logging.getLogger(__name__)


@functools.cache
def _word_list() -> str | None:
    """The word list's text, or ``None`` when it cannot be read (logged once: names in lower case then go
    unrecognised, as before the list was used)."""
    try:
        spec = find_spec("spellchecker")  # its data file only: importing the package is not needed
        if spec is None or not spec.submodule_search_locations:
            raise ImportError("pyspellchecker is not installed")
        folder = Path(next(iter(spec.submodule_search_locations)))
        return gzip.decompress((folder / "resources" / "en.json.gz").read_bytes()).decode("utf-8")
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
    text = _word_list()
    if text is None or not word or any(not (char.isascii() and (char.isalnum() or char in "'-")) for char in word) \
            or word != word.lower():
        return True
    if f'\n"{word}":' in text:
        return True
    return word.endswith("'s") and f'\n"{word[:-2]}":' in text
