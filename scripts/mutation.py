"""Mutation testing of the modules whose logic matters most (slow: not part of CI).

Each entry of ``MODULES`` names the source files mutmut mutates and the test files that judge the
mutants. Every module runs in its own scratch copy (``.mutation/<name>/``: ``src``, ``tests`` and a
``pyproject.toml`` with a generated ``[tool.mutmut]`` section), so runs never touch the working tree
and one module's settings cannot leak into another's. The script prints one score line per module
(killed / all mutants) and every surviving mutant as a diff.

Usage (after ``scripts/setup``)::

    scripts/mutation                    # every module in MODULES
    scripts/mutation memory.filters     # only the named modules
    scripts/mutation infer.structured   # any module of a package in PACKAGES, by its dotted name
    scripts/mutation 'interaction.*'    # every module of that package (a shell-style pattern)
    scripts/mutation --list             # names, files and tests
    scripts/mutation --jobs 1 ...       # mutmut worker processes (default 2)

Besides the fixed ``MODULES`` table, ``PACKAGES`` names whole packages (INFER, INTERACTION, the CLI and
the research workflow): ``infer.providers.openai`` is ``src/ditto/worker/infer/providers/openai.py``
judged by the package's tests; ``ditto.worker.infer.providers.openai`` means the same.

Killed counts mutants whose tests failed, timed out or crashed; "no tests" mutants (code no selected
test reaches) count as survivors, since no test would notice them either.
"""

from __future__ import annotations

import argparse
import fnmatch
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / ".mutation"


@dataclass(frozen=True)
class Module:
    sources: tuple[str, ...]
    tests: tuple[str, ...]  # pytest arguments: test files or folders, ``--ignore=path``


# One table: when a module moves, change its path here and nothing else.
MODULES: dict[str, Module] = {
    "retrieval.hybrid": Module(("src/ditto/retrieval/providers/hybrid.py",), ("tests/retrieval",)),
    "retrieval.rerank": Module(("src/ditto/retrieval/providers/rerank.py",), ("tests/retrieval",)),
    "context.select": Module(("src/ditto/worker/context/select.py",), ("tests/context",)),
    "context.compress": Module(("src/ditto/worker/context/compress.py",), ("tests/context",)),
    "context.config": Module(("src/ditto/worker/context/config.py",), ("tests/context",)),  # policy, tighten
    "context.merge": Module(("src/ditto/worker/context/merge.py",), ("tests/context",)),
    "context.stores": Module(("src/ditto/worker/context/stores.py",), ("tests/context",)),  # Redis CAS, in-memory
    # Child processes import the unmutated package, so the multi-process tests only add noise here.
    "memory.filters": Module(("src/ditto/worker/memory/_filters.py",),
                             ("tests/memory", "--ignore=tests/memory/test_processes.py")),
    "memory.fts": Module(("src/ditto/worker/memory/_fts.py",),
                         ("tests/memory", "--ignore=tests/memory/test_processes.py")),
    # The CLI tests only start subprocesses (unmutated code) and are slow; the fuzz test is slow per mutant.
    "runtime.runtime": Module(("src/ditto/runtime/runtime.py",),
                              ("tests/runtime", "--ignore=tests/runtime/test_cli.py")),
    "runtime.replica": Module(("src/ditto/runtime/_replica.py",),
                              ("tests/runtime", "--ignore=tests/runtime/test_cli.py")),
    "runtime.loop": Module(("src/ditto/runtime/loop.py",), ("tests/runtime", "--ignore=tests/runtime/test_cli.py")),
    "transport.http_app": Module(("src/ditto/transport/http_app.py",),
                                 ("tests/runtime/test_http.py", "tests/runtime/test_http_fuzz.py")),
    "research.verification": Module(("src/ditto/workflows/research/verification.py",
                                     "src/ditto/workflows/research/verify.py"),
                                    # Tests that start child processes point them at the scratch copy's
                                    # mutated src, where mutmut's trampolines cannot run: leave them out.
                                    ("tests/research", "--ignore=tests/research/test_cli.py",
                                     "--ignore=tests/research/test_kill.py", "--ignore=tests/research/test_example.py",
                                     "--deselect=tests/research/test_entries.py::test_importing_connects_nothing",
                                     "--deselect=tests/research/test_models_sources.py::"
                                     "test_terminal_shows_progress_on_stderr",
                                     "--deselect=tests/research/test_models_sources.py::"
                                     "test_cli_reads_the_model_provider_from_dotenv")),
}

# Tests that start child processes point them at the scratch copy's mutated src, where mutmut's
# trampolines cannot run: every package below leaves those tests out.
_RESEARCH_TESTS = ("tests/research", "--ignore=tests/research/test_cli.py", "--ignore=tests/research/test_kill.py",
                   "--ignore=tests/research/test_example.py",
                   "--deselect=tests/research/test_entries.py::test_importing_connects_nothing",
                   "--deselect=tests/research/test_models_sources.py::test_terminal_shows_progress_on_stderr",
                   "--deselect=tests/research/test_models_sources.py::test_cli_reads_the_model_provider_from_dotenv")


