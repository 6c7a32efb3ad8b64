"""The built-in model on real layouts: whole sentences across hard line breaks, exact per-source and per-page
limits, a relevance gate, and the extractive answer (issue 17, items 2-4; INF-3, INF-4, WF-7, WF-11)."""

from __future__ import annotations

import functools
import itertools
import json
from collections.abc import Callable

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from ditto.worker.infer import ExcerptPassage, ExcerptTask, InferError, ModelConfig, create_infer_client
from ditto.worker.infer.extractive import (
    analyze,
    answer_question,
    choose_excerpts,
    passage_relevance,
    sentence_texts,
    split_sentences,
)
from ditto.worker.infer.extractive.terms import asked_sentences
from ditto.worker.infer.tasks import (
    ANSWER_CHOICE_SCHEMA,
    AnswerEvidence,
    AnswerTask,
    Excerpt,
    parse_task,
    response_format,
    task_messages,
)

P = ExcerptPassage


def _page_of(document: str, context: str, *texts: str) -> tuple[ExcerptPassage, ...]:
    """Passages of one source under one heading path, in order."""
    return tuple(P(source_id="s", document=document, context=context, text=text) for text in texts)


def _only_quote(question: str, text: str) -> str:
    """The one quote the model chooses for ``question`` from a passage of ``text`` alone."""
    [excerpt] = choose_excerpts(ExcerptTask(question=question, passages=(P(source_id="a", text=text),),
                                            max_excerpts=1))
    return excerpt.quote


def _assert_run(question: str, text: str, first: str, last: str) -> None:
    """The one quote for ``question`` opens with ``first`` and ends with ``last``."""
    quote = _only_quote(question, text)
    assert quote.startswith(first) and quote.endswith(last), quote

EXIT_STATUS = ("Normally the exit status is 0 if every line was written, 1 if no lines were selected, and 2 if\n"
               "       an error occurred.  However, if -q is used and a line is selected, the exit status is 0 even\n"
               "       if an error occurred.")
OPTION = "-k, --keep\n              Keep (do not delete) the input file after\n              rearranging it."


def sentences(text: str) -> list[str]:
    return [text[span.start:span.end] for span in split_sentences(text)]


def test_sentences_run_across_hard_line_breaks() -> None:
    """Issue 17.2: a line end is not a sentence end; an option tag runs on into its indented body; blank
    lines, list items, headings and a dedent do end sentences; an ellipsis does not."""
    assert sentences(EXIT_STATUS) == [
        "Normally the exit status is 0 if every line was written, 1 if no lines were selected, and 2 if\n"
        "       an error occurred.",
        "However, if -q is used and a line is selected, the exit status is 0 even\n       if an error occurred."]
    assert sentences(OPTION) == [OPTION]
    assert sentences("Setup:\n- install it\n- run it\n\nDone") == ["Setup:", "- install it", "- run it", "Done"]
    assert sentences("# Title\nBody text") == ["# Title", "Body text"]
    assert sentences("       indented body\nback at the margin") == ["indented body", "back at the margin"]
    assert sentences("-i, --install package-file...\n     Install it.") == [
        "-i, --install package-file...\n     Install it."]
    assert sentences("默认情况下，它不删除目录。如果指定\n       -I 选项，则提示。") == [
        "默认情况下，它不删除目录。", "如果指定\n       -I 选项，则提示。"]


def test_a_cjk_line_set_one_column_further_in_runs_on() -> None:
    """Issue 17.2 (Chinese material): groff sets a Chinese page's wrapped line one column further in now and
    then; the line under it, one column less indented, still continues the sentence ("缺省的值被设置" over
    "为60。"). One column less under anything else is layout: a right-aligned table's rows stay apart."""
    text = "              的记录可能乱了次序)。缺省的值被设置\n             为60。如果程序注意到了这个问题。"
    assert sentences(text) == ["的记录可能乱了次序)。", "缺省的值被设置\n             为60。",
                               "如果程序注意到了这个问题。"]
    table = "                 Number   Description\n                    1   Progress information\n" \
            "                   40   Dependencies and conflicts"
    assert sentences(table)[-1] == "40   Dependencies and conflicts"


def test_the_quote_is_the_whole_sentence_with_its_line_break() -> None:
    """Issue 17.2: the quote is a whole sentence, verbatim with its newline and indentation, never the
    physical line that stops at "and 2 if"."""
    task = ExcerptTask(question="What exit status is returned when an error occurred?",
                       passages=(P(source_id="frob", text=EXIT_STATUS),), max_excerpts=1)
    [excerpt] = choose_excerpts(task)
    assert excerpt.quote.endswith("and 2 if\n       an error occurred.") and excerpt.quote in EXIT_STATUS
    keep = choose_excerpts(ExcerptTask(question="How do I keep the input file?", passages=(
        P(source_id="frob", text=OPTION),), max_excerpts=1))
    assert [e.quote for e in keep] == [OPTION]  # the tag and the answer on the next lines


def test_a_short_lead_in_takes_the_next_sentence() -> None:
    """Issue 17.2: a run of whole sentences: a lead-in too short to say anything takes the next sentence."""
    text = "Exit codes.\nA frob that fails returns 3 to the calling shell."
    [excerpt] = choose_excerpts(ExcerptTask(question="Which exit codes does frob use?",
                                            passages=(P(source_id="a", text=text),), max_excerpts=1))
    assert excerpt.quote == text


def test_a_sentence_that_points_back_is_quoted_with_the_one_it_points_to() -> None:
    """Issue 17.2 (INF-3): a quote is the smallest run of whole sentences that carries the answer; a sentence that
    opens by pointing back ("It exits …", "Thus …", "One reason for this is …") is read with the sentence it points
    to, after it or before it, and one that does not stays out."""
    text = ("The \"exists\" subcommand checks whether a ref has a reflog.  It exits with zero status if the\n"
            "       reflog exists, and non-zero status if it does not.  The \"delete\" subcommand deletes\n"
            "       single entries from the reflog.")
    _assert_run("How can a script tell whether a branch has a reflog?", text, 'The "exists" subcommand',
                "if it does not.")
    text = ("This tool only operates on the /etc/group and /etc/gshadow files.  Thus you cannot change any NIS\n"
            "       or LDAP group.  The options are listed below.")
    _assert_run("Can I change an LDAP group with it?", text, "This tool only operates", "LDAP group.")
    text = "The image can be larger than the file system.  One reason for this is run-out sectors.  Use -d to divide."
    assert _only_quote("Why is the image larger than the file system?", text) == (
        "The image can be larger than the file system.  One reason for this is run-out sectors.")


def test_the_sentence_the_answer_goes_on_in_joins_the_quote() -> None:
    """Issue 17.2 (INF-3): the sentence after the run that still speaks of the question (two of its terms) is where
    the answer goes on, even when it adds no new word of the question; a parallel fact about something else (one
    shared word) stays out, and so does a repeat of the run's wording (tests/infer/test_builtin_limits.py). A
    sentence that opens "For example" is quoted with the sentence it illustrates. Our own wording, laid out as a
    manual page is."""
    text = ("The third field, the users field, is a list of users, or a UNIX group, or a netgroup of users to\n"
            "       whom this rule applies.  Group names are preceded by a '%' symbol, while netgroup names are\n"
            "       preceded by a '@' symbol.  Wildcards are not allowed.")
    _assert_run("In the rules file, how do I write a UNIX group versus a netgroup in the users field?", text,
                "The third field", "by a '@' symbol.")
    text = "Nightly backups are kept for 30 days, then deleted.  Audit logs are kept for a year."
    assert _only_quote("How long are nightly backups kept?", text) == (
        "Nightly backups are kept for 30 days, then deleted.")
    text = ("Both names and addresses are compared without regard to case.  For example, Jane <JANE@EXAMPLE.ORG>\n"
            "       also matches jane@example.org in the mailmap file.")
    assert _only_quote("Will JANE@EXAMPLE.ORG match jane@example.org in my mailmap file?", text) == text


def test_an_entrys_first_sentence_comes_with_its_details() -> None:
    """Issue 17.2 (INF-3, a real manual page): an option's entry opens with its tag and what it is for; the values
    it takes follow in the next sentence, which shares no word with the question ("Which attributes can it split
    by?" is answered by "The supported columns are …"). A quote of the first sentence takes the next along, not the
    rest of a long entry. Our own wording, laid out as a manual page is."""
    text = ("-g, --group-by list\n           Specify which columns (attributes) are used to group memory blocks "
            "into ranges. The supported\n           columns are STATE, NODE and ZONE, or \"none\". The other "
            "columns are\n           silently ignored. For more details see DESCRIPTION above.")
    _assert_run("Which attributes can --group-by use to group memory blocks?", text, "-g, --group-by list",
                'or "none".')


def test_a_sentence_about_the_page_does_not_point_back() -> None:
    """Issue 17.2 (INF-3, the SQLite pages' footer): "This page last modified …" speaks of the page, not of the
    sentence before it, so a quote does not carry it along; "This is …" still points back."""
    text = ("Applications can change the page size with a pragma before the database is created.  "
            "This page last modified on 2024-01-30 12:00:00 UTC")
    assert _only_quote("How do applications change the page size of a database?", text) == (
        "Applications can change the page size with a pragma before the database is created.")
    text = "The default page size is 4096 bytes.  This is the size of a page on most file systems."
    assert _only_quote("What is the default page size?", text) == text


def test_a_particle_is_no_shared_word() -> None:
    """Issue 17.3 (honest no-evidence, WF-7; found by hand on the SQLite docs): "How do I set up streaming
    replication to a standby server?" shares "set", "up" and its heading's "streaming" with a sentence on a
    streaming API ("copy up to N bytes … and set N …"), which says nothing of replication. "up" names no topic,
    so two words and the heading are not enough. Our own wording, laid out as the SQLite pages are."""
    text = ("Assuming no error occurs the xFrob method should copy up to (*pnData) bytes of data into the buffer and "
            "set (*pnData) to the actual number of bytes copied before returning FROB_OK.")
    passage = P(source_id="web-1", text=text, context="The Frob Extension › Streaming Versions of the API")
    asked = "How do I set up streaming replication to a standby server?"
    assert choose_excerpts(ExcerptTask(question=asked, passages=(passage,))) == []


def test_quotes_never_overlap() -> None:
    """Issue 17.2: a second quote from the same passage never repeats the first one's sentences."""
    text = "-i, --install file...\n     Install the package. If -R is given, file must be a directory."
    quotes = [e.quote for e in choose_excerpts(ExcerptTask(question="install package file directory given",
                                                           passages=(P(source_id="a", text=text),), max_excerpts=3))]
    assert quotes and all(text.count(quote) == 1 for quote in quotes)
    spans = sorted((text.index(quote), text.index(quote) + len(quote)) for quote in quotes)
    assert all(left[1] <= right[0] for left, right in itertools.pairwise(spans))


def test_per_source_and_per_page_limits_are_exact() -> None:
    """Issue 17.2, WF-6: at most maxPerSource quotes per source and per web page, maxExcerpts in all."""
    same = tuple(P(source_id="a", text=f"Backups are kept for {days} days and copied.") for days in (7, 8, 9))
    one_source = choose_excerpts(ExcerptTask(question="backups kept copied", passages=same, max_excerpts=5,
                                             max_per_source=2))
    assert len(one_source) == 2 and len({e.quote for e in one_source}) == 2
    pages = tuple(P(source_id=f"web-{i}", text=f"Backups are kept for {i} days and copied.", page="https://x/a")
                  for i in range(4))
    chosen = choose_excerpts(ExcerptTask(question="backups kept copied", passages=pages, max_excerpts=6,
                                         max_per_source=2))
    assert len(chosen) == 2 and len({e.source_id for e in chosen}) == 2


def test_unanswerable_questions_get_no_evidence() -> None:
    """Issue 17.3, WF-7: when nothing shown is about the question the model quotes nothing: one shared
    word ("cups") is never enough, nor is a question whose main terms no passage holds (FAT32); in
    Chinese, a shared bigram or two are not enough either."""
    shown = (P(source_id="a", text="Measuring cups hold 250 ml. Rinse the cups after use."),
             P(source_id="b", text="The world map shows every country."),
             P(source_id="c", text="The size of a file name is limited to 255 bytes."))
    assert choose_excerpts(ExcerptTask(question="Who won the 1998 football world cup?", passages=shown)) == []
    assert choose_excerpts(ExcerptTask(question="What is the maximum file size on a FAT32 file system?",
                                       passages=shown)) == []
    chinese = (P(source_id="date", text="按照协调世界时 (UTC) 显示或设置时间。", context="DATE(1) › 描述"),
               P(source_id="tar", text="这是一个国家标准的存档格式。"))
    assert choose_excerpts(ExcerptTask(question="世界杯足球赛冠军是哪个国家？", passages=chinese)) == []
    answerable = choose_excerpts(ExcerptTask(question="What limits the size of a file name?", passages=shown))
    assert [e.source_id for e in answerable] == ["c"]
    assert choose_excerpts(ExcerptTask(question="date 如何按照协调世界时显示时间？", passages=chinese))[0].source_id \
        == "date"


@given(st.sampled_from(["what", "Which", "how", "Is", "can", "Does", "should", "Where", "why"]),
       st.text(alphabet="abcdefgh -", max_size=40))
def test_a_question_without_its_question_mark_is_still_a_question(opening: str, rest: str) -> None:
    """Issue 17.4 (INF-3): "what does xwininfo show if I run it with no flags" is a question though its asker left
    out the question mark (a question word or an auxiliary verb opens it), so it asks for what happens by default
    and is about the names it writes; a statement (a claim to check) is not a question."""
    from ditto.worker.infer.extractive import asks_a_question

    assert asks_a_question(f"{opening} {rest}")
    assert not asks_a_question(f"Whatever {rest}") and not asks_a_question(f"The frob tool {opening} {rest}")
    assert asks_a_question(f"The frob tool {rest}?") and asks_a_question(f"The frob tool {rest}？")


def test_a_question_without_its_question_mark_is_judged_as_with_it() -> None:
    """Issue 17.4 (INF-3, WF-7): "what does frobinfo show if I run it with no flags" asks for what happens by
    default whether or not its asker typed the question mark: a page whose sentences only share its words (an option
    that says nothing of a default) answers neither form (our wording)."""
    text = ("Frobinfo is a utility for displaying information about widgets.  Various information is displayed\n"
            "       depending on which options are selected.")
    other = "-wm  This option causes the selected widget's manager hints to be shown when you click it."
    passages = (P(source_id="o", document="/docs/man-frobinfo.txt", context="FROBINFO(1) › OPTIONS", text=other),
                P(source_id="f", document="/docs/man-frobinfo.txt", context="FROBINFO(1) › DESCRIPTION", text=text))
    question = "what does frobinfo show if I run it with no flags and just click a widget"
    assert choose_excerpts(ExcerptTask(question=question, passages=passages)) == []
    assert choose_excerpts(ExcerptTask(question=f"{question}?", passages=passages)) == []


def test_a_question_of_any_length_is_about_the_names_it_writes() -> None:
    """Issue 17.3, WF-7: a question (not a claim) naming a subject that nothing shown holds gets no evidence,
    however many of its other words match: the CUPS port is not ssh's -R port. In a Chinese question a word
    in Latin letters is such a name (``crontab``); a dotted identifier (``vm.swappiness``) is one, a number
    with its unit (``900k``) is not, and a name with an underscore is matched whole (``LC_TIME``)."""
    from ditto.worker.infer.extractive import asks_a_question, subject_terms

    ssh = (P(source_id="ssh", text="-R port: Specifies that connections to the given TCP port on the remote host "
                                   "are to be forwarded; the server listens on that port (22 by default) for the "
                                   "printing service."),)
    question = "Which TCP port does the CUPS printing service listen on by default?"
    assert choose_excerpts(ExcerptTask(question=question, passages=ssh)) == []
    about_ssh = "Which TCP port does the SSH printing service listen on by default?"
    ssh_named = (P(source_id="ssh", text=ssh[0].text, context="SSH(1) › OPTIONS"),)
    assert [e.source_id for e in choose_excerpts(ExcerptTask(question=about_ssh, passages=ssh_named))] == ["ssh"]
    # Stated, the same words are a claim to check: its names are details, and the passage still counts.
    claim = "The CUPS printing service listens on a TCP port given by the remote host for printing."
    assert not asks_a_question(claim) and asks_a_question(question) and asks_a_question("crontab 里怎么写？")
    assert choose_excerpts(ExcerptTask(question=claim, passages=ssh)) != []
    cron = (P(source_id="date", text="每五分钟执行一次任务并显示时间。", context="DATE(1) › 描述"),)
    assert choose_excerpts(ExcerptTask(question="crontab 里怎么写一个每五分钟执行一次的任务？", passages=cron)) == []
    assert subject_terms("What is the default vm.swappiness value on Linux?") == ["vm", "swappi", "linux"]
    assert subject_terms("How much memory does bunzip2 need for the default 900k block size?") == ["bunzip2"]
    assert subject_terms("Why did coreutils bring back the LC_TIME symlinks?") == ["lc_time"]


def test_a_question_s_names_are_looked_for_in_the_passage_or_for_its_scene_in_the_document() -> None:
    """Issue 17.3, WF-7: a passage answers a question about a name when it holds the name (with its headings);
    a name in a phrase that sets the question's scene ("On Debian, …") is enough in the passage's document (the
    passages of one file shown); a passage of another document that lacks it does not count, however many other
    words it shares."""
    tar = (P(source_id="t1", text="-a, --auto-compress\n       Use archive suffix to determine the compression level "
                                  "and program.", context="TAR(1) › OPTIONS", document="file:///tar"),
           P(source_id="t2", text="-j, --bzip2\n       Filter the archive through bzip2(1).",
             context="TAR(1) › OPTIONS", document="file:///tar"))
    assert choose_excerpts(ExcerptTask(question="What is the default compression level of bzip2?", passages=tar)) \
        in ([], [Excerpt(source_id="t2", quote=tar[1].text)])
    question = "On Debian, how is the list of valid login shells kept up to date?"
    shells = (P(source_id="s1", text="/etc/shells lists the valid login shells; it is kept up to date by "
                                     "the add-shell and remove-shell programs.", document="file:///shells"),
              P(source_id="s2", text="The audience of this is debian developers.", document="file:///shells"))
    other = P(source_id="o", text="The list of valid login shells is kept up to date by hand.",
              document="file:///other")
    chosen = choose_excerpts(ExcerptTask(question=question, passages=(*shells, other)))
    assert {e.source_id for e in chosen} <= {"s1", "s2"} and "s1" in {e.source_id for e in chosen}
    assert choose_excerpts(ExcerptTask(question=question, passages=(other,))) == []


def test_a_chinese_question_about_an_option_is_answered_by_the_option_s_line() -> None:
    """Issue 17.3: a Chinese question naming a command and its option in Latin letters is about the passage that
    holds both, even when the page says the rest in other words (减号 for '-')."""
    question = "head -c 后面的数字前面加个减号是什么意思？"
    line = P(source_id="p", text="-c, --bytes=[-]NUM\n       显示每个文件的前 NUM 个字节；"
                                 "以 '-' 起始，则显示每个文件中不包含最后 NUM 个字节的全部内容",
             context="HEAD(1) › 描述")
    [excerpt] = choose_excerpts(ExcerptTask(question=question, passages=(line,)))
    assert "不包含最后 NUM 个字节" in excerpt.quote
    unrelated = P(source_id="q", text="-n, --lines=[-]NUM\n       显示每个文件的前 NUM 行", context="HEAD(1) › 描述")
    assert choose_excerpts(ExcerptTask(question=question, passages=(unrelated,))) == []


