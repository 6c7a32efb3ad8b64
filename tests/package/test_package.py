"""Issue 20: the package as users get it — the built sdist and wheel, installed into fresh virtual
environments outside the checkout (RT-1, RET-2: ``import ditto`` stays light; WF-1/WF-13: the research
job and ``ditto verify`` from the installed package).

Run by ``scripts/package-check`` (``pytest --package-check tests/package``), which ``scripts/test`` calls;
``--heavy-extras`` adds the extras too heavy for CI. Venvs are made without pip and filled by the
development venv's pip (``pip --python``), from the shared pip cache; each extra gets a copy of the bare
venv, so every extra is installed alone on top of exactly the base package.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from ..architecture.test_examples_run import CHECKS, ELSEWHERE, run_example
from ..support.postgres_server import running_postgres
from ..support.redis_server import RedisServer, redis_server

ROOT = Path(__file__).resolve().parents[2]
DISTRIBUTION = "ditto-agents"
#: What the examples, the README's code and the research job need together (no torch, no Milvus).
FULL_EXTRAS = "retrieval,redis,web,openai,mcp"
#: Modules ``import ditto`` must not load: servers, HTTP/DB clients, optional libraries, the optional packages.
NOT_ON_IMPORT = ("uvicorn", "starlette", "httpx", "aiohttp", "redis", "psycopg", "openai", "mcp", "numpy",
                 "bm25s", "jieba", "pymilvus", "trafilatura", "jsonschema", "ditto.retrieval", "ditto.transport",
                 "ditto.workflows", "ditto.cli")
#: Names a wheel must never carry: secrets, local databases, caches, tests.
_FORBIDDEN = re.compile(r"(^|/)(\.env|\.git|\.venv|tests?|__pycache__|\.mypy_cache|\.pytest_cache|\.hypothesis)(/|$)"
                        r"|\.(pyc|pem|key|sqlite|sqlite-wal|sqlite-shm|db)$|(^|/)id_(rsa|ed25519)")


# -- what a wheel must hold: pure, so that a tampered wheel can be checked too ------------------------------


def source_files(root: Path = ROOT) -> set[str]:
    """Every file of the import package in the source tree, as a wheel names it (``ditto/...``)."""
    package = root / "src" / "ditto"
    return {str(path.relative_to(root / "src")) for path in package.rglob("*")
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"}


def wheel_problems(wheel: Path, expected: set[str]) -> list[str]:
    """What is wrong with ``wheel``: a source file missing, anything else besides its metadata, a secret."""
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        texts = {name: archive.read(name) for name in names if not name.endswith("/")}
    metadata = {name for name in names if name.split("/", 1)[0].endswith(".dist-info")}
    problems = [f"missing {name}" for name in sorted(expected - names)]
    problems += [f"unexpected {name}" for name in sorted(names - expected - metadata)]
    problems += [f"forbidden {name}" for name in sorted(names) if _FORBIDDEN.search(name)]
    problems += [f"private key in {name}" for name, body in sorted(texts.items()) if b"PRIVATE KEY-----" in body]
    if not any(name.endswith(".dist-info/METADATA") for name in metadata):
        problems.append("no METADATA")
    return problems


# -- building and installing -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Venv:
    path: Path

    @property
    def python(self) -> str:
        return str(self.path / "bin" / "python")

    def install(self, spec: str) -> None:
        """``pip install spec`` into this venv with the development venv's pip (the shared cache)."""
        done = subprocess.run([sys.executable, "-m", "pip", "--python", self.python, "install", "-q",
                               "--disable-pip-version-check", "--no-compile", spec],
                              capture_output=True, text=True, timeout=600, env=_clean_env())
        assert done.returncode == 0, done.stderr[-3000:]

    def run(self, *args: str, cwd: Path, env: dict[str, str] | None = None,
            timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run([self.python, *args], capture_output=True, text=True, timeout=timeout, cwd=cwd,
                              env=env if env is not None else _clean_env())

    def copy(self, to: Path) -> Venv:
        shutil.copytree(self.path, to, symlinks=True)
        return Venv(to)


def _clean_env() -> dict[str, str]:
    """The environment without anything that would point Python or mypy at the checkout."""
    return {name: value for name, value in os.environ.items()
            if name not in ("PYTHONPATH", "MYPYPATH", "VIRTUAL_ENV", "PYTHONHOME")}


@dataclass(frozen=True)
class Built:
    work: Path
    wheel: Path
    sdist: Path


def _clean_copy(target: Path) -> Path:
    """The checkout's files as a fresh clone has them (tracked and new, not ignored), copied to ``target``.

    Building from the checkout itself would let leftovers of an editable install (``src/*.egg-info``'s
    ``SOURCES.txt``) put files into the sdist that the packaging configuration leaves out.
    """
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True, timeout=60).stdout.decode("utf-8").split("\0")
    for name in filter(None, listed):
        path = ROOT / name
        if path.is_file() and not path.is_symlink():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target / name)
    return target


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """``python -m build``: the sdist, then the wheel built from the unpacked sdist (so both are tested)."""
    work = tmp_path_factory.mktemp("package")
    assert not work.is_relative_to(ROOT)
    source = _clean_copy(work / "source")
    done = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(work / "dist"),
                           str(source)], capture_output=True, text=True, timeout=300, env=_clean_env())
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (wheel,) = (work / "dist").glob("*.whl")
    (sdist,) = (work / "dist").glob("*.tar.gz")
    return Built(work, wheel, sdist)


