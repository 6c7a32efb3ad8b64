"""Research on hard-wrapped files end to end: the brief quotes whole sentences across line breaks, and says
no-evidence when the files do not answer (issue 17; WF-7, WF-10, WF-11, WF-12, WF-13)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ditto.workflows.research import ResearchOptions, run_research, verify_task
from tests.research.pages import FROB_HEAD

#: Two pages laid out the way `man` renders them at 100 columns (our own wording), and a README.
FROB = FROB_HEAD + """\
       -k, --keep
              Keep (do not delete) the input file after rearranging it.  Without this option the
              input file is removed once the output is complete.

FROB 2.1                              2026-01-01                              FROB(1)
"""
README = """\
Widget
======

The widget keeps its measuring cups in the kitchen cupboard, next to the
world map that hangs over the sink.
"""
ZH = """\
FROB(1)                              用户命令                              FROB(1)

描述
       frob 读取每个文件并重新排列其中的行。默认情况下，它不删除输入文件；如果指定
       --remove 选项，则在输出完成后删除输入文件。
"""


def write_docs(root: Path) -> Path:
    docs = root / "docs"
    docs.mkdir(parents=True)
    (docs / "frob.txt").write_text(FROB, encoding="utf-8")
    (docs / "README.md").write_text(README, encoding="utf-8")
    (docs / "frob.zh.txt").write_text(ZH, encoding="utf-8")
    return docs


async def ask(docs: Path, base: Path, question: str) -> tuple[str, dict[str, Any] | None, Path]:
    task, result = await run_research("document-search", {"question": question, "documents": [str(docs)]},
                                      base_dir=base, env={}, options=ResearchOptions())
    return result.status, read_brief(result.brief), task.directory


def read_brief(path: str | None) -> dict[str, Any] | None:
    return json.loads(Path(path).read_text(encoding="utf-8")) if path else None


async def test_answers_are_whole_sentences_across_line_breaks(tmp_path: Path) -> None:
    """Issue 17.1/17.2: the quote is the whole sentence that runs over the hard line break, or the option
    tag with its indented description, verbatim at its offsets, lines recorded; the brief verifies."""
    docs = write_docs(tmp_path)
    status, brief, directory = await ask(docs, tmp_path / "tasks",
                                         "What exit status does frob return when an error occurred?")
    assert status == "completed" and brief is not None
    first = brief["evidence"][0]
    assert first["uri"] == (docs / "frob.txt").resolve().as_uri()
    assert first["quote"].endswith("1 if no lines were selected, and 2 if\n       an error occurred.")
    assert (first["lineStart"], first["lineEnd"]) == (7, 9)
    assert FROB[first["start"]:first["end"]] == first["quote"]
    assert verify_task(directory) == []
    status, brief, _ = await ask(docs, tmp_path / "tasks", "How do I keep the input file with frob?")
    assert status == "completed" and brief is not None
    assert brief["evidence"][0]["quote"].startswith(
        "-k, --keep\n              Keep (do not delete) the input file after rearranging it.")


async def test_questions_the_files_do_not_answer_get_no_evidence(tmp_path: Path) -> None:
    """Issue 17.3, WF-7: words in common ("cups", "world", "file") are not evidence: no-evidence, no
    citation; a Chinese question about the world cup is not answered by a Chinese man page either."""
    docs = write_docs(tmp_path)
    for question in ("Who won the 1998 football world cup?", "What is the maximum file size on FAT32?",
                     "世界杯足球赛冠军是哪个国家？"):
        status, brief, _ = await ask(docs, tmp_path / "tasks", question)
        assert status == "no-evidence" and brief is not None, question
        assert brief["evidence"] == [] and brief["citations"] == []


async def test_a_chinese_question_is_answered_in_chinese(tmp_path: Path) -> None:
    """Issue 17: a Chinese sentence that runs over a line break is quoted whole, up to its 。."""
    docs = write_docs(tmp_path)
    status, brief, _ = await ask(docs, tmp_path / "tasks", "frob 默认会删除输入文件吗？")
    assert status == "completed" and brief is not None
    quotes = [item["quote"] for item in brief["evidence"]]
    assert any(quote.endswith("默认情况下，它不删除输入文件；") for quote in quotes)
    status, brief, _ = await ask(docs, tmp_path / "tasks", "frob 的 --remove 选项有什么作用？")
    assert status == "completed" and brief is not None
    quotes = [item["quote"] for item in brief["evidence"]]
    assert "如果指定\n       --remove 选项，则在输出完成后删除输入文件。" in quotes  # over the line break


#: An administration command's page whose exit values are a list, one value a line (our wording).
WIDGETADD = """\
WIDGETADD(8)                       System Management Commands                       WIDGETADD(8)

NAME
       widgetadd - create a new widget

DESCRIPTION
       widgetadd creates a widget from the values given on the command line and the defaults of the
       system, and registers it with the widget daemon.

EXIT VALUES
       The widgetadd command exits with the following values:

       0
           success

       2
           invalid command syntax

       9
           the widget name is already in use

       12
           cannot create the widget directory

WIDGETADD 1.0                          2026-01-01                          WIDGETADD(8)
"""


async def test_a_value_in_a_list_is_found_by_its_digit(tmp_path: Path) -> None:
    """Issue 17 (real questions): "exited with code 9" finds the list item "9 / the widget name is already in use"
    through its digit (a term of the documents search) and its section, and the brief quotes that item."""
    docs = write_docs(tmp_path)
    (docs / "widgetadd.txt").write_text(WIDGETADD, encoding="utf-8")
    status, brief, directory = await ask(docs, tmp_path / "tasks", "widgetadd exited with code 9. What went wrong?")
    assert status == "completed" and brief is not None
    first = brief["evidence"][0]
    assert first["uri"] == (docs / "widgetadd.txt").resolve().as_uri()
    assert first["quote"].startswith("9") and first["quote"].endswith("the widget name is already in use")
    assert verify_task(directory) == []