@dataclass(frozen=True)
class Package:
    """Every module under ``root`` (a folder of ``src``), judged by ``tests``; named ``<prefix>.<module>``."""

    root: str
    tests: tuple[str, ...]
    aliases: tuple[str, ...] = ()  # the import path of ``root``: ``ditto.worker.infer`` for ``infer``


PACKAGES: dict[str, Package] = {
    "infer": Package("src/ditto/worker/infer",
                     ("tests/infer", "--ignore=tests/infer/test_example.py",
                      "--ignore=tests/infer/test_research_over_openai.py"),
                     ("ditto.worker.infer",)),
    # Under mutmut, sys.stderr is closed, and the mcp SDK hands it to every stdio server it starts: the
    # MCP tests cannot run there (tests/interaction/test_mcp.py mixes stdio and HTTP): mcp_client goes unjudged.
    "interaction": Package("src/ditto/worker/interaction",
                           ("tests/interaction", "--ignore=tests/interaction/test_example.py",
                            "--ignore=tests/interaction/test_docs.py", "--ignore=tests/interaction/test_mcp.py",
                            "--ignore=tests/interaction/test_mcp_environment.py",
                            "--deselect=tests/interaction/test_error_codes.py::"
                            "test_an_mcp_answer_over_the_cap_is_refused_with_its_code"),
                           ("ditto.worker.interaction",)),
    # Most CLI tests run the real executable (child processes, which mutmut's per-test selection never
    # picks for a mutant); the in-process ones (typer's CliRunner, the worker-factory loader) judge it.
    "cli": Package("src/ditto/cli", ("tests/runtime/test_cli.py", "tests/interaction/test_config_wire.py"),
                   ("ditto.cli",)),
    "research": Package("src/ditto/workflows/research", _RESEARCH_TESTS, ("ditto.workflows.research",)),
}


def package_modules(prefix: str, package: Package) -> dict[str, Module]:
    """Every ``.py`` file of a package (``__init__`` files excepted) as a module named by its dotted path."""
    root = ROOT / package.root
    found: dict[str, Module] = {}
    for path in sorted(root.rglob("*.py")):
        if path.name == "__init__.py" or "__pycache__" in path.parts:
            continue
        dotted = ".".join(path.relative_to(root).with_suffix("").parts)
        found[f"{prefix}.{dotted}"] = Module((str(path.relative_to(ROOT)),), package.tests)
    return found


def resolve(names: list[str]) -> dict[str, Module]:
    """The modules ``names`` select: MODULES entries, package modules by name or pattern, in that order.

    Raises ``KeyError`` with the names that match nothing.
    """
    known: dict[str, Module] = dict(MODULES)
    aliases: dict[str, str] = {}
    for prefix, package in PACKAGES.items():
        known.update(package_modules(prefix, package))
        aliases.update({alias: prefix for alias in package.aliases})
    chosen: dict[str, Module] = {}
    unknown: list[str] = []
    for name in names:
        for alias, prefix in aliases.items():
            if name == alias or name.startswith(alias + "."):
                name = prefix + name[len(alias):]
        matches = [key for key in known if fnmatch.fnmatchcase(key, name)]
        if not matches:
            unknown.append(name)
        for key in matches:
            chosen.setdefault(key, known[key])
    if unknown:
        raise KeyError(", ".join(unknown))
    return chosen


# Passed to every pytest run mutmut starts: a hung mutant fails fast instead of waiting for the
# project's default 120 s per test, and nothing is written to the source tree's caches.
PYTEST_ARGS = ["-p", "no:cacheprovider", "--timeout=30", "-x", "-q"]

KILLED = {"killed", "timeout", "segfault", "caught by type check"}


class ModuleFailed(Exception):
    """mutmut could not score a module (its clean test run failed, or it found nothing to mutate)."""


def toml_list(values: list[str]) -> str:
    return "[" + ", ".join('"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"' for v in values) + "]"