def test_a_chinese_how_to_question_is_answered_by_an_option_first_in_its_answer() -> None:
    """Issue 17 (an answer people can read, INF-3; found by hand on manpages-zh's mkfifo): "怎样指定权限？" asks how
    to do it, and the option that does it answers, not the page's description, which shares more of the question's
    characters. Our own wording, laid out as a Chinese manual page is."""
    evidence = (AnswerEvidence(id="e1", quote="使用给定的名称创建命名管道（FROB）。", context="FROBFIFO(1) › 描述"),
                AnswerEvidence(id="e2", quote="-m, --mode=模式\n              将创建的管道的权限设置为给定的模式",
                               context="FROBFIFO(1) › 描述"))
    answer = answer_question(AnswerTask(question="frobfifo 创建命名管道的时候怎样指定权限？", evidence=evidence))
    assert answer[0].text.startswith("-m, --mode=模式"), answer


def test_a_chinese_answer_weighs_the_order_the_quotes_were_chosen_in() -> None:
    """Issue 17 (an answer people can read, INF-3): a Chinese question's answer sentences are scored by character
    pairs, which match paraphrase poorly, and no embedding reads them; the quote chosen first (by its passage, its
    rank and the kind asked) counts too, so it is not left out of the answer for a sentence that only shares more
    characters with the question. Our own wording."""
    evidence = (AnswerEvidence(id="e1", quote="它把所有连续的多个空行替换为一个空行。", context="FROBCAT(1) › 描述"),
                AnswerEvidence(id="e2", quote="frobcat 逐行处理文件，好几行一起输出。", context="FROBCAT(1) › 描述"))
    answer = answer_question(AnswerTask(question="frobcat 对连着的好几行空行做什么处理？", evidence=evidence))
    assert "它把所有连续的多个空行替换为一个空行。" in [sentence.text for sentence in answer], answer


def test_a_long_claim_needs_its_core_not_every_word() -> None:
    """Issue 17.3: a long question (a scientific claim) is answered by a passage sharing three of its
    terms even under half of its weight; two shared terms under half are never enough."""
    from ditto.worker.infer.extractive import Relevance

    assert Relevance(coverage=0.3, matched=3, terms=10).passes()
    assert not Relevance(coverage=0.45, matched=2, terms=5).passes()
    assert not Relevance(coverage=0.1, matched=3, terms=30).passes()
    claim = "Vitamin D supplementation in elderly women reduces the incidence of hip fractures in winter."
    abstract = P(source_id="a", text="In a trial of 3000 elderly women, vitamin D lowered fracture rates.")
    assert [e.source_id for e in choose_excerpts(ExcerptTask(question=claim, passages=(abstract,)))] == ["a"]


def test_a_claims_named_subject_makes_a_passage_about_it() -> None:
    """Issue 17.3: a claim to check is about the names it writes (an acronym, a gene): a passage that holds every
    one of them and another of its words is evidence about it even when it reports the outcome in other words; a
    question is still held to the gate's share of its words, a passage lacking a name is not about the claim, and
    the name alone is never enough."""
    claim = "The DESMOND program caused substantial weight loss in most participants."
    trial = P(source_id="t", text="Effectiveness of a diabetes education and self management programme (DESMOND) "
                                  "for people with newly diagnosed type 2 diabetes: weight and biochemical outcomes.")
    other = P(source_id="o", text="Effectiveness of a diabetes education and self management programme for people "
                                  "with newly diagnosed type 2 diabetes: weight and biochemical outcomes.")
    assert [e.source_id for e in choose_excerpts(ExcerptTask(question=claim, passages=(trial, other)))] == ["t"]
    question = "Did the DESMOND program cause substantial weight loss in most participants?"
    assert choose_excerpts(ExcerptTask(question=question, passages=(trial,))) == []
    unnamed = "The education program caused substantial weight loss in most participants."
    assert choose_excerpts(ExcerptTask(question=unnamed, passages=(other,))) == []
    alone = P(source_id="a", text="DESMOND enrolled people with newly diagnosed type 2 diabetes.")
    assert choose_excerpts(ExcerptTask(question=claim, passages=(alone,))) == []


def test_headings_as_context_count_but_are_never_quoted() -> None:
    """Issue 17.1/17.3: a passage's heading path tells what it is about (the command's name); the quote
    still comes from the passage text only."""
    passage = P(source_id="p", text="-p, --parents\n       no error if existing, make parents as needed.",
                context="MKDIR(1) › OPTIONS")
    bare = P(source_id="p", text=passage.text)
    question = "What does mkdir -p do when a directory is existing?"
    [excerpt] = choose_excerpts(ExcerptTask(question=question, passages=(passage,)))
    assert excerpt.quote == passage.text
    assert passage_relevance(question, [f"{passage.context}\n{passage.text}"])[0].coverage > \
        passage_relevance(question, [bare.text])[0].coverage


_words = st.sampled_from(["backup", "kept", "days", "world", "cup", "cups", "football", "the", "how", "数据",
                          "备份", "世界", "\n", "\n       ", ".", "。", "-p", "file", "size"])
_text = st.lists(_words, min_size=1, max_size=30).map(" ".join)


@settings(max_examples=200, deadline=None)
@given(question=_text, texts=st.lists(_text, min_size=1, max_size=5), pages=st.booleans(),
       per_source=st.integers(0, 3), total=st.integers(0, 6))
@example(question="Who won the 1998 football world cup?", texts=["cups cups cups", "world"], pages=False,
         per_source=2, total=4)
@example(question="cup", texts=["cups", "cup cup"], pages=True, per_source=1, total=4)
def test_quotes_are_whole_sentences_within_limits(question: str, texts: list[str], pages: bool, per_source: int,
                                                  total: int) -> None:
    """Issue 17.2, INF-4: any material → each quote is a run of whole sentences of its own passage,
    verbatim, within every limit; a question sharing one term at most is never answered."""
    passages = tuple(P(source_id=f"s{i % 3}", text=text, page="https://x/p" if pages else None)
                     for i, text in enumerate(texts) if text.strip())
    if not passages:
        return
    task = ExcerptTask(question=question, passages=passages, max_excerpts=total, max_per_source=per_source)
    excerpts = choose_excerpts(task)
    assert len(excerpts) <= total
    counts: dict[str, int] = {}
    for excerpt in excerpts:
        counts[excerpt.source_id] = counts.get(excerpt.source_id, 0) + 1
        owners = [p.text for p in passages if p.source_id == excerpt.source_id and excerpt.quote in p.text]
        assert any(text[s.start:].startswith(excerpt.quote) for text in owners for s in split_sentences(text))
    assert all(count <= per_source for count in counts.values())
    if pages:
        assert len(excerpts) <= per_source
    relevance = passage_relevance(question, [p.text for p in passages])
    if all(item.matched < min(2, item.terms) for item in relevance):
        assert excerpts == []


def test_the_task_contract_says_when_to_answer_nothing() -> None:
    """Issue 17.3: the instructions a real model reads say to return an empty list when no passage answers
    and state the per-source and per-page limit."""
    system = task_messages(ExcerptTask(question="q", passages=(P(source_id="a", text="t"),)))[0]["content"]
    assert "when none of the passages answers the question, return an empty excerpt list" in system
    assert "At most maxPerSource quotes from one sourceId and at most maxPerSource from one page" in system


EVIDENCE = (AnswerEvidence(id="e1", quote="Backups are kept for 30 days. The office opens at nine."),
            AnswerEvidence(id="e2", quote="Each backup is retained for 30 days and then deleted."),
            AnswerEvidence(id="e3", quote="Backups are kept for 30 days."))


def test_answer_task_round_trips_through_the_task_machinery() -> None:
    """Issue 17.4: AnswerTask travels like the other tasks: messages, response_format with the
    AnswerChoice schema, and parse_task on the other side."""
    task = AnswerTask(question="How long are backups kept?", evidence=EVIDENCE)
    messages = task_messages(task)
    assert parse_task(messages) == task
    assert json.loads(messages[1]["content"])["task"] == "answer_question"
    answer_format = response_format(task)
    assert answer_format["json_schema"]["name"] == "ditto_research_answer"
    assert answer_format["json_schema"]["schema"] == dict(ANSWER_CHOICE_SCHEMA)


async def test_the_builtin_model_answers_from_the_quotes() -> None:
    """Issue 17.4: 1-3 sentences copied verbatim from the cited quotes, most relevant first, each citing
    every evidence item whose quote holds it, a further one only when it is nearly as relevant as the
    first; the answer satisfies the schema."""
    client = create_infer_client()
    task = AnswerTask(question="How long are backups kept before they are deleted?", evidence=EVIDENCE)
    result = await client.reasoning.sample(model=ModelConfig(), messages=task_messages(task),
                                           response_format=response_format(task))
    assert result.parsed == {"sentences": [  # "deleted" is the rarer word: that sentence says more
        {"text": "Each backup is retained for 30 days and then deleted.", "evidence": ["e2"]}]}
    # "Backups are kept for 30 days." says less of it and stays out (under ANSWER_FOLLOW_UP_SHARE of the
    # best); asked what it answers best, it opens the answer, citing both quotes that hold it.
    kept = answer_question(AnswerTask(question="How long are backups kept?", evidence=EVIDENCE))
    assert [(s.text, s.evidence) for s in kept] == [("Backups are kept for 30 days.", ("e1", "e3"))]
    office = answer_question(AnswerTask(question="When does the office open?", evidence=EVIDENCE))
    assert [(s.text, s.evidence) for s in office] == [("The office opens at nine.", ("e1",))]
    assert answer_question(AnswerTask(question="How long?", evidence=())) == []


@settings(max_examples=150, deadline=None)
@given(question=_text, quotes=st.lists(_text, min_size=0, max_size=5))
@example(question="what?", quotes=["。。。", "x"])
def test_answer_invariants(question: str, quotes: list[str]) -> None:
    """Issue 17.4: any evidence → at most 3 distinct sentences, each verbatim in every quote it cites,
    citing only given ids; the JSON satisfies ANSWER_CHOICE_SCHEMA."""
    evidence = tuple(AnswerEvidence(id=f"e{i}", quote=quote) for i, quote in enumerate(quotes) if quote.strip())
    answer = answer_question(AnswerTask(question=question, evidence=evidence))
    assert len(answer) <= 3 and len({s.text for s in answer}) == len(answer)
    assert bool(answer) == any(split_sentences(item.quote) for item in evidence)
    by_id = {item.id: item.quote for item in evidence}
    for sentence in answer:
        assert sentence.evidence and all(sentence.text in by_id[ident] for ident in sentence.evidence)
    Draft202012Validator(dict(ANSWER_CHOICE_SCHEMA)).validate(
        {"sentences": [sentence.to_json_dict() for sentence in answer]})


async def test_relevance_threshold_option_is_checked() -> None:
    """Issue 17.3, INF-3: options.relevanceThreshold is a number in [0, 1]; 0 quotes any passage sharing
    two terms."""
    client = create_infer_client()
    task = ExcerptTask(question="Who won the 1998 football world cup?",
                       passages=(P(source_id="a", text="The world cup of tea."),))
    loose = await client.reasoning.sample(model=ModelConfig(options={"relevanceThreshold": 0}),
                                          messages=task_messages(task), response_format=response_format(task))
    assert loose.parsed == {"excerpts": [{"sourceId": "a", "quote": "The world cup of tea."}]}
    strict = await client.reasoning.sample(model=ModelConfig(), messages=task_messages(task),
                                           response_format=response_format(task))
    assert strict.parsed == {"excerpts": []}
    with pytest.raises(InferError) as raised:
        await client.reasoning.sample(model=ModelConfig(options={"relevanceThreshold": 2}),
                                      messages=task_messages(task))
    assert raised.value.code == "INFER_INVALID_INPUT"


def test_a_named_subject_no_passage_holds_means_no_evidence() -> None:
    """Issue 17.3, WF-7: a question about a name (FAT32, PostgreSQL, Jupiter) whose name no shown passage
    holds gets no evidence, however many of its other words a passage shares ("Maximum file size
    exceeded." is curl's, not FAT32's); the same passages answer once one of them names the subject."""
    from ditto.worker.infer.extractive import subject_terms

    assert subject_terms("What is the maximum file size on a FAT32 file system?") == ["fat32"]
    assert subject_terms("Which port does PostgreSQL listen on by default?") == ["postgresql"]
    assert subject_terms("How do I make ls sort files?") == []  # "I" and a question's first word are no name
    assert subject_terms("What is the recommended intake of vitamin C?") == []
    assert subject_terms("Which sshd_config option stops root logins?") == ["sshd_config"]  # an identifier
    client = P(source_id="client", text="NoRootLogin\n       Stops ssh from logging in as root on the "
               "server side.", context="SSH_CONFIG(5) › DESCRIPTION")
    question = "Which sshd_config option stops root from logging in over SSH on the server side?"
    assert choose_excerpts(ExcerptTask(question=question, passages=(client,))) == []
    server = P(source_id="server", text="PermitRootLogin\n       Specifies whether root can log in using ssh.",
               context="SSHD_CONFIG(5) › DESCRIPTION", document="file:///man/sshd_config.txt")
    assert [e.source_id for e in choose_excerpts(ExcerptTask(question=question, passages=(client, server)))] \
        == ["server"]
    curl = P(source_id="curl", text="63      Maximum file size exceeded.", context="curl(1) › EXIT CODES")
    ssh = P(source_id="ssh", text="By default, the local port is bound to the listen address.")
    assert choose_excerpts(ExcerptTask(question="What is the maximum file size on a FAT32 file system?",
                                       passages=(curl, ssh))) == []
    assert choose_excerpts(ExcerptTask(question="Which port does PostgreSQL listen on by default?",
                                       passages=(curl, ssh))) == []
    fat = P(source_id="fat", text="On FAT32 the maximum file size is 4 GiB minus one byte.")
    chosen = choose_excerpts(ExcerptTask(question="What is the maximum file size on a FAT32 file system?",
                                         passages=(curl, fat)))
    assert chosen and chosen[0].source_id == "fat"


def test_chinese_option_questions_and_the_question_script() -> None:
    """Issue 17.3 (Chinese): "选项有什么作用" only says what is asked — the option's line, which never says
    选项, passes the gate on the command and the option; of two passages that say the same, the one in the
    question's script is quoted."""
    english = P(source_id="en", text="-a, --all\n       do not ignore entries starting with .",
                context="LS(1) › DESCRIPTION")
    chinese = P(source_id="zh", text="-a, --all\n       不要忽略以点号（“.”）起始的条目", context="LS(1) › 描述")
    noise = P(source_id="tar", text="--numeric-owner\n       总是用数字作为 用户/组 的名字",
              context="TAR(1) › 所有选项")
    chosen = choose_excerpts(ExcerptTask(question="ls 的 -a 选项有什么作用？", passages=(english, chinese, noise),
                                         max_excerpts=1))
    assert [e.source_id for e in chosen] == ["zh"]
    chosen = choose_excerpts(ExcerptTask(question="What does the -a option of ls do?",
                                         passages=(chinese, english, noise), max_excerpts=1))
    assert [e.source_id for e in chosen] == ["en"]


def test_a_lead_in_does_not_open_the_answer() -> None:
    """Issue 17.4: a sentence ending in a colon introduces a command or a list; it does not answer "What is
    jq?" ahead of the sentence that does."""
    evidence = (AnswerEvidence(id="e1", quote="To build a statically linked version of jq, run:"),
                AnswerEvidence(id="e2", quote="jq is a lightweight and flexible command-line JSON processor."))
    answer = answer_question(AnswerTask(question="What is jq?", evidence=evidence))
    assert answer[0].text.startswith("jq is a lightweight") and answer[0].evidence == ("e2",)


def test_a_question_in_the_evidence_does_not_open_the_answer() -> None:
    """Issue 17 (an answer people can read): a FAQ item's question line ("How to get rid off annoying beeps for
    ambiguous completions?", bash's README.Debian) shares the user's words but is the heading of an answer, not one;
    the answer opens with the sentence that says something."""
    listed = ("The bash globbing completion functions now allow completions to be listed\n    with double tabs or if "
              "`show-all-if-ambiguous' is set.")
    evidence = (AnswerEvidence(id="e1", quote="How to get rid off annoying beeps for ambiguous completions?"),
                *(AnswerEvidence(id=f"e{number}", quote=listed) for number in (2, 3, 4)))
    question = "How do I stop bash from beeping when tab completion is ambiguous?"
    answer = answer_question(AnswerTask(question=question, evidence=evidence))
    assert [sentence.evidence for sentence in answer] == [("e2", "e3", "e4")]
    [alone] = answer_question(AnswerTask(question=question, evidence=evidence[:1]))
    assert alone.evidence == ("e1",), "a question still stands when nothing else does"


def test_a_chinese_negation_is_a_function_word_as_english_not_is() -> None:
    """Issue 17 (Chinese material): 不 ("not") is a stop character, as "not" is an English stop word, so the
    而不是 ("rather than") of a question does not make "不应" in an unrelated sentence a match; the answer
    opens with the sentence about symbolic links (ln's Chinese man page)."""
    evidence = (AnswerEvidence(id="e1", quote="-s, --symbolic\n              创建符号链接而非硬链接"),
                AnswerEvidence(id="e2", quote="默认创建硬链接，当使用\n       --symbolic\n       时创建符号链接。"
                                              "默认情况下，创建每个目标时不应存在与新链接的名称相同的文件。"))
    answer = answer_question(AnswerTask(question="ln 如何创建符号链接而不是硬链接？", evidence=evidence))
    assert answer[0].text.endswith("创建符号链接而非硬链接") and answer[0].evidence == ("e1",)
    assert "不" not in analyze("而不是")


def test_a_question_naming_a_manual_page_in_lower_case_is_about_that_page() -> None:
    """Issue 17.3, WF-7: "wget" in a question is a name when a shown passage sits under the page WGET(1): curl's
    page, which shares "retry" and "default" with it, does not answer it."""
    question = "How many retries does wget make by default?"
    wget = P(source_id="w", text="-t number\n       Set number of tries. The default is to retry 20 times.",
             context="WGET(1) › OPTIONS", document="file:///wget")
    curl = P(source_id="c", text="--retry <num>\n       Retry this number of times; by default curl makes no retries.",
             context="curl(1) › OPTIONS", document="file:///curl")
    assert [e.source_id for e in choose_excerpts(ExcerptTask(question=question, passages=(curl, wget)))] == ["w"]
    # Without wget's page among those shown, "wget" is still a name: no English word list holds it.
    assert choose_excerpts(ExcerptTask(question=question, passages=(curl,))) == []