@pytest.fixture(scope="session")
def bare(built: Built) -> Venv:
    """A fresh venv (no system site-packages, no pip) with the wheel and no extra."""
    path = built.work / "venv-bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True, timeout=60)
    assert "include-system-site-packages = false" in (path / "pyvenv.cfg").read_text(encoding="utf-8")
    venv = Venv(path)
    venv.install(str(built.wheel))
    return venv


@pytest.fixture(scope="session")
def venvs(bare: Venv, built: Built) -> dict[str, Venv]:
    """Copies of the bare venv, filled at the same time: one per light extra, and ``full``, with the
    extras the examples, the README and the research job use (pip spends much of its time waiting)."""
    specs = {extra: [f"{built.wheel}[{extra}]"] for extra in SMOKE}
    # examples/interaction.py serves its sample page over loopback HTTPS with a trustme certificate.
    specs["full"] = [f"{built.wheel}[{FULL_EXTRAS}]", "trustme"]

    def make(name: str) -> Venv:
        venv = bare.copy(built.work / f"venv-{name}")
        for spec in specs[name]:
            venv.install(spec)
        return venv

    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {name: pool.submit(make, name) for name in ("full", *sorted(SMOKE, key=_install_time))}
        return {name: future.result() for name, future in futures.items()}


def _install_time(extra: str) -> int:
    """Slowest first, so the pool ends together: web and mcp pull the most packages."""
    return {"web": 0, "mcp": 1, "openai": 2, "postgres": 3, "retrieval": 4}.get(extra, 5)


@pytest.fixture(scope="session")
def full(venvs: dict[str, Venv]) -> Venv:
    return venvs["full"]


@pytest.fixture(scope="module")
def redis_proc() -> Iterator[RedisServer]:
    with redis_server() as server:
        yield server


# -- the artifacts -----------------------------------------------------------------------------------------


def test_metadata_passes_twine_check(built: Built) -> None:
    """``twine check --strict`` on the sdist and the wheel (README renders, metadata complete)."""
    done = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", str(built.wheel), str(built.sdist)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    with zipfile.ZipFile(built.wheel) as archive:
        (metadata,) = (name for name in archive.namelist() if name.endswith(".dist-info/METADATA"))
        text = archive.read(metadata).decode("utf-8")
    assert f"Name: {DISTRIBUTION}\n" in text and "License-Expression: Apache-2.0" in text
    for extra in FULL_EXTRAS.split(","):
        assert f"Provides-Extra: {extra}\n" in text


def test_the_wheel_holds_the_package_and_nothing_else(built: Built) -> None:
    """Every file of src/ditto (modules, py.typed, the brief's schema) and no test, cache or secret."""
    assert wheel_problems(built.wheel, source_files()) == []
    size = built.wheel.stat().st_size
    print(f"\nwheel {built.wheel.name}: {size:,} bytes")
    assert size < 2_000_000


