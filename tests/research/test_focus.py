"""The documents source reads closely the documents a question names (issue 17: research that answers real
questions on real material; WF-6, WF-12)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from ditto.text.analysis import has_cjk
from ditto.worker.infer.extractive import reading_order
from ditto.worker.infer.tasks import ExcerptPassage
from ditto.workflows.research import ResearchRequest, create_task, open_research_runtime
from ditto.workflows.research.records import RequestRecord
from ditto.workflows.research.sources.base import SourceSetup
from ditto.workflows.research.sources.documents import DocumentsSource
from ditto.workflows.research.sources.focus import (
    FOCUS_DOCUMENTS,
    FOCUS_PASSAGES,
    FOCUS_PASSAGES_CJK,
    ReadPassage,
    closely_read,
    documents_to_read,
    focus_text,
    named_documents,
)
from ditto.workflows.research.types import QueryRecord

#: An administration command's page (our wording, laid out as `man` renders it) and a daemon's page.
WIDGETCTL = """\
WIDGETCTL(8)                  System Manager's Manual                  WIDGETCTL(8)

NAME
       widgetctl - start, stop and inspect widgets

DESCRIPTION
       widgetctl talks to the widget daemon over its control socket.  Every command
       prints one line per widget and exits when the daemon has answered.

OPTIONS
       -s, --socket PATH
              Talk to the daemon over PATH instead of the default control socket.

       -t, --timeout SECONDS
              Give up when the daemon has not answered within SECONDS.

EXIT STATUS
       0      every command succeeded

       7      a widget named on the command line is locked by another process

WIDGETCTL 2.4                         2026-01-01                         WIDGETCTL(8)
"""
GADGETD = """\
GADGETD(8)                  System Manager's Manual                  GADGETD(8)

NAME
       gadgetd - the gadget daemon

DESCRIPTION
       gadgetd listens on a control socket for the commands of its clients.

GADGETD 1.0                         2026-01-01                         GADGETD(8)
"""


def test_a_document_is_named_by_its_file_name_or_a_part_of_it() -> None:
    """Issue 17: "useradd", "ssh-keygen" and "resolv.conf" name their pages; the retriever's order is kept and
    at most two documents are named; a number names nothing."""
    paths = ["/d/man-curl.txt", "/d/man-useradd.txt", "/d/man-ssh-keygen.txt", "/d/man-resolv.conf.txt",
             "/d/12345.txt"]
    assert named_documents("useradd exited with code 9", paths) == ["/d/man-useradd.txt"]
    assert named_documents("Which key type does ssh-keygen make?", paths) == ["/d/man-ssh-keygen.txt"]
    assert named_documents("How many nameservers are read from /etc/resolv.conf, and does useradd care?",
                           paths) == ["/d/man-useradd.txt", "/d/man-resolv.conf.txt"]
    assert named_documents("What does abstract 12345 say?", paths) == []
    assert named_documents("Does rsync retry?", ["/d/README.md", "/d/rsync.md"]) == ["/d/rsync.md"]


def test_a_hyphenated_word_that_names_nothing_names_what_its_parts_name() -> None:
    """Issue 17 (the eighteenth set): "my inotify-based watcher" is about inotify(7), found after a changelog that
    mentions NFS; "ssh-keygen" names only its own page when that page was found."""
    assert named_documents("My inotify-based watcher on an NFS mount sees nothing. Is my code broken?",
                           ["/d/changelog-dpkg.txt", "/d/man-inotify.txt"]) == ["/d/man-inotify.txt"]
    assert named_documents("How do I use ssh-keygen?", ["/d/man-ssh.txt", "/d/man-ssh-keygen.txt"]) == \
        ["/d/man-ssh-keygen.txt"]


def test_a_drop_in_folder_names_its_file() -> None:
    """Issue 17 (the nineteenth set): "/etc/apt/apt.conf.d/20proxy" is about apt.conf(5)."""
    assert named_documents("I renamed /etc/apt/apt.conf.d/20proxy to 20proxy.bak. Will apt still read it?",
                           ["/d/changelog-dpkg.txt", "/d/man-apt.conf.txt"]) == ["/d/man-apt.conf.txt"]


def test_an_english_word_names_only_the_first_document_found() -> None:
    """Issue 17: "kept up to date" does not name date(1)'s page found last; "how do I sort numerically?" names
    sort's page found first."""
    assert named_documents("How is the list kept up to date?", ["/d/README.shells", "/d/man-date.txt"]) == []
    assert named_documents("How do I sort numerically?", ["/d/man-sort.txt", "/d/man-ls.txt"]) == ["/d/man-sort.txt"]