def test_a_page_title_that_is_an_english_word_names_a_page_only_when_it_ranks_first() -> None:
    """Issue 17.3 (real questions): "kept up to date" does not name date(1) because a passage of DATE(1) came
    last among those shown; the README that answers is quoted. The same title on the first passage shown
    ("sort" ranked first for "how do I sort numerically?") still names its page."""
    question = "How is the list of login shells in /etc/widgets kept up to date?"
    readme = P(source_id="r", text="/etc/widgets is no longer a config file: the list of login shells in it is "
               "maintained by the add-widget and remove-widget programs.", document="file:///README.widgets")
    date = P(source_id="d", text="%Z alphabetic time zone abbreviation (e.g., EDT)",
             context="DATE(1) › DESCRIPTION", document="file:///date")
    assert [e.source_id for e in choose_excerpts(ExcerptTask(question=question, passages=(readme, date)))] == ["r"]
    sort = P(source_id="s", text="-n, --numeric-sort\n       compare according to string numerical value",
             context="SORT(1) › OPTIONS", document="file:///sort")
    ls = P(source_id="l", text="-v     natural sort of (version) numbers within text",
           context="LS(1) › OPTIONS", document="file:///ls")
    assert [e.source_id for e in choose_excerpts(ExcerptTask(question="How do I sort numerically?",
                                                            passages=(sort, ls)))] == ["s"]


def test_the_answer_gives_what_the_question_asks_for() -> None:
    """Issue 17.4: the answer opens with the sentence of the kind asked for: an amount for "how many" (not a
    manual section or a bug number), a reason for "why", a replacement for "what instead" (not the line of the
    option replaced), Chinese for a question in Chinese; an option the question says is not given ("when I
    don't pass -n") does not decide it; an option's description is one answer, whole. (Only a question asks
    for an amount or a reason: see ``asks_a_question``.)"""
    def first(question: str, *quotes: str) -> str:
        evidence = tuple(AnswerEvidence(id=f"e{n}", quote=quote) for n, quote in enumerate(quotes, 1))
        return answer_question(AnswerTask(question=question, evidence=evidence))[0].text

    assert first("How many times does wget retry?", "Wget retries the download when the connection fails.",
                 "It tries 20 times in all before wget stops.") == "It tries 20 times in all before wget stops."
    assert first("What is the smallest RSA key length?", "Set a minimum RSA key length in ssh(1).",
                 "For RSA keys the length must be at least 1024 bits.") \
        == "For RSA keys the length must be at least 1024 bits."
    assert first("Why were the LC_TIME symlinks brought back?", "* remove LC_TIME symlinks (Closes: #584837)",
                 '* undo "remove LC_TIME symlinks" as this causes problems with date display') \
        == 'undo "remove LC_TIME symlinks" as this causes problems with date display'
    assert first("What does watch show when I don't pass -d?",
                 "-d, --differences: highlight the differences between successive updates",
                 "Without it, watch shows the plain output of the command.") \
        == "Without it, watch shows the plain output of the command."
    option = "-Z cipher\n     Specifies the cipher to use for encryption. The default is “aes256-ctr”."
    assert first("Which cipher protects a private key unless I pick another with -Z?", option) == option
    assert first("touch 的 --time 参数写成 mtime，相当于哪个短选项？",
                 "--time=WORD change the specified time: WORD is modify or mtime: equivalent to -m",
                 "--time=关键字 改变文件的指定时间：若关键字是 modify 或 mtime，则等同于 -m") \
        == "--time=关键字 改变文件的指定时间：若关键字是 modify 或 mtime，则等同于 -m"
    assert first("--control-path is deprecated; what should I use instead?",
                 "The --control-path option is deprecated and its output should not be parsed.",
                 "Use --control-list and --control-show instead.") == "Use --control-list and --control-show instead."


def test_a_question_asking_for_an_amount_needs_a_passage_stating_one() -> None:
    """Issue 17.3, WF-7: "how many / what port / 多久" is answered only by a passage that states an amount: in
    digits, in words ("twice", "nightly", "三十天", "两次"), or none or one of the thing asked about ("makes no
    retries"). The rsync daemon's port is not in ssh's sentences about listening ports, and "one-shot" or a
    manual section ("ssh(1)") is no amount."""
    def quoted(question: str, text: str, context: str | None = None) -> list[str]:
        task = ExcerptTask(question=question, passages=(P(source_id="s", text=text, context=context),))
        return [excerpt.source_id for excerpt in choose_excerpts(task)]

    listens = "The ssh daemon listens for connections from clients; see ssh(1) for the one-shot forwarding."
    assert quoted("What port does the ssh daemon listen on for connections?", listens) == []
    assert quoted("What port does the ssh daemon listen on for connections?", listens + " It listens on 22.") == ["s"]
    assert quoted("How often do the backups run?", "The backups run twice a day.") == ["s"]
    assert quoted("How often do the backups run?", "The backups run nightly.") == ["s"]
    assert quoted("How often do the backups run?", "The backups run when the server is idle.") == []
    assert quoted("How many retries does curl make?", "By default curl makes no retries.") == ["s"]
    assert quoted("备份保留多久？", "备份保留三十天。") == ["s"]
    assert quoted("备份每天运行几次？", "备份每天运行两次。") == ["s"]
    assert quoted("备份保留多久？", "备份保留在对象存储中。") == []
    # A statement (a claim to check) asks for nothing.
    assert quoted("The ssh daemon listens on a port for connections from clients.", listens) == ["s"]


def _quoted_and_answered(question: str, text: str, context: str | None = None) -> tuple[str, list[str]]:
    """The one quote a one-passage task gets, and the answer's sentences drawn from it."""
    [excerpt] = choose_excerpts(ExcerptTask(question=question, passages=(P(source_id="s", text=text, context=context),),
                                            max_per_source=1))
    answer = answer_question(AnswerTask(question=question, evidence=(AnswerEvidence(id="e1", quote=excerpt.quote),)))
    return excerpt.quote, [sentence.text for sentence in answer]


def test_a_record_s_labelled_fields_are_quoted_and_answered_with_the_sentence_after_them() -> None:
    """Issue 17.2, 17.4 (INF-3): a record's labelled fields ("What: … Status: … When: …") hold the question's
    words but say nothing alone; the quote and the answer take the sentence after them, which does."""
    record = ("What: --control-path (dpkg-query option)\nStatus: deprecated\nWhen: 1.18.x\nWarning: man page\n"
              " This was a semi-public interface now superseded by --control-list and\n --control-show, which are "
              "a better interface.\n Although there might still be uses for it, it is kept for now.")
    quote, answer = _quoted_and_answered("dpkg-query's --control-path is deprecated; what am I supposed to use "
                                         "instead?", record)
    assert quote.startswith("What: --control-path") and "superseded by --control-list" in quote
    assert "superseded by --control-list" in answer[0]


def test_a_default_finishes_the_sentence_before_it_and_answers_a_question_asking_for_one() -> None:
    """Issue 17.2, 17.4 (INF-3): a manual's "Defaults to /bin/bash." says nothing alone and everything after the
    description it finishes: quotes and answers keep the two together. A question asking for a default
    (adduser.conf(5), xxd(1)) is answered by the sentence that states one, not by an example that holds more of
    its words."""
    field = ("DSHELL The login shell to be used for all new users.  Defaults to /bin/bash.\n"
             "EXTRA_GROUPS\n       This is the space-separated list of groups that new non-system users will be\n"
             "       added to.  Defaults to users.")
    quote, answer = _quoted_and_answered("What is the default login shell for new users?", field)
    assert quote == "DSHELL The login shell to be used for all new users.  Defaults to /bin/bash." == answer[0]
    assert len(answer) == 1
    uids = ("FIRST_UID  and  LAST_UID\n       specify an inclusive range of UIDs from which UIDs for non-system users "
            "can be  dy‐\n       namically allocated.  Defaults to 1000 - 59999.")
    [excerpt] = choose_excerpts(ExcerptTask(question="Which range of UIDs is used for non-system users?",
                                            passages=(P(source_id="u", text=uids),), max_per_source=1))
    assert excerpt.quote.endswith("Defaults to 1000 - 59999.")
    octets = (AnswerEvidence(id="e1", quote="Print 120 bytes as continuous hexdump with 20 octets per line."),
              AnswerEvidence(id="e2", quote="-c cols | -cols cols\n       Format <cols> octets per line. Default 16 "
                                            "(-i: 12, -ps: 30, -b: 6). Max 256."))
    first = answer_question(AnswerTask(question="How many octets per line does xxd print by default?",
                                       evidence=octets))[0]
    assert "Default 16" in first.text and first.evidence == ("e2",)
    # Without a default asked for, the example may open the answer: the rule is the question's, not the page's.
    other = answer_question(AnswerTask(question="How many octets per line does the continuous hexdump print?",
                                       evidence=octets))[0]
    assert "Print 120 bytes" in other.text


def test_an_answer_sentence_leaves_a_list_item_s_mark_to_the_quote() -> None:
    """Issue 17.4 (INF-3): gitignore(5)'s "•   Trailing spaces are ignored…" is a list item; the answer reads
    as sentences, so its sentence starts after the mark (still verbatim in the quote), and an option that opens
    a line ("-a, --all") is no mark."""
    for quote, expected in (("•   Trailing spaces are ignored unless they are quoted with backslash.",
                              "Trailing spaces are ignored unless they are quoted with backslash."),
                             ("- Trailing spaces are ignored.", "Trailing spaces are ignored."),
                             ("-a, --all\n       do not ignore trailing spaces", "-a, --all\n       do not ignore "
                                                                              "trailing spaces")):
        evidence = (AnswerEvidence(id="e1", quote=quote),)
        [answer] = answer_question(AnswerTask(question="How are trailing spaces treated?", evidence=evidence))
        assert answer.text == expected and answer.text in quote and answer.evidence == ("e1",)


def test_a_short_line_of_its_own_is_answered_with_the_sentence_under_it() -> None:
    """Issue 17.4 (INF-3): fstab(5)'s "The fifth field (fs_freq)." is a label over what that field is for; an
    answer that opened with it alone said nothing. It is one answer entry with the sentence under it; two short
    sentences on one line are not a label."""
    quote = ("The fifth field (fs_freq).\n       This field is used by dump(8) to determine which filesystems "
             "need to be dumped.")
    [answer] = answer_question(AnswerTask(question="Which program uses the fifth field of fstab?",
                                          evidence=(AnswerEvidence(id="e1", quote=quote),)))
    assert answer.text == quote
    inline = "Short one. Which program uses the field is said here.\nNext line."
    texts = [a.text for a in answer_question(AnswerTask(question="Which program uses the field?",
                                                        evidence=(AnswerEvidence(id="e1", quote=inline),)))]
    assert texts[0] == "Which program uses the field is said here."


def test_a_web_page_is_about_what_any_of_its_passages_shown_names() -> None:
    """Issue 17.3, WF-7: a web page's passages come without headings, at most two a page: a passage answers a
    question about a name that the page's other passage holds; a file's passage must hold it (or its headings)."""
    question = "How do I avoid SQLITE_BUSY_SNAPSHOT when a read transaction will write later?"
    texts = ("Start the transaction with BEGIN IMMEDIATE when a read transaction will write later.",
             "A read that becomes a write may fail with SQLITE_BUSY_SNAPSHOT.")
    web = tuple(P(source_id=f"w{n}", text=text, page="https://wiki/Isolation") for n, text in enumerate(texts))
    assert "w0" in {e.source_id for e in choose_excerpts(ExcerptTask(question=question, passages=web))}
    files = tuple(P(source_id=f"f{n}", text=text, document="file:///isolation.txt") for n, text in enumerate(texts))
    assert "f0" not in {e.source_id for e in choose_excerpts(ExcerptTask(question=question, passages=files))}


def test_a_question_of_several_parts_gets_a_sentence_for_each() -> None:
    """Issue 17.4: "How long are backups retained, and how often do they run?" is answered for both parts, even
    when the second part's sentence scores under the follow-up share of the whole question's best."""
    evidence = (AnswerEvidence(id="e1", quote="Confirmed: production database backups are retained for 31 days."),
                AnswerEvidence(id="e2", quote="Backup interval: the job runs every 8 hours."))
    question = "How long are production database backups retained, and how often do backups run?"
    answer = answer_question(AnswerTask(question=question, evidence=evidence))
    assert [sentence.evidence for sentence in answer] == [("e1",), ("e2",)]
    # Stated as a claim, it is one part: the follow-up share alone decides.
    claim = "Production database backups are retained for 31 days, and backups run often."
    assert len(answer_question(AnswerTask(question=claim, evidence=evidence))) == 1


def test_a_document_s_own_name_says_what_it_is_about() -> None:
    """Issue 17.3, WF-7: a file named ``cp.txt`` is about cp, so its passage answers a question naming cp even
    when the passage itself never says "cp"; the same passage in a file named otherwise does not."""
    text = "-R, -r, --recursive 递归复制目录及其子目录内的所有内容"
    question = "cp 怎样递归复制目录？"
    named = P(source_id="a", text=text, document="file:///docs/cp.txt")
    assert [e.source_id for e in choose_excerpts(ExcerptTask(question=question, passages=(named,)))] == ["a"]
    other = P(source_id="a", text=text, document="file:///docs/notes.txt")
    assert choose_excerpts(ExcerptTask(question=question, passages=(other,))) == []


def test_the_folders_a_file_sits_in_name_its_collection() -> None:
    """Issue 17.3, WF-7: a file of ``/usr/share/doc/nodejs/api`` is about Node, so its passage answers "my Node
    parent process" without writing "Node" (the folder may add a couple of letters: ``nodejs``); the same passage
    in a folder named otherwise does not, and a record's id is no folder."""
    question = "Will a child process I spawned keep running after my Node parent process exits?"
    text = "Child processes may continue running after the parent exits regardless of whether they are detached."
    for document, answered in (("file:///usr/share/doc/nodejs/api/child_process.md", True),
                               ("file:///usr/share/doc/python3/child_process.md", False),
                               ("nodejs/child_process", False)):
        passage = P(source_id="c", text=text, document=document)
        chosen = choose_excerpts(ExcerptTask(question=question, passages=(passage,)))
        assert bool(chosen) is answered, document


def test_a_unit_an_argument_and_an_everyday_word_are_no_names() -> None:
    """Issue 17.3, WF-7: "2 GB" is a quantity as "2GB" is; what a call written in the question passes
    (``setTimeout(fn, 100)``) is the asker's placeholder; "my app" names no program. A unit without its number
    stays a name."""
    from ditto.worker.infer.extractive import subject_terms, unknown_names

    assert subject_terms("What heap size should I give Node with 2 GB of RAM?") == ["node", "ram"]
    assert "gb" in subject_terms("Does GB mean gigabytes here?")
    question = "Will setTimeout(fn, 100) run my callback exactly 100 milliseconds later?"
    assert subject_terms(question) == ["settimeout"] and unknown_names(question) == []
    assert unknown_names("Will worker threads make my app faster with rsync?") == ["rsync"]


def test_names_joined_by_or_are_either_one() -> None:
    """Issue 17.3, WF-7: a question about "a Node HTTP or TCP client" is answered by a passage that writes one of
    the two; a passage writing neither still does not count."""
    question = "What typically causes a connection reset error in an HTTP or TCP client?"
    http = P(source_id="h", text="A connection reset error in the http client normally results from the remote "
                                 "end closing the connection abruptly.", document="file:///errors.md")
    neither = P(source_id="n", text="A connection reset error in the client normally results from the remote "
                                    "end closing the connection abruptly.", document="file:///errors.md")
    assert [e.source_id for e in choose_excerpts(ExcerptTask(question=question, passages=(http,)))] == ["h"]
    assert choose_excerpts(ExcerptTask(question=question, passages=(neither,))) == []


@settings(max_examples=200, deadline=None)
@given(question=st.text(min_size=1, max_size=300).filter(lambda text: text.strip()),
       document=st.one_of(st.none(), st.text(min_size=1, max_size=200)),
       page=st.one_of(st.none(), st.text(min_size=1, max_size=200)),
       context=st.one_of(st.none(), st.text(min_size=1, max_size=200)))
@example(question="How many retries does wget make?", document="http://[not-a-url", page=None, context="WGET(1)")
def test_names_rules_take_any_text(question: str, document: str | None, page: str | None,
                                   context: str | None) -> None:
    """Issue 17.3 (bad input): whatever a caller puts in a passage's ``document``, ``page`` or ``context`` (not a
    URL, an unbalanced bracket, control characters), choosing excerpts and answering never raise, and every
    quote is the passage's own text."""
    passage = P(source_id="p", text="The default is to retry 20 times (see wget(1)).", document=document,
                page=page, context=context)
    for excerpt in choose_excerpts(ExcerptTask(question=question, passages=(passage,))):
        assert excerpt.quote in passage.text
    answer_question(AnswerTask(question=question, evidence=(AnswerEvidence(id="e1", quote=passage.text),)))


def test_a_question_that_leaves_something_out_asks_for_its_default() -> None:
    """Issue 17.2, 17.4 (INF-3): "when I don't change it", "unless I tell it otherwise", "with no options at all"
    and 不指定 ask for a default without saying "default"; the quote and the answer are the sentence that states
    one (less(1)'s -b, uname(1)), not the one that shares most of the question's words."""
    buffers = ("-bn or --buffers=n\n       Specifies the amount of buffer space less will use for each file, in units "
               "of kilo‐\n       bytes (1024 bytes).  By default 64 KB of buffer space is used for each file (unless "
               "the\n       file is a pipe).  With -b, n kilobytes of buffer space are used for each file\n"
               "       instead.  If n is -1, buffer space is unlimited; that is, the entire file can be read\n"
               "       into memory.")
    for question in ("How much buffer memory does less reserve per file when I don't change it?",
                     "How much buffer space does less use for each file unless I tell it otherwise?"):
        quote, answer = _quoted_and_answered(question, buffers)
        assert "By default 64 KB" in quote and "By default 64 KB" in answer[0], question
        assert "If n is -1" not in quote
    question = "What does uname print if I run it without any option?"
    [excerpt] = choose_excerpts(ExcerptTask(question=question, passages=(
        P(source_id="u", context="UNAME(1) › DESCRIPTION",
          text="Print certain system information.  With no OPTION, same as -s."),), max_per_source=1))
    assert excerpt.quote.endswith("With no OPTION, same as -s.")
    # The subject left out after "and" ("… and don't give a priority"): a default asked for all the same.
    priority = ("-p, --priority priority\n       Enter the message into the log with the specified priority.  The "
                "priority may be\n       specified numerically or as a facility.level pair.  For example, -p "
                "local3.info\n       logs the message as informational in the local3 facility.  The default is\n"
                "       user.notice.")
    quote, answer = _quoted_and_answered("When I send a message to the system log from the command line and don't "
                                         "give a priority, which facility and level does it end up with?", priority)
    assert quote.endswith("The default is\n       user.notice."), quote
    # The same page asked about the buffer itself: the rule is the question's.
    quote, answer = _quoted_and_answered("What is the unit of the buffer space less uses for each file?", buffers)
    assert answer[0].startswith("-bn or --buffers=n")


def test_why_quotes_the_sentence_that_gives_the_reason() -> None:
    """Issue 17.2, 17.4 (INF-3): "Why does file normally refuse … unless I pass -s?" asks for a reason: the quote
    runs on to file(1)'s "because …" sentence, which shares no word with the question that the sentence before it
    lacks; and "unless I pass -s" names the option the question is *not* about."""
    special = ("-s, --special-files\n        Normally, file only attempts to read and determine the type of argument "
               "files which\n        stat(2) reports are ordinary files.  This prevents problems, because reading "
               "special\n        files may have peculiar consequences.  Specifying the -s option causes file to also"
               "\n        read argument files which are block or character special files.  This is useful for "
               "determining the filesystem\n        types of the data in raw disk partitions, which are block special "
               "files.")
    question = "Why does file normally refuse to read block or character special files unless I pass -s?"
    quote, answer = _quoted_and_answered(question, special)
    assert "because reading special\n        files may have peculiar consequences." in quote
    assert any("because reading special" in sentence for sentence in answer)