def test_a_wheel_that_lost_a_data_file_or_gained_a_secret_is_refused(built: Built, tmp_path: Path) -> None:
    """The check can fail: a copy without brief.schema.json or py.typed, or with a test, a cache or a key."""
    tampered = tmp_path / built.wheel.name
    dropped = {"ditto/workflows/research/brief.schema.json", "ditto/py.typed"}
    with zipfile.ZipFile(built.wheel) as source, zipfile.ZipFile(tampered, "w") as target:
        for item in source.infolist():
            if item.filename not in dropped:
                target.writestr(item, source.read(item))
        target.writestr("tests/test_x.py", "")
        target.writestr("ditto/__pycache__/x.cpython-311.pyc", b"")
        target.writestr("ditto/.env", "KEY=1")
        target.writestr("ditto/notes.txt", "-----BEGIN PRIVATE KEY-----")
    problems = wheel_problems(tampered, source_files())
    assert "missing ditto/workflows/research/brief.schema.json" in problems and "missing ditto/py.typed" in problems
    for name in ("tests/test_x.py", "ditto/__pycache__/x.cpython-311.pyc", "ditto/.env"):
        assert f"forbidden {name}" in problems
    assert "private key in ditto/notes.txt" in problems


def test_the_sdist_holds_no_secrets_or_caches(built: Built) -> None:
    """The source archive has the package, README, LICENSE and pyproject, and nothing local."""
    import tarfile

    with tarfile.open(built.sdist) as archive:
        names = [name.split("/", 1)[1] for name in archive.getnames() if "/" in name]
    assert {"pyproject.toml", "README.md", "LICENSE", "src/ditto/py.typed"} <= set(names)
    assert [name for name in names if re.search(r"(^|/)(\.env|\.venv|\.git|__pycache__)(/|$)|\.(pyc|sqlite)$",
                                                name)] == []


# -- the bare install --------------------------------------------------------------------------------------


