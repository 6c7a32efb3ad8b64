"""A sentence-transformers model folder run on ONNX Runtime: no torch, transformers or sentence-transformers
in the process that embeds.

Importing sentence-transformers costs seconds of CPU (torch, transformers, scikit-learn), and a CLI run
that embeds one query paid it every time. ONNX Runtime and the ``tokenizers`` library load in a fraction
of a second, so a folder whose ``modules.json`` is Transformer → Pooling (→ Normalize) runs here as:

* the folder's ``tokenizer.json`` through ``tokenizers``, truncated at the model's ``max_seq_length`` and
  padded to the batch's longest text (what sentence-transformers does; the file's own fixed 128-token
  truncation and padding are replaced);
* the transformer as an ONNX graph on ONNX Runtime (``intra_op_num_threads`` = the caller's ``threads``);
* pooling and normalising in numpy, as the Pooling and Normalize modules' configs say.

The graph is exported **once** from the folder's safetensors weights by :mod:`._onnx_export` (the only
place torch is imported) into a cache folder, under a name made of the model id and the weights' SHA-256,
so new weights never meet an old graph. The export records, inside the ONNX file, sentence-transformers'
own vectors for a few probe texts: a freshly exported graph must reproduce every probe (tokenisation
included) or it is refused, and every load checks the first probe again (a few milliseconds). The graph's
own SHA-256 is kept beside it; a file that no longer hashes to it (truncated, patched, half-copied) is
exported again instead of embedding garbage. Hashing 90 MB costs tens of milliseconds, so each digest is
remembered under the file's path, size, inode and mtime, and only a file written again is hashed again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

__all__ = ["ONNX_CACHE_ENV", "OnnxModel", "OnnxRecipe", "OnnxUnsupported", "default_onnx_dir", "load_onnx_model",
           "read_recipe"]

_log = logging.getLogger(__name__)

ONNX_CACHE_ENV: Final = "DITTO_ONNX_CACHE_DIR"
#: Bumped when the exported graph or its metadata change meaning, so old files are not reused.
FORMAT: Final = "1"
#: Probe texts whose sentence-transformers vectors the export stores: plain, cased and accented, CJK, and
#: one far longer than any max_seq_length (truncation). The first is checked on every load.
PROBES: Final[tuple[str, ...]] = (
    "ditto checks its exported graph with this sentence.",
    "  Ünïcödé, UPPER case and punctuation!?  ",
    "中文句子和日本語の文 mixed with English",
    " ".join(f"word{i % 97} river" for i in range(700)),
)
_PROBE_ATOL: Final = 1e-4
_WEIGHTS_FILE: Final = "model.safetensors"
_POOLING_MODES: Final = ("cls", "mean", "max", "mean_sqrt_len")


class OnnxUnsupported(Exception):
    """The folder's pipeline is not one this backend runs, or its graph cannot be exported or checked."""


@dataclass(frozen=True, slots=True)
class OnnxRecipe:
    """What :func:`read_recipe` found in a model folder: everything needed besides the graph."""

    folder: Path
    weights: Path
    tokenizer: Path
    max_seq_length: int
    do_lower_case: bool
    pooling: str  # one of _POOLING_MODES
    normalize: bool  # the pipeline ends in a Normalize module
    dimensions: int


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise OnnxUnsupported(f"{path.name} cannot be read: {error}") from None


def _object(path: Path) -> Mapping[str, Any]:
    """An optional JSON object file: ``{}`` when absent, :class:`OnnxUnsupported` when not an object."""
    if not path.is_file():
        return {}
    value = _json(path)
    if not isinstance(value, Mapping):
        raise OnnxUnsupported(f"{path.name} is not a JSON object")
    return value


def _module_kind(entry: Any) -> tuple[str, str]:
    if not isinstance(entry, Mapping) or not isinstance(entry.get("type"), str):
        raise OnnxUnsupported("modules.json lists a module without a type")
    path = entry.get("path", "")
    return entry["type"].rsplit(".", 1)[-1], path if isinstance(path, str) else ""


