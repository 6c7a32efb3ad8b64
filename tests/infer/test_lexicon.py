"""Lower-case names in questions (issue 17.3, WF-7): a word that no English word list holds is a name the
question is about (``rsync``, ``zstd``, ``systemd``); ordinary words, their inflections, possessives and
contractions are not."""

from __future__ import annotations

import logging

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ditto.text import lexicon
from ditto.text.lexicon import english_words_available, is_english_word, reads_as_english
from ditto.worker.infer import ExcerptPassage, ExcerptTask
from ditto.worker.infer.extractive import choose_excerpts, sentence_texts, unknown_names

P = ExcerptPassage


def test_the_word_list_tells_english_words_from_program_names() -> None:
    """WF-7: the base install's word list is readable; English words (with inflections, possessives and
    contractions) are in it, program names in lower case are not."""
    assert english_words_available()
    for word in ("daemon", "retries", "backups", "retained", "directories", "isn't", "program's"):
        assert is_english_word(word), word
    for word in ("rsync", "zstd", "systemd", "htop", "fdisk", "sshd's"):
        assert not is_english_word(word), word
    # Everyday words of computing the list lacks are words too: "my app" names no program.
    for word in ("app", "apps", "repo", "sysadmin"):
        assert is_english_word(word), word


@given(st.text(max_size=40))
def test_any_text_is_answered_without_error(word: str) -> None:
    """WF-7, bad input: any string (NUL, lone surrogates, capitals, quotes that would break out of the list's
    lines) gets a yes or no; only a lower-case word the list could hold can be a name."""
    answer = is_english_word(word)
    if word != word.lower() or not word or any(not (c.isascii() and (c.isalnum() or c in "'-")) for c in word):
        assert answer


