"""How much of a machine's documentation a ``--documents`` folder reads: by suffix alone, or by name and gzip.

Usage::

    PYTHONPATH=src python bench/documents_coverage.py [/usr/share/doc]

Each package folder under the root is walked and read the way a research task reads ``--documents``
(:func:`ditto.text.files.read_documents`, with no cap on files or bytes, so that every folder counts), and
only UTF-8 text is counted, as the task cuts only that. The same run counts what the rule before
2026-12-07 read, a file's own suffix among ``.md``, ``.markdown``, ``.txt``, ``.text``, ``.rst``, so the two
rows compare on the same tree: package folders with at least one document read, files, and megabytes of text.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ditto.text.files import DOCUMENT_SUFFIXES, WalkLimits, WalkReport, read_documents

_EVERYTHING = WalkLimits(max_files=1 << 30, max_entries=1 << 30, max_total_bytes=1 << 50)


def _text(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("root", nargs="?", type=Path, default=Path("/usr/share/doc"))
    root = parser.parse_args().root
    packages = sorted(path for path in root.iterdir() if path.is_dir() and not path.is_symlink())
    rows = {"by suffix (before)": [0, 0, 0], "by name and gzip (now)": [0, 0, 0]}
    for package in packages:
        found = [document for document in read_documents([package], suffixes=DOCUMENT_SUFFIXES,
                                                           limits=_EVERYTHING, report=WalkReport())
                 if _text(document.raw)]
        by_suffix = [document for document in found if document.path.suffix.lower() in DOCUMENT_SUFFIXES]
        for row, documents in zip(rows.values(), (by_suffix, found), strict=True):
            row[0] += bool(documents)
            row[1] += len(documents)
            row[2] += sum(len(document.raw) for document in documents)
    print(f"{root}: {len(packages)} package folders")
    print("| rule | folders with a document read | files | MB of text |\n| --- | ---: | ---: | ---: |")
    for name, (folders, files, size) in rows.items():
        print(f"| {name} | {folders} | {files} | {size / 1e6:.1f} |")


if __name__ == "__main__":
    main()