def _pooling_mode(config: Any) -> str:
    if not isinstance(config, Mapping):
        raise OnnxUnsupported("the pooling config is not an object")
    chosen = [mode for mode in _POOLING_MODES if config.get(f"pooling_mode_{mode}_tokens") is True]
    others = [key for key, value in config.items() if key.startswith("pooling_mode_") and value is True
              and key.removeprefix("pooling_mode_").removesuffix("_tokens") not in _POOLING_MODES]
    if len(chosen) != 1 or others or config.get("include_prompt", True) is not True:
        raise OnnxUnsupported("only one of CLS, mean, max or mean-sqrt-len pooling is supported")
    return chosen[0]


def read_recipe(folder: Path) -> OnnxRecipe:
    """How to run ``folder`` on ONNX Runtime, or :class:`OnnxUnsupported` saying why it cannot be."""
    modules = _json(folder / "modules.json")
    if not isinstance(modules, list) or not 2 <= len(modules) <= 3:
        raise OnnxUnsupported("modules.json is not Transformer, Pooling (and Normalize)")
    kinds = [_module_kind(entry) for entry in modules]
    names = [kind for kind, _ in kinds]
    if names not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]) \
            or kinds[0][1] not in ("", "."):
        raise OnnxUnsupported(f"the pipeline {names} is not Transformer, Pooling (and Normalize)")
    weights, tokenizer = folder / _WEIGHTS_FILE, folder / "tokenizer.json"
    if not weights.is_file() or not tokenizer.is_file():
        raise OnnxUnsupported("the folder lacks model.safetensors or tokenizer.json")
    pooling_config = _json(folder / kinds[1][1] / "config.json")
    pooling = _pooling_mode(pooling_config)
    dimensions = pooling_config.get("word_embedding_dimension")
    if isinstance(dimensions, bool) or not isinstance(dimensions, int) or not 1 <= dimensions <= 65_536:
        raise OnnxUnsupported("the pooling config does not give the embedding dimension")
    bert = _object(folder / "sentence_bert_config.json")
    config = _object(folder / "config.json")
    length = bert.get("max_seq_length")
    if length is None:  # sentence-transformers' own fallback: the tokenizer's bound, capped by the positions
        bounds = [value for value in (_object(folder / "tokenizer_config.json").get("model_max_length"),
                                      config.get("max_position_embeddings"))
                  if isinstance(value, int) and not isinstance(value, bool) and value > 0]
        length = min(bounds) if bounds else None
    if isinstance(length, bool) or not isinstance(length, int) or not 1 <= length <= 1_000_000:
        raise OnnxUnsupported("the model does not give its max_seq_length")
    lower = bert.get("do_lower_case", False) is True
    settings = folder / "config_sentence_transformers.json"
    if settings.is_file():
        declared = _object(settings)
        prompts = declared.get("prompts")
        if (isinstance(prompts, Mapping) and any(prompts.values())) or declared.get("default_prompt_name"):
            raise OnnxUnsupported("the model declares prompts (config_sentence_transformers.json), which "
                                  "sentence-transformers applies")
    return OnnxRecipe(folder, weights, tokenizer, length, lower, pooling, normalize=len(names) == 3,
                      dimensions=dimensions)


def default_onnx_dir() -> Path:
    """``$DITTO_ONNX_CACHE_DIR``, else the user cache folder's ``ditto/onnx``."""
    given = os.environ.get(ONNX_CACHE_ENV)
    if given:
        return Path(given).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("ditto")) / "onnx"


# -- naming the graph: model id + the weights' SHA-256 --------------------------------------------------


def _atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path`` and rename it over: readers see all or nothing."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, 0o644)  # mkstemp's 0600 would hide a shared cache from other users
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def file_digest(file: Path, cache: Path) -> str:
    """``file``'s SHA-256, remembered in ``cache/digests`` under its path, size, inode and mtime: a file
    written again (replaced, truncated, patched) has another stamp, so it is hashed again."""
    stat = file.stat()
    memo = cache / "digests" / (hashlib.sha256(str(file.resolve()).encode()).hexdigest()[:32] + ".json")
    stamp = {"size": stat.st_size, "inode": stat.st_ino, "mtime_ns": stat.st_mtime_ns}
    try:
        known = json.loads(memo.read_text(encoding="utf-8"))
        if isinstance(known, dict) and {k: known.get(k) for k in stamp} == stamp \
                and isinstance(known.get("sha256"), str) and re.fullmatch(r"[0-9a-f]{64}", known["sha256"]):
            return str(known["sha256"])
    except (OSError, ValueError):
        pass
    with file.open("rb") as handle:
        digest = hashlib.file_digest(handle, "sha256").hexdigest()
    try:
        memo.parent.mkdir(parents=True, exist_ok=True)
        _atomic_write(memo, json.dumps({**stamp, "sha256": digest}).encode())
    except OSError as error:  # a read-only cache only costs the hash next time
        _log.debug("the digest of %s could not be remembered in %s: %s", file, memo, error)
    return digest