def test_an_unreadable_word_list_recognises_no_name_and_says_so(monkeypatch: pytest.MonkeyPatch,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    """WF-7, operator visibility: without the word list every word counts as English (as before it was used),
    and the reason is logged once with its traceback."""
    monkeypatch.setattr(lexicon, "find_spec", lambda name: None)
    lexicon._word_list.cache_clear()
    lexicon.is_english_word.cache_clear()
    try:
        with caplog.at_level(logging.WARNING, logger="ditto.text.lexicon"):
            assert is_english_word("rsync") and not english_words_available()
        assert [record.exc_info is not None for record in caplog.records] == [True]
    finally:
        lexicon._word_list.cache_clear()
        lexicon.is_english_word.cache_clear()


def test_a_question_is_about_the_program_it_names_in_lower_case() -> None:
    """WF-7 (issue 17.3): "What port does the rsync daemon listen on?" is not answered by ssh's sentence about a
    daemon's port; named, the same sentence answers the question about sshd. Hyphenated names, possessives
    and paths: only the non-English word is a name."""
    sshd = (P(source_id="ssh", text="The daemon listens on port 22 unless the Port option says otherwise.",
              context="SSHD(8) › DESCRIPTION"),)
    assert choose_excerpts(ExcerptTask(question="What port does the rsync daemon listen on?", passages=sshd)) == []
    assert [e.source_id for e in choose_excerpts(ExcerptTask(question="What port does the sshd daemon listen on?",
                                                             passages=sshd))] == ["ssh"]
    assert unknown_names("What port does the rsync daemon listen on by default?") == ["rsync"]
    assert unknown_names("Why can't sshd's list be read-only?") == ["sshd"]
    assert unknown_names("What is the smallest RSA key length ssh-keygen allows?") == ["ssh", "keygen"]
    assert unknown_names("On Debian, how is /etc/shells kept up to date with policy-rc.d?") == []
    # A statement (a claim to check) keeps its words as details; a Chinese question's Latin words were names already.
    assert choose_excerpts(ExcerptTask(question="The rsync daemon listens on a port given by the Port option.",
                                       passages=sshd)) != []
    assert unknown_names("rsync 监听哪个端口？") == []


def test_a_two_letter_program_is_a_name() -> None:
    """WF-7 (issue 17.3, real questions): "What compression level does xz use by default?" is not answered by gzip's
    README; two-letter words the word list holds ("is", "do", "up") are no names, nor is a single letter."""
    assert unknown_names("What compression level does xz use by default?") == ["xz"]
    assert unknown_names("Is it up to me, or do I set a flag?") == []
    gzip = (P(source_id="gzip", text="gzip uses by default the LZ77 algorithm and compression level 6.",
              context="GZIP(1) › DESCRIPTION"),)
    assert choose_excerpts(ExcerptTask(question="What compression level does xz use by default?", passages=gzip)) == []


@given(st.text(max_size=200))
def test_any_question_gives_its_unknown_names_without_error(question: str) -> None:
    """WF-7, bad input: any question text (NUL, lone surrogates, CJK, symbols) gives a list of gate terms, each
    from a lower-case word of the question that the word list does not hold."""
    names = unknown_names(question)
    assert all(isinstance(name, str) and name for name in names)
    assert len(names) == len(set(names))


def test_technical_english_made_of_english_is_no_name() -> None:
    """WF-7 (issue 17.3): "workaround", "multibyte", "filesystem", "newline" and "executables" are in no word
    list but made of English (two words, a prefix and a word, an inflection): "tr gives odd results on multibyte
    input; what workaround does its manual recommend?" is about tr, and a page that never says "workaround"
    answers it. Program names are not made that way ("rsync", "fdisk", "htop", "nscd", "systemd")."""
    for word in ("workaround", "multibyte", "filesystem", "newline", "executables", "untracked", "nameserver"):
        assert not is_english_word(word) and reads_as_english(word), word
    for word in ("rsync", "fdisk", "htop", "nscd", "systemd", "zstd", "journalctl"):
        assert not reads_as_english(word), word
    assert unknown_names("tr gives odd results on multibyte input; what workaround does its manual recommend?") \
        == ["tr"]  # the program, not its technical English
    bugs = (P(source_id="tr", context="TR(1) › BUGS",
              text="Full support is available only for safe single-byte locales.  The C locale is safe in GNU "
                   "systems, so you can avoid this issue in the shell by running LC_ALL=C tr instead of plain tr."),)
    task = ExcerptTask(question="tr gives odd results on multibyte input; what workaround does its manual recommend?",
                       passages=bugs)
    # The page says it in other words (its cosine with the question passes the semantic gate, as on the real page),
    # and no longer lacks a "name" that it never writes.
    close = [0.5 if "LC_ALL=C" in text else 0.2 for text in sentence_texts(task)]
    assert any("LC_ALL=C tr" in e.quote for e in choose_excerpts(task, similarities=close))


def test_british_spellings_and_de_prefixed_words_are_no_names() -> None:
    """WF-7 (issue 17.3, real questions): the word list is American, so "Is that the default behaviour?" and "the
    hardlink deduplication tool" made names of "behaviour" and "deduplication", and a page that never writes them
    could not answer. A British ending in its American form ("behaviour", "initialise", "organisation",
    "analysed", "centre") and "de" before a word ("deduplication") are English; the installed programs that were
    names stay names."""
    for word in ("behaviour", "behaviours", "favourite", "initialise", "organisation", "analysed", "centre",
                 "deduplication"):
        assert not is_english_word(word) and reads_as_english(word), word
    for word in ("rsync", "depmod", "listres", "systemd", "zstd"):
        assert not reads_as_english(word), word
    assert unknown_names("Is that the default behaviour of the hardlink deduplication tool?") == []


def test_a_verb_made_an_adjective_is_no_name() -> None:
    """WF-7 (issue 17.3, a real question): "Where does `gapplication list-apps` get its list of D-Bus activatable
    applications from?" made a name of "activatable", which the word list lacks, and the page's "D-Bus activation"
    could not answer. A listed verb with "-able" or "-ible" (its final "e" dropped or kept) is English; program
    names stay names."""
    for word in ("activatable", "deletable", "unmountable", "renamable", "routable"):
        assert not is_english_word(word) and reads_as_english(word), word
    for word in ("rsync", "gzipable", "dpkgible", "systemd"):
        assert not reads_as_english(word), word
    assert unknown_names("Which D-Bus activatable applications does zzapp list?") == ["zzapp"]
