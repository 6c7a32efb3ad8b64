"""Text laid out the way real documentation is (our own wording), shared by the passage and real-document tests."""

from __future__ import annotations

#: The head of a man page rendered by `man` at 100 columns: a header line, NAME, a hard-wrapped DESCRIPTION
#: whose exit-status sentence runs over a line break, and the OPTIONS heading.
FROB_HEAD = """\
FROB(1)                              User Commands                              FROB(1)

NAME
       frob - rearrange the lines of a file

DESCRIPTION
       frob reads each FILE and writes its lines in a new order.  Normally the exit status is 0 if
       every line was written, 1 if no lines were selected, and 2 if
       an error occurred.

OPTIONS
"""