def test_import_ditto_loads_no_server_client_or_optional_library(bare: Venv, tmp_path: Path) -> None:
    """In a fresh interpreter of the bare venv: ``import ditto`` (and the core workers) load none of them."""
    code = ("import sys, json, ditto, ditto.worker.context, ditto.worker.memory, ditto.worker.infer, "
            "ditto.worker.interaction\n"
            f"watched = {NOT_ON_IMPORT!r}\n"
            "print(json.dumps([ditto.__file__, sorted({m for m in sys.modules for w in watched "
            "if m == w or m.startswith(w + '.')})]))")
    done = bare.run("-c", code, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    location, loaded = json.loads(done.stdout)
    assert Path(location).is_relative_to(bare.path) and loaded == []


MISSING: dict[str, str] = {
    "retrieval": "import ditto.retrieval",
    "redis": "from ditto.worker.context import create_context_redis_client\n"
             "create_context_redis_client({'DITTO_WORKER_CONTEXT_REDIS_URL': 'redis://127.0.0.1:1/0'})",
    "web": "import asyncio\nfrom ditto.worker.interaction import create_interaction\n"
           "i = create_interaction(web={'allowed_origins': ['https://example.org']}, web_tools=True)\n"
           "asyncio.run(i.web_read({'url': 'https://example.org/a'}))",
    "openai": "import asyncio\nfrom ditto.worker.infer import create_infer_client, create_openai_provider\n"
              "p = create_openai_provider({'base_url': 'http://127.0.0.1:9/v1', 'model': 'm'})\n"
              "asyncio.run(create_infer_client({'openai': p}).reasoning.sample(model={'provider': 'openai', "
              "'model': 'm'}, messages=[{'role': 'user', 'content': 'hi'}]))",
    "mcp": "import asyncio, sys\nfrom ditto.worker.interaction import create_interaction\n"
           "i = create_interaction(mcp_servers={'s': {'command': sys.executable, 'args': ['-c', 'pass']}})\n"
           "print(asyncio.run(i.act_mcp({'server': 's', 'call': {'id': 'c', 'name': 't', 'arguments': {}}})))",
}


@pytest.mark.parametrize("extra", sorted(MISSING))
def test_a_missing_extra_names_its_install_command(bare: Venv, extra: str, tmp_path: Path) -> None:
    """Using an optional feature without its extra says which extra and the exact pip command."""
    done = bare.run("-c", MISSING[extra], cwd=tmp_path, timeout=60)
    assert f"pip install '{DISTRIBUTION}[{extra}]'" in done.stdout + done.stderr, done.stdout + done.stderr[-2000:]


def test_the_command_line_runs_from_the_bare_install(bare: Venv, tmp_path: Path) -> None:
    """``ditto --help`` (the console script) and ``python -m ditto --version`` work without any extra."""
    done = subprocess.run([str(bare.path / "bin" / "ditto"), "--help"], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path, env=_clean_env())
    assert done.returncode == 0, done.stderr
    assert "research" in done.stdout and "serve" in done.stdout and "verify" in done.stdout
    version = bare.run("-m", "ditto", "--version", cwd=tmp_path)
    assert version.returncode == 0 and DISTRIBUTION in version.stdout


# -- each light extra alone ----------------------------------------------------------------------------------


SMOKE: dict[str, str] = {
    "retrieval": "import asyncio\nfrom ditto.retrieval import RetrievalTargetRegistry, create_retrieval, "
                 "create_text_search_provider\n"
                 "p = create_text_search_provider([{'id': 'en', 'content': 'backups run nightly'}, "
                 "{'id': 'zh', 'content': '备份每晚运行'}])\n"
                 "r = create_retrieval(RetrievalTargetRegistry.single(p))\n"
                 "print([[c.id for c in asyncio.run(r.search(q)).output.candidates] for q in ('backup', '备份')])",
    "redis": "import asyncio, os\nfrom ditto.worker.context import create_context, create_context_redis_client, "
             "create_redis_context_store\n"
             "async def main():\n"
             "    client = create_context_redis_client(os.environ)\n"
             "    c = create_context(services={'stateStore': create_redis_context_store(client)})\n"
             "    await c.load({'scope': {'sessionId': 's'}, 'sources': [{'role': 'user', 'content': 'hi'}]})\n"
             "    got = await c.update({'scope': {'sessionId': 's'}, 'add': [{'role': 'user', 'content': 'ok'}]})\n"
             "    await client.aclose()\n"
             "    print([i.content for i in got.items])\n"
             "asyncio.run(main())",
    "postgres": "import asyncio, os, psycopg\nfrom ditto.retrieval import create_sql_search_provider\n"
                "async def main():\n"
                "    async with await psycopg.AsyncConnection.connect(os.environ['DSN'], autocommit=True) as conn:\n"
                "        await conn.execute('CREATE TABLE docs (id text, body text)')\n"
                "        await conn.execute(\"INSERT INTO docs VALUES ('a', 'backups run nightly'), ('b', 'cats')\")\n"
                "        p = create_sql_search_provider(conn, {'dialect': 'postgres', 'table': 'docs', "
                "'content_column': 'body', 'id_column': 'id'})\n"
                "        out = await p.search({'query': {'content': 'backup'}, 'target': {'name': 'kb'}, 'limit': 3})\n"
                "        print([c.id for c in out.candidates])\n"
                "asyncio.run(main())",
    "web": "from ditto.worker.interaction.extract import extract_main_text\n"
           "page = b'<html><body><article><h1>Backups</h1><p>' + b'Backups run nightly and are kept for 30 days. ' "
           "* 5 + b'</p></article></body></html>'\n"
           "import aiohttp\nprint('kept for 30 days' in extract_main_text(page), aiohttp.__name__)",
    "openai": "import asyncio\nfrom ditto.worker.infer import create_infer_client, create_openai_provider\n"
              "p = create_openai_provider({'base_url': 'http://127.0.0.1:9/v1', 'model': 'm', 'max_retries': 0})\n"
              "try:\n"
              "    asyncio.run(create_infer_client({'openai': p}).reasoning.sample(model={'provider': 'openai', "
              "'model': 'm'}, messages=[{'role': 'user', 'content': 'hi'}]))\n"
              "except Exception as error:\n"
              "    print(error.code)",
    "mcp": "import asyncio, sys\nfrom ditto.worker.interaction import create_interaction\n"
           "server = 'from mcp.server.mcpserver import MCPServer\\ns = MCPServer(\"t\")\\n"
           "@s.tool()\\ndef double(value: int) -> int:\\n    return 2 * value\\ns.run(\"stdio\")'\n"
           "i = create_interaction(mcp_servers={'s': {'command': sys.executable, 'args': ['-c', server]}})\n"
           "r = asyncio.run(i.act_mcp({'server': 's', 'call': {'id': 'c', 'name': 'double', "
           "'arguments': {'value': 21}}}))\n"
           "print(r.status, r.content)",
    "tracing": "import opentelemetry.trace\nfrom ditto.transport._tracing import inject\n"
               "print(opentelemetry.trace.__name__, inject({'a': 'b'}))",
}
EXPECTED: dict[str, str] = {
    "retrieval": "[['en'], ['zh']]", "redis": "['hi', 'ok']", "postgres": "['a']",
    "web": "True aiohttp", "openai": "INFER_PROVIDER_UNAVAILABLE", "mcp": "success {'result': 42}",
    "tracing": "opentelemetry.trace {'a': 'b'}",
}


@pytest.mark.parametrize("extra", sorted(SMOKE))
def test_each_light_extra_installs_alone_and_works(venvs: dict[str, Venv], extra: str, tmp_path: Path,
                                                   redis_proc: RedisServer) -> None:
    """A copy of the bare venv plus one extra: its feature runs against the real thing (Redis, PostgreSQL,
    an MCP server over stdio)."""
    venv = venvs[extra]
    env = {**_clean_env(), "DITTO_WORKER_CONTEXT_REDIS_URL": redis_proc.url}
    if extra == "postgres":
        with running_postgres() as server:
            done = venv.run("-c", SMOKE[extra], cwd=tmp_path, env={**env, "DSN": server.dsn})
    else:
        done = venv.run("-c", SMOKE[extra], cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == EXPECTED[extra]
    if extra == "openai":  # the SDK was there: the failure is the unreachable server, not a missing extra
        assert "extra" not in done.stdout


# -- the full install: what a user runs ----------------------------------------------------------------------


def test_the_research_job_and_verify_run_with_only_the_retrieval_extra(venvs: dict[str, Venv], tmp_path: Path) -> None:
    """The README's main job on the embedded sample data, then ``ditto verify`` on its task folder, in the
    venv that has only ``retrieval``: the one extra ``scripts/research`` installs."""
    venv = venvs["retrieval"]
    done = venv.run("-m", "ditto", "research", "multi-source", "--sources", "documents,knowledge", "--knowledge",
                    "both", "--base-dir", str(tmp_path), "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    printed = json.loads(done.stdout)
    assert printed["result"]["status"] == "completed"
    verified = venv.run("-m", "ditto", "verify", printed["directory"], cwd=tmp_path)
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_a_postgres_knowledge_base_without_its_extra_says_what_to_install(venvs: dict[str, Venv],
                                                                          tmp_path: Path) -> None:
    """With ``retrieval`` but not ``postgres``, a PostgreSQL knowledge base fails with the install command."""
    done = venvs["retrieval"].run("-m", "ditto", "research", "knowledge-base", "--kb", "postgresql://127.0.0.1:1/kb",
                                  "--question", "When do backups run?", "--base-dir", str(tmp_path), "--json",
                                  cwd=tmp_path)
    failed = json.loads(done.stdout)["result"]["failedSources"]
    assert [source["message"] for source in failed] == [
        f"a PostgreSQL knowledge base needs the 'postgres' extra (psycopg is not installed): "
        f"pip install '{DISTRIBUTION}[postgres]'"]


def test_scripts_research_installs_only_its_extra_and_runs(built: Built, tmp_path: Path) -> None:
    """The README's first command from a clean copy: scripts/setup creates .venv with ``retrieval`` (pip's
    progress on stderr, nothing on stdout but the result), then the job completes."""
    source = built.work / "source"
    env = {**_clean_env(), "PYTHON": sys._base_executable}  # type: ignore[attr-defined]
    done = subprocess.run([str(source / "scripts" / "research"), "--base-dir", str(tmp_path), "--json"],
                          capture_output=True, text=True, timeout=600, cwd=source, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout)["result"]["status"] == "completed"
    assert "installing ditto-agents[retrieval]" in done.stderr and "Successfully installed" in done.stderr
    assert (source / ".venv" / ".installed-retrieval").is_file()
    listed = subprocess.run([str(source / ".venv" / "bin" / "python"), "-m", "pip", "list", "--format=json"],
                            capture_output=True, text=True, timeout=120, env=_clean_env())
    installed = {entry["name"].lower() for entry in json.loads(listed.stdout)}
    assert {"bm25s", "numpy", "jieba"} <= installed
    assert installed.isdisjoint({"pytest", "mypy", "ruff", "redis", "openai", "mcp", "trafilatura", "psycopg", "torch"})


def test_the_readme_install_section_is_what_this_check_installs() -> None:
    """The README's extras table names exactly pyproject's extras, and each is installed alone here
    (light ones in CI, heavy ones with --heavy-extras)."""
    import tomllib

    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
                 ["optional-dependencies"]) - {"dev"}
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = set(re.findall(r"^\| `([a-z-]+)` \|", readme.split("## Install", 1)[1].split("\n## ", 1)[0],
                           flags=re.MULTILINE))
    assert table == extras
    assert extras - {"all"} == set(SMOKE) | set(HEAVY)
    assert f"pip install {DISTRIBUTION}" in readme and f"pip install '{DISTRIBUTION}[retrieval]'" in readme


@pytest.mark.parametrize("name", [*sorted(CHECKS), "chat_context.py"])
def test_every_example_runs_against_the_installed_package(full: Venv, built: Built, name: str, tmp_path: Path,
                                                          redis_proc: RedisServer) -> None:
    """A copy of examples/ outside the checkout, run by the full venv's interpreter, prints what it shows."""
    examples = built.work / "examples"
    if not examples.exists():
        shutil.copytree(ROOT / "examples", examples)
    assert {path.name for path in examples.glob("*.py")} == set(CHECKS) | ELSEWHERE
    if name == "chat_context.py":
        done = full.run(str(examples / name), redis_proc.url, cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-3000:]
        assert "queued 20/20; update_with_retry 20/20" in done.stdout
        return
    CHECKS[name](run_example(examples / name, tmp_path, python=full.python, env=_clean_env()))


def _readme_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), flags=re.DOTALL)