def test_a_word_written_as_code_or_as_a_paths_file_is_a_name() -> None:
    """Issue 17: an English word the asker writes as code (`ss`), as the file of a path (DEBIAN/symbols) or as a
    file's suffix (a .changes file) names the page of that name wherever it was found; a path's folders name
    nothing."""
    found = ["/d/man-ssh.txt", "/d/man-ss.txt"]
    assert named_documents("I ran plain `ss` and my port is not listed. Why?", found) == ["/d/man-ss.txt"]
    assert named_documents("I ran plain ss and my port is not listed. Why?", found) == []
    assert named_documents("In a DEBIAN/symbols file, can I use tabs?", ["/d/man-diff.txt", "/d/man-deb-symbols.txt"]) \
        == ["/d/man-deb-symbols.txt"]
    assert named_documents("What goes in /etc/sort/x.conf?", ["/d/man-x.txt", "/d/man-sort.txt"]) == []
    # A file's kind written as its suffix names the page of that format; the plain word does not.
    changes = ["/d/changelog-bc.txt", "/d/man-deb-changes.txt"]
    assert named_documents("A .changes file has both Maintainer and Changed-By. Who does Changed-By name?",
                           changes) == ["/d/man-deb-changes.txt"]
    assert named_documents("Which changes did version 2 make?", changes) == []
    assert named_documents("Is 3.5 fine in resolv.conf?", ["/d/man-sort.txt"]) == []


@given(st.text(max_size=200), st.lists(st.text(max_size=40), max_size=8))
def test_named_documents_are_some_of_the_paths_in_order(question: str, paths: list[str]) -> None:
    """Issue 17: any question and any file names: a subsequence of the distinct paths, at most two, no error."""
    named = named_documents(question, paths)
    distinct = list(dict.fromkeys(paths))
    assert len(named) <= FOCUS_DOCUMENTS and named == [path for path in distinct if path in named]


def test_the_search_text_is_the_question_within_bounds() -> None:
    """Issue 17: the close reading searches the whole question, its white space collapsed, cut at a word."""
    assert focus_text("  widgetctl\nexited  with 7? ") == "widgetctl exited with 7?"
    long = "word " * 400
    assert len(focus_text(long)) <= 1000 and focus_text(long).endswith("word")