def _seal(path: Path) -> Path:
    """Where the graph's own SHA-256 is kept, written after the graph: a graph without it, or that no
    longer hashes to it, is not used."""
    return path.with_name(path.name + ".sha256")


def _intact(path: Path, cache: Path) -> bool:
    try:
        return path.is_file() and _seal(path).read_text(encoding="ascii").strip() == file_digest(path, cache)
    except (OSError, ValueError):
        return False


def onnx_path(cache: Path, model_id: str, digest: str) -> Path:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", model_id).strip("._")[-80:] or "model"
    return cache / f"{slug}-{digest[:32]}-v{FORMAT}.onnx"


# -- running the graph --------------------------------------------------------------------------------


class OnnxModel:
    """One ONNX Runtime session and its tokenizer: :meth:`encode` gives the pipeline's vectors.

    A session may be run from several threads at once; the provider still runs one batch at a time
    (more would only contend for the same cores)."""

    def __init__(self, recipe: OnnxRecipe, path: Path, *, threads: int | None) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        self.recipe = recipe
        self.path = path
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3  # errors only: its warnings are about graph rewrites, not our input
        options.inter_op_num_threads = 1
        if threads is not None:
            options.intra_op_num_threads = threads
        # Idle worker threads spin by default, burning a core between batches on a shared machine.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self.inputs = [node.name for node in self.session.get_inputs()]
        if not {"input_ids", "attention_mask"} <= set(self.inputs):
            raise OnnxUnsupported(f"the graph's inputs are {self.inputs}")
        self.metadata: dict[str, str] = dict(self.session.get_modelmeta().custom_metadata_map)
        tokenizer = Tokenizer.from_file(str(recipe.tokenizer))
        padding = tokenizer.padding or {}
        tokenizer.enable_truncation(recipe.max_seq_length)
        tokenizer.enable_padding(pad_id=padding.get("pad_id", 0), pad_token=padding.get("pad_token", "[PAD]"),
                                 pad_type_id=padding.get("pad_type_id", 0))
        self.tokenizer = tokenizer

    @property
    def intra_op_threads(self) -> int:
        return int(self.session.get_session_options().intra_op_num_threads)

    def encode(self, texts: list[str], *, normalize: bool) -> npt.NDArray[np.float32]:
        """The pipeline's vectors for ``texts`` (one batch); ``normalize`` also scales them to unit length."""
        if self.recipe.do_lower_case:
            texts = [text.lower() for text in texts]
        encodings = self.tokenizer.encode_batch(texts)
        mask = np.array([encoding.attention_mask for encoding in encodings], dtype=np.int64)
        feed = {"input_ids": np.array([encoding.ids for encoding in encodings], dtype=np.int64),
                "attention_mask": mask}
        if "token_type_ids" in self.inputs:
            feed["token_type_ids"] = np.array([encoding.type_ids for encoding in encodings], dtype=np.int64)
        [tokens] = self.session.run(["token_embeddings"], feed)
        vectors = pool(np.asarray(tokens, dtype=np.float32), mask, self.recipe.pooling)
        if self.recipe.normalize or normalize:
            vectors = unit_rows(vectors)
        return vectors

    def check_probes(self, count: int) -> None:
        """The first ``count`` probes must give the vectors sentence-transformers gave at export."""
        try:
            expected = np.asarray(json.loads(self.metadata["ditto.probes"]), dtype=np.float32)[:count]
        except (KeyError, ValueError, TypeError) as error:
            raise OnnxUnsupported(f"the graph carries no readable probe vectors ({error})") from None
        if expected.shape != (count, self.recipe.dimensions):
            raise OnnxUnsupported(f"the graph's probe vectors have shape {expected.shape}")
        got = self.encode(list(PROBES[:count]), normalize=False)
        if got.shape != expected.shape or not np.allclose(got, expected, atol=_PROBE_ATOL):
            raise OnnxUnsupported("the graph does not reproduce sentence-transformers' vectors")


