"""User documentation speaks to users: no requirement ids, spec sections or seed quotations.

README.md and docs/*.md are what a user reads; where a behaviour came from (RT-1 … INT-n, SPEC §n, the
seeds) belongs in docs/design/. Ids and spec sections are refused anywhere on a user page; the word
"seed" only outside code (fenced blocks and `inline spans`), so that a real parameter named `seed`
(INFER's sampling option) can still be documented.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

REQUIREMENT_ID = re.compile(r"\b(?:RT|CX|MEM|RET|WF|INF|INT)-[0-9]+\b")
SPEC_SECTION = re.compile(r"SPEC §")
SEED_WORD = re.compile(r"\bseed\w*", re.IGNORECASE)
FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)


def user_pages() -> list[Path]:
    """README.md and every page directly under docs/ (docs/design/ is for maintainers)."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _prose(text: str) -> str:
    """The text with fenced code blocks and inline code spans blanked (line numbers kept)."""
    text = FENCE.sub(lambda match: "\n" * match.group(0).count("\n"), text)
    return INLINE_CODE.sub(lambda match: "\n" * match.group(0).count("\n"), text)


def findings(text: str) -> list[str]:
    """`line: match` for every id or spec section anywhere, and every "seed" outside code."""
    found: list[str] = []
    for pattern, source in ((REQUIREMENT_ID, text), (SPEC_SECTION, text), (SEED_WORD, _prose(text))):
        for match in pattern.finditer(source):
            line = source.count("\n", 0, match.start()) + 1
            found.append(f"{line}: {match.group(0)}")
    return found


def test_user_pages_carry_no_ids_spec_sections_or_seed_quotations() -> None:
    """Every user page is clean; the pages exist (an empty glob would pass vacuously)."""
    pages = user_pages()
    assert len(pages) >= 10
    dirty = {str(page.relative_to(ROOT)): hits for page in pages if (hits := findings(page.read_text("utf-8")))}
    assert dirty == {}


def test_the_scanner_catches_what_it_must_and_spares_code() -> None:
    """The check can fail: planted ids, spec sections and seed mentions are reported with their line."""
    page = (
        "# Title\n"
        "Implements RET-1 and MEM-12.\n"
        "See SPEC §4.\n"
        "As the seed says, and seeds 000 too.\n"
        "Options (`top_p`, `seed`) pass through.\n"
        "```python\nclient.infer(seed=3)  # a sampling seed\n```\n"
        "RETRY-1, XRT-2 and CX-x are not ids.\n"
    )
    assert findings(page) == ["2: RET-1", "2: MEM-12", "3: SPEC §", "4: seed", "4: seeds"]


def test_the_one_code_span_seed_on_the_infer_page_is_the_sampling_parameter() -> None:
    """docs/infer.md documents `seed` as a pass-through sampling option, in code, and nothing else."""
    text = (ROOT / "docs" / "infer.md").read_text("utf-8")
    assert [line for line in text.splitlines() if SEED_WORD.search(line)] == [
        line for line in text.splitlines() if "`seed`" in line
    ]
    assert findings(text) == []
