"""``ditto index``, ``ditto search`` and ``ditto eval beir``: a persistent index from the shell.

Exit status: 0 on success, 1 when the index refused the work (``INDEX_*`` codes: a
busy index, a newer format, a model mismatch, bad input) or a search failed, 2 for a
usage error. With ``--json`` stdout holds exactly one JSON document; otherwise a
summary for people, and a progress bar on stderr when it is a terminal.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import DittoError
from ._paths import path_value

__all__ = ["register"]

_STRATEGIES = ("bm25", "keyword", "vector", "hybrid", "rerank")
_MAX_FILTER_CHARS = 64 * 1024


def _fail(error: DittoError, as_json: bool) -> typer.Exit:
    if as_json:
        typer.echo(json.dumps({"ok": False, "error": {"code": error.code, "message": error.message}},
                              ensure_ascii=False))
    else:
        typer.echo(f"error {error.code}: {error.message}", err=True)
    return typer.Exit(1)


class _Bar:
    """A rich progress bar on stderr for a terminal; nothing otherwise."""

    def __init__(self, enabled: bool) -> None:
        self._enabled = enabled
        self._progress: Any = None
        self._tasks: dict[str, Any] = {}

    def __enter__(self) -> _Bar:
        if self._enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self._progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                      TimeRemainingColumn(), console=Console(stderr=True), transient=True)
            self._progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.__exit__(*exc)

    def __call__(self, stage: str, done: int, total: int) -> None:
        if self._progress is None:
            return
        task = self._tasks.get(stage)
        if task is None:
            label = {"read": "Reading files", "embed": "Embedding passages",
                     "sentences": "Embedding sentences", "bm25": "BM25 arrays"}.get(stage, stage)
            task = self._tasks[stage] = self._progress.add_task(label, total=total)
        self._progress.update(task, completed=done, total=total)


def _embedding_for(directory: Path, embed: bool, model: str | None) -> Any:
    """The embedding provider a run needs: the named/default model with ``--embed``, the index's own otherwise."""
    from ..retrieval.index.embedding import local_embedding
    from ..retrieval.index.manifest import MANIFEST_FILE, read_manifest

    recorded = read_manifest(directory).embedding if (directory / MANIFEST_FILE).exists() else None
    if recorded is not None and model is not None:
        from ..retrieval.index.errors import INDEX_MODEL_MISMATCH, SearchIndexError
        from ..retrieval.providers.local_embedding import model_id_of

        named = model_id_of(model)
        if named != recorded.model:  # refused before a model is loaded (or a hub download tried)
            raise SearchIndexError(INDEX_MODEL_MISMATCH, f"this index holds vectors of {recorded.model}; --model "
                                                         f"{model} is {named} (use a new index, or the same model)")
    if embed or model is not None:
        return local_embedding(model if model is not None else (recorded.model if recorded else None))
    if recorded is not None:
        return local_embedding(recorded.model)
    return None