@pytest.mark.parametrize("index", range(len(_readme_blocks())))
def test_the_readme_python_blocks_run_against_the_installed_package(full: Venv, index: int, tmp_path: Path) -> None:
    """Each Python block of the README, in a fresh folder, with the installed package."""
    done = full.run("-c", _readme_blocks()[index], cwd=tmp_path, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip()


def test_a_consumer_type_checks_strictly_against_the_installed_package(full: Venv, built: Built) -> None:
    """``mypy --strict`` on tests/package/consumer.py, outside the checkout, resolving ``ditto`` only from
    the full venv (py.typed shipped, no path alias), then the module runs there."""
    folder = built.work / "consumer"
    folder.mkdir()
    shutil.copy(Path(__file__).with_name("consumer.py"), folder / "consumer.py")
    done = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--python-executable",
                           full.python, "consumer.py"], capture_output=True, text=True, timeout=300, cwd=folder,
                          env=_clean_env())
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "Success: no issues found in 1 source file" in done.stdout
    ran = full.run("consumer.py", cwd=folder)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert ran.stdout.split()[0] == full.run("-c", "import importlib.metadata as m; "
                                             f"print(m.version({DISTRIBUTION!r}))", cwd=folder).stdout.strip()


# -- heavy extras: by hand (scripts/package-check --heavy) ---------------------------------------------------


HEAVY: dict[str, str] = {
    "embed": "import asyncio\nfrom ditto.retrieval import InMemoryVectorIndex, create_vector_search_provider\n"
             "print(InMemoryVectorIndex.__name__, create_vector_search_provider.__name__)",
    "multilingual": "from ditto.retrieval import create_local_embedding_provider\n"
                    "print(create_local_embedding_provider('multilingual-e5-small').model_id)",
    "milvus": "import pymilvus, milvus_lite\nfrom ditto.retrieval import create_milvus_search_provider\n"
              "print(create_milvus_search_provider.__name__)",
}


@pytest.mark.parametrize("extra", sorted(HEAVY))
def test_each_heavy_extra_installs_alone(bare: Venv, built: Built, extra: str, tmp_path: Path,
                                         request: pytest.FixtureRequest) -> None:
    """The heavy extras (large downloads), each alone on the bare package: only with ``--heavy-extras``."""
    if not request.config.getoption("--heavy-extras"):
        pytest.skip("heavy extras run by hand: scripts/package-check --heavy")
    venv = bare.copy(built.work / f"venv-{extra}")
    venv.install(f"{built.wheel}[{extra}]")
    done = venv.run("-c", HEAVY[extra], cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
