"""``ditto index``, ``ditto search``, ``ditto eval beir`` and ``ditto serve --index`` as a user runs them (issue 18)."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

from typer.testing import CliRunner

from ditto.cli import app
from ditto.retrieval.index import update_index
from ditto.runtime import create_ditto
from ditto.transport import create_http_transport
from tests.retrieval.index_support import write_docs
from tests.support.ditto_serve import ditto_serve

runner = CliRunner()
TOKEN = "index-serve-token-0123456789"


def _index(tmp_path: Path) -> tuple[Path, Path]:
    docs = write_docs(tmp_path / "docs")
    done = runner.invoke(app, ["index", str(docs), "--index", str(tmp_path / "idx")])
    assert done.exit_code == 0, done.output
    assert "3 added" in done.output and "passages" in done.output
    return docs, tmp_path / "idx"


def test_search_prints_ranked_hits_with_file_line_and_a_snippet(tmp_path: Path) -> None:
    """Issue 18: `ditto search` prints each hit as path:first-last line, its score, heading and a snippet."""
    docs, index = _index(tmp_path)
    done = runner.invoke(app, ["search", "how long are backups kept", "--index", str(index), "--limit", "2"])
    assert done.exit_code == 0, done.output
    lines = done.output.splitlines()
    assert lines[0].startswith(f"  1. {(docs / 'ops/backups.md').resolve()}:3-4  [")
    assert lines[1].strip() == "Backups"
    assert lines[2].strip() == "Backups are kept for 30 days. They run nightly at 02:00."


def test_search_json_and_filters(tmp_path: Path) -> None:
    """Issue 18: --json prints one object with the hits (id, path, lines, text); --filter restricts them; a bad
    filter or strategy is a usage error (exit 2), a vector strategy on a BM25 index exit 1 with its code."""
    docs, index = _index(tmp_path)
    done = runner.invoke(app, ["search", "memory", "--index", str(index), "--json", "--filter", '{"suffix": ".md"}'])
    assert done.exit_code == 0, done.output
    result = json.loads(done.output)
    assert result["strategy"] == "bm25" and result["hits"]
    assert all(hit["path"].endswith(".md") and hit["lineStart"] >= 1 for hit in result["hits"])
    assert result["hits"][0]["path"] == str((docs / "guide/memory.md").resolve())
    assert runner.invoke(app, ["search", "x", "--index", str(index), "--filter", "[1]"]).exit_code == 2
    assert runner.invoke(app, ["search", "x", "--index", str(index), "--strategy", "magic"]).exit_code == 2
    refused = runner.invoke(app, ["search", "x", "--index", str(index), "--strategy", "vector", "--json"])
    assert refused.exit_code == 1 and json.loads(refused.output)["error"]["code"] == "RETRIEVAL_STRATEGY_UNSUPPORTED"
    missing = runner.invoke(app, ["search", "x", "--index", str(tmp_path / "nowhere"), "--json"])
    assert missing.exit_code == 1 and json.loads(missing.output)["error"]["code"] == "INDEX_NOT_FOUND"


def test_index_json_summary_and_bad_input(tmp_path: Path) -> None:
    """Issue 18: --json prints the summary (added/updated/unchanged/removed/skipped, passages, seconds); an empty
    folder is refused with exit 1 and INDEX_INVALID_INPUT; no source at all is a usage error."""
    docs, index = _index(tmp_path)
    (docs / "extra.md").write_text("One more.\n")
    done = runner.invoke(app, ["index", str(docs), "--index", str(index), "--json"])
    summary = json.loads(done.output)
    assert summary["files"] == {"added": 1, "updated": 0, "unchanged": 3, "removed": 0, "skipped": 0}
    assert summary["passages"] == 6 and summary["seconds"] >= 0
    (tmp_path / "empty").mkdir()
    refused = runner.invoke(app, ["index", str(tmp_path / "empty"), "--index", str(index), "--json"])
    assert refused.exit_code == 1 and json.loads(refused.output)["error"]["code"] == "INDEX_INVALID_INPUT"
    assert runner.invoke(app, ["index", "--index", str(index)]).exit_code == 2


def _beir(root: Path) -> Path:
    (root / "qrels").mkdir(parents=True)
    corpus = [("d1", "Vitamin D", "Vitamin D deficiency raises fracture risk."),
              ("d2", "Sleep", "Short sleep impairs memory consolidation."),
              ("d3", "Coffee", "Coffee intake and heart rhythm."),
              ("d4", "Exercise", "Exercise improves sleep quality and memory.")]
    (root / "corpus.jsonl").write_text("".join(json.dumps({"_id": i, "title": t, "text": x}) + "\n"
                                               for i, t, x in corpus))
    queries = [("q1", "vitamin D fracture"), ("q2", "sleep memory"), ("q3", "coffee heart")]
    (root / "queries.jsonl").write_text("".join(json.dumps({"_id": i, "text": t}) + "\n" for i, t in queries))
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td4\t1\n")
    (root / "qrels" / "train.tsv").write_text("query-id\tcorpus-id\tscore\nq3\td3\t1\n")
    return root


def test_eval_beir_uses_only_the_test_qrels(tmp_path: Path) -> None:
    """Issue 18: `ditto eval beir` scores the queries of qrels/test.tsv only (q3 is a train query), with
    nDCG@10, Recall@100, MRR@10 and queries/s; the numbers follow from the rankings."""
    dataset = _beir(tmp_path / "beir")
    assert runner.invoke(app, ["index", str(dataset), "--index", str(tmp_path / "idx")]).exit_code == 0
    done = runner.invoke(app, ["eval", "beir", str(dataset), "--index", str(tmp_path / "idx"), "--strategy", "bm25",
                               "--json"])
    assert done.exit_code == 0, done.output
    result = json.loads(done.output)
    assert result["queries"] == 2 and result["split"] == "test" and result["queriesPerSecond"] > 0
    # q1: d1 ranks first; q2: "sleep memory" ranks d2 (both words, short) over the relevant d4.
    search = runner.invoke(app, ["search", "sleep memory", "--index", str(tmp_path / "idx"), "--json"])
    ranked = [hit["id"] for hit in json.loads(search.output)["hits"]]
    position = ranked.index("d4") + 1
    assert math.isclose(result["MRR@10"], round((1.0 + 1.0 / position) / 2, 4))
    assert math.isclose(result["nDCG@10"], round((1.0 + 1.0 / math.log2(position + 1)) / 2, 4))
    assert result["Recall@100"] == 1.0
    text = runner.invoke(app, ["eval", "beir", str(dataset), "--index", str(tmp_path / "idx")])
    assert "nDCG@10" in text.output and "queries/s" in text.output
    assert runner.invoke(app, ["eval", "beir", str(tmp_path), "--index", str(tmp_path / "idx")]).exit_code == 2


def test_another_model_for_an_index_with_vectors_is_refused_before_loading_it(tmp_path: Path) -> None:
    """Issue 18 (bad input): ``--model`` naming another model than the one an index's vectors came from is
    INDEX_MODEL_MISMATCH at once, before the model is loaded (a hub id that cannot be downloaded used to cost a
    minute of retries offline and a traceback first); the index's own model by its alias is accepted."""
    import time

    from tests.retrieval.index_support import WordHashEmbedder

    docs = write_docs(tmp_path / "docs")
    asyncio.run(update_index(tmp_path / "idx", [docs], embedding=WordHashEmbedder(model_id="word-hash")))
    started = time.perf_counter()
    done = runner.invoke(app, ["index", str(docs), "--index", str(tmp_path / "idx"), "--model",
                               "nonexistent/model-xyz", "--json"])
    assert time.perf_counter() - started < 10
    error = json.loads(done.stdout)["error"]
    assert done.exit_code == 1 and error["code"] == "INDEX_MODEL_MISMATCH" and "word-hash" in error["message"]