def test_what_causes_asks_for_a_reason() -> None:
    """Issue 17.2, 17.4 (INF-3): "What typically causes a 'connection reset by peer' error?" asks for a cause as
    "why" asks for a reason: the quote runs on from the error's name to the sentence that says what it results
    from, which shares no word with the question that the sentence before it lacks."""
    errors = ("* `ECONNRESET` (Connection reset by peer): A connection was forcibly closed by a peer. This normally "
              "results from a loss of the connection on the remote socket due to a timeout or reboot. Commonly "
              "encountered via the `http` and `net` modules.")
    question = "What typically causes a 'connection reset by peer' error in an HTTP client?"
    quote, _ = _quoted_and_answered(question, errors)
    assert "This normally results from a loss of the connection" in quote


def test_advice_to_applications_is_a_way_to_do_it() -> None:
    """Issue 17.2, 17.4 (INF-3): "How do I avoid that?" is answered by what documentation tells applications,
    programmers or developers to do ("To guard against this, applications should expand …"): the quote runs on
    from the sentence naming the trouble to that one."""
    rtree = ("Rounding the R*Tree entry bounding boxes outward might cause a few extra entries to appear in an "
             "overlapping query. However, for a \"contained-within\" style query, rounding the bounding boxes "
             "outward might cause some entries to be excluded from the result set if the edge of the entry "
             "bounding box corresponds to the edge of the query bounding box. To guard against this, "
             "applications should expand their contained-within query boxes slightly by rounding down the "
             "lower coordinates.")
    question = ("My R*Tree 'contained within' query misses entries whose edges exactly match the query box. "
                "How do I avoid that?")
    quote, _ = _quoted_and_answered(question, rtree)
    assert "applications should expand their" in quote


def test_a_fix_the_page_recommends_and_what_the_time_depends_on_are_quoted_with_the_trouble() -> None:
    """Issue 17.2, 17.4 (INF-3): "How do I avoid that?" runs on to "Employing the -ttt option … should solve the
    problem."; "Why does it wait some time?" to "The time taken depends on …"; "how quickly does it notice?"
    asks for an amount, and the quote runs on to "every 15 seconds"."""
    notes = ("strace-log-merge does not work well with strace logs generated by strace -tt invocation that pass "
             "midnight, as those lack the information required for the proper sorting. Employing the -ttt option in "
             "the respective strace invocation should solve the problem.")
    quote, _ = _quoted_and_answered("I ran strace -ff -tt overnight and strace-log-merge put the lines from after "
                                    "midnight in a nonsense order. How do I avoid that next time?", notes,
                                    "STRACE-LOG-MERGE(1) › NOTES")
    assert "Employing the -ttt option" in quote
    waits = ("The MMP block is corrupted or cannot be read for some reason. The e2mmpstatus program might wait for "
             "some time to see whether the MMP block is being updated. The time taken depends on how frequently the "
             "MMP block is being written by the other node.")
    quote, _ = _quoted_and_answered("Why does e2mmpstatus sometimes wait some time before it answers?", waits,
                                    "E2MMPSTATUS(8) › DESCRIPTION")
    assert "The time taken depends on" in quote
    carrier = ("[-h]\n       Exit when the carrier is lost.  This works on both /dev/tty and /dev/cua devices by "
               "directly\n       monitoring the carrier status every 15 seconds.")
    quote, _ = _quoted_and_answered("With slattach -h, how quickly does it notice that the carrier has gone away?",
                                    carrier)
    assert "every 15 seconds" in quote


def test_the_asker_s_own_data_and_numbered_names() -> None:
    """Issue 17.3, WF-7: an e-mail address or a URL in a question is the asker's data, not a name the passage must
    hold; a name with a number ("ttyS0") is held by a page that writes it without ("/dev/ttyS*"); a symlink is a
    word; a Chinese port stated in brackets ("端口 (默认是 3690)") states a port."""
    from ditto.worker.infer.extractive import subject_terms, unknown_names

    question = "My address is John.Smith@Example.COM in https://example.org/Page; does the capitalisation matter?"
    assert subject_terms(question) == [] and unknown_names(question) == []
    assert unknown_names("I replaced the file with a symlink and git stopped using it. Why?") == []
    slattach = P(source_id="s", text="tty Path to a serial device like /dev/ttyS*, /dev/cua* or /dev/ptmx.",
                 context="SLATTACH(8) › OPTIONS")
    assert choose_excerpts(ExcerptTask(question="Which serial devices can slattach put on /dev/ttyS0?",
                                       passages=(slattach,)))
    svn = P(source_id="z", text="-d, --daemon\n   使得 svnserve 以守护进程方式运行，在 svn 端口 (默认是 3690) "
                                "监听并提供服务。", context="svnserve(8) › 描述")
    question = "svnserve -d 跑成守护进程时，不指定端口的话监听哪个端口？"
    assert choose_excerpts(ExcerptTask(question=question, passages=(svn,)))


def test_an_option_s_entry_is_about_its_option_throughout() -> None:
    """Issue 17.2, 17.4 (INF-3): "with no -p" asks for -p's default, and "The default is set to cslip", which shares
    no word with the question, is said of the "[-p proto]" entry it sits in: the quote runs on to it."""
    entry = ("[-p proto]\n              Set  a  specific kind of protocol to use on the line.  The default is set to "
             "cslip,\n              i.e. compressed SLIP.  Other possible  values  are  slip  (normal  SLIP),  "
             "adaptive\n              (adaptive  CSLIP/SLIP), ppp (Point-to-Point Protocol) and kiss.  The special "
             "argument\n              tty can be used to put the device back into serial operation.  For kiss "
             "connections\n              the kissattach program should be used.")
    quote, _ = _quoted_and_answered("slattach with no -p: which protocol does it put on the line?", entry,
                                    "SLATTACH(8) › OPTIONS")
    assert quote.endswith("The default is set to cslip,\n              i.e. compressed SLIP.")


def test_a_call_s_argument_is_no_amount() -> None:
    """Issue 17.3 (INF-3): "How many rulesets …?" is not answered by code that passes a 0 to a function; the same
    sentence with the number said of the rulesets is."""
    question = "How many Landlock rulesets can landlock_restrict_self enforce on one thread?"
    code = P(source_id="l", text="The ruleset is enforced with landlock_restrict_self(ruleset_fd, 0) on the current "
                                 "thread.", context="Landlock(7) › EXAMPLES")
    assert choose_excerpts(ExcerptTask(question=question, passages=(code,))) == []
    said = P(source_id="l", text="At most 16 rulesets are enforced with landlock_restrict_self(ruleset_fd, 0) on the "
                                 "current thread.", context="Landlock(7) › EXAMPLES")
    assert choose_excerpts(ExcerptTask(question=question, passages=(said,)))