async def test_the_source_reads_the_named_document_by_the_question(tmp_path: Path) -> None:
    """Issue 17: a query finds widgetctl's page but shows other parts of it; the source's last search, the
    question inside the page the question names, shows the passage that answers, found by that query. A
    question naming no document found is read in the first document found; with nothing found, the search is
    skipped."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "man-widgetctl.txt").write_text(WIDGETCTL, encoding="utf-8")
    (docs / "man-gadgetd.txt").write_text(GADGETD, encoding="utf-8")
    question = "What does it mean when widgetctl exits with status 7?"
    queries = [QueryRecord(text="widgetctl socket daemon", provenance="model")]
    request = ResearchRequest(entry="document-search", question=question, documents=(str(docs),))
    task = create_task(request, directory=tmp_path / "task")
    async with open_research_runtime(task, env={}) as runtime:
        source = DocumentsSource(SourceSetup(task, RequestRecord(request_id=task.request_id)))
        plan = source.plan(queries)
        assert plan is not None
        result = await runtime.run(plan, None)
        hits = source.collect(queries, result.results)
        texts = [passage.text for passage in hits.passages]
        assert "7      a widget named on the command line is locked by another process" in texts
        focused = [p for p in hits.passages if p.text.startswith("7 ")]
        assert focused[0].query == "widgetctl socket daemon" and focused[0].uri.endswith("man-widgetctl.txt")
        assert hits.passages[0].text.startswith("7 "), "the close reading's passages are shown first"
        searched = [p for p in hits.passages if p.text.startswith("-s, --socket")]
        assert searched, "the query's own passages are kept"

        other = DocumentsSource(SourceSetup(create_task(request.model_copy(update={"question": "What is a socket?"}),
                                                        directory=tmp_path / "other"),
                                            RequestRecord(request_id=task.request_id)))
        plan = other.plan(queries)
        assert plan is not None
        result = await runtime.run(plan, None)
        assert "focus" not in result.skipped
        first = other.collect(queries, result.results).passages[0]
        assert first.uri.endswith("man-widgetctl.txt"), "the best document found is read"

        nothing = [QueryRecord(text="zyzzyva quux", provenance="model")]
        plan = other.plan(nothing)
        assert plan is not None
        result = await runtime.run(plan, None)
        assert "focus" in result.skipped
        assert other.collect(nothing, result.results).passages == []


def test_in_a_chinese_question_every_latin_word_names_its_page() -> None:
    """Issue 17: a question in Chinese writes only names in Latin letters, English words too ("fold", "id")."""
    paths = ["/d/zh/zhman-wc.txt", "/d/zh/zhman-fold.txt", "/d/zh/zhman-id.txt"]
    assert named_documents("用 fold 折行时怎样避免把单词从中间截断？", paths) == ["/d/zh/zhman-fold.txt"]
    assert named_documents("How do I fold long lines?", paths) == []


async def test_documents_searches_filter_by_path_and_refuse_other_filters(tmp_path: Path) -> None:
    """Issue 17 (RET-6: a filter is applied or refused): both documents providers keep only the files a path
    filter names; a filter on any other field is RETRIEVAL_INVALID_INPUT, never ignored."""
    import pytest

    from ditto.retrieval import RetrievalError
    from ditto.workflows.research.sources.documents import DocumentSearchProvider
    from ditto.workflows.research.sources.indexed_documents import IndexedDocumentSearchProvider

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "man-widgetctl.txt").write_text(WIDGETCTL, encoding="utf-8")
    (docs / "man-gadgetd.txt").write_text(GADGETD, encoding="utf-8")
    only = str((docs / "man-gadgetd.txt").resolve())
    providers = (DocumentSearchProvider([docs], save_snapshot=lambda raw: "0" * 64),
                 IndexedDocumentSearchProvider(index=None, documents=[docs], ignore=(), save_snapshot=lambda raw: "x",
                                               notes_key=None, env={"DITTO_INDEX_CACHE_DIR": str(tmp_path / "cache"),
                                                                    "DITTO_RESEARCH_EMBED": "0"}))
    for provider in providers:
        request = {"query": {"content": "daemon control socket"}, "target": {"name": "documents"}, "limit": 5}
        both = await provider.search(request)
        assert {c.metadata["uri"].rsplit("/", 1)[-1] for c in both.candidates} == {"man-widgetctl.txt",
                                                                                   "man-gadgetd.txt"}
        narrowed = await provider.search({**request, "filter": {"path": {"in": [only]}}})
        assert narrowed.candidates and all(c.metadata["uri"].endswith("man-gadgetd.txt") for c in narrowed.candidates)
        with pytest.raises(RetrievalError) as refused:
            await provider.search({**request, "filter": {"lang": "en"}})
        assert refused.value.code == "RETRIEVAL_INVALID_INPUT"


def test_a_name_joined_by_an_underscore_names_its_page() -> None:
    """Issue 17 (real questions): "pam_unix" names ``man-pam_unix.txt`` and "pg_ctl" ``zhman-pg_ctl.txt``: the
    end of a file name is matched as written, not with its parts joined by "-"."""
    paths = ["/d/man-pam.txt", "/d/man-pam_unix.txt", "/d/zh/zhman-pg_ctl.txt"]
    assert named_documents("How many old passwords does pam_unix remember by default?", paths) == [
        "/d/man-pam_unix.txt"]
    assert named_documents("用 pg_ctl 停止 PostgreSQL 时默认采用哪种关闭模式？", paths) == ["/d/zh/zhman-pg_ctl.txt"]


def test_a_question_naming_no_document_reads_the_first_found_and_a_claim_none() -> None:
    """Issue 17 (real questions) and issue 18 (SciFact claims): a question that names no document found is read
    in the retriever's best; a claim to check that names none is not (it wants several documents); a named
    document is read either way."""
    paths = ["/d/man-widgetctl.txt", "/d/man-gadgetd.txt"]
    assert documents_to_read("Which socket does the daemon listen on?", paths) == ["/d/man-widgetctl.txt"]
    assert documents_to_read("The daemon listens on a control socket.", paths) == []
    assert documents_to_read("gadgetd listens on a control socket.", paths) == ["/d/man-gadgetd.txt"]
    assert documents_to_read("守护进程监听哪个套接字？", paths) == ["/d/man-widgetctl.txt"]
    assert documents_to_read("Which socket?", []) == []


def test_a_plural_names_its_singular_document() -> None:
    """WF-7 (issue 17, real questions): "Why aren't my zero-length files being merged into hardlinks?" names
    hardlink(1), whose answer a query had not shown; an English plural still names only the first found."""
    found = ["/d/man-ln.txt", "/d/man-hardlink.txt"]
    assert named_documents("Why aren't my zero-length files being merged into hardlinks?", found) \
        == ["/d/man-hardlink.txt"]
    assert named_documents("Which signals stop a process?", ["/d/man-kill.txt", "/d/man-signal.txt"]) == []
    assert named_documents("Which signals stop a process?", ["/d/man-signal.txt"]) == ["/d/man-signal.txt"]
    assert named_documents("Does less pass its options on?", ["/d/man-less.txt", "/d/man-ss.txt"]) \
        == ["/d/man-less.txt"]


#: A page's passages in the order a retriever ranks them for the question below (our wording): the option entry
#: that answers comes fourth, since a passage is scored as a whole and the entry is short.
WIPER = [
    ("WIPER(1) › DESCRIPTION", "CAUTION: wiper assumes the file system and hardware overwrite data in place. "
                               "Backups and mirrors may keep copies of the file."),
    ("WIPER(1) › DESCRIPTION", "Overwrite the specified FILE(s) repeatedly, in order to make it harder to recover "
                               "the data."),
    ("WIPER(1) › NAME", "wiper - overwrite a file to hide its contents"),
    ("WIPER(1) › OPTIONS", "-n, --passes=N\n       overwrite N times instead of the default (3)"),
    ("WIPER(1) › REPORTING BUGS", "Report bugs to the mailing list."),
]
WIPER_QUESTION = "If I run wiper without saying how many passes, how many times does it overwrite the data?"


def test_a_reader_orders_passages_by_their_best_sentence() -> None:
    """Issue 17 (real questions, WF-6): read sentence by sentence, the option entry that answers comes first;
    passages sharing no word with the question keep the retriever's order, after those that do; the page's NAME
    line, which only answers "what is wiper?", comes last (it shares "overwrite" with the question, and took a
    place the answer needed); nothing to read is []."""
    passages = [ExcerptPassage(source_id=f"p{i}", text=text, context=context) for i, (context, text) in
                enumerate(WIPER)]
    order = reading_order(WIPER_QUESTION, passages)
    assert order[0] == 3 and sorted(order) == list(range(len(WIPER)))
    assert order[-2:] == [4, 2], "the bug-report line shares no word with the question; the NAME line answers nothing"
    assert reading_order("What is wiper?", passages)[0] == 2, "the NAME line answers what the command is"
    assert reading_order("zyzzyva quux", passages) == [0, 1, 3, 4, 2]
    assert reading_order(WIPER_QUESTION, []) == []


def test_the_close_reading_shows_each_documents_first_passages_as_read() -> None:
    """Issue 17 (WF-6): of each named document, its first four passages in a reader's order (the answering
    option entry, fourth by the retriever, first); documents in the order of their first passage. A question
    written in Chinese is shown three of each."""
    pool = [ReadPassage(document="/d/man-wiper.txt", text=text, context=context) for context, text in WIPER]
    pool.insert(1, ReadPassage(document="/d/man-gadgetd.txt", text="gadgetd - the gadget daemon"))
    shown = closely_read(WIPER_QUESTION, pool)
    assert [pool[i].text for i in shown] == [WIPER[3][1], WIPER[0][1], WIPER[1][1], WIPER[4][1],
                                             "gadgetd - the gadget daemon"]
    assert closely_read(WIPER_QUESTION, []) == []
    chinese = closely_read("wiper 默认覆盖文件几次？", pool)
    assert sum(1 for i in chinese if pool[i].document == "/d/man-wiper.txt") == FOCUS_PASSAGES_CJK == 3


@given(st.lists(st.tuples(st.sampled_from(["/d/a.txt", "/d/b.txt", "/d/c.txt"]),
                          st.text(alphabet="abcde wxyz.", max_size=60)), max_size=12),
       st.text(alphabet="abcde wxyz?", min_size=1, max_size=40))
def test_closely_read_shows_a_few_passages_of_every_document(pool: list[tuple[str, str]], question: str) -> None:
    """Issue 17 (WF-6), invariant: each document of the pool shows as many of its passages as it has, up to the
    per-document count, each once; a document's passages stay together, documents in the pool's order."""
    read = [ReadPassage(document=document, text=text or ".") for document, text in pool]
    shown = closely_read(question, read)
    assert len(shown) == len(set(shown)) and all(0 <= i < len(read) for i in shown)
    documents = list(dict.fromkeys(passage.document for passage in read))
    for document in documents:
        count = sum(1 for passage in read if passage.document == document)
        wanted = FOCUS_PASSAGES_CJK if has_cjk(question) else FOCUS_PASSAGES
        assert sum(1 for i in shown if read[i].document == document) == min(count, wanted)
    assert list(dict.fromkeys(read[i].document for i in shown)) == documents
