"""Read the import graph of ``src/ditto`` from the source (no imports executed)."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"


@dataclass(frozen=True)
class Import:
    source: str  # importing module, dotted
    target: str  # imported ditto module, dotted (the deepest module that exists)
    line: int
    module_level: bool  # executed at import time (not in a function, not under TYPE_CHECKING)
    type_only: bool  # under ``if TYPE_CHECKING:``


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {module_name(path): path for path in SRC.joinpath("ditto").rglob("*.py")}


def _resolve(known: dict[str, Path], name: str) -> str | None:
    """The deepest known module that ``name`` names (``ditto.x.y.Name`` → ``ditto.x.y``)."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports() -> list[Import]:
    known = _modules()
    found: list[Import] = []
    for module, path in known.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"))

        def visit_stmt(child: ast.AST, in_function: bool, type_only: bool,
                       module: str = module, package: str = package) -> None:
            names: list[str] = []
            if isinstance(child, ast.Import):
                names = [alias.name for alias in child.names]
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    if child.level > 1:
                        base = base[: len(base) - (child.level - 1)]
                    prefix = ".".join(base)
                    root = f"{prefix}.{child.module}" if child.module else prefix
                else:
                    root = child.module or ""
                names = [f"{root}.{alias.name}" for alias in child.names] or [root]
            for name in names:
                if name == "ditto" or name.startswith("ditto."):
                    target = _resolve(known, name)
                    if target is not None and target != module:
                        found.append(Import(module, target, getattr(child, "lineno", 0),
                                            not in_function and not type_only, type_only))
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for stmt in child.body:
                    visit_stmt(stmt, inner, True)
                return
            for grandchild in ast.iter_child_nodes(child):
                visit_stmt(grandchild, inner, type_only)

        visit_stmt(tree, False, False)
    return found