def _parse_filter(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return None
    if len(text) > _MAX_FILTER_CHARS:
        raise typer.BadParameter("--filter is longer than 64 KiB")
    from ..contracts.json import MAX_JSON_DEPTH, json_text_depth

    if json_text_depth(text) > MAX_JSON_DEPTH:  # before json.loads, whose recursion depends on the interpreter
        raise typer.BadParameter(f"--filter is nested too deeply (more than {MAX_JSON_DEPTH} levels)")
    try:
        value = json.loads(text)
    except ValueError:
        raise typer.BadParameter('--filter must be a JSON object, e.g. \'{"suffix": ".md"}\'') from None
    if not isinstance(value, dict):
        raise typer.BadParameter('--filter must be a JSON object, e.g. \'{"suffix": ".md"}\'')
    return value


def _snippet(text: str, width: int = 200) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[:width - 1].rstrip() + "…"


def _open_provider(index_dir: Path, strategy: str | None) -> tuple[Any, Any]:
    from ..retrieval.index import create_index_search_provider, open_index
    from ..retrieval.index.embedding import local_embedding

    index = open_index(index_dir)
    embedding = None
    needs_vectors = strategy in ("vector", "hybrid", "rerank") or strategy is None
    if index.embedding is not None and needs_vectors:
        try:
            embedding = local_embedding(index.embedding.model)
        except DittoError:
            if strategy is not None:
                index.close()
                raise
    return index, create_index_search_provider(index, embedding=embedding)


def index_worker(directory: Path, target: str | None) -> tuple[Any, Any]:
    """``ditto serve --index``: the opened index and its RETRIEVAL worker (vectors when their model loads)."""
    from ..retrieval.index import open_index
    from ..retrieval.index.embedding import local_embedding
    from ..retrieval.index.service import create_index_retrieval_worker

    index = open_index(directory)
    embedding = None
    if index.embedding is not None:
        try:
            embedding = local_embedding(index.embedding.model)
        except DittoError as error:  # serve BM25 rather than nothing; say why
            typer.echo(f"warning: serving BM25 only: {error.message}", err=True)
    return index, create_index_retrieval_worker(index, target=target, embedding=embedding)


def register(app: typer.Typer) -> None:
    """Add ``index``, ``search`` and ``eval beir`` to the ``ditto`` command."""

    @app.command("index")
    def index_command(
        sources: Annotated[list[Path] | None, typer.Argument(parser=path_value,
            help="Folders or files of Markdown/plain text or HTML (read as its main text), .jsonl files (id, "
                 "content, metadata) or BEIR corpus folders (corpus.jsonl).", show_default=False)] = None,
        index_dir: Annotated[Path, typer.Option(
            "--index", parser=path_value, help="The index directory (created if missing).")]
        = Path("ditto.index"),
        embed: Annotated[bool, typer.Option("--embed", help="Also embed the passages (the embed extra) for "
                                                            "vector and hybrid search.")] = False,
        model: Annotated[str | None, typer.Option("--model", help="The embedding model (with --embed): "
                                                                  "all-MiniLM-L6-v2 (the default, English), "
                                                                  "multilingual-e5-small (Chinese and other "
                                                                  "languages; the multilingual extra), or a "
                                                                  "Hugging Face model id.")] = None,
        remove: Annotated[list[Path] | None, typer.Option(
            "--remove", parser=path_value, help="Drop this file or folder from the "
                                                "index (repeatable).")] = None,
        ignore: Annotated[list[str] | None, typer.Option("--ignore", help="Glob of files to skip.")] = None,
        sentence_vectors: Annotated[bool, typer.Option(
            "--sentence-vectors/--no-sentence-vectors",
            help="With embeddings, also embed each passage's sentences, which research reads (a research "
                 "task over the index then embeds almost nothing; indexing takes about twice as long).")] = True,
        as_json: Annotated[bool, typer.Option("--json", help="Print the summary as one JSON object.")] = False,
    ) -> None:
        """Build or update a persistent search index (incremental: unchanged files are skipped)."""
        from ..retrieval.index import update_index
        from ..worker.interaction.extractor import html_document_reader

        if not sources and not remove:
            raise typer.BadParameter("name at least one SOURCE to index (or --remove PATH)")
        terminal = sys.stderr.isatty() and not as_json
        try:
            embedding = _embedding_for(index_dir, embed, model)
            with _Bar(terminal) as bar:
                summary = asyncio.run(update_index(index_dir, [path for path in sources or []],
                                                   remove=list(remove or []), embedding=embedding,
                                                   ignore=list(ignore or []), progress=bar,
                                                   sentences=sentence_vectors, html=html_document_reader()))
        except DittoError as error:
            raise _fail(error, as_json) from None
        data = summary.to_json_dict()
        if as_json:
            typer.echo(json.dumps({"ok": True, **data}, ensure_ascii=False))
            return
        for warning in summary.notes:  # a skipped file was said on the log already, as it was met
            typer.echo(f"warning: {warning}", err=True)
        files = data["files"]
        typer.echo(f"{index_dir}: {files['added']} added, {files['updated']} updated, {files['unchanged']} "
                   f"unchanged, {files['removed']} removed, {files['skipped']} skipped; {summary.passages} passages"
                   f" in {summary.files} files" + (f", {summary.embedded} embedded" if summary.embedded else "")
                   + (f", {summary.sentences} sentences embedded" if summary.sentences else "")
                   + f" ({summary.seconds:.2f} s)")

    @app.command("search")
    def search_command(
        query: Annotated[str, typer.Argument(help="What to look for.")],
        index_dir: Annotated[Path, typer.Option(
            "--index", parser=path_value, help="The index directory.")] = Path("ditto.index"),
        strategy: Annotated[str | None, typer.Option("--strategy", help="bm25, keyword, vector, hybrid or rerank "
                                                                        "(default: hybrid when the index has "
                                                                        "vectors, bm25 otherwise).")] = None,
        filter_json: Annotated[str | None, typer.Option("--filter", help='Metadata filter as JSON, e.g. '
                                                                         '\'{"suffix": ".md"}\'.')] = None,
        limit: Annotated[int, typer.Option("--limit", min=1, max=1000, help="How many hits.")] = 10,
        as_json: Annotated[bool, typer.Option("--json", help="Print the hits as one JSON object.")] = False,
    ) -> None:
        """Search an index; prints ranked hits with file:line and a snippet."""
        if strategy is not None and strategy not in _STRATEGIES:
            raise typer.BadParameter(f"--strategy must be one of {', '.join(_STRATEGIES)}")
        if not query.strip() or "\x00" in query or len(query) > 10_000:
            raise typer.BadParameter("the query must be non-blank text of at most 10,000 characters")
        search_filter = _parse_filter(filter_json)
        try:
            index, provider = _open_provider(index_dir, strategy)
        except DittoError as error:
            raise _fail(error, as_json) from None
        try:
            request: dict[str, Any] = {"query": {"content": query}, "target": {"name": index_dir.name or "index"},
                                       "limit": limit}
            if strategy is not None:
                request["strategy"] = strategy
            if search_filter is not None:
                request["filter"] = search_filter
            output = asyncio.run(provider.search(request))
        except DittoError as error:
            raise _fail(error, as_json) from None
        finally:
            index.close()
        used = strategy or provider.default_strategy
        hits = []
        for rank, candidate in enumerate(output.candidates, start=1):
            meta = dict(candidate.metadata or {})
            hits.append({"rank": rank, "id": candidate.id, "score": candidate.score, "path": meta.get("path"),
                         "lineStart": meta.get("lineStart"), "lineEnd": meta.get("lineEnd"),
                         "ref": candidate.source.ref if candidate.source else None, "heading": meta.get("heading"),
                         "text": candidate.content})
        if as_json:
            typer.echo(json.dumps({"ok": True, "query": query, "strategy": used, "hits": hits}, ensure_ascii=False))
            return
        if not hits:
            typer.echo(f"no hits ({used})", err=True)
            return
        for hit in hits:
            place = f"{hit['path']}:{hit['lineStart']}"
            if hit["lineEnd"] != hit["lineStart"]:
                place += f"-{hit['lineEnd']}"
            label = place if hit["ref"] != hit["id"] else f"{hit['id']} ({place})"
            typer.echo(f"{hit['rank']:>3}. {label}  [{hit['score']:.4g}]")
            if hit["heading"]:
                typer.echo(f"     {_snippet(str(hit['heading']), 120)}")
            typer.echo(f"     {_snippet(str(hit['text']))}")

    evaluation = typer.Typer(no_args_is_help=True, help="Measure retrieval quality on a benchmark.")
    app.add_typer(evaluation, name="eval")

    @evaluation.command("beir")
    def eval_beir(
        dataset: Annotated[Path, typer.Argument(
            parser=path_value, help="A BEIR dataset folder (queries.jsonl, qrels/test.tsv).")],
        index_dir: Annotated[Path, typer.Option(
            "--index", parser=path_value, help="An index of the dataset's corpus (ditto index "
                                               "DATASET --index IDX).")] = Path("ditto.index"),
        strategy: Annotated[str, typer.Option("--strategy", help="bm25, keyword, vector, hybrid or rerank.")]
        = "bm25",
        as_json: Annotated[bool, typer.Option("--json", help="Print the scores as one JSON object.")] = False,
    ) -> None:
        """nDCG@10, Recall@100, MRR@10 and queries/s on the test split's judged queries."""
        from ..retrieval.evaluation import read_beir_qrels, read_beir_queries, score_rankings

        if strategy not in _STRATEGIES:
            raise typer.BadParameter(f"--strategy must be one of {', '.join(_STRATEGIES)}")
        try:
            qrels = read_beir_qrels(dataset, "test")
            queries = read_beir_queries(dataset)
        except OSError:
            raise typer.BadParameter(f"{dataset} is not a BEIR dataset (it needs queries.jsonl and qrels/test.tsv "
                                     "that can be read)") from None
        except ValueError as error:  # a malformed line, named (invalid UTF-8 included)
            raise typer.BadParameter(f"{dataset}: {error}") from None
        if not qrels:
            raise typer.BadParameter(f"{dataset}: qrels/test.tsv judges no document relevant (no score above 0)")
        judged = [query_id for query_id in qrels if query_id in queries]
        if not judged:
            raise typer.BadParameter(f"{dataset}: no query of qrels/test.tsv is in queries.jsonl")
        try:
            index, provider = _open_provider(index_dir, strategy)
        except DittoError as error:
            raise _fail(error, as_json) from None
        try:
            rankings, seconds = asyncio.run(_rank_all(provider, [(q, queries[q]) for q in judged], strategy))
        except DittoError as error:
            raise _fail(error, as_json) from None
        finally:
            index.close()
        judged_documents = {doc for query_id in judged for doc in qrels[query_id]}
        if not any(doc in judged_documents for ranked in rankings.values() for doc in ranked):
            typer.echo(f"warning: no document the index ranked is judged in {dataset}/qrels/test.tsv: is "
                       f"{index_dir} an index of this dataset's corpus?", err=True)
        scores = score_rankings(rankings, {query_id: qrels[query_id] for query_id in judged})
        result = {"ok": True, "dataset": str(dataset), "split": "test", "strategy": strategy,
                  **scores.to_json_dict(), "queriesPerSecond": round(len(judged) / seconds, 2) if seconds else None}
        if as_json:
            typer.echo(json.dumps(result, ensure_ascii=False))
            return
        typer.echo(f"{dataset.name} test, {scores.queries} queries, {strategy}: nDCG@10 {scores.ndcg_at_10:.4f}  "
                   f"Recall@100 {scores.recall_at_100:.4f}  MRR@10 {scores.mrr_at_10:.4f}  "
                   f"{result['queriesPerSecond']} queries/s")


async def _rank_all(provider: Any, queries: list[tuple[str, str]], strategy: str
                    ) -> tuple[dict[str, list[str]], float]:
    """Each query's top 100 document ids (passages of one document count once, at their best rank)."""
    rankings: dict[str, list[str]] = {}
    started = time.perf_counter()
    for query_id, text in queries:
        output = await provider.search({"query": {"content": text}, "target": {"name": "beir"}, "limit": 100,
                                        "strategy": strategy})
        ranked: list[str] = []
        for candidate in output.candidates:
            if candidate.id not in ranked:
                ranked.append(candidate.id)
        rankings[query_id] = ranked
    return rankings, time.perf_counter() - started
