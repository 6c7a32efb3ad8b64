"""Import discipline (issue: one way to build a worker): the layer table in docs/architecture.md holds, and
no two modules import each other at import time.

RT-1/RET-2 rely on it: ``import ditto`` must never pull in the optional RETRIEVAL package, and a worker
must not reach into another worker's implementation.
"""

from __future__ import annotations

import re
from pathlib import Path

from .imports import Import, imports

DOC = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"


def _layer_table() -> tuple[dict[str, str], dict[str, frozenset[str]]]:
    """``({module prefix: layer}, {layer: layers it may import})`` from the doc's table."""
    text = DOC.read_text(encoding="utf-8")
    table = text.split("<!-- layers: the test parses the rows of this table -->", 1)[1]
    prefixes: dict[str, str] = {}
    allowed: dict[str, frozenset[str]] = {}
    for line in table.splitlines()[3:]:
        if not line.startswith("|"):
            break
        layer, modules, may = (cell.strip() for cell in line.strip("|").split("|"))
        for module in re.findall(r"`([\w.]+)`", modules):
            prefixes[module] = layer
        allowed[layer] = frozenset(name.strip() for name in may.split(",") if name.strip() not in ("", "—"))
    return prefixes, allowed


def _layer_of(module: str, prefixes: dict[str, str]) -> str:
    best = max((prefix for prefix in prefixes if module == prefix or module.startswith(prefix + ".")), key=len)
    return prefixes[best]


def test_the_layer_table_names_known_layers() -> None:
    """The table is well formed: every layer a row may import is itself a row."""
    prefixes, allowed = _layer_table()
    assert "foundation" in allowed and "ditto" in prefixes
    for layer, others in allowed.items():
        assert others <= set(allowed), (layer, others - set(allowed))


def test_no_import_crosses_the_layer_table() -> None:
    """Every ``ditto`` import (type-only ones aside) goes to the importer's own layer or one it may import."""
    prefixes, allowed = _layer_table()
    crossings = []
    for found in imports():
        if found.type_only:
            continue
        source, target = _layer_of(found.source, prefixes), _layer_of(found.target, prefixes)
        if source != target and target not in allowed[source]:
            crossings.append(f"{found.source}:{found.line} ({source}) imports {found.target} ({target})")
    assert crossings == []


def _cycles(edges: list[Import]) -> list[list[str]]:
    graph: dict[str, set[str]] = {}
    for edge in edges:
        graph.setdefault(edge.source, set()).add(edge.target)
    # Tarjan's strongly connected components, iteratively.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = counter
                counter += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def _is_package_reexport(edge: Import) -> bool:
    """A package's ``__init__`` importing its own submodules is how a public face is built, not a cycle."""
    return edge.target.startswith(edge.source + ".")


def test_no_import_cycles() -> None:
    """No two modules depend on each other, not even through a lazy or type-only import.

    A circle, however it is imported, means a definition sits one layer too high.
    """
    edges = [edge for edge in imports() if not _is_package_reexport(edge)]
    assert _cycles(edges) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    """The checker itself can fail: a hand-made two-module circle is reported."""
    edges = [Import("a", "b", 1, True, False), Import("b", "a", 1, True, False), Import("b", "c", 2, True, False)]
    assert _cycles(edges) == [["a", "b"]]


def test_no_merge_markers_left_in_tracked_text() -> None:
    """A merge that kept conflict markers would ship them in docs or code."""
    import subprocess

    root = Path(__file__).resolve().parents[2]
    listed = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True, check=True).stdout
    marked = []
    for name in listed.split():
        path = root / name
        if path.suffix not in {".py", ".md", ".toml", ".json", ".yaml", ".yml", ".txt", ""} or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if re.search(r"^(<<<<<<< |>>>>>>> )", text, flags=re.M):
            marked.append(name)
    assert marked == []