def test_a_filter_nested_thousands_deep_is_a_usage_error(tmp_path: Path) -> None:
    """Issue 18 (bad input): ``--filter`` of 5,000 nested objects (30 KB, under the 64 KiB bound) is a usage error
    saying it is nested too deeply, not a RecursionError traceback."""
    _, index = _index(tmp_path)
    deep = '{"a":' * 5000 + "1" + "}" * 5000
    done = runner.invoke(app, ["search", "backup", "--index", str(index), "--filter", deep])
    assert done.exit_code == 2 and "nested too deeply" in done.output and "Traceback" not in done.output


def test_eval_beir_names_what_is_wrong_with_a_dataset(tmp_path: Path) -> None:
    """Issue 18 (bad input): a qrels score that is not an integer, a queries line that is not an object, qrels
    judging nothing relevant, and an index of another corpus each say what is wrong (usage errors, exit 2, naming
    the file and line; the last a warning beside the zero scores), never "not a BEIR dataset"."""
    dataset = _beir(tmp_path / "beir")
    assert runner.invoke(app, ["index", str(dataset), "--index", str(tmp_path / "idx")]).exit_code == 0
    qrels = dataset / "qrels" / "test.tsv"
    good = qrels.read_text()

    def refused(reason: str) -> None:
        done = runner.invoke(app, ["eval", "beir", str(dataset), "--index", str(tmp_path / "idx")])
        message = " ".join(done.output.replace("│", " ").split())
        assert done.exit_code == 2 and reason in message and "not a BEIR dataset" not in message, done.output

    qrels.write_text(good + "q2\td2\tnan\n")
    refused("qrels/test.tsv line 4 is not query-id, corpus-id and an integer score")
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\td1\t-1\n")
    refused("judges no document relevant")
    qrels.write_text(good)
    queries = dataset / "queries.jsonl"
    queries.write_text(queries.read_text() + "[1, 2]\n")
    refused("queries.jsonl line 4 is not an object")
    queries.write_text(queries.read_text().replace("[1, 2]\n", ""))
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.md").write_text("Vitamin D and sleep memory, coffee and the heart.\n")
    assert runner.invoke(app, ["index", str(other), "--index", str(tmp_path / "other-idx")]).exit_code == 0
    done = runner.invoke(app, ["eval", "beir", str(dataset), "--index", str(tmp_path / "other-idx"), "--json"])
    assert done.exit_code == 0 and "is judged in" not in done.stdout
    assert "no document the index ranked is judged" in done.stderr