@pytest.mark.timeout(30)
@pytest.mark.parametrize("unit", ["a", "x.", "a-", "e@", "f(", "word or "])
def test_the_name_rules_take_linear_time_on_the_longest_question(unit: str) -> None:
    """Issue 17.3 (bad input): a question of the task's longest (100,000 characters) made of one pathological run
    (a single word, dots, hyphens, at signs, open calls, "or" after "or") is read in time proportional to its
    length: every rule that looks for names starts at a word's start, and no word that long is tried as English."""
    question = (unit * (100_000 // len(unit)))[:99_999] + "?"
    passage = P(source_id="p", text="The default is to retry 20 times (see wget(1)).", context="WGET(1)")
    choose_excerpts(ExcerptTask(question=question, passages=(passage,)))


def test_otherwise_finishes_the_case_a_question_leaves_out() -> None:
    """Issue 17.2, 17.4 (INF-3): "If I don't give dircolors a file, where …?" asks for what happens without one;
    dircolors(1) says it in the sentence that opens with "Otherwise" after the case with a file, and the quote runs
    on to it, across its line break."""
    page = ("If  FILE  is  specified, read it to determine which colors to use for which file types and\n"
            "       extensions.  Otherwise, a precompiled database is used.  For  details  on  the  format  of\n"
            "       these files, run 'dircolors --print-database'.")
    quote, _ = _quoted_and_answered("If I don't give dircolors a file, where does it get its colours from?", page,
                                    "DIRCOLORS(1) › DESCRIPTION")
    assert "Otherwise, a precompiled database is used." in quote


def test_an_amount_in_words_states_an_amount() -> None:
    """Issue 17.4 (INF-3): "kept for a year" answers "How long…?" as "30 days" does; the quote stays the sentence
    that answers, not the run with its neighbour's number."""
    quote, answer = _quoted_and_answered("How long are audit logs kept?", "Nightly backups are kept for 30 days, "
                                         "then deleted automatically. Audit logs are kept for a year.")
    assert quote == "Audit logs are kept for a year." == answer[0]


def test_an_exit_status_is_an_amount() -> None:
    """Issue 17.3 (INF-3): "What exit status does wc return …?" asks for a number: the wc page's passages, which
    are about wc and state none, are no evidence; a page that states its exit statuses is quoted."""
    question = "What exit status does wc return when one of the named files does not exist?"
    wc = ("--files0-from=F\n       read input from the files specified by NUL-terminated names in file F; If F is - "
          "then read\n       names from standard input.  wc prints the counts of each named file.")
    assert choose_excerpts(ExcerptTask(question=question, passages=(P(source_id="wc", text=wc),))) == []
    stated = wc + "  wc exits with status 1 when a named file does not exist."
    [excerpt] = choose_excerpts(ExcerptTask(question=question, passages=(P(source_id="wc", text=stated),),
                                            max_per_source=1))
    assert "exits with status 1" in excerpt.quote


def test_a_chinese_question_for_an_exit_status_needs_one_stated() -> None:
    """Issue 17 (Chinese material, INF-3): "会返回哪个退出状态码？" asks for an exit status as "What exit status …?"
    does: an example that happens to hold a port number (5000) states none; the page's exit status section, or a
    sentence that gives one ("则返回状态值为 1"), does."""
    question = "dropuser 执行失败（比如用户不存在）时，会返回哪个退出状态码？"
    example = P(source_id="ex", context="DROPUSER(1) › 例子",
                text="用在主机eden上的服务器删除用户joe， 端口是 5000，执行命令前提示并且显示执行的命令：")
    assert choose_excerpts(ExcerptTask(question=question, passages=(example,))) == []
    stated = P(source_id="st", context="DROPUSER(1) › 描述",
               text="如果 dropuser 执行失败（比如用户不存在），则返回状态值为 1。")
    assert [e.source_id for e in choose_excerpts(ExcerptTask(question=question, passages=(example, stated)))] \
        == ["st"]


def test_relying_on_an_exit_code_asks_for_no_amount() -> None:
    """Issue 17.3 (INF-3): only a question that asks *which* exit status or code asks for a number; one that
    wants an option so as to rely on the exit code ("只靠退出码判断结果，该用哪个选项？") is answered by the option."""
    status = P(source_id="md5sum", context="MD5SUM(1) › 描述", text="--status 不要输出任何信息，由返回值判断成功与否")
    question = "在脚本里用 md5sum -c 校验时，不想看到任何输出、只靠退出码判断结果，该用哪个选项？"
    assert [e.quote for e in choose_excerpts(ExcerptTask(question=question, passages=(status,)))] == [status.text]


def test_an_option_named_as_the_trouble_leaves_the_quotes_to_the_answer() -> None:
    """Issue 17.2 (INF-3): "usermod -G kicked my user out of their other groups. How do I add a group without
    removing the existing ones?" names -G, and the answer is -a: the quotes are not held to the option named (the
    answer still prefers it where the question asks what it does)."""
    text = ("-G, --groups GROUP1[,GROUP2,...[,GROUPN]]]\n           A list of supplementary groups which the user is "
            "also a member of.  If the user is\n           currently a member of a group which is not listed, the "
            "user will be removed from\n           the group.  This behaviour can be changed via the -a option, "
            "which appends the user to\n           the current supplementary group list.  Each group is separated "
            "from the next by a comma.")
    question = ("usermod -G kicked my user out of their other groups. How do I add a group without removing the "
                "existing ones?")
    task = ExcerptTask(question=question, passages=(P(source_id="u", context="USERMOD(8) › OPTIONS", text=text),))
    # The -a sentence says the question in other words (a cosine past the semantic follow-up, as on the real page).
    close = [0.65 if "-a option" in sentence else 0.3 for sentence in sentence_texts(task)]
    quotes = [e.quote for e in choose_excerpts(task, similarities=close)]
    assert any("which appends the user to" in quote for quote in quotes)


def test_a_digit_the_question_writes_finds_its_line_in_a_list_of_values() -> None:
    """Issue 17 (real questions): "exited with code 9" is answered by the list item "9 the widget name is taken",
    which shares nothing with the question but the digit and its heading path; the lines for other values are
    not quoted, and a question without a digit still prefers the prose to a list of values."""
    context = "WIDGETADD(8) › EXIT VALUES › widgetadd exits with one of these values:"
    items = [("0", "success"), ("2", "invalid command syntax"), ("9", "the widget name is taken"),
             ("12", "cannot create the widget directory")]
    passages = tuple(P(source_id=f"v{value}", text=f"{value}\n           {meaning}", context=context,
                       document="file:///widgetadd.txt") for value, meaning in items)
    task = ExcerptTask(question="widgetadd exited with code 9. What went wrong?", passages=passages, max_excerpts=1)
    [excerpt] = choose_excerpts(task)
    assert excerpt.source_id == "v9" and excerpt.quote.endswith("the widget name is taken")
    assert [relevance.passes() for relevance in passage_relevance(task.question, [
        f"{context}\n{passage.text}" for passage in passages])][2]
    without = ExcerptTask(question="What exit status is returned when an error occurred?",
                          passages=(P(source_id="frob", text=EXIT_STATUS),), max_excerpts=1)
    [prose] = choose_excerpts(without)
    assert prose.quote.endswith("and 2 if\n       an error occurred.")


def test_a_name_joined_by_an_underscore_holds_its_parts() -> None:
    """Issue 17 (real questions, WF-7): "the standard Unix PAM module" is pam_unix(8); its page writes "pam_unix",
    and the passage that answers was held to lack "Unix" and "PAM"."""
    text = ("The maximum length of a password supported by the pam_unix module via the helper binary is\n"
            "       PAM_MAX_RESP_SIZE - currently 512 bytes. The rest of the password provided by the\n"
            "       conversation function to the module will be ignored.")
    task = ExcerptTask(question="What is the longest password the standard Unix PAM module will check through its "
                                "helper program?",
                       passages=(P(source_id="pam", text=text, context="PAM_UNIX(8) › DESCRIPTION"),))
    assert any("currently 512 bytes" in excerpt.quote for excerpt in choose_excerpts(task))


def test_which_option_is_answered_by_an_option_s_description() -> None:
    """Issue 17 (real questions, INF-3): "Which userdel option also deletes the mail spool?" asked of pages that
    describe no option (useradd's and usermod's notes on MAIL_DIR) is unanswered, not answered by the note; a
    passage that opens with an option's tag answers it, and so do a setting's entry and prose that names an option.
    "command-line option" and "login.defs option" ask for an option too."""
    note = ("The MAIL_DIR and MAIL_FILE variables are used by useradd, usermod, and userdel to create, move, or "
            "delete the user's mail spool.")
    question = "Which userdel option also deletes the user's home directory and mail spool?"
    notes = (P(source_id="useradd", text=note, context="USERADD(8) › CONFIGURATION"),
             P(source_id="usermod", text=note, context="USERMOD(8) › CONFIGURATION"))
    assert choose_excerpts(ExcerptTask(question=question, passages=notes)) == []
    option = P(source_id="userdel", context="USERDEL(8) › OPTIONS",
               text="-r, --remove\n           Files in the user's home directory will be removed along with the home "
                    "directory itself and the user's mail spool.")
    assert next(e.source_id for e in choose_excerpts(ExcerptTask(question=question, passages=(*notes, option)))) \
        == "userdel"
    assert choose_excerpts(ExcerptTask(question="Which userdel command-line option deletes the user's mail spool?",
                                       passages=notes)) == []
    # A setting is an option too, its name a tag line or the heading over its description (a section's is not).
    setting = P(source_id="login.defs", context="LOGIN.DEFS(5) › DESCRIPTION › PASS_MAX_DAYS (number)",
                text="The maximum number of days a password may be used. Defaults to 99999.")
    question = "Which login.defs option sets the maximum number of days a password may be used?"
    assert [e.source_id for e in choose_excerpts(ExcerptTask(question=question, passages=(setting,)))] \
        == ["login.defs"]
    section = P(source_id="login.defs", context="LOGIN.DEFS(5) › DESCRIPTION", text=setting.text)
    assert choose_excerpts(ExcerptTask(question=question, passages=(section,))) == []
    # Prose that names the option answers too (a real Chinese page, held-out question).
    prose = P(source_id="uuencode", context="UUENCODE(1) › 描述",
              text="缺省标准 使用 UU 编码格式.  如果  在  命令行上  指定了 -m 选项, Uuencode 就 改用 base64 编码格式.")
    quotes = choose_excerpts(ExcerptTask(question="uuencode 默认用 UU 格式，如果想改成 base64 编码该加什么选项？",
                                         passages=(prose,)))
    assert quotes and "-m" in quotes[0].quote


def test_an_amount_must_be_stated_where_the_answer_would_be_quoted() -> None:
    """Issue 17 (real questions, INF-3): "Which port does journalctl use …?" is not answered by a passage about
    journalctl whose only number sits in a sentence about something else (80 columns); the sentence after the
    one quoted may state it ("… Defaults to 6.")."""
    text = ("journalctl may be used to send the contents of the systemd journal to a remote server. Its output is "
            "paged through less. Long lines are truncated to 80 columns.")
    question = "Which port does journalctl use to send logs to a remote server?"
    passage = P(source_id="j", text=text, context="JOURNALCTL(1) › DESCRIPTION")
    assert choose_excerpts(ExcerptTask(question=question, passages=(passage,))) == []
    told = P(source_id="j", context="LOGIND.CONF(5) › OPTIONS",
             text="NAutoVTs=\n           Configures how many virtual terminals get a login prompt spawned "
                  "automatically when the user switches to them.  Defaults to 6.")
    [excerpt] = choose_excerpts(ExcerptTask(question="How many virtual terminals get a login prompt spawned "
                                                     "automatically?", passages=(told,), max_excerpts=1))
    assert excerpt.quote.endswith("Defaults to 6.")


def test_a_man_page_s_name_line_answers_only_what_it_is() -> None:
    """Issue 17 (real questions, INF-3): hardlink's NAME and SYNOPSIS lines share its name with every question about
    it; "Why aren't my zero-length files merged into hardlinks?" quotes the -s option's sentence, never the NAME
    line, and a page whose only match is its NAME line is no evidence. "What is hardlink?" is answered by it."""
    name = P(source_id="name", text="hardlink - link multiple copies of a file", context="HARDLINK(1) › NAME")
    synopsis = P(source_id="synopsis", text="hardlink [options] [directory|file]...", context="HARDLINK(1) › SYNOPSIS")
    size = P(source_id="size", context="HARDLINK(1) › OPTIONS",
             text="-s, --minimum-size size\n           The minimum size to consider. By default this is 1, so empty "
                  "files will not be linked.")
    task = ExcerptTask(question="Why aren't my zero-length files being merged into hardlinks?",
                       passages=(name, synopsis, size))
    # The -s sentence says the question in other words (a cosine past the semantic gate, as on the real page).
    close = [0.7 if "empty files" in sentence else 0.5 for sentence in sentence_texts(task)]
    assert [e.source_id for e in choose_excerpts(task, similarities=close)] == ["size"]
    assert choose_excerpts(ExcerptTask(question="How do I make hardlink link copies of a file?",
                                       passages=(name, synopsis))) == []
    assert [e.source_id for e in choose_excerpts(ExcerptTask(question="What is hardlink?", passages=(name,)))] \
        == ["name"]


def test_a_man_page_s_name_line_ties_its_names_to_the_whole_page() -> None:
    """Issue 17 (real questions, WF-7): "the Apache log rotation program" is rotatelogs(8), and only its NAME line
    says Apache; its "offset" entry, which answers, is evidence when that line is shown of the same page, and not
    when it is not (or is another page's)."""
    document = "file:///docs/man-rotatelogs.txt"
    name = P(source_id="name", text="rotatelogs - Piped logging program to rotate Apache logs",
             context="ROTATELOGS(8) › NAME", document=document)
    offset = P(source_id="offset", context="ROTATELOGS(8) › OPTIONS", document=document,
               text="offset\n           The number of minutes offset from UTC. If omitted, zero is assumed and UTC "
                    "is used. For example, to use local time in the zone UTC -5 hours, specify a value of -300.")
    question = ("If I don't give the Apache log rotation program an offset argument, which time zone does it "
                "rotate by?")
    quotes = [e.quote for e in choose_excerpts(ExcerptTask(question=question, passages=(name, offset)))]
    assert any("UTC is used" in quote for quote in quotes)
    assert choose_excerpts(ExcerptTask(question=question, passages=(offset,))) == []
    elsewhere = P(source_id="name", text=name.text, context=name.context, document="file:///docs/man-other.txt")
    assert choose_excerpts(ExcerptTask(question=question, passages=(elsewhere, offset))) == []


def test_a_see_also_list_answers_nothing() -> None:
    """Issue 17 (real questions, INF-3): "How does blkdiscard's --secure option differ from what fstrim does?" was
    answered by fstrim's SEE ALSO line "blkdiscard(8), mount(8)"; a list of other pages (SEE ALSO, 参见) is never
    evidence, while the same words in a description are."""
    question = "How does blkdiscard's --secure option differ from what fstrim does?"
    see_also = P(source_id="fstrim", text="blkdiscard(8), mount(8)", context="FSTRIM(8) › SEE ALSO")
    assert choose_excerpts(ExcerptTask(question=question, passages=(see_also,))) == []
    zh = P(source_id="zh", text="blkdiscard(8), mount(8)", context="FSTRIM(8) › 参见")
    assert choose_excerpts(ExcerptTask(question="blkdiscard 和 fstrim 有什么区别？", passages=(zh,))) == []
    said = P(source_id="fstrim", context="FSTRIM(8) › DESCRIPTION",
             text="Unlike blkdiscard(8), fstrim discards only the blocks the mounted filesystem does not use; "
                  "the --secure option of blkdiscard asks for a secure discard of every block.")
    assert [e.source_id for e in choose_excerpts(ExcerptTask(question=question, passages=(see_also, said)))] \
        == ["fstrim"]


def test_a_page_title_s_english_words_are_judged_as_written() -> None:
    """Issue 17 (real questions, WF-7): machine-id(5) among the pages shown made every question that says "machine"
    a question about that page: its title's words were judged by their stems ("machin" is in no word list). An
    English word of a title names its page only from the first passage, as a one-word title does."""
    timer = P(source_id="timer", context="SYSTEMD.TIMER(5) › OPTIONS › Persistent=",
              text="If true, the time when the service unit was last triggered is stored on disk. When the timer is "
                   "activated, the service unit is triggered immediately if it would have been triggered at least "
                   "once during the time when the timer was inactive, for example because the system was powered "
                   "down.")
    machine_id = P(source_id="machine-id", context="MACHINE-ID(5) › DESCRIPTION",
                   text="The /etc/machine-id file contains the unique machine ID of the local system.")
    question = "How do I get a timer's job to run at startup if the machine was powered down when it was due?"
    quotes = choose_excerpts(ExcerptTask(question=question, passages=(timer, machine_id)))
    assert quotes and quotes[0].source_id == "timer"


def test_a_definition_list_entry_is_quoted_whole() -> None:
    """Issue 17 (real questions, INF-3): a short term over its indented meaning is one entry, like an option's:
    "How does gizmoctl power the machine off in its 'off' mode?" is answered by the entry's second sentence, not
    by its first alone ("off  ACPI state S5 (Poweroff)." said what, not how)."""
    entry = P(source_id="g", context="GIZMOCTL(8) › OPTIONS › -m, --mode mode",
              text="off\n               ACPI state S5 (Poweroff).  This is done by calling '/sbin/shutdown'.  "
                   "Not officially supported by ACPI, but it usually works.")
    [excerpt] = choose_excerpts(ExcerptTask(question="How does gizmoctl actually power the machine off in its "
                                                     "'off' mode?", passages=(entry,), max_excerpts=1))
    assert "This is done by calling '/sbin/shutdown'." in excerpt.quote
    assert excerpt.quote.startswith("off")


def test_a_run_reaches_the_amount_a_question_asks_for() -> None:
    """Issue 17 (real questions, INF-3): when the best sentence states no amount, the next sentence that does
    joins the quote ("How many name servers …?" → "Up to 3 of them are queried …")."""
    text = ("The resolver reads the name servers listed in widget.conf, one per line, in the order given.  "
            "Up to 3 of them are queried; further lines are ignored.")
    passage = P(source_id="w", text=text, context="WIDGET.CONF(5) › DESCRIPTION")
    [excerpt] = choose_excerpts(ExcerptTask(question="How many name servers listed in widget.conf does the "
                                                     "resolver read?", passages=(passage,), max_excerpts=1))
    assert "Up to 3" in excerpt.quote


def test_a_run_reaches_the_way_a_how_to_question_asks_for() -> None:
    """Issue 17 (real questions, INF-3): "How do I stop …?" asks for a way; when it is a sentence further on
    ("… Use --no-overlap with --find to avoid this problem."), the run bridges the sentence between."""
    text = ("It is possible to attach one image file to several independent loop devices.  Such a setup may be "
            "dangerous and can cause data loss and corruption.  Use --no-overlap with --find during setup to "
            "avoid this problem.")
    passage = P(source_id="l", text=text, context="LOOPCTL(8) › DESCRIPTION")
    question = "How do I stop loopctl from attaching a second loop device to an image file that is already attached?"
    [excerpt] = choose_excerpts(ExcerptTask(question=question, passages=(passage,), max_excerpts=1))
    assert excerpt.quote.startswith("It is possible") and excerpt.quote.endswith("avoid this problem.")
    why = choose_excerpts(ExcerptTask(question="What happens when one image file is attached to several "
                                               "independent loop devices?", passages=(passage,), max_excerpts=1))
    assert why and "Use --no-overlap" not in why[0].quote, "a question asking no way gets no bridge"


def test_an_amount_must_be_of_the_thing_asked() -> None:
    """Issue 17 (real questions, INF-3): "What exit status …?" is not answered by a page's "32 swap areas", nor
    "How many days …?" by "500 MB": an amount question names what it measures, and the passage stating the
    amount must speak of it (its words or its section: "EXIT STATUS")."""
    other = P(source_id="s", context="SWAPMAKE(8) › NOTES",
              text="Presently, Linux allows 32 swap areas.  The size of the swap area is given in 1024-byte blocks "
                   "by swapmake.")
    status = P(source_id="e", context="SWAPMAKE(8) › EXIT STATUS", text="4\n           the device is too small for "
                                                                       "a swap area")
    question = "What exit status does swapmake return when the device is too small for a swap area?"
    assert choose_excerpts(ExcerptTask(question=question, passages=(other,))) == []
    assert [e.source_id for e in choose_excerpts(ExcerptTask(question=question, passages=(other, status)))] == ["e"]
    kept = P(source_id="k", context="FROBD.CONF(5) › CACHE",
             text="frobd keeps at most 500 MB of downloaded packages in its cache directory.")
    days = P(source_id="d", context="FROBD.CONF(5) › CACHE",
             text="Downloaded packages are kept in the cache directory for 30 days, then removed by frobd.")
    question = "How many days does frobd keep downloaded packages in its cache?"
    assert choose_excerpts(ExcerptTask(question=question, passages=(kept,))) == []
    assert "d" in {e.source_id for e in choose_excerpts(ExcerptTask(question=question, passages=(kept, days)))}


def test_an_option_entry_on_its_tag_s_line_is_quoted_whole() -> None:
    """Issue 17 (real questions, INF-3): an option whose description starts on its tag's line, the rest indented
    under it ("-s sep Tells …" over "default separator is a comma."), is one entry, quoted whole like an entry
    whose tag stands on a line of its own: the default is the answer's second half."""
    entry = P(source_id="p", context="PIDLIST(8) › OPTIONS",
              text="-s sep Tells pidlist to use sep as an output separator if more than one PID  is  shown.  The\n"
                   "              default separator is a comma.")
    question = "When pidlist finds several PIDs, what does it put between them, and can I change that?"
    [excerpt] = choose_excerpts(ExcerptTask(question=question, passages=(entry,), max_excerpts=1))
    assert excerpt.quote.endswith("default separator is a comma.")
    [answer] = answer_question(AnswerTask(question=question, evidence=(AnswerEvidence(id="e1", quote=excerpt.quote),)))
    assert answer.text == excerpt.quote, "the answer takes the entry whole too"
    prose = P(source_id="q", context="PIDLIST(8) › DESCRIPTION",
              text="pidlist prints the PIDs it finds on one line.  The search stops at the first error.\n"
                   "No configuration file is read.")
    [alone] = choose_excerpts(ExcerptTask(question="What does pidlist print on one line?", passages=(prose,),
                                          max_excerpts=1))
    assert alone.quote == "pidlist prints the PIDs it finds on one line.", "prose is no entry: one sentence"


def test_a_name_written_in_the_plural_is_held_by_its_singular() -> None:
    """Issue 17 (real questions, INF-3): a question about "UNIX 98 ptys" is about pty(7), whose page writes "pty":
    a name in no word list keeps its "s" through the analyser, and was held missing from every passage shown."""
    limit = P(source_id="t", context="pty(7) › DESCRIPTION › UNIX 98 pseudoterminals",
              text="The kernel imposes a limit on the number of available UNIX 98 pseudoterminals.  The limit is "
                   "adjustable via /proc/sys/kernel/pty/max.")
    question = "Where do I raise the limit on UNIX 98 ptys?"
    [relevance] = passage_relevance(question, [f"{limit.context}\n{limit.text}"])
    assert not relevance.subject_missing
    assert {e.source_id for e in choose_excerpts(ExcerptTask(question=question, passages=(limit,)))} == {"t"}
    other = P(source_id="o", context="TTYSET(1) › DESCRIPTION", text="The kernel imposes a limit on the number of "
                                                                     "open files.")
    assert choose_excerpts(ExcerptTask(question="Where do I raise the limit on kernel ttyzs?", passages=(other,))) \
        == [], "a name no passage holds in either form is still missing"


def test_a_name_is_held_by_its_versioned_form() -> None:
    """Issue 17 (real questions, INF-3): a question about "php" is about what Debian's README calls php8: a name
    with its version number is the name; another name's version is not."""
    readme = P(source_id="r", context="README.Debian › Modules",
               text="The php8 module is enabled with a2enmod and runs one interpreter per worker\nprocess.")
    question = "Which command enables the php module?"
    [relevance] = passage_relevance(question, [f"{readme.context}\n{readme.text}"])
    assert not relevance.subject_missing
    assert [e.source_id for e in choose_excerpts(ExcerptTask(question=question, passages=(readme,)))] == ["r"]
    assert choose_excerpts(ExcerptTask(question="Which command enables the lua module?", passages=(readme,))) \
        == [], "another program's name is still missing"


def test_a_command_under_a_lead_in_answers_how_to_do_what_the_lead_in_says() -> None:
    """Issue 17 (real READMEs, INF-3): "If I compile Redis myself, how do I get TLS support built in?" is answered by
    the command under "To build with TLS support, … and run:", which shares no word of its own with the question:
    for a how-to question it is read with its lead-in. A question that asks no way (an exit status) does not make
    every item under "… the following exit values:" evidence."""
    lead = ("Building Redis › To build with TLS support, you'll need OpenSSL development libraries (e.g. libssl-dev "
            "on Debian/Ubuntu) and run:")
    code = P(source_id="code", context=lead, text="% make BUILD_TLS=yes")
    tests = P(source_id="tests", context="Building Redis",
              text="After building Redis, it is a good idea to test it using the test suite.")
    question = "If I compile Redis myself, how do I get TLS support built in?"
    quotes = [e.quote for e in choose_excerpts(ExcerptTask(question=question, passages=(tests, code)))]
    assert "% make BUILD_TLS=yes" in quotes
    values = P(source_id="getent", context="GETENT(1) › EXIT STATUS › One of the following exit values can be "
                                           "returned by getent:", text="2 One or more supplied key could not be found.")
    assert choose_excerpts(ExcerptTask(question="What exit status does lessecho return when something goes wrong?",
                                       passages=(values,))) == []


def test_a_command_in_one_passage_with_its_lead_in_is_quoted_with_it() -> None:
    """Issue 17 (real READMEs, INF-3): the passage cutter keeps a lead-in and the one command it introduces together.
    "What command fixes that?" asks for the command: the one under "… Run this command, as yourself:" is read with
    that lead-in and outranks the sentence that only describes the problem, and a quote of a command takes its
    lead-in along ("To force compiling against libc malloc, use:" says what "% make MALLOC=libc" is for)."""
    readme = "/usr/share/doc/openssh-client/README.Debian.gz"
    heading = "OTHER ISSUES › Problems logging in with RSA authentication"
    cause = P(source_id="cause", document=readme, context=heading,
              text="If you have trouble logging in with RSA authentication then the\nproblem is probably caused by "
                   "the fact that you have your home\ndirectory writable by group, as well as user (this is the "
                   "default on\nDebian systems).")
    fix = P(source_id="fix", document=readme, context=heading,
            text="Depending upon other settings on your system (i.e. other users being\nin your group) this could open "
                 "a security hole, so you will need to\nmake your home directory writable only by yourself.  Run this "
                 "command,\nas yourself:\n\n  chmod g-w ~/")
    question = ("My key-based logins keep getting refused, and someone told me it's because my home directory is "
                "group-writable, which is apparently the Debian default. What command fixes that?")
    quotes = [e.quote for e in choose_excerpts(ExcerptTask(question=question, passages=(cause, fix)))]
    assert any(quote.endswith("Run this command,\nas yourself:\n\n  chmod g-w ~/") for quote in quotes), quotes
    allocator = P(source_id="malloc", context="Allocator",
                  text="To force compiling against libc malloc, use:\n\n    % make MALLOC=libc")
    quotes = [e.quote for e in choose_excerpts(ExcerptTask(
        question="Which make command builds it with MALLOC set to libc?", passages=(allocator,)))]
    assert quotes == [allocator.text]


def test_a_name_cut_short_is_held_by_the_words_it_opens() -> None:
    """Issue 17 (real questions, INF-3): "a well-written crypto program" is about what a page calls cryptographic:
    a word cut short is in no word list, and was held to be a name that no passage holds."""
    pool = P(source_id="r", context="entropy(7) › DESCRIPTION",
             text="No cryptographic primitive can promise more than 256 bits of security, so a program that reads\n"
                  "       more than 256 bits from the kernel random pool per invocation is badly written.")
    question = "How much data from the kernel random pool should a well-written crypto program read at most?"
    assert [e.source_id for e in choose_excerpts(ExcerptTask(question=question, passages=(pool,)))] == ["r"]
    assert choose_excerpts(ExcerptTask(question="How much data from the kernel random pool should a well-written "
                                                "cryptx program read at most?", passages=(pool,))) == [], \
        "a name that opens no word of the passage is still missing"


def test_the_answer_keeps_a_short_quote_s_run_together() -> None:
    """Issue 17 (an answer people can read, INF-3): a short quote is the run of sentences chosen to carry what was
    asked — the cause after the symptom, the way after the problem, the amount after the setting — and the answer
    takes it whole where it took its first sentence alone; a sentence at its end about something else stays
    apart, and a second sentence of the kind asked adds nothing to a first that has it."""
    def first(question: str, quote: str) -> str:
        return answer_question(AnswerTask(question=question, evidence=(AnswerEvidence(id="e1", quote=quote),)))[0].text

    cause = ("frobmsg can fail reporting a permission denied error.  This is usually caused by the\n"
             "       frob_restrict kernel setting.")
    assert first("As a normal user, frobmsg says permission denied. What is usually behind that?", cause) == cause
    way = ("It is possible to attach one image file to several loop devices.  Such a setup may be dangerous.  "
           "Use --no-overlap with --find to avoid this problem.")
    assert first("How do I stop frobsetup from attaching a second loop device to an image file?", way) == way
    assert first("How wide is the user name column of frobw by default?",
                 "FROBW_USERLEN overrides the width of the user name column.  The default is 8.  Values over 32 "
                 "are cut.") == "FROBW_USERLEN overrides the width of the user name column.  The default is 8."
    assert first("How long are backups kept?", "Backups are kept for 30 days. The office opens at nine.") \
        == "Backups are kept for 30 days."


def test_a_lead_in_s_number_or_a_keyword_in_capitals_is_no_amount() -> None:
    """Issue 17 (real questions, INF-3): "How many tables can a schema hold?" is not answered by "the following
    three table declarations …:" (a lead-in counts what it introduces) nor by "… PRIMARY KEYs on WITHOUT ROWID
    tables." (code, not "without tables"); a sentence that states the number is."""
    question = "How many tables can a single schema hold at most?"
    for text in ("A schema may hold tables of several kinds; the following three table declarations are "
                 "equivalent:\n\nCREATE TABLE t1(a);",
                 "Every table of a schema may hold a unique index.  (The exceptions are PRIMARY KEYs on WITHOUT "
                 "ROWID tables.)"):
        page = P(source_id="w", page="https://docs/createtable.html", text=text)
        assert choose_excerpts(ExcerptTask(question=question, passages=(page,))) == [], text
    limit = P(source_id="l", page="https://docs/limits.html",
              text="A single schema can hold at most 2000 tables.  Tables beyond that are refused.")
    assert [e.source_id for e in choose_excerpts(ExcerptTask(question=question, passages=(limit,)))] == ["l"]


def test_a_passage_holds_the_names_its_section_holds_unless_it_is_another_entry() -> None:
    """Issue 17 (real questions, WF-7): a reader reads an entry with its neighbours. "Only the last one takes
    effect" follows the entries of -H, -L and -P under the same heading, and answers which of them wins though it
    names none; a setting's entry under the same heading as the one asked about is about its own setting, and its
    default answers nothing about the other (no evidence: the entry asked about states no default)."""
    def section(document: str, heading: str, *texts: str) -> tuple[ExcerptPassage, ...]:
        return tuple(P(source_id=f"s{n}", document=document, context=heading, text=text)
                     for n, text in enumerate(texts))

    shown = section("file:///docs/zh/zhman-frobgrp.txt", "FROBGRP(1) › 选项",
                    "-H 如果命令行参数是一个指向目录的符号链接，则遍历该目录",
                    "当指定了 -R 选项时，下面的几个选项会修改遍历层次目录的方式。"
                    "如果指定了以下多个选项，只有最后一个选项才会生效。",
                    "-L 遍历每一个遇到的指向目录的符号链接")
    quotes = choose_excerpts(ExcerptTask(question="frobgrp 递归处理时如果同时写了 -H、-L、-P 里的好几个，以哪个为准？",
                                         passages=shown))
    assert any("只有最后一个选项才会生效" in excerpt.quote for excerpt in quotes), quotes
    entries = section("file:///docs/man-frob.conf.txt", "FROB.CONF(5) › OPTIONS",
                      "IdleNapSec=\n           Configures the delay after which the idle action is taken.",
                      "NapDelayMaxSec=\n           Specifies the maximum time a nap request is delayed. Defaults to 5.")
    assert choose_excerpts(ExcerptTask(question="What is the default value of IdleNapSec= in frob.conf?",
                                       passages=entries)) == []


def test_a_question_whether_there_is_an_amount_asks_for_none() -> None:
    """Issue 17 (real questions, INF-3): read by hand on SQLite's generated-columns page, "Can a generated column
    have a DEFAULT value?" came back no-evidence: "default value" made it an amount question, and the sentence that
    answers it ("may not have a default value") states no amount. A question that asks whether is answered yes or no
    by what the page says; one that asks for the value still needs a value."""
    page = P(source_id="w", page="https://docs/computed.html",
             text="Computed fields may not have a default value (they may not use the DEFAULT clause).  The value of a "
                  "computed field is always the value of its expression.")
    quotes = choose_excerpts(ExcerptTask(question="Can a computed field have a DEFAULT value?", passages=(page,)))
    assert quotes and "may not have a default value" in quotes[0].quote
    assert choose_excerpts(ExcerptTask(question="What is the default value of a computed field?",
                                       passages=(page,))) == []


def test_the_scene_of_a_question_about_a_named_page_need_not_be_on_the_page() -> None:
    """Issue 17 (real questions, WF-7): people set a scene before they ask ("I ran frobshare --pid=/run/ns/pid1 on
    its own and it errored out. What did I leave off?"). The names of that scene — their own file, a key they
    pressed, another program — are not on the page of the program they ask about, and the page still answers. A
    name in what is asked stays required ("What does the ROTA column mean?" is not answered by another column),
    and so does every name when no page shown is the named program's."""
    page = (P(source_id="s", document="file:///docs/man-frobshare.txt", context="FROBSHARE(1) › OPTIONS",
              text="-p, --pid[=file]\n       Create a new process namespace. Creation of a persistent process "
                   "namespace will fail\n       if the --fork option is not also specified."),
            P(source_id="s", document="file:///docs/man-frobshare.txt", context="FROBSHARE(1) › DESCRIPTION",
              text="frobshare runs a program in new namespaces."))
    asked = ("I'm trying to keep a process namespace around after the program exits, so I ran frobshare "
             "--pid=/run/ns/pid1 on its own and it errored out. What did I leave off?")
    quotes = choose_excerpts(ExcerptTask(question=asked, passages=page))
    assert any("will fail\n       if the --fork option" in excerpt.quote for excerpt in quotes), quotes
    # The same name in the question itself is what is asked about: no page shown holds it.
    assert choose_excerpts(ExcerptTask(question="What does frobshare do with the pid1 namespace file?",
                                       passages=page)) == []
    # Without a page of the program named, the scene's names are held as before.
    anonymous = tuple(P(source_id="s", document="file:///docs/notes.txt", text=passage.text) for passage in page)
    assert choose_excerpts(ExcerptTask(question=asked, passages=anonymous)) == []


def test_a_capital_that_opens_a_sentence_of_the_question_is_no_name() -> None:
    """Issue 17 (real questions, WF-7): "… two entries for one hostname in /etc/frob/auth.conf. Anything I should
    watch out for?" — "Anything" is capitalised because it opens a sentence, and a page that never says "anything"
    still answers; a capital inside a sentence ("… the Frobnitz relay …") still names something. "Is that OK?" asks
    nothing about an "OK"."""
    from ditto.worker.infer.extractive import subject_terms

    assert "anyth" not in subject_terms("I need two entries for one host. Anything I should watch out for?")
    assert "frobnitz" in subject_terms("How do I reach the Frobnitz relay?")
    assert subject_terms("Can I use '#' as the separator? Is that OK?") == []


def test_a_question_about_a_default_needs_a_page_that_tells_one() -> None:
    """Issue 17 (honest no-evidence, INF-3): "When I run frobtrace without -F or -T, which objects does it trace by
    default?" over a page that only lists -F and -T says nothing of what happens without them: no evidence. The
    same page with a sentence that tells the default ("By default …", "otherwise …", "instead of …") answers it."""
    page = functools.partial(_page_of, "file:///docs/man-frobtrace.txt", "FROBTRACE(1) › OPTIONS")

    options = ("-F, --from FROMLIST\n       Trace calls from objects on FROMLIST.",
               "-T, --to TOLIST\n       Trace calls to objects on TOLIST.")
    asked = "When I run frobtrace without -F or -T, which objects does it trace by default?"
    assert choose_excerpts(ExcerptTask(question=asked, passages=page(*options))) == []
    # Leaving an option out asks for the default as surely as the word "default" does.
    assert choose_excerpts(ExcerptTask(question="If I run frobtrace without -F, which objects does it trace calls "
                                                "from?", passages=page(*options))) == []
    told = page(*options, "frobtrace traces the calls of every object loaded by the\n       program unless -F or -T "
                          "narrows it; otherwise all calls are traced.")
    quotes = choose_excerpts(ExcerptTask(question=asked, passages=told))
    assert any("otherwise all calls are traced" in excerpt.quote for excerpt in quotes), quotes


def _answered_only_when_stated(page: Callable[..., tuple[P, ...]], asked: str, others: tuple[str, ...],
                               statement: str, expected: str) -> None:
    """``asked`` over the ``page`` passages ``others`` is no-evidence; with ``statement`` added, a quote holds
    ``expected``."""
    assert choose_excerpts(ExcerptTask(question=asked, passages=page(*others))) == []
    quotes = choose_excerpts(ExcerptTask(question=asked, passages=page(*others, statement)))
    assert any(expected in excerpt.quote for excerpt in quotes), quotes


def test_a_question_for_an_algorithm_needs_a_page_that_names_one() -> None:
    """Issue 17 (honest no-evidence, INF-3): "Which hash algorithm does pathchk use …?" is not answered by pathchk's
    page, which is about file names and names no algorithm; b2sum's "… the max for the blake2 algorithm …" and a
    setting called HMAC_CRYPTO_ALGO do name one; so does a Chinese page that says 算法."""
    pathchk = _page_of("file:///docs/man-pathchk.txt", "PATHCHK(1) › DESCRIPTION",
                       "Diagnose invalid or unportable file names.", "-P     check for empty names and leading \"-\"")
    assert choose_excerpts(ExcerptTask(question="Which hash algorithm does pathchk use to check file names?",
                                       passages=pathchk)) == []
    b2sum = _page_of("file:///docs/man-b2sum.txt", "B2SUM(1) › DESCRIPTION",
                     "-l, --length=BITS\n       digest length in bits; must not exceed the max for the blake2 "
                     "algorithm and must be\n       a multiple of 8")
    assert choose_excerpts(ExcerptTask(question="Which hash algorithm does b2sum use?", passages=b2sum))
    timestamp = _page_of("file:///docs/man-pam_timestamp.txt", "PAM_TIMESTAMP(8) › OPTIONS",
                         "The default encryption hash is taken from the HMAC_CRYPTO_ALGO variable from "
                         "/etc/login.defs.")
    assert choose_excerpts(ExcerptTask(question="Which hash algorithm does pam_timestamp use by default?",
                                       passages=timestamp))
    firstboot = _page_of("file:///docs/zh/zhman-frobboot.txt", "FROBBOOT(1) › 选项",
                         "--root-password=PASSWORD 设置root用户的密码， 同时创建 shadow(5) 文件。")
    assert choose_excerpts(ExcerptTask(question="frobboot 用什么哈希算法来加密写入 shadow 文件的 root 密码？",
                                       passages=firstboot)) == []


def test_a_chinese_question_that_counts_a_unit_needs_a_page_that_writes_it() -> None:
    """Issue 17 (Chinese material, honest no-evidence, INF-3): "最长允许多少字节？" is not answered by a page that
    counts something else ("一个字符串", "三个实例"); "一个" before a noun is an article, no amount. The page that
    writes the unit with its number answers; "好几次" (several times) asks for no amount at all."""
    page = functools.partial(_page_of, "file:///docs/zh/zhman-frobnotify.txt", "FROBNOTIFY(1) › 选项")

    _answered_only_when_stated(page, "frobnotify --status= 发送的状态字符串最长允许多少字节？",
                               ("--status= 向 frobd 发送一个任意内容的状态字符串消息。",
                                "从三个实例派生对应的状态字符串。"),
                               "--status= 状态字符串最长 4096 字节，超出部分被截断。", "4096 字节")
    several = P(source_id="d", document="file:///docs/zh/zhman-frobdb.txt", context="FROBDB(1) › 注意",
                text="frobdb 每次连接服务器都询问口令时，设立 $HOME/.pgpass 文件即可免去输入口令。")
    quotes = choose_excerpts(ExcerptTask(question="frobdb 要连服务器好几次，每次都让我输入口令，怎么免去？",
                                         passages=(several,)))
    assert any(".pgpass" in excerpt.quote for excerpt in quotes), quotes


def test_a_question_for_a_version_needs_a_page_that_states_one() -> None:
    """Issue 17 (honest no-evidence, INF-3): "In which version was --force first added?" over a page that describes
    --force and names no version is not answered by that description; a page that says "since version 0.17" is."""
    entry = P(source_id="s", document="file:///docs/man-frobdirs.txt", context="FROBDIRS(1) › OPTIONS",
              text="--force\n       Update existing frobdirs files, but force a full reset.")
    asked = "In which version of frobdirs was the --force option first added?"
    assert choose_excerpts(ExcerptTask(question=asked, passages=(entry,))) == []
    dated = P(source_id="s", document="file:///docs/man-frobdirs.txt", context="FROBDIRS(1) › OPTIONS",
              text="--force\n       Update existing frobdirs files, but force a full reset (since version 0.17).")
    quotes = choose_excerpts(ExcerptTask(question=asked, passages=(dated,)))
    assert quotes and "since version 0.17" in quotes[0].quote


def test_a_question_for_a_file_needs_a_page_that_names_one() -> None:
    """Issue 17 (honest no-evidence, INF-3): "Where does frobmap -n write the new configuration file?" over the
    option's entry, which says what -n does and names no file, is no evidence; the entry that names the file
    ("~/.config/frobmap/rc", "in the current directory") answers. "Which file attributes …" asks for no file."""
    def entry(text: str) -> ExcerptPassage:
        return P(source_id="s", document="file:///docs/man-frobmap.txt", context="FROBMAP(1) › OPTIONS", text=text)

    asked = "Where does frobmap -n write the new configuration file?"
    assert choose_excerpts(ExcerptTask(question=asked, passages=(entry("-n, --create-rc\n       Create a new "
                                                                       "configuration file for frobmap."),))) == []
    named = entry("-n, --create-rc\n       Create a new configuration file for frobmap, written to\n"
                  "       ~/.config/frobmap/rc.")
    quotes = choose_excerpts(ExcerptTask(question=asked, passages=(named,)))
    assert quotes and "~/.config/frobmap/rc" in quotes[0].quote
    attributes = entry("-i, --immutable\n       Set the immutable file attribute; frobfs ignores the append-only one.")
    quotes = choose_excerpts(ExcerptTask(question="Which frobmap file attributes does frobfs ignore?",
                                         passages=(attributes,)))
    assert quotes, "a question about file attributes asks for no file"


def test_a_question_for_an_exit_status_needs_a_sentence_that_states_one() -> None:
    """Issue 17 (honest no-evidence, INF-3): "What exit status does frobscan return when it finds bad blocks?" is
    not answered by "Default is 0, meaning frobscan will exit after the first pass." (a number, and the verb
    "exit"); a sentence that states a status ("The exit status returned by frobscan is 0 on success and 1 on
    failure.") or a line of the page's EXIT STATUS section does."""
    def passage(text: str, heading: str = "OPTIONS") -> ExcerptPassage:
        return P(source_id="s", document="file:///docs/man-frobscan.txt", context=f"FROBSCAN(8) › {heading}",
                 text=text)

    asked = "What exit status does frobscan return when it finds bad blocks on the device?"
    option = passage("-p num_passes\n       Repeat scanning the device for bad blocks until none are new. "
                     "Default is 0, meaning frobscan will exit after the first pass.")
    assert choose_excerpts(ExcerptTask(question=asked, passages=(option,))) == []
    stated = passage("The exit status returned by frobscan is 0 when no bad blocks\n       were found and 3 when "
                     "it finds bad blocks.", heading="DESCRIPTION")
    quotes = choose_excerpts(ExcerptTask(question=asked, passages=(option, stated)))
    assert any("3 when it finds bad blocks" in " ".join(excerpt.quote.split()) for excerpt in quotes), quotes
    listed = passage("3      bad blocks were found on the device", heading="EXIT STATUS")
    quotes = choose_excerpts(ExcerptTask(question=asked, passages=(option, listed)))
    assert any("bad blocks were found" in excerpt.quote for excerpt in quotes), quotes


def test_a_chinese_word_written_two_ways_is_one_word_to_the_gate() -> None:
    """Issue 17 (Chinese material, WF-7): Chinese manuals write "default" as 缺省 or 默认. "frobb
    默认读的是哪个文件？" is answered by "frobb 缺省上列出 /var/log/frobtmp 文件中的日志记录", which shares only the
    name with the question if the two are different words."""
    page = P(source_id="s", document="file:///docs/zh/zhman-frobb.txt", context="FROBB(1) › 描述",
             text="frobb 缺省上列出 /var/log/frobtmp 文件中的日志记录，这个文件包含有所有不良的登录企图。")
    quotes = choose_excerpts(ExcerptTask(question="frobb 默认读的是哪个文件？里面记的是什么？", passages=(page,)))
    assert quotes and "/var/log/frobtmp" in quotes[0].quote


def test_a_question_for_a_limit_needs_a_sentence_that_states_one() -> None:
    """Issue 17 (Chinese material, honest no-evidence, INF-3): "frobescape 生成的单元名称最长可以有多少个字符？" is not
    answered by "从三个字符串派生三个对应的实例单元名" (an amount, not a limit); "单元名称最长 256 个字符" is."""
    page = functools.partial(_page_of, "file:///docs/zh/zhman-frobescape.txt", "FROBESCAPE(1) › 描述")

    _answered_only_when_stated(page, "frobescape 生成的单元名称最长可以有多少个字符？",
                               ("frobescape 为一个路径生成对应的单元名称。",
                                "从三个字符串派生三个对应的实例单元名称。"),
                               "生成的单元名称最长 256 个字符，超过时报错。", "最长 256 个字符")


def test_a_limit_is_of_what_was_asked() -> None:
    """Issue 17 (honest no-evidence, INF-3): "What is the maximum number of files frobtar can store in one archive?"
    is not answered by "The maximum verbosity level is 3." on frobtar's page: a bound, of something else."""
    page = functools.partial(_page_of, "file:///docs/man-frobtar.txt", "FROBTAR(1) › OPTIONS")

    asked = "What is the maximum number of files that frobtar can store in a single archive?"
    verbosity = page("-v, --verbose\n       Verbosely list the files processed. The maximum verbosity level is 3.")
    assert choose_excerpts(ExcerptTask(question=asked, passages=verbosity)) == []
    bounded = page(verbosity[0].text, "An archive holds at most 65535 files; frobtar refuses to add more.")
    quotes = choose_excerpts(ExcerptTask(question=asked, passages=bounded))
    assert any("at most 65535 files" in excerpt.quote for excerpt in quotes), quotes
    # A setting's name says what it bounds (SQLite's limits page: "The default setting for SQLITE_MAX_COLUMN is 2000.").
    setting = P(source_id="w", page="https://docs/limits.html",
                text="The FROBDB_MAX_COLUMN compile-time parameter is used to set an upper bound on the number of "
                     "columns in a table. The default setting for FROBDB_MAX_COLUMN is 2000.")
    quotes = choose_excerpts(ExcerptTask(question="What is the default setting for the maximum number of columns?",
                                         passages=(setting,)))
    assert any("FROBDB_MAX_COLUMN is 2000" in excerpt.quote for excerpt in quotes), quotes


def test_a_question_for_a_permission_mode_needs_a_sentence_that_states_one() -> None:
    """Issue 17 (honest no-evidence, INF-3): "If I mount a frobfs without mode=, what permissions does its root
    directory get?" is not answered by "mode=mode Set initial permissions of the root directory."; "… defaults to
    1777" is."""
    page = functools.partial(_page_of, "file:///docs/man-frobfs.txt", "FROBFS(5) › MOUNT OPTIONS")

    asked = "If I mount a frobfs without mode=, what permissions does its root directory get?"
    entry = page("mode=mode\n       Set initial permissions of the root directory.")
    assert choose_excerpts(ExcerptTask(question=asked, passages=entry)) == []
    stated = page("mode=mode\n       Set initial permissions of the root directory. The permissions\n"
                  "       of the root directory default to 1777.")
    quotes = choose_excerpts(ExcerptTask(question=asked, passages=stated))
    assert any("default to 1777" in excerpt.quote for excerpt in quotes), quotes


def test_how_long_it_waits_is_answered_by_a_duration() -> None:
    """Issue 17 (honest no-evidence, INF-3, WF-7): "How long does frobcd add wait for the disc before it gives up?"
    asks for a duration: an option entry whose only numbers are versions ("old 1.1/1.2 discs") does not answer it,
    a sentence that gives seconds does; "how long can a label be" asks for a length, which any number may give (our
    wording, laid out as a manual page's options)."""
    page = functools.partial(_page_of, "file:///docs/man-frobcd.txt", "FROBCD(8) › OPTIONS")
    asked = "How long does frobcd add wait for me to insert the disc before it gives up?"
    versions = page("-a, --thorough\n       Thorough scan; this option may be needed with some old 1.1/1.2 discs. It\n"
                    "       makes frobcd add wait longer for the disc to be scanned.")
    assert choose_excerpts(ExcerptTask(question=asked, passages=versions)) == []
    timed = page("-a, --thorough\n       Thorough scan; frobcd add waits 30 seconds for the disc to be inserted, then"
                 "\n       gives up.")
    assert any("30 seconds" in e.quote for e in choose_excerpts(ExcerptTask(question=asked, passages=timed)))
    label = page("-l, --label\n       The disc label frobcd add writes; a label can be up to 32 characters long.")
    assert choose_excerpts(ExcerptTask(question="How long can the disc label frobcd add writes be?", passages=label))


def test_a_version_number_is_no_amount_unless_a_version_is_asked() -> None:
    """Issue 17 (honest no-evidence, INF-3, WF-7, a real question): "How long may a line in a frobchange file be?"
    asks for an amount, and a changelog entry whose only number is a version ("Since: 1.15.5") gives none; a
    question for the release that added something is answered by it (our wording, laid out as a changelog)."""
    page = functools.partial(_page_of, "file:///docs/changelog-frob.txt", "frob (1.15.5) unstable")
    entry = page("What: the old frobchange line parser\n  Status: removed\n  Since: 1.15.5\n  Why: the new parser "
                 "reads every frobchange line.")
    asked = "How long may a line in a frobchange file be before the frobchange parser complains?"
    assert choose_excerpts(ExcerptTask(question=asked, passages=entry)) == []
    quotes = choose_excerpts(ExcerptTask(question="Since which frob release is the old frobchange line parser "
                                                  "removed?", passages=entry))
    assert any("1.15.5" in excerpt.quote for excerpt in quotes), quotes


def test_a_question_for_a_variable_or_a_signal_needs_a_sentence_that_names_one() -> None:
    """Issue 17 (honest no-evidence, INF-3): "Which environment variable gives frobdump a different default format?"
    is not answered by a format entry that names none; "FROBDUMP_FORMAT overrides it" is. Likewise "Which signal
    does frobkill send when none is named?" needs SIGTERM, TERM or a number, not "sends a signal to all processes"."""
    page = functools.partial(_page_of, "file:///docs/man-frobdump.txt", "FROBDUMP(1) › FORMATS")
    asked = "Which environment variable can I set to give frobdump a different default format string?"
    entry = page("_p     Output characters in the default character set.")
    assert choose_excerpts(ExcerptTask(question=asked, passages=entry)) == []
    named = page(entry[0].text, "The default format string can be changed by setting FROBDUMP_FORMAT in the\n"
                                "       environment.")
    quotes = choose_excerpts(ExcerptTask(question=asked, passages=named))
    assert any("FROBDUMP_FORMAT" in excerpt.quote for excerpt in quotes), quotes
    # A word in capitals of four letters or more is a variable; a three-letter acronym ("the GNU tools") is not.
    word = page("By default frobdump reads its format string from FROBFMT in the environment.")
    assert any("FROBFMT" in excerpt.quote for excerpt in choose_excerpts(ExcerptTask(question=asked, passages=word)))
    acronym = page("By default frobdump reads its format string as the GNU tools do.")
    assert choose_excerpts(ExcerptTask(question=asked, passages=acronym)) == []
    kill = functools.partial(_page_of, "file:///docs/man-frobkill.txt", "FROBKILL(8) › DESCRIPTION")
    asked = "Which signal does frobkill send when it is run without a signal number?"
    assert choose_excerpts(ExcerptTask(question=asked, passages=kill("frobkill sends a signal to all processes "
                                                                     "except those in its own session."))) == []
    quotes = choose_excerpts(ExcerptTask(question=asked, passages=kill(
        "frobkill sends a signal to all processes except those in its own session; without a signal number it\n"
        "       sends SIGTERM.")))
    assert any("SIGTERM" in excerpt.quote for excerpt in quotes), quotes


def test_a_chinese_question_on_the_page_it_names_needs_less_of_its_words() -> None:
    """Issue 17 (Chinese material, WF-7): "往日志里记命令输出，用 frobcat 命令 和 命令 | frobcat 哪种更好？
    为什么？" is answered on frobcat's page by "首选使用前一种方法，因为同一时间仅需要运行一个进程…", which
    shares few character pairs with it: on the page of the program a Chinese question names, a fifth of the
    question's weight is enough. The same passage on a page the question does not name still needs half."""
    answer = ("虽然上述两个例子的最终效果差不多， 但是首选使用前一种方法，"
              "因为同一时间仅需要运行一个进程， 并且可以同时捕获 stdout 与 stderr 的内容。")
    asked = "往日志里记命令输出，用 frobcat 命令 和 命令 | frobcat 哪种更好？为什么？"
    named = (P(source_id="s", document="file:///docs/zh/zhman-frobcat.txt", context="FROBCAT(1) › 例子", text=answer),
             P(source_id="s", document="file:///docs/zh/zhman-frobcat.txt", context="FROBCAT(1) › 描述",
               text="frobcat 可以将标准输入重定向到系统日志中。"))
    quotes = choose_excerpts(ExcerptTask(question=asked, passages=named))
    assert any("首选使用前一种方法" in excerpt.quote for excerpt in quotes), quotes
    elsewhere = (P(source_id="t", document="file:///docs/zh/notes.txt", text=answer),)
    assert choose_excerpts(ExcerptTask(question=asked, passages=elsewhere)) == []


def test_a_path_in_markdown_code_states_a_file() -> None:
    """Issue 17 (real READMEs, INF-3): "where do I put …?" asks for a file, and a README writes paths as Markdown code
    ("`$HOME/.postgresqlrc`: per-user preferences …"): a path opened by a backtick states one."""
    prefs = P(source_id="readme", document="/usr/share/doc/frob/README.md.gz", context="Configuration hierarchy",
              text="* `$HOME/.frobrc`: per-user preferences for default version/cluster and database; overrides "
                   "`/etc/frob/user_clusters`.")
    question = ("As an ordinary user of frob, where do I put my own preferred default version, cluster and database so "
                "I don't have to pass them every time?")
    assert [e.source_id for e in choose_excerpts(ExcerptTask(question=question, passages=(prefs,)))] == ["readme"]


def test_a_quote_that_finishes_a_sentence_takes_its_start_along() -> None:
    """Issue 17 (real READMEs, INF-3): "to view the default directories used by GnuPG." finishes a sentence begun
    over a command ("You may run" / "gpgconf --list-dirs"); quoted alone it hides the command that was asked for."""
    readme = P(source_id="gnupg", document="/usr/share/doc/gnupg/README.gz", context="* BUILD INSTRUCTIONS",
               text="You may run\n\n    gpgconf --list-dirs\n\n  to view the default directories used by GnuPG.")
    sockets = P(source_id="gnupg", document="/usr/share/doc/gnupg/README.gz", context="** Socket directory",
                text="GnuPG uses Unix domain sockets to connect its components.  The default directory for them is\n"
                     "/run/user/UID/gnupg.")
    quotes = [e.quote for e in choose_excerpts(ExcerptTask(
        question="How can I see which directories GnuPG uses by default on this system?", passages=(readme, sockets)))]
    assert readme.text in quotes


def test_a_debian_readme_is_about_debian() -> None:
    """Issue 17 (real package documentation, INF-3): a question that names Debian is about it, and Debian's notes on a
    package are in README.Debian: its name holds the name (a capitalised part after a dot is no extension), whether
    compressed or not. "Which algorithms did Debian disable …?" was refused for a name no passage held."""
    text = ("Some algorithms used in the library are covered by patents.  As\na result, the following algorithms in "
            "libcrypto have been disabled:\n- RC5\n- MDC2\n- IDEA")
    question = "Which algorithms did Debian disable in libcrypto because of patents?"
    for name in ("README.Debian", "README.Debian.gz"):
        notes = P(source_id="notes", document=f"/usr/share/doc/openssl/{name}", context="PATENT ISSUES", text=text)
        quotes = [e.quote for e in choose_excerpts(ExcerptTask(question=question, passages=(notes,)))]
        assert any("- IDEA" in quote for quote in quotes), (name, quotes)
    other = P(source_id="notes", document="/usr/share/doc/openssl/README.source", context="PATENT ISSUES", text=text)
    assert choose_excerpts(ExcerptTask(question=question, passages=(other,))) == [], "README.source is not about Debian"


def test_a_chinese_way_is_what_is_convenient_not_what_is_needed() -> None:
    """Issue 17 (Chinese manual pages, INF-3): "有什么办法？" asks for a way; "pg_dumpall 需要和 PostgreSQL
    服务器连接多次" says what the program needs, not what to do, and the way is the next sentence ("写一个
    $HOME/.pgpass 可能会比较方便"): the quote runs on to it."""
    page = P(source_id="pg", document="/docs/zhman-pg_dumpall.txt", context="PG_DUMPALL(1) › DESCRIPTION 描述",
             text="pg_dumpall 需要和 PostgreSQL  服务器连接多次，可能每次都问你口令。这种情况下写一个 $HOME/.pg‐\n"
                  "       pass 可能会比较方便。")
    quotes = [e.quote for e in choose_excerpts(ExcerptTask(
        question="pg_dumpall 要连好几次服务器，每次都问密码，有什么办法？", passages=(page,)))]
    assert quotes and quotes[0].endswith("可能会比较方便。"), quotes


def test_an_amount_written_with_its_unit_is_an_amount() -> None:
    """Issue 17 (real manual pages, INF-3): "by default every 1s", "100ms", "64k", "10MiB" state amounts; a number
    glued to its unit was held to state none, and "What is the default refresh interval …?" came back no-evidence."""
    page = P(source_id="top", document="/docs/man-frobtop.txt", context="FROBTOP(1) › DESCRIPTION",
             text="frobtop shows the top control groups, ordered by their load. The display is refreshed in "
                  "regular\n       intervals (by default every 1s), similar in style to top(1).")
    quotes = [e.quote for e in choose_excerpts(ExcerptTask(
        question="What is the default refresh interval of frobtop?", passages=(page,)))]
    assert any("every 1s" in quote for quote in quotes), quotes


def test_who_made_it_is_answered_only_by_who() -> None:
    """Issue 17 (found by hand, INF-3): "Who wrote systemd-cgtop?" quoted the page's description, which shares the
    name and says nothing of who. A question for who wrote, maintains or made something (谁写的) needs a sentence that
    says who: written by, an author or maintainer, an address, 作者."""
    description = P(source_id="cgtop", document="/docs/man-systemd-frobtop.txt",
                    context="SYSTEMD-FROBTOP(1) › DESCRIPTION",
                    text="systemd-frobtop shows the top control groups of the local Linux control group hierarchy.")
    assert choose_excerpts(ExcerptTask(question="Who wrote systemd-frobtop?", passages=(description,))) == []
    author = P(source_id="attr", document="/docs/zhman-frobattr.txt", context="FROBATTR(1) › AUTHOR(作者)",
               text="frobattr 的作者是Remy Card <card@masi.ibp.fr>, 他是ext2 fs的开发和维护者.")
    assert [e.source_id for e in choose_excerpts(ExcerptTask(question="frobattr 是谁写的？", passages=(author,)))] \
        == ["attr"]
    users = P(source_id="users", document="/docs/man-frobtop.txt", context="FROBTOP(1) › NOTES",
              text="Any user can use frobtop to watch the control groups; only root sees the groups of others.")
    assert choose_excerpts(ExcerptTask(question="Who can use frobtop to watch control groups?", passages=(users,))) \
        != [], "who may use it is no question of who made it"


_AS_PAGES_WRITE_THEM = [
    ("zhman-frobmail.txt", "FROBMAIL(1) › 文件/系统环境",
     "$TMPDIR 建立临时文件的地方。如果未设置就用系统默认定义 "
     "仅当用到 -t/--read-recipients 选项时，才会创建临时文件。",
     "服务器的 /tmp 很小，我想知道 frobmail 什么情况下才会在 $TMPDIR 下面建临时文件？"),
    ("zhman-frobtar.txt", "FROBTAR(1) › 选项",
     "-t tape 磁带设备。可以是普通文件或设备。 (默认值：TAPE 环境变量；如果未设置，以tar.out作为文件名)",
     "用 frobtar 备份的时候既没加 -t，也没设 TAPE 环境变量，备份会写到哪里？"),
    ("zhman-frobchat.txt", "FROBCHAT(8) › 逾时", "初始的逾时值是 45 秒。可以用 -t 参数来改变。",
     "拨号脚本里我没有用 -t，frobchat 等一个期待字串最多等几秒？"),
    ("man-frob-tool.txt", "FROB-TOOL(8) › OPTIONS",
     "-w, --watch\n       Watch interface(s) and report changes in link status.  The MII interfaces are polled at\n"
     "       one second intervals.", "When I leave frob-tool -w running, how often does it check the link?"),
    ("man-frob-tbf.txt", "FROB-TBF(8) › PARAMETERS",
     "If your buffer is too small, packets may be dropped.  For 10mbit/s on Intel, you need at least 10kbyte "
     "buffer if you want to reach your configured rate!",
     "I'm shaping to 10mbit with frob-tbf and can't reach the rate. How large should burst be at least?"),
    ("zhman-frobd.txt", "frobd(8) › 说明",
     "wait/nowait[.max] 等待/不等待。可选项后缀“max”定义frobd在60秒内提供服务的最大进程数，缺省值为 40。",
     "frobd.conf 里 wait/nowait 后面那个 .max 不写的话，一个服务 60 秒内最多能起多少个进程？"),
]


@pytest.mark.parametrize(("name", "context", "text", "question"), _AS_PAGES_WRITE_THEM)
def test_chinese_scenes_file_kinds_and_units_written_as_pages_write_them(name: str, context: str, text: str,
                                                                        question: str) -> None:
    """Issue 17 (the fifteenth real-documents set, INF-3): what comes before 我想知道 sets the scene
    ("服务器的 /tmp 很小，我想知道 msmtp …": msmtp's page never writes /tmp); a file's kind is no name
    ("inetd.conf 里 …" names inetd); a file name right after a Chinese character is a file
    ("以tar.out作为文件名"); 逾时 is a timeout; "at one second intervals" and "10kbyte" are amounts."""
    passage = P(source_id="page", document=f"/docs/{name}", context=context, text=text)
    assert choose_excerpts(ExcerptTask(question=question, passages=(passage,))) != []


def test_the_answer_keeps_a_command_with_what_it_is_for() -> None:
    """Issue 17 (an answer people can read, INF-3): the answer took "to view the default directories used by GnuPG."
    alone from the quote "You may run / gpgconf --list-dirs / to view …", and would take a lead-in without its
    command: a sentence that goes on from the one before (after a lead-in, or in lower case after one that does not
    end) is one answer entry with it."""
    quote = "You may run\n\n    gpgconf --list-dirs\n\n  to view the default directories used by GnuPG."
    [first] = answer_question(AnswerTask(question="How can I see which directories GnuPG uses by default?",
                                         evidence=(AnswerEvidence(id="e1", quote=quote),)))
    assert first.text == quote
    command = "To force compiling against libc malloc, use:\n\n    % make MALLOC=libc"
    [first] = answer_question(AnswerTask(question="Which make command builds against libc malloc?",
                                         evidence=(AnswerEvidence(id="e1", quote=command),)))
    assert first.text == command


def test_a_port_asked_for_is_answered_only_by_one() -> None:
    """Issue 17 (the fifth set, found by hand on git's changelog, INF-3): "ftp 连接远端服务器时默认使用的
    控制端口号是多少？" quoted ftp's `open host [port]` entry, which says a port may be given and names none (its
    numbers count something else). A question for a network port (端口号, "Which port …?") needs a sentence that
    states one ("port 5432", "9418/tcp", "example.com:4242", 端口 21); a serial port is no such port."""
    entry = P(source_id="open", document="/docs/zh/zhman-frobftp.txt", context="FROBFTP(1) › 命令",
              text="open host [port] 连接到指定的远端主机 host FTP 服务器. 端口号 frobftp 是可选的; 如果指定了端口号, "
                   "frobftp 会尝试使用这个指定的端口号连接远端 FTP 主机. 缺省最多尝试 3 次.")
    question = "frobftp 连接远端服务器时默认使用的控制端口号是多少？"
    assert choose_excerpts(ExcerptTask(question=question, passages=(entry,))) == []
    stated = P(source_id="port", document="/docs/zh/zhman-frobftp.txt", context="FROBFTP(1) › 描述",
               text="frobftp 缺省连接远端服务器的 21 号端口 (控制端口).")
    quotes = choose_excerpts(ExcerptTask(question=question, passages=(entry, stated)))
    assert quotes and quotes[0].source_id == "port"


def test_a_version_asked_for_is_answered_only_by_one() -> None:
    """Issue 17 (found by hand on systemd-cgtop(1), INF-3): "Which version of systemd first shipped systemd-cgtop?"
    quoted "Defaults to 3." from the --depth= entry of a page that names no version. A question for the version or
    release something came, went or changed in needs a sentence that states one ("2.36", "since dpkg 1.16.1",
    "with systemd 44")."""
    from ditto.text.passages import cut_passages

    page = ("SYSTEMD-FROBTOP(1)            systemd-frobtop            SYSTEMD-FROBTOP(1)\n\nNAME\n"
            "       systemd-frobtop - Show top control groups by their resource usage\n\nDESCRIPTION\n"
            "       systemd-frobtop shows the top control groups of the local Linux control group hierarchy,\n"
            "       ordered by their CPU, memory, or disk I/O load. The display is refreshed in regular\n"
            "       intervals (by default every 1s).\n\nOPTIONS\n       --depth=\n"
            "           Maximum control group tree traversal depth. Specifies how deep systemd-frobtop shall\n"
            "           traverse the control group hierarchies. If 0 is specified, only the root group is\n"
            "           monitored. Defaults to 3.\n")
    passages = tuple(P(source_id="page", document="/docs/man-systemd-frobtop.txt", context=span.heading,
                       text=page[span.start:span.end]) for span in cut_passages(page))
    question = "Which version of systemd first shipped systemd-frobtop?"
    assert choose_excerpts(ExcerptTask(question=question, passages=passages)) == []
    history = P(source_id="history", document="/docs/man-systemd-frobtop.txt", context="SYSTEMD-FROBTOP(1) › HISTORY",
                text="systemd-frobtop was first shipped with systemd 44.")
    quotes = choose_excerpts(ExcerptTask(question=question, passages=(history, *passages)))
    assert quotes and quotes[0].source_id == "history"


def test_if_none_are_given_tells_what_happens_by_default() -> None:
    """Issue 17 (found by hand on factor's man page, INF-3): "Where does factor read the numbers from if I don't give
    any on the command line?" asks for a default, and "If none are specified on the command line, read them from
    standard input." (across a line break) tells it; the brief came back no-evidence."""
    page = P(source_id="f", document="/docs/factor.txt", context="FACTOR(1) › DESCRIPTION",
             text="Print  the prime factors of each specified integer NUMBER.  If none are\n       specified on the "
                  "command line, read them from standard input.")
    quotes = [e.quote for e in choose_excerpts(ExcerptTask(
        question="Where does factor read the numbers from if I don't give any on the command line?", passages=(page,)))]
    assert any("If none are\n       specified on the command line, read them from standard input." in quote
               for quote in quotes), quotes


def _quotes(question: str, *passages: ExcerptPassage) -> list[str]:
    return [" ".join(e.quote.split()) for e in choose_excerpts(ExcerptTask(question=question, passages=passages))]


def _assert_quoted(question: str, fragment: str, *passages: ExcerptPassage) -> None:
    """One of the quotes for ``question`` over ``passages`` holds ``fragment`` (white space collapsed)."""
    quotes = _quotes(question, *passages)
    assert any(fragment in quote for quote in quotes), quotes


def test_which_one_wins_is_answered_by_what_takes_precedence() -> None:
    """Issue 17.4 (INF-3): "LESS is exported and my lesskey file sets it too: which one does less use?" asks which
    wins; the sentence that says the lesskey file's value takes precedence answers, not the one that shares the most
    words (what the #env section is for)."""
    page = P(source_id="k", document="/docs/man-lesskey.txt", context="LESSKEY(1) › ENVIRONMENT VARIABLES",
             text="Although the lesskey file can be used to override variables set in the environment, the main\n"
                  "       purpose of assigning variables in the lesskey file is simply to have all less configura‐\n"
                  "       tion information stored in one file.  If a variable is specified in the system environment\n"
                  "       and also in a lesskey file, the value in the lesskey file takes precedence.")
    quotes = _quotes("I export LESS=-R in my .bashrc but my lesskey file's #env section sets LESS = -i. Which one "
                     "does less actually use?", page)
    assert quotes and quotes[0].endswith("the value in the lesskey file takes precedence.")


def test_a_precondition_asked_is_quoted_with_what_it_conditions() -> None:
    """Issue 17.4 (INF-3): "can netem mark ECN instead of dropping, and is there a precondition?" is answered by the
    option's sentence and the next, which says what is needed; the quote runs on to it."""
    page = P(source_id="n", document="/docs/man-tc-netem.txt", context="NETEM(8) › netem OPTIONS › ecn",
             text="can be used optionally to mark packets instead of dropping them. A loss model has to be used\n"
                  "       for this to be enabled.")
    quotes = _quotes("Can netem set ECN marks rather than drop packets, and is there any precondition for that?",
                     page)
    assert quotes == ["can be used optionally to mark packets instead of dropping them. A loss model has to be used "
                      "for this to be enabled."]


def test_whether_it_is_allowed_is_answered_by_what_says_it_is_not() -> None:
    """Issue 17.4 (INF-3): "Can I put `update = !./scripts/sync.sh` in .gitmodules?" is answered by "the !command
    form is not accepted here", which shares few of its words; the asker's own path names nothing the page must
    write."""
    entry = P(source_id="g", document="/docs/man-gitmodules.txt", context="GITMODULES(5) › DESCRIPTION",
              text="submodule.<name>.update\n           Defines the default update procedure for the named submodule, "
                   "i.e. how the submodule\n           is updated by the git submodule update command in the "
                   "superproject. This is only used\n           by git submodule init to initialize the configuration "
                   "variable of the same name.\n           Allowed values here are checkout, rebase, merge or none. "
                   "See description of update\n           command in git-submodule(1) for their meaning. For security "
                   "reasons, the !command form\n           is not accepted here.")
    _assert_quoted("Can I put `update = !./scripts/sync.sh` for a submodule in the committed .gitmodules file?",
                   "the !command form is not accepted here.", entry)


def test_an_exit_status_got_is_answered_by_its_entry() -> None:
    """Issue 17.4 (INF-3): "it returned 101. What went wrong?" is answered by the entry of status 101, quoted whole,
    although the option that makes 101 shares more of the question's words."""
    option = P(source_id="o", document="/docs/man-invoke-rc.d.txt", context="INVOKE-RC.D(8) › OPTIONS",
               text="--disclose-deny\n              Return status code 101 instead of status code 0 if the init "
                    "script action is denied by\n              the policy layer.")
    success = P(source_id="s0", document="/docs/man-invoke-rc.d.txt", context="INVOKE-RC.D(8) › STATUS CODES",
                text="0      Success.  Either the init script was run and returned exit status 0, or it was not run\n"
                     "              because of runlevel/local policy constrains and --disclose-deny is not in effect.")
    denied = P(source_id="s101", document="/docs/man-invoke-rc.d.txt", context="INVOKE-RC.D(8) › STATUS CODES",
               text="101    Action not allowed.  The requested action will not be performed because of runlevel\n"
                    "              or local policy constraints.")
    quotes = _quotes("Our postinst calls invoke-rc.d --disclose-deny myservice start and it returned 101. What went "
                     "wrong?", option, success, denied)
    assert "101 Action not allowed. The requested action will not be performed because of runlevel or local policy " \
           "constraints." in quotes


def test_what_i_never_set_asks_for_its_default() -> None:
    """Issue 17.4 (INF-3): "I never set submodule.<name>.branch. Which branch does it track then?" asks for the
    default, which the entry's last sentence states."""
    entry = P(source_id="b", document="/docs/man-gitmodules.txt", context="GITMODULES(5) › DESCRIPTION",
              text="submodule.<name>.branch\n           A remote branch name for tracking updates in the upstream "
                   "submodule. If the option is\n           not specified, it defaults to the remote HEAD. A special "
                   "value of .  is used to\n           indicate that the name of the branch in the submodule should be "
                   "the same name as the\n           current branch in the current repository. See the --remote "
                   "documentation in git-\n           submodule(1) for details.")
    _assert_quoted("I never set submodule.<name>.branch in .gitmodules. Which upstream branch does the submodule "
                   "track then?", "it defaults to the remote HEAD.", entry)


@pytest.mark.parametrize("question", [
    "If I give frob a priority and a command but no policy flag, which scheduling policy does it apply?",
    "If I run frob on a command without giving it any policy, which scheduling policy does it use?",
    "If I leave out the policy flag, which scheduling policy does frob apply to the command?",
])
def test_a_condition_that_leaves_something_out_asks_for_its_default(question: str) -> None:
    """Issue 17.4 (INF-3, WF-7): "… but no policy flag, which policy …?", "without giving it any …" and "If I leave
    out …" ask for what happens by default: the entry that states it outranks entries that only share the question's
    words, and without it nothing shown answers (our wording, laid out as a manual page's list of policies)."""
    entries = [P(source_id=f"p{index}", document="/docs/man-frob.txt", context="FROB(1) › POLICIES", text=text)
               for index, text in enumerate((
                   "-i, --idle\n       Set scheduling policy to IDLE for very low priority jobs. The priority\n"
                   "       argument has to be set to zero.",
                   "-b, --batch\n       Set scheduling policy to BATCH for batch processes. The priority argument\n"
                   "       has to be set to zero.",
                   "-r, --rr\n       Set scheduling policy to RR (round-robin scheduling). When no policy is\n"
                   "       defined, RR is used as the default."))]
    [first, *_] = choose_excerpts(ExcerptTask(question=question, passages=tuple(entries), max_excerpts=2))
    assert first.source_id == "p2" and first.quote.endswith("RR is used as the default.")
    assert choose_excerpts(ExcerptTask(question=question, passages=tuple(entries[:2]), max_excerpts=2)) == []


def test_a_port_in_brackets_after_its_scheme_is_a_port_stated() -> None:
    """Issue 17.3 (INF-3): "Which port will the client connect to?" is answered by "the default port for the scheme is
    used (389 for ldap://, 636 for ldaps://)", across its line break."""
    entry = P(source_id="u", document="/docs/man-ldap.conf.txt", context="LDAP.CONF(5) › OPTIONS",
              text="URI <ldap[si]://[name[:port]] ...>\n              Specifies the URI(s) of an LDAP server(s) to "
                   "which the LDAP library should connect.\n              If no port number is provided, the default  "
                   "port  for  the\n              scheme is used  (389 for ldap://, 636 for ldaps://).")
    _assert_quoted("My ldap.conf has `URI ldaps://ldap.example.org` without a port. Which port will the client "
                   "connect to?", "(389 for ldap://, 636 for ldaps://)", entry)


def test_a_quoted_character_is_also_its_name() -> None:
    """Issue 17.4 (INF-3): "lines that start with an asterisk" is about what a page writes as '*'."""
    assert "asterisk" in analyze("Questions that have been asked already are prefixed with an '*'.")
    assert "tild" in analyze('a "~" alone') and "asterisk" not in analyze("a glob such as *.txt")


def test_what_a_question_compares_its_subject_with_is_not_its_subject() -> None:
    """Issue 17.4 (INF-3): "Why is there a special mklost+found tool? What's wrong with mkdir lost+found?" is about
    mklost+found; its page answers though it never writes mkdir."""
    page = P(source_id="m", document="/docs/man-mklost+found.txt", context="MKLOST+FOUND(8) › DESCRIPTION",
             text="mklost+found pre-allocates disk blocks to the lost+found directory so that when e2fsck(8) is\n"
                  "       being run to recover a file system, it does not need to allocate blocks in the file system\n"
                  "       to store a large number of unlinked files.")
    quotes = _quotes("Why is there a special mklost+found tool at all? What's wrong with mkdir lost+found?", page)
    assert quotes and "store a large number of unlinked files" in quotes[0]
    assert _quotes("Why is there a special mklost+found tool at all? Does mkdir lost+found do the same?", page) == []


def test_an_amount_in_the_scene_is_not_what_is_asked() -> None:
    """Issue 17.4 (INF-3): "I tried e2freefrag -c 3000 to see how many 3 MB chunks are free and it complained. What
    values are allowed for the chunk size?" asks which values, not how many; the option's rule answers it."""
    entry = P(source_id="c", document="/docs/man-e2freefrag.txt", context="E2FREEFRAG(8) › OPTIONS",
              text="-c chunk_kb\n              If  a  chunk  size is specified, then e2freefrag will print how many "
                   "free chunks of\n              size chunk_kb are available in units of kilobytes (Kb).  The chunk "
                   "size must  be  a\n              power of two and be larger than file system block size.")
    _assert_quoted("I tried e2freefrag -c 3000 on my ext4 volume to see how many 3 MB chunks are free and it "
                   "complained. What values are allowed for the chunk size?", "must be a power of two", entry)


def test_a_number_s_entry_states_an_exit_status() -> None:
    """Issue 17.3 (INF-3): ischroot(1) lists its statuses as entries under DESCRIPTION ("2      if the detection is
    not possible …"), without the words "exit status": an exit status asked is stated by them."""
    passages = (P(source_id="two", document="/docs/man-ischroot.txt", context="ISCHROOT(1) › DESCRIPTION",
                  text="2      if  the  detection  is not possible (On GNU/Linux this happens if the script is not\n"
                       "              run as root)."),
                P(source_id="one", document="/docs/man-ischroot.txt", context="ISCHROOT(1) › DESCRIPTION",
                  text="1      if currently not running in a chroot"))
    quotes = _quotes("I'm calling ischroot from a package script that runs as an ordinary user on Linux. What exit "
                     "code will it most likely give me, and why?", *passages)
    assert quotes and quotes[0].startswith("2 if the detection is not possible")


def test_a_passage_holding_every_name_asked_need_not_hold_the_scene_s() -> None:
    """Issue 17.4 (INF-3): "I want to call mbind() directly. Which package gives me the numaif.h header?" asks about
    numaif.h; the page that names its package answers without writing mbind. Asked about mbind itself, it does not."""
    notes = P(source_id="n", document="/docs/man-numa.txt", context="numa(7) › NOTES › Library support",
              text="Link with -lnuma to get the system call definitions.  libnuma and the required <numaif.h>\n"
                   "       header are available in the numactl package.")
    quotes = _quotes("I want to call mbind() directly. Which package gives me the numaif.h header?", notes)
    assert quotes and "numactl package" in quotes[0]
    assert _quotes("Which flags does mbind() accept in its mode argument?", notes) == []


def test_the_names_of_a_question_that_asks_without_naming_set_its_scene() -> None:
    """Issue 17.4 (INF-3): "pclose() gave me an exit status of 127. Did the shell fail to start, or did my command
    fail?" writes pclose only to set the scene; its asking sentence names nothing. popen(3)'s BUGS paragraph answers
    without writing pclose: the page holding it (another of its passages shown) is enough. A page that does not
    hold it is still no answer, and a question that asks about pclose itself is held to it."""
    page = "/docs/man-popen.txt"
    bugs = P(source_id="b", document=page, context="popen(3) › BUGS",
             text="Failure to execute the shell is indistinguishable from the shell's failure to execute command,\n"
                  "       or an immediate exit of the command.  The only hint is an exit status of 127.")
    returns = P(source_id="r", document=page, context="popen(3) › RETURN VALUE",
                text="pclose(): on success, returns the exit status of the command.")
    question = "pclose() gave me an exit status of 127. Did the shell fail to start, or did my command fail?"
    assert any("exit status of 127" in quote for quote in _quotes(question, bugs, returns))
    assert _quotes(question, bugs.model_copy(update={"document": "/docs/man-other.txt"})) == []
    assert _quotes("Did pclose() fail to start the shell when it returns 127?", bugs) == []


def test_a_restatement_after_i_e_is_part_of_the_question() -> None:
    """Issue 17.3 (INF-3, WF-7): "What is the default frob_limit3 of the widget table, i.e. how many entries can it
    hold?" is one question: "i.e." (or "e.g.") ends no sentence, so frob_limit3 is a name it asks about, not its
    scene; a passage of the page that never writes it does not answer (our wording)."""
    question = "What is the default frob_limit3 of the widget table, i.e. how many entries can the table hold?"
    assert asked_sentences(question) == [question]
    table = P(source_id="t", document="/docs/man-frob.txt", context="FROB(8) › DESCRIPTION",
              text="The widget table holds the entries frob has seen; by default it grows as needed.")
    assert _quotes(question, table) == []
    named = table.model_copy(update={"text": "frob_limit3 is the most entries the widget table may hold; the default "
                                             "is 1024."})
    assert any("1024" in quote for quote in _quotes(question, named))


def test_everyday_computing_words_are_no_names() -> None:
    """Issue 17.4 (INF-3): "stdin", "stderr" and "lookup" are words, not programs a page must name."""
    from ditto.text.lexicon import is_english_word

    assert all(is_english_word(word) for word in ("stdin", "stderr", "lookup", "lookups"))
    assert not is_english_word("numactl")


def test_placeholders_are_the_askers_not_names() -> None:
    """Issue 17.4 (INF-3): ``/etc/foo.conf``, ``${foo}`` and ``myservice`` are the asker's placeholders; ``mysql`` and
    ``mypy`` are names."""
    from ditto.worker.infer.extractive.gate import subject_terms, unknown_names

    for question in ("Our postinst calls ucfr on /etc/foo.conf; what happens?", "I need a literal ${foo} kept",
                     "invoke-rc.d --disclose-deny myservice start returned 101"):
        assert not {"foo", "myservic"} & set(subject_terms(question) + unknown_names(question)), question
    assert "mysql" in unknown_names("Which mysql option sets it?") and "mypi" in unknown_names("does mypy check it?")


def test_the_exit_statuses_of_the_page_named_answer_a_status_question() -> None:
    """Issue 17.3 (INF-3): "My provisioning script runs `dpkg-query -W somepkg` for a name dpkg has never heard of.
    Which exit code should it expect?" shares few words with dpkg-query(1)'s EXIT STATUS entries, which answer it;
    each entry is quoted, the failing one among them."""
    entries = tuple(P(source_id=f"s{number}", document="/docs/man-dpkg-query.txt",
                      context="dpkg-query(1) › EXIT STATUS", text=text)
                    for number, text in ((0, "0   The requested query was successfully performed."),
                                         (1, "1   The requested query failed either fully or partially, due to no file "
                                             "or package\n    being found (except for --control-path, --control-list "
                                             "and --control-show\n    were such errors are fatal).")))
    quotes = _quotes("My provisioning script runs `dpkg-query -W somepkg` for a name dpkg has never heard of. Which "
                     "exit code should it expect?", *entries)
    assert any(quote.startswith("1 The requested query failed") for quote in quotes), quotes


def test_an_example_the_asker_gives_names_nothing() -> None:
    """Issue 17.4 (INF-3): in "If I give pam_succeed_if two conditions, say uid >= 1000 and shell = /bin/bash, is it
    enough that one of them holds?" the conditions are the asker's example; the page's DESCRIPTION answers."""
    page = P(source_id="d", document="/docs/man-pam_succeed_if.txt", context="PAM_SUCCEED_IF(8) › DESCRIPTION",
             text="The module should be given one or more conditions as module arguments, and authentication will\n"
                  "       succeed only if all of the conditions are met.")
    quotes = _quotes("If I give pam_succeed_if two conditions, say uid >= 1000 and shell = /bin/bash, is it enough "
                     "that one of them holds?", page)
    assert quotes and "succeed only if all of the conditions are met" in quotes[0]


def test_are_both_applied_asks_which_wins() -> None:
    """Issue 17.4 (INF-3): "Both /etc/sysctl.d/99-net.conf and /usr/lib/sysctl.d/99-net.conf exist. … are both of them
    applied?" is answered by what says the later one is ignored; the quote runs on to it."""
    page = P(source_id="p", document="/docs/man-sysctl.txt", context="SYSCTL(8) › SYSTEM FILE PRECEDENCE",
             text="When using the --system option, sysctl will read files from directories in the following list\n"
                  "       in given order from top to bottom.  Once a file of a given filename is loaded, any file of\n"
                  "       the same name in subsequent directories is ignored.")
    _assert_quoted("Both /etc/sysctl.d/99-net.conf and /usr/lib/sysctl.d/99-net.conf exist. When I run sysctl "
                   "--system, are both of them applied?", "in subsequent directories is ignored.", page)



def test_which_one_decides_asks_which_wins() -> None:
    """Issue 17.4 (INF-3): "I export X in my shell, but debian/rules sets Y. Which one decides?" asks which setting
    wins: of a page's passages, the one that says what overrides what is read among the first, ahead of examples
    that share more of the question's words."""
    from ditto.worker.infer.extractive import reading_order

    page = "/docs/man-dpkg-buildflags.txt"
    passages = [P(source_id=f"p{number}", document=page, context=context, text=text) for number, (context, text) in
                enumerate((("FEATURE AREAS", "export DEB_BUILD_MAINT_OPTIONS=hardening=+pie,-fortify"),
                           ("FEATURE AREAS", "export DEB_BUILD_OPTIONS=hardening=-pie"),
                           ("FEATURE AREAS", "Each hardening setting in DEB_BUILD_OPTIONS can be set in the shell."),
                           ("ENVIRONMENT", "The DEB_BUILD_MAINT_OPTIONS variable overrides any setting in the\n"
                                           "       DEB_BUILD_OPTIONS feature areas.")))]
    question = ("I export DEB_BUILD_OPTIONS=hardening=-pie in my shell, but debian/rules sets "
                "DEB_BUILD_MAINT_OPTIONS=hardening=+pie. Which one decides?")
    assert 3 in reading_order(question, passages)[:2]


def test_a_number_against_chinese_text_is_an_amount() -> None:
    """Issue 17 (Chinese material, INF-3): "最多14个字母长" states a limit; the digits touch Chinese characters on
    both sides, which the amount pattern had read as part of a word."""
    entry = P(source_id="l", document="/docs/zh/zhman-iptables.txt", context="Iptables(8) › TARGET EXTENSIONS › LOG",
              text="--log-prefix prefix\n              在纪录信息前加上特定的前缀：最多14个字母长，"
                   "用来和记录中其他信息区别。")
    quotes = _quotes("给 iptables 的 LOG 目标加 --log-prefix 时，前缀最多可以写多长？", entry)
    assert quotes and "最多14个字母长" in quotes[0]


def test_where_can_i_put_asks_for_a_place() -> None:
    """Issue 17.4 (INF-3, found by hand on fontconfig's README.Debian): "Where can I put my own fonts …?" asks for a
    place; a page that names none does not answer it, the sentence that names one does."""
    readme = "Fontconfig is a library which handles font configuration and access at the system level."
    question = "Where can I put my own fonts so that fontconfig applications find them?"
    assert _quotes(question, P(source_id="r", document="/docs/fontconfig.README.Debian", text=readme)) == []
    _assert_quoted(question, "/usr/share/fonts or ~/.fonts", P(
        source_id="r", document="/docs/fontconfig.README.Debian",
        text=readme + "  Any font installed in /usr/share/fonts or ~/.fonts will be accessible to these applications."))