def prepare(name: str, module: Module) -> Path:
    """A fresh scratch tree for one module, with mutmut's settings appended to its pyproject."""
    paths = [p.split("=", 1)[-1].split("::")[0] for p in (*module.sources, *module.tests)]
    missing = [p for p in paths if not (ROOT / p).exists()]
    if missing:
        raise ModuleFailed(f"{name}: missing {', '.join(missing)} (update MODULES in {Path(__file__).name})")
    work = WORK / name
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis", "*.egg-info")
    extra: list[str] = []  # everything tests may read (examples/, docs/, ...) goes into mutmut's copy too
    for entry in sorted(ROOT.iterdir()):
        if entry.name.startswith(".") or entry.name in {"mutants", "build", "dist"}:
            continue
        if entry.is_dir():
            shutil.copytree(entry, work / entry.name, ignore=ignore)
        else:
            shutil.copy2(entry, work / entry.name)
        if entry.name not in {"src", "tests", "pyproject.toml"}:
            extra.append(entry.name)
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    pyproject += (
        "\n[tool.mutmut]\n"
        'source_paths = ["src"]\n'
        f"only_mutate = {toml_list(list(module.sources))}\n"
        f"pytest_add_cli_args = {toml_list(PYTEST_ARGS)}\n"
        f"pytest_add_cli_args_test_selection = {toml_list(list(module.tests))}\n"
        "use_git_change_detection = false\n"
        f"also_copy = {toml_list(extra)}\n"
    )
    (work / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    return work


def mutmut_bin() -> str:
    candidate = Path(sys.executable).parent / "mutmut"
    return str(candidate) if candidate.exists() else "mutmut"


def run_module(name: str, module: Module, jobs: int) -> tuple[int, int, list[tuple[str, str]]]:
    work = prepare(name, module)
    # Tests that start child processes (``ditto serve``, ``python -m ditto``) import the scratch copy's own,
    # unmutated ``src``, whatever package the virtual environment has installed.
    env = {**os.environ, "PYTHONPATH": str(work / "src")}
    log = work / "mutmut.log"
    started = time.monotonic()
    with log.open("w", encoding="utf-8") as out:
        proc = subprocess.run([mutmut_bin(), "run", "--max-children", str(jobs)], cwd=work, env=env,
                              stdout=out, stderr=subprocess.STDOUT, check=False)
    elapsed = time.monotonic() - started
    if proc.returncode != 0:
        tail = log.read_text(encoding="utf-8", errors="replace")[-3000:]
        raise ModuleFailed(f"{name}: mutmut run failed (exit {proc.returncode}), see {log}\n{tail}")
    listing = subprocess.run([mutmut_bin(), "results", "--all", "true"], cwd=work, env=env,
                             capture_output=True, text=True, check=True).stdout
    statuses = re.findall(r"^\s+(\S+__mutmut_\d+): (.+)$", listing, flags=re.MULTILINE)
    if not statuses:
        raise ModuleFailed(f"{name}: mutmut produced no mutants, see {log}")
    survivors: list[tuple[str, str]] = []
    killed = 0
    for key, status in statuses:
        if status.strip() in KILLED:
            killed += 1
            continue
        diff = subprocess.run([mutmut_bin(), "show", key], cwd=work, env=env,
                              capture_output=True, text=True, check=False).stdout
        survivors.append((f"{key} [{status.strip()}]", diff))
    print(f"  ({elapsed:.0f} s)", file=sys.stderr)
    return killed, len(statuses), survivors


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("modules", nargs="*", help="names from MODULES (default: all)")
    parser.add_argument("--jobs", type=int, default=2, help="mutmut worker processes")
    parser.add_argument("--list", action="store_true", help="print the module table and exit")
    args = parser.parse_args()
    if args.list:
        for name, module in MODULES.items():
            print(f"{name}: {' '.join(module.sources)}  <- {' '.join(module.tests)}")
        for prefix, package in PACKAGES.items():
            print(f"{prefix}.<module> ({', '.join(package.aliases)}.<module>): {package.root}/<module>.py  "
                  f"<- {' '.join(package.tests)}")
        return 0
    try:
        selected = resolve(args.modules) if args.modules else dict(MODULES)
    except KeyError as error:
        parser.error(f"unknown module(s) {error.args[0]}; known: {', '.join(MODULES)} and "
                     f"{', '.join(prefix + '.<module>' for prefix in PACKAGES)} (see --list)")
    scores: list[tuple[str, int, int]] = []
    failed: list[str] = []
    for name, module in selected.items():
        print(f"== {name}", flush=True)
        try:
            killed, total, survivors = run_module(name, module, args.jobs)
        except ModuleFailed as error:
            print(error, flush=True)
            failed.append(name)
            continue
        scores.append((name, killed, total))
        print(f"{name}: {killed}/{total} killed ({100 * killed / total:.1f} %)", flush=True)
        for title, diff in survivors:
            print(f"-- survived: {title}\n{diff.rstrip()}\n", flush=True)
    print("\n| module | killed | mutants | score |\n| --- | ---: | ---: | ---: |")
    for name, killed, total in scores:
        print(f"| {name} | {killed} | {total} | {100 * killed / total:.1f} % |")
    for name in failed:
        print(f"| {name} | failed | | |")
    return 0 if not failed and all(k / t >= 0.9 for _, k, t in scores) else 1


if __name__ == "__main__":
    sys.exit(main())