async def test_serve_an_index_over_http_and_search_it(tmp_path: Path) -> None:
    """Issue 18: `ditto serve --index DIR --target docs` is a standalone RETRIEVAL.SEARCH service: a caller over
    real HTTP gets the index's hits (ids, file lines) and a filter applied."""
    docs, index = await asyncio.to_thread(_index, tmp_path)
    with ditto_serve([], TOKEN, extra=["--index", str(index), "--target", "docs"]) as (url, _):
        async with create_http_transport(id="idx", url=url, token=TOKEN) as transport:
            caller = create_ditto(transports=[transport])
            (worker,) = await transport.workers()
            assert "RETRIEVAL.SEARCH" in worker["capabilities"]
            caller.register_remote(address=worker["address"], transport_id="idx", capabilities=worker["capabilities"])
            result = await caller.invoke("RETRIEVAL.SEARCH", {"query": {"content": "backups kept"},
                                                              "target": {"name": "docs"}, "limit": 2})
            assert result.status == "success", result.error
            candidates = result.output["candidates"]
            assert candidates[0]["source"]["ref"] == f"{(docs / 'ops/backups.md').resolve()}#L3-L4"
            filtered = await caller.invoke("RETRIEVAL.SEARCH", {"query": {"content": "memory"}, "target": {
                "name": "docs"}, "filter": {"suffix": ".txt"}})
            assert filtered.status == "success" and filtered.output["candidates"] == []
            unknown = await caller.invoke("RETRIEVAL.SEARCH", {"query": {"content": "x"}, "target": {"name": "nope"}})
            assert unknown.error is not None and unknown.error.code == "RETRIEVAL_TARGET_NOT_FOUND"
            await caller.close()


def test_serve_with_the_bare_retrieval_worker_factory_is_a_clear_usage_error() -> None:
    """Issue 18: `ditto serve --worker ditto.retrieval:create_retrieval_worker` says what it needs and how to
    serve an index instead (exit 2), no traceback; `ditto serve` with nothing to serve is a usage error too."""
    env = {"DITTO_TRANSPORT_HTTP_WORKER_TOKEN": "t"}
    done = runner.invoke(app, ["serve", "--worker", "ditto.retrieval:create_retrieval_worker"], env=env)
    text = " ".join(done.output.replace("│", " ").split())
    assert done.exit_code == 2 and "Traceback" not in done.output and "ditto serve --index DIR" in text
    assert runner.invoke(app, ["serve"], env=env).exit_code == 2


def test_a_skipped_file_is_said_once_on_stderr(tmp_path: Path) -> None:
    """Issue 18: a file ``ditto index`` skips (binary) is named once on stderr, as it is met (it was said twice:
    by the log and again after the summary), and counted in the summary line and the JSON."""
    import subprocess
    import sys

    docs = write_docs(tmp_path / "docs")
    (docs / "blob.txt").write_bytes(b"PK\x03\x04\x00\x00zip")
    cli = [str(Path(sys.executable).parent / "ditto"), "index", str(docs)]
    done = subprocess.run([*cli, "--index", str(tmp_path / "idx")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("blob.txt") == 1 and "1 skipped" in done.stdout
    (docs / "other.bin.txt").write_bytes(b"\x00\x01")
    done = subprocess.run([*cli, "--index", str(tmp_path / "idx"), "--json"], capture_output=True, text=True,
                          timeout=120)
    summary = json.loads(done.stdout)
    assert summary["files"]["skipped"] == 2 and any("other.bin.txt" in w for w in summary["warnings"])
    assert done.stderr.count("other.bin.txt") == 1


def test_embed_stores_sentence_vectors_unless_told_not_to(tmp_path: Path) -> None:
    """Issue 18: ``ditto index --embed`` embeds each passage's sentences too and says how many (``sentences``
    in --json, "sentences embedded" for people); ``--no-sentence-vectors`` leaves them out, and a later
    ``--embed`` run adds them to the passages already held."""
    from ditto.retrieval.index import open_index

    docs = write_docs(tmp_path / "docs")
    bare = runner.invoke(app, ["index", str(docs), "--index", str(tmp_path / "idx"), "--embed",
                               "--no-sentence-vectors", "--json"])
    assert bare.exit_code == 0, bare.output
    first = json.loads(bare.stdout)
    assert first["embedded"] == first["passages"] > 0 and first["sentences"] == 0
    added = runner.invoke(app, ["index", str(docs), "--index", str(tmp_path / "idx"), "--embed"])
    assert added.exit_code == 0, added.output
    assert "sentences embedded" in added.stdout
    with open_index(tmp_path / "idx") as index:
        assert set(index.sentence_vectors(["Backups are kept for 30 days.", "Not in any file."])) == \
            {"Backups are kept for 30 days."}