def pool(tokens: npt.NDArray[np.float32], mask: npt.NDArray[np.int64], mode: str) -> npt.NDArray[np.float32]:
    """sentence-transformers' Pooling over ``(batch, seq, dim)`` token vectors, padding masked out."""
    pooled: npt.NDArray[np.float32]
    weights = mask[..., None].astype(np.float32)
    if mode == "cls":
        pooled = np.ascontiguousarray(tokens[:, 0])
    elif mode == "max":
        pooled = np.where(weights > 0, tokens, np.float32(-1e9)).max(axis=1).astype(np.float32)
    else:
        counts = np.clip(weights.sum(axis=1), 1e-9, None)
        divisor = np.sqrt(counts) if mode == "mean_sqrt_len" else counts
        pooled = ((tokens * weights).sum(axis=1) / divisor).astype(np.float32)
    return pooled


def unit_rows(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Each row divided by its length (torch's ``normalize`` with eps 1e-12: a zero row stays zero)."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    scaled: npt.NDArray[np.float32] = (vectors / np.maximum(norms, 1e-12)).astype(np.float32)
    return scaled


# -- finding, checking and (once) exporting the graph -------------------------------------------------


def _open_checked(recipe: OnnxRecipe, path: Path, digest: str, model_id: str, threads: int | None,
                  probes: int) -> OnnxModel:
    model = OnnxModel(recipe, path, threads=threads)
    meta = model.metadata
    if (meta.get("ditto.format"), meta.get("ditto.weights_sha256"), meta.get("ditto.model_id")) != \
            (FORMAT, digest, model_id):
        raise OnnxUnsupported("the graph was exported from other weights")
    model.check_probes(probes)
    return model


#: Writes the ONNX graph of a recipe's weights to a path (:func:`._onnx_export.export_graph`, handed in by the
#: caller so that this module never imports the exporter, nor torch through it).
Exporter = Callable[..., None]


def load_onnx_model(recipe: OnnxRecipe, model_id: str, *, cache: Path, threads: int | None,
                    export: Exporter) -> OnnxModel:
    """The checked graph for ``recipe``'s weights from ``cache``, exported there first (by ``export``) when
    missing or damaged.

    Processes that start together are serialised by a lock file around the export only; whoever gets
    it second finds the first one's file and loads it.
    """
    cache.mkdir(parents=True, exist_ok=True)
    digest = file_digest(recipe.weights, cache)
    path = onnx_path(cache, model_id, digest)
    if _intact(path, cache):
        try:
            return _open_checked(recipe, path, digest, model_id, threads, probes=1)
        except Exception as error:  # a truncated protobuf, a flipped byte: export it again
            _log.warning("the ONNX graph %s does not load; exporting it again", path, exc_info=error)
    elif path.is_file():
        _log.warning("the ONNX graph %s is damaged (it does not match its SHA-256); exporting it again", path)
    from filelock import FileLock

    with FileLock(str(path) + ".lock", timeout=900):
        if _intact(path, cache):  # another process may have exported it while we waited
            try:
                return _open_checked(recipe, path, digest, model_id, threads, probes=1)
            except Exception:  # still damaged: ours replaces it
                pass
        _log.info("exporting %s to ONNX in %s (once for these weights)", model_id, path)
        handle, temporary = tempfile.mkstemp(dir=cache, prefix=f".{path.name}.", suffix=".tmp")
        os.close(handle)
        try:
            export(recipe, Path(temporary), metadata={"ditto.format": FORMAT, "ditto.model_id": model_id,
                                                              "ditto.weights_sha256": digest}, probes=PROBES)
            model = _open_checked(recipe, Path(temporary), digest, model_id, threads, probes=len(PROBES))
            os.chmod(temporary, 0o644)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        _atomic_write(_seal(path), file_digest(path, cache).encode("ascii"))
        model.path = path
        return model
